//! `git log --oneline [-n <count>] [<revision>…]`: one commit per line.

use serde_json::json;

use super::{Parsed, lines, plural, positional};

/// `--oneline` with only a count and revisions besides.
pub(super) fn matches(rest: &[&str]) -> bool {
    let mut oneline = false;
    let mut i = 0;
    while i < rest.len() {
        let a = rest[i];
        match a {
            "--oneline" => oneline = true,
            "--" => break,
            "-n" => {
                i += 1;
                if rest.get(i).is_none_or(|n| n.parse::<u64>().is_err()) {
                    return false;
                }
            }
            _ if is_count(a) || positional(a) => {}
            _ => return false,
        }
        i += 1;
    }
    oneline
}

fn is_count(a: &str) -> bool {
    let digits = a
        .strip_prefix("--max-count=")
        .or_else(|| a.strip_prefix("-n"))
        .or_else(|| a.strip_prefix('-'));
    digits.is_some_and(|d| !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit()))
}

pub(super) fn parse(stdout: &str) -> Parsed {
    let commits: Vec<_> = lines(stdout)
        .map(|line| {
            let (hash, rest) = line.split_once(' ').unwrap_or((line, ""));
            // A decorated line: `abc1234 (HEAD -> main, origin/main) subject`.
            let (refs, subject) = match rest.strip_prefix('(').and_then(|r| r.split_once(") ")) {
                Some((refs, subject)) => (
                    refs.split(", ").map(String::from).collect::<Vec<_>>(),
                    subject,
                ),
                None => (Vec::new(), rest),
            };
            if refs.is_empty() {
                json!({"hash": hash, "subject": subject})
            } else {
                json!({"hash": hash, "subject": subject, "refs": refs})
            }
        })
        .collect();
    let summary = match commits.first() {
        Some(c) => format!(
            "{}; latest {} {}",
            plural(commits.len(), "commit"),
            c["hash"].as_str().unwrap_or(""),
            c["subject"].as_str().unwrap_or("")
        ),
        None => "no commits".into(),
    };
    Parsed {
        value: json!({"commits": commits, "count": commits.len()}),
        summary,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signatures() {
        assert!(matches(&["--oneline"]));
        assert!(matches(&["--oneline", "-n", "5"]));
        assert!(matches(&["-n3", "--oneline", "main"]));
        assert!(matches(&["--oneline", "-7", "--", "src"]));
        assert!(!matches(&["--oneline", "-n", "x"]));
        assert!(!matches(&["--stat", "--oneline"]));
        assert!(!matches(&["-n", "2"]));
    }

    #[test]
    fn real_output() {
        let p = parse("46ceebf third\n27e5765 first commit\n");
        assert_eq!(p.value["count"], 2);
        assert_eq!(p.value["commits"][1]["subject"], "first commit");
        assert_eq!(p.summary, "2 commits; latest 46ceebf third");
        let d = parse("46ceebf (HEAD -> main, origin/main) third\n");
        assert_eq!(d.value["commits"][0]["refs"][1], "origin/main");
        assert_eq!(d.value["commits"][0]["subject"], "third");
        assert_eq!(parse("").summary, "no commits");
    }
}
