//! `which <name>…` / `where <name>…`: one path per line.

use serde_json::json;

use super::{Parsed, lines, positional};

/// Names only (and `which -a`).
pub(super) fn matches(args: &[&str]) -> bool {
    let names = args.iter().filter(|a| positional(a)).count();
    names > 0 && args.iter().all(|a| positional(a) || *a == "-a")
}

pub(super) fn parse(stdout: &str) -> Parsed {
    let paths: Vec<&str> = lines(stdout).map(str::trim).collect();
    Parsed {
        summary: match paths.first() {
            Some(p) if paths.len() == 1 => p.to_string(),
            Some(p) => format!("{p} (+{} more)", paths.len() - 1),
            None => "not found".into(),
        },
        value: json!({"paths": paths, "found": !paths.is_empty()}),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn real_output() {
        assert!(matches(&["-a", "sh"]) && !matches(&["-a"]) && !matches(&["--skip-alias", "x"]));
        let p = parse("/usr/bin/sh\n/bin/sh\n");
        assert_eq!(p.value["paths"], json!(["/usr/bin/sh", "/bin/sh"]));
        assert_eq!(p.summary, "/usr/bin/sh (+1 more)");
        let p = parse("C:\\Windows\\System32\\where.exe\r\n");
        assert_eq!(p.value["paths"][0], "C:\\Windows\\System32\\where.exe");
        assert_eq!(parse("").value["found"], false);
    }
}
