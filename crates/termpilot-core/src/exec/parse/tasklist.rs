//! `tasklist /fo csv /nh` (Windows): one quoted CSV row per process.

use serde_json::{Value, json};

use super::{Parsed, lines, plural};

pub(super) fn matches(args: &[&str]) -> bool {
    let lower: Vec<String> = args.iter().map(|a| a.to_ascii_lowercase()).collect();
    let mut rest: Vec<&str> = lower.iter().map(String::as_str).collect();
    rest.sort_unstable();
    let mut want = vec!["/fo", "csv", "/nh"];
    want.sort_unstable();
    // `/fo csv` must be adjacent; the sorted comparison checks the set, this the order.
    rest == want && lower.windows(2).any(|w| w[0] == "/fo" && w[1] == "csv")
}

/// Splits one CSV row whose fields are quoted (`"a","1,024 K"`).
fn fields(row: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut quoted = false;
    let mut chars = row.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '"' if quoted && chars.peek() == Some(&'"') => {
                cur.push('"');
                chars.next();
            }
            '"' => quoted = !quoted,
            ',' if !quoted => out.push(std::mem::take(&mut cur)),
            _ => cur.push(c),
        }
    }
    out.push(cur);
    out
}

pub(super) fn parse(stdout: &str) -> Parsed {
    let processes: Vec<Value> = lines(stdout)
        .filter_map(|row| {
            let f = fields(row);
            if f.len() < 5 {
                return None;
            }
            let kb: Option<u64> = f[4]
                .chars()
                .filter(char::is_ascii_digit)
                .collect::<String>()
                .parse()
                .ok();
            Some(json!({
                "imageName": f[0],
                "pid": f[1].parse::<u64>().ok(),
                "sessionName": f[2],
                "sessionNumber": f[3].parse::<u64>().ok(),
                "memUsage": f[4],
                "memKb": kb,
            }))
        })
        .collect();
    Parsed {
        summary: plural(processes.len(), "process").replace("processs", "processes"),
        value: json!({"processes": processes, "count": processes.len()}),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signature_and_rows() {
        assert!(matches(&["/fo", "csv", "/nh"]));
        assert!(matches(&["/NH", "/FO", "CSV"]));
        assert!(!matches(&["/fo", "list"]));
        assert!(!matches(&["/nh", "csv", "/fo"]));
        let out = "\"System Idle Process\",\"0\",\"Services\",\"0\",\"8 K\"\r\n\"chrome.exe\",\"4242\",\"Console\",\"1\",\"123,456 K\"\r\n";
        let p = parse(out);
        assert_eq!(p.value["count"], 2);
        assert_eq!(p.value["processes"][1]["pid"], 4242);
        assert_eq!(p.value["processes"][1]["memKb"], 123456);
        assert_eq!(p.value["processes"][1]["memUsage"], "123,456 K");
        assert_eq!(p.summary, "2 processes");
    }
}
