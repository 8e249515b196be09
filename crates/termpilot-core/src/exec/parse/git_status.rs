//! `git status --porcelain=v1 --branch`, `--short --branch`, `--short`: the short format.

use serde_json::{Value, json};

use super::{Parsed, lines, positional, unquote};

/// The short/porcelain v1 format, with or without the branch line, plus paths.
pub(super) fn matches(rest: &[&str]) -> bool {
    let mut format = false;
    for a in rest {
        match *a {
            "--porcelain" | "--porcelain=v1" | "--short" | "-s" | "-sb" | "-bs" => format = true,
            "--branch" | "-b" | "--" => {}
            a if positional(a) => {}
            _ => return false,
        }
    }
    format
}

/// Both sides of a conflict (`UU`, `AA`, `DD`, `AU`, …).
fn conflicted(x: char, y: char) -> bool {
    x == 'U' || y == 'U' || (x == 'A' && y == 'A') || (x == 'D' && y == 'D')
}

fn entry(status: &str, path: &str) -> Value {
    match path.split_once(" -> ") {
        Some((from, to)) => json!({"status": status, "path": unquote(to), "from": unquote(from)}),
        None => json!({"status": status, "path": unquote(path)}),
    }
}

fn branch_line(line: &str) -> Value {
    let line = line.trim_start_matches("## ");
    if let Some(b) = line
        .strip_prefix("No commits yet on ")
        .or_else(|| line.strip_prefix("Initial commit on "))
    {
        return json!({"head": b, "upstream": null, "ahead": 0, "behind": 0, "initial": true});
    }
    let (names, track) = match line.split_once(" [") {
        Some((n, t)) => (n, t.trim_end_matches(']')),
        None => (line, ""),
    };
    let (head, upstream) = match names.split_once("...") {
        Some((h, u)) => (h, Some(u)),
        None => (names, None),
    };
    let count = |word: &str| -> u64 {
        track
            .split(", ")
            .find_map(|p| p.strip_prefix(word)?.trim().parse().ok())
            .unwrap_or(0)
    };
    json!({
        "head": head,
        "upstream": upstream,
        "ahead": count("ahead "),
        "behind": count("behind "),
        "detached": head == "HEAD (no branch)",
        "gone": track == "gone",
    })
}

pub(super) fn parse(stdout: &str) -> Parsed {
    let mut branch = Value::Null;
    let (mut staged, mut modified, mut untracked, mut conflicts, mut ignored) =
        (vec![], vec![], vec![], vec![], vec![]);
    for line in lines(stdout) {
        if line.starts_with("## ") {
            branch = branch_line(line);
            continue;
        }
        if line.len() < 4 {
            continue;
        }
        let mut chars = line.chars();
        let (x, y) = (chars.next().unwrap_or(' '), chars.next().unwrap_or(' '));
        let path = &line[3..];
        match (x, y) {
            ('?', '?') => untracked.push(Value::String(unquote(path))),
            ('!', '!') => ignored.push(Value::String(unquote(path))),
            _ if conflicted(x, y) => conflicts.push(entry(&format!("{x}{y}"), path)),
            _ => {
                if x != ' ' {
                    staged.push(entry(&x.to_string(), path));
                }
                if y != ' ' {
                    modified.push(entry(&y.to_string(), path));
                }
            }
        }
    }
    let clean =
        staged.is_empty() && modified.is_empty() && untracked.is_empty() && conflicts.is_empty();
    let mut summary = match branch.get("head").and_then(Value::as_str) {
        Some(h) => {
            let mut s = format!("on {h}");
            let (a, b) = (
                branch["ahead"].as_u64().unwrap_or(0),
                branch["behind"].as_u64().unwrap_or(0),
            );
            if a > 0 || b > 0 {
                s.push_str(&format!(" (ahead {a}, behind {b})"));
            }
            s.push_str(": ");
            s
        }
        None => String::new(),
    };
    if clean {
        summary.push_str("clean");
    } else {
        summary.push_str(&format!(
            "{} staged, {} modified, {} untracked, {} conflicted",
            staged.len(),
            modified.len(),
            untracked.len(),
            conflicts.len()
        ));
    }
    let mut value = json!({
        "branch": branch,
        "staged": staged,
        "modified": modified,
        "untracked": untracked,
        "conflicted": conflicts,
        "clean": clean,
    });
    if !ignored.is_empty() {
        value["ignored"] = Value::Array(ignored);
    }
    Parsed { value, summary }
}

#[cfg(test)]
mod tests {
    use super::*;

    const REAL: &str = "## main...origin/main [ahead 1]\nMM a.txt\nR  \"sp ace.txt\" -> \"sp ace2.txt\"\n?? \"new file.txt\"\n";

    #[test]
    fn signatures() {
        assert!(matches(&["--porcelain=v1", "--branch"]));
        assert!(matches(&["--short", "--branch"]));
        assert!(matches(&["--short"]));
        assert!(matches(&["-sb", "src"]));
        assert!(!matches(&[]));
        assert!(!matches(&["--porcelain=v2"]));
        assert!(!matches(&["--short", "--ignored=matching"]));
    }

    #[test]
    fn real_output() {
        let p = parse(REAL);
        let v = &p.value;
        assert_eq!(v["branch"]["head"], "main");
        assert_eq!(v["branch"]["upstream"], "origin/main");
        assert_eq!(v["branch"]["ahead"], 1);
        assert_eq!(v["staged"][0], json!({"status": "M", "path": "a.txt"}));
        assert_eq!(
            v["staged"][1],
            json!({"status": "R", "path": "sp ace2.txt", "from": "sp ace.txt"})
        );
        assert_eq!(v["modified"][0]["path"], "a.txt");
        assert_eq!(v["untracked"][0], "new file.txt");
        assert_eq!(v["clean"], false);
        assert_eq!(
            p.summary,
            "on main (ahead 1, behind 0): 2 staged, 1 modified, 1 untracked, 0 conflicted"
        );
    }

    #[test]
    fn branch_lines_and_conflicts() {
        let p = parse("## No commits yet on main\n");
        assert_eq!(p.value["branch"]["initial"], true);
        assert_eq!(p.summary, "on main: clean");
        let p = parse("## HEAD (no branch)\nUU both.txt\n");
        assert_eq!(p.value["branch"]["detached"], true);
        assert_eq!(p.value["conflicted"][0]["status"], "UU");
        let p = parse("## dev...origin/dev [gone]\n");
        assert_eq!(p.value["branch"]["gone"], true);
        let p = parse(" M x\n");
        assert_eq!(p.value["branch"], Value::Null);
        assert_eq!(p.value["staged"], json!([]));
    }
}
