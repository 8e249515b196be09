//! `git branch` (plain, `--all`, `--remotes`), `git branch -vv` and `--show-current`.

use serde_json::{Value, json};

use super::{Parsed, lines};

pub(super) fn parse(rest: &[&str], stdout: &str) -> Option<Parsed> {
    match rest {
        [] | ["--list"] => Some(list(stdout, false)),
        ["--all"] | ["-a"] => Some(list(stdout, false)),
        ["--remotes"] | ["-r"] => Some(list(stdout, true)),
        ["-vv"] => Some(verbose(stdout)),
        ["--show-current"] => Some(show_current(stdout)),
        _ => None,
    }
}

/// Splits the two-character marker (`* ` current, `+ ` checked out in another worktree).
fn marker(line: &str) -> (bool, bool, &str) {
    let rest = line.get(2..).unwrap_or("");
    (line.starts_with('*'), line.starts_with('+'), rest)
}

fn list(stdout: &str, remotes_only: bool) -> Parsed {
    let mut current = Value::Null;
    let branches: Vec<Value> = lines(stdout)
        .map(|line| {
            let (is_current, other_worktree, rest) = marker(line);
            let (name, target) = match rest.split_once(" -> ") {
                Some((n, t)) => (n.trim(), Some(t.trim())),
                None => (rest.trim(), None),
            };
            if is_current {
                current = Value::String(name.to_string());
            }
            let remote = remotes_only || name.starts_with("remotes/");
            let mut b = json!({"name": name, "current": is_current, "remote": remote});
            if other_worktree {
                b["worktree"] = true.into();
            }
            if let Some(t) = target {
                b["target"] = t.into();
            }
            b
        })
        .collect();
    let summary = summary(branches.len(), &current);
    Parsed {
        value: json!({"current": current, "branches": branches}),
        summary,
    }
}

fn summary(count: usize, current: &Value) -> String {
    let noun = if count == 1 { "branch" } else { "branches" };
    format!(
        "{count} {noun}; current {}",
        current.as_str().unwrap_or("none")
    )
}

fn verbose(stdout: &str) -> Parsed {
    let mut current = Value::Null;
    let branches: Vec<Value> = lines(stdout)
        .map(|line| {
            let (is_current, other_worktree, rest) = marker(line);
            // A detached HEAD's name has spaces: `(HEAD detached at abc1234)`.
            let (name, rest) = if rest.starts_with('(') {
                match rest.find(") ") {
                    Some(i) => (&rest[..=i], rest[i + 1..].trim_start()),
                    None => (rest, ""),
                }
            } else {
                rest.split_once(char::is_whitespace)
                    .map(|(n, r)| (n, r.trim_start()))
                    .unwrap_or((rest, ""))
            };
            let (hash, mut rest) = rest.split_once(' ').unwrap_or((rest, ""));
            let mut b = json!({"name": name, "current": is_current, "hash": hash});
            if other_worktree {
                b["worktree"] = true.into();
            }
            // `(path)` of the worktree that has this branch checked out.
            if let Some(r) = rest.strip_prefix('(')
                && let Some((path, after)) = r.split_once(") ")
            {
                b["worktreePath"] = path.into();
                rest = after;
            }
            if let Some(r) = rest.strip_prefix('[')
                && let Some((track, after)) = r
                    .split_once("] ")
                    .or_else(|| r.strip_suffix(']').map(|t| (t, "")))
            {
                let (upstream, state) = track.split_once(": ").unwrap_or((track, ""));
                let count = |word: &str| -> u64 {
                    state
                        .split(", ")
                        .find_map(|p| p.strip_prefix(word)?.trim().parse().ok())
                        .unwrap_or(0)
                };
                b["upstream"] = upstream.into();
                b["ahead"] = count("ahead ").into();
                b["behind"] = count("behind ").into();
                b["gone"] = (state == "gone").into();
                rest = after;
            }
            b["subject"] = rest.into();
            if is_current {
                current = Value::String(name.to_string());
            }
            b
        })
        .collect();
    let summary = summary(branches.len(), &current);
    Parsed {
        value: json!({"current": current, "branches": branches}),
        summary,
    }
}

fn show_current(stdout: &str) -> Parsed {
    let name = stdout.trim();
    let branch = if name.is_empty() {
        Value::Null
    } else {
        name.into()
    };
    Parsed {
        summary: if name.is_empty() {
            "detached HEAD".into()
        } else {
            format!("on {name}")
        },
        value: json!({"branch": branch, "detached": name.is_empty()}),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_all_and_remotes() {
        let p = parse(&[], "  feat\n* main\n").unwrap();
        assert_eq!(p.value["current"], "main");
        assert_eq!(
            p.value["branches"][0],
            json!({"name": "feat", "current": false, "remote": false})
        );
        assert_eq!(p.summary, "2 branches; current main");
        let p = parse(
            &["--all"],
            "  feat\n* main\n  remotes/origin/HEAD -> origin/main\n  remotes/origin/main\n",
        )
        .unwrap();
        assert_eq!(p.value["branches"][2]["target"], "origin/main");
        assert_eq!(p.value["branches"][3]["remote"], true);
        let p = parse(&["-r"], "  origin/main\n").unwrap();
        assert_eq!(p.value["branches"][0]["remote"], true);
        let p = parse(&[], "* (HEAD detached at 46ceebf)\n+ exec\n").unwrap();
        assert_eq!(p.value["current"], "(HEAD detached at 46ceebf)");
        assert_eq!(p.value["branches"][1]["worktree"], true);
        assert!(parse(&["-d", "x"], "").is_none());
    }

    #[test]
    fn verbose_real_output() {
        let out = "  feat ca30dc8 second: change a\n* main 46ceebf [origin/main: ahead 1] third\n  old  1234567 [origin/old: gone] bye\n+ exec eabbd28 (/work/wt-exec) platform: x\n* (HEAD detached at 46ceebf) 46ceebf third\n";
        let p = parse(&["-vv"], out).unwrap();
        let b = &p.value["branches"];
        assert_eq!(
            b[0],
            json!({"name": "feat", "current": false, "hash": "ca30dc8", "subject": "second: change a"})
        );
        assert_eq!(b[1]["upstream"], "origin/main");
        assert_eq!(b[1]["ahead"], 1);
        assert_eq!(b[1]["subject"], "third");
        assert_eq!(b[2]["gone"], true);
        assert_eq!(b[3]["worktreePath"], "/work/wt-exec");
        assert_eq!(b[3]["subject"], "platform: x");
        assert_eq!(b[4]["name"], "(HEAD detached at 46ceebf)");
        assert_eq!(b[4]["hash"], "46ceebf");
    }

    #[test]
    fn show_current() {
        assert_eq!(
            parse(&["--show-current"], "main\n").unwrap().value["branch"],
            "main"
        );
        assert_eq!(
            parse(&["--show-current"], "").unwrap().value["detached"],
            true
        );
    }
}
