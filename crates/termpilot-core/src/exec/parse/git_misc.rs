//! `git rev-parse --abbrev-ref HEAD | --show-toplevel | --is-inside-work-tree`,
//! `git ls-files [<path>…]` and `git remote -v`.

use serde_json::{Value, json};

use super::{Parsed, lines, plural, positional, unquote};

pub(super) fn rev_parse(rest: &[&str], stdout: &str) -> Option<Parsed> {
    let out = stdout.trim();
    Some(match rest {
        ["--abbrev-ref", "HEAD"] => Parsed {
            value: json!({"ref": out, "detached": out == "HEAD"}),
            summary: if out == "HEAD" {
                "detached HEAD".into()
            } else {
                format!("on {out}")
            },
        },
        ["--show-toplevel"] => Parsed {
            value: json!({"path": out}),
            summary: out.to_string(),
        },
        ["--is-inside-work-tree"] => {
            let inside = out == "true";
            Parsed {
                value: json!({"insideWorkTree": inside}),
                summary: if inside {
                    "inside a work tree"
                } else {
                    "not inside a work tree"
                }
                .into(),
            }
        }
        _ => return None,
    })
}

pub(super) fn ls_files(rest: &[&str], stdout: &str) -> Option<Parsed> {
    if !rest.iter().all(|a| positional(a) || *a == "--") {
        return None;
    }
    let files: Vec<String> = lines(stdout).map(unquote).collect();
    Some(Parsed {
        summary: format!("{} tracked", plural(files.len(), "file")),
        value: json!({"files": files, "count": files.len()}),
    })
}

pub(super) fn remote(rest: &[&str], stdout: &str) -> Option<Parsed> {
    if !matches!(rest, ["-v"] | ["--verbose"]) {
        return None;
    }
    let mut remotes: Vec<Value> = Vec::new();
    for line in lines(stdout) {
        let Some((name, rest)) = line.split_once('\t') else {
            continue;
        };
        let (url, kind) = match rest.rsplit_once(" (") {
            Some((u, k)) => (u, k.trim_end_matches(')')),
            None => (rest, "fetch"),
        };
        let at = match remotes.iter().position(|r| r["name"] == name) {
            Some(i) => i,
            None => {
                remotes.push(json!({"name": name, "fetch": null, "push": null}));
                remotes.len() - 1
            }
        };
        if kind == "fetch" || kind == "push" {
            remotes[at][kind] = url.into();
        }
    }
    let names: Vec<&str> = remotes.iter().filter_map(|r| r["name"].as_str()).collect();
    Some(Parsed {
        summary: format!("{}: {}", plural(remotes.len(), "remote"), names.join(", ")),
        value: json!({"remotes": remotes}),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rev_parse_signatures() {
        assert_eq!(
            rev_parse(&["--abbrev-ref", "HEAD"], "main\n")
                .unwrap()
                .value["ref"],
            "main"
        );
        assert_eq!(
            rev_parse(&["--abbrev-ref", "HEAD"], "HEAD\n")
                .unwrap()
                .value["detached"],
            true
        );
        assert_eq!(
            rev_parse(&["--show-toplevel"], "/tmp/r\n").unwrap().value["path"],
            "/tmp/r"
        );
        assert_eq!(
            rev_parse(&["--is-inside-work-tree"], "true\n")
                .unwrap()
                .value["insideWorkTree"],
            true
        );
        assert!(rev_parse(&["HEAD"], "abc\n").is_none());
    }

    #[test]
    fn ls_files_and_remote() {
        let p = ls_files(&[], "a.txt\nbin.dat\nsp ace2.txt\n").unwrap();
        assert_eq!(p.value["count"], 3);
        assert!(ls_files(&["-s"], "").is_none());
        let out = "origin\thttps://example.com/r.git (fetch)\norigin\thttps://example.com/r.git (push)\nup\tgit@h:x.git (fetch)\nup\tno_push (push)\n";
        let p = remote(&["-v"], out).unwrap();
        assert_eq!(
            p.value["remotes"][0],
            json!({"name": "origin", "fetch": "https://example.com/r.git", "push": "https://example.com/r.git"})
        );
        assert_eq!(p.value["remotes"][1]["push"], "no_push");
        assert_eq!(p.summary, "2 remotes: origin, up");
        assert!(remote(&[], "origin\n").is_none());
    }
}
