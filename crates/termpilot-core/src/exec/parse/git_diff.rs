//! `git diff --name-only | --name-status | --stat | --shortstat [<revision>…] [-- <path>…]`.

use serde_json::{Value, json};

use super::{Parsed, lines, plural, positional, unquote};

#[derive(Clone, Copy)]
enum Format {
    NameOnly,
    NameStatus,
    Stat,
    ShortStat,
}

pub(super) fn parse(rest: &[&str], stdout: &str) -> Option<Parsed> {
    let mut format = None;
    let mut paths = false;
    for a in rest {
        if paths {
            continue;
        }
        let f = match *a {
            "--name-only" => Format::NameOnly,
            "--name-status" => Format::NameStatus,
            "--stat" => Format::Stat,
            "--shortstat" => Format::ShortStat,
            "--cached" | "--staged" | "-M" | "--find-renames" => continue,
            "--" => {
                paths = true;
                continue;
            }
            a if positional(a) => continue,
            _ => return None,
        };
        if format.replace(f).is_some() {
            return None;
        }
    }
    Some(match format? {
        Format::NameOnly => name_only(stdout),
        Format::NameStatus => name_status(stdout),
        Format::Stat => stat(stdout),
        Format::ShortStat => {
            let totals = shortstat(stdout);
            let summary = totals_summary(&totals);
            Parsed {
                value: totals,
                summary,
            }
        }
    })
}

fn name_only(stdout: &str) -> Parsed {
    let files: Vec<String> = lines(stdout).map(unquote).collect();
    Parsed {
        summary: format!("{} changed", plural(files.len(), "file")),
        value: json!({"files": files, "count": files.len()}),
    }
}

fn name_status(stdout: &str) -> Parsed {
    let files: Vec<Value> = lines(stdout)
        .map(|line| {
            let mut parts = line.split('\t');
            let code = parts.next().unwrap_or("");
            let (status, score) = code.split_at(code.len().min(1));
            let first = unquote(parts.next().unwrap_or(""));
            let mut f = json!({"status": status});
            match parts.next() {
                Some(to) => {
                    f["path"] = unquote(to).into();
                    f["oldPath"] = first.into();
                }
                None => f["path"] = first.into(),
            }
            if let Ok(s) = score.parse::<u32>() {
                f["score"] = s.into();
            }
            f
        })
        .collect();
    Parsed {
        summary: format!("{} changed", plural(files.len(), "file")),
        value: json!({"files": files, "count": files.len()}),
    }
}

/// ` 2 files changed, 3 insertions(+), 1 deletion(-)` as numbers.
fn shortstat(stdout: &str) -> Value {
    let mut totals = json!({"filesChanged": 0, "insertions": 0, "deletions": 0});
    let line = lines(stdout).last().unwrap_or("");
    for part in line.split(',') {
        let part = part.trim();
        let n: u64 = part
            .split(' ')
            .next()
            .and_then(|n| n.parse().ok())
            .unwrap_or(0);
        if part.contains("changed") {
            totals["filesChanged"] = n.into();
        } else if part.contains("insertion") {
            totals["insertions"] = n.into();
        } else if part.contains("deletion") {
            totals["deletions"] = n.into();
        }
    }
    totals
}

fn totals_summary(t: &Value) -> String {
    format!(
        "{} changed, +{} -{}",
        plural(t["filesChanged"].as_u64().unwrap_or(0) as usize, "file"),
        t["insertions"],
        t["deletions"]
    )
}

fn stat(stdout: &str) -> Parsed {
    let mut files = Vec::new();
    let mut totals = json!({"filesChanged": 0, "insertions": 0, "deletions": 0});
    for line in lines(stdout) {
        let Some((path, change)) = line.rsplit_once(" | ") else {
            if line.contains("changed") {
                totals = shortstat(line);
            }
            continue;
        };
        let path = path.trim();
        let change = change.trim();
        let mut f = json!({"path": unquote(path)});
        if let Some((from, to)) = path.split_once(" => ") {
            f["path"] = to.into();
            f["oldPath"] = from.into();
        }
        if let Some(bin) = change.strip_prefix("Bin") {
            f["binary"] = true.into();
            f["change"] = bin.trim().into();
        } else {
            let (n, bar) = change.split_once(' ').unwrap_or((change, ""));
            f["changes"] = n.parse::<u64>().unwrap_or(0).into();
            f["insertions"] = bar.matches('+').count().into();
            f["deletions"] = bar.matches('-').count().into();
        }
        files.push(f);
    }
    let summary = totals_summary(&totals);
    totals["files"] = Value::Array(files);
    Parsed {
        value: totals,
        summary,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signatures() {
        assert!(parse(&["--name-only"], "").is_some());
        assert!(
            parse(
                &["--cached", "--name-status", "HEAD~1", "--", "-odd-path"],
                ""
            )
            .is_some()
        );
        assert!(parse(&["--stat", "--name-only"], "").is_none());
        assert!(parse(&["--stat", "--color"], "").is_none());
        assert!(parse(&["HEAD"], "").is_none());
    }

    #[test]
    fn name_only_and_status() {
        let p = parse(&["--name-only"], "a.txt\n\"sp ace.txt\"\n").unwrap();
        assert_eq!(p.value["files"], json!(["a.txt", "sp ace.txt"]));
        let p = parse(
            &["--name-status"],
            "M\ta.txt\nR100\tsp ace.txt\tsp ace2.txt\n",
        )
        .unwrap();
        assert_eq!(p.value["files"][0], json!({"status": "M", "path": "a.txt"}));
        assert_eq!(
            p.value["files"][1],
            json!({"status": "R", "path": "sp ace2.txt", "oldPath": "sp ace.txt", "score": 100})
        );
        assert_eq!(p.summary, "2 files changed");
    }

    #[test]
    fn stat_and_shortstat() {
        let out = " a.txt                     | 3 +++\n sp ace.txt => sp ace2.txt | 0\n bin.dat | Bin 0 -> 2 bytes\n 3 files changed, 3 insertions(+)\n";
        let p = parse(&["--stat"], out).unwrap();
        assert_eq!(p.value["filesChanged"], 3);
        assert_eq!(p.value["insertions"], 3);
        assert_eq!(p.value["deletions"], 0);
        assert_eq!(
            p.value["files"][0],
            json!({"path": "a.txt", "changes": 3, "insertions": 3, "deletions": 0})
        );
        assert_eq!(p.value["files"][1]["oldPath"], "sp ace.txt");
        assert_eq!(p.value["files"][2]["binary"], true);
        assert_eq!(p.summary, "3 files changed, +3 -0");
        let p = parse(
            &["--shortstat"],
            " 1 file changed, 2 insertions(+), 1 deletion(-)\n",
        )
        .unwrap();
        assert_eq!(
            p.value,
            json!({"filesChanged": 1, "insertions": 2, "deletions": 1})
        );
        assert_eq!(
            parse(&["--shortstat"], "").unwrap().value["filesChanged"],
            0
        );
    }
}
