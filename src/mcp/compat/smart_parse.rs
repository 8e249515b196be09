//! smart-terminal-mcp's own structured parsers and summaries, for `--compat smart-terminal`.
//!
//! The native parsers (`termpilot_core::exec::parse_output`) return a richer shape (objects for git
//! status entries, `count`, `clean`, a one-line summary). A user swapping upstream for the
//! preset relies on upstream's shapes, so the preset reads stdout with this port of upstream's
//! `src/command-parsers.js` (v1.2.28): the same command signatures, the same keys, the same
//! `null` for an empty or unmatched output, and a summary that is an object. Pure text in,
//! JSON out; the preset's `terminal_run` and `terminal_run_paged` call it.

use std::sync::LazyLock;

use regex::Regex;
use serde_json::{Map, Value, json};

/// upstream `normalizeCommandName`: the base name, lower case, without `.exe`.
pub fn command_name(cmd: &str) -> String {
    let base = cmd.rsplit('/').next().unwrap_or(cmd).to_lowercase();
    base.strip_suffix(".exe").map(String::from).unwrap_or(base)
}

/// upstream `parseCommandOutput`: the parsed stdout, or `None` (JSON `null`).
pub fn parse(cmd: &str, args: &[String], stdout: &str) -> Option<Value> {
    if stdout.is_empty() {
        return None;
    }
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    match command_name(cmd).as_str() {
        "git" => parse_git(&args, stdout),
        "tasklist" if is_tasklist_csv(&args) => tasklist_csv(stdout),
        "where" | "which" if !args.is_empty() => path_list(stdout),
        _ => None,
    }
}

/// upstream `summarizeCommandOutput`: a summary object for a parsed output, or `None`.
pub fn summarize(cmd: &str, args: &[String], parsed: &Value) -> Option<Value> {
    if parsed.is_null() {
        return None;
    }
    match command_name(cmd).as_str() {
        "git" => summarize_git(args, parsed),
        "tasklist" => parsed["processes"]
            .as_array()
            .map(|p| json!({"processCount": p.len()})),
        "where" | "which" => parsed["paths"]
            .as_array()
            .map(|p| json!({"pathCount": p.len()})),
        _ => None,
    }
}

/// upstream `getStructuredParserHint`'s eligibility: where, which, and the git subcommands
/// branch, diff, log, remote, rev-parse and status.
pub fn hint_eligible(cmd: &str, args: &[String]) -> bool {
    match command_name(cmd).as_str() {
        "where" | "which" => true,
        "git" => args.first().is_some_and(|a| {
            ["branch", "diff", "log", "remote", "rev-parse", "status"]
                .contains(&a.to_lowercase().as_str())
        }),
        _ => false,
    }
}

fn lower(args: &[&str]) -> Vec<String> {
    args.iter().map(|a| a.to_lowercase()).collect()
}

/// `stdout.split(/\r?\n/).filter(Boolean)`.
fn lines(stdout: &str) -> impl Iterator<Item = &str> {
    stdout
        .split('\n')
        .map(|l| l.strip_suffix('\r').unwrap_or(l))
        .filter(|l| !l.is_empty())
}

fn parse_git(args: &[&str], stdout: &str) -> Option<Value> {
    let first = *args.first()?;
    let rest = lower(&args[1..]);
    let has = |flag: &str| rest.iter().any(|a| a == flag);
    if first == "log" && has("--oneline") {
        let other: Vec<&str> = rest
            .iter()
            .map(String::as_str)
            .filter(|a| *a != "--oneline")
            .collect();
        if log_oneline_args(&other) {
            return log_oneline(stdout);
        }
    }
    if first == "status"
        && !rest.is_empty()
        && rest.iter().any(|a| status_format_arg(a))
        && rest
            .iter()
            .all(|a| status_format_arg(a) || a == "--branch" || a == "-b")
    {
        return Some(status_porcelain(stdout));
    }
    if first == "branch" {
        if !rest.is_empty()
            && rest.iter().any(|a| branch_verbose_arg(a))
            && rest
                .iter()
                .all(|a| branch_verbose_arg(a) || branch_list_arg(a))
        {
            return branch_verbose(stdout);
        }
        if args.len() == 1 || (args.len() == 2 && branch_list_arg(&rest[0])) {
            return branch_list(stdout);
        }
        if args.len() == 2 && rest[0] == "--show-current" {
            return show_current(stdout);
        }
    }
    if first == "rev-parse" {
        if args.len() == 2 && rest[0] == "--show-toplevel" {
            let top = stdout.trim();
            return (!top.is_empty()).then(|| json!({"topLevel": top}));
        }
        if args.len() == 2 && rest[0] == "--is-inside-work-tree" {
            return match stdout.trim().to_lowercase().as_str() {
                "true" => Some(json!({"isInsideWorkTree": true})),
                "false" => Some(json!({"isInsideWorkTree": false})),
                _ => None,
            };
        }
        if args.len() == 3 && rest[0] == "--abbrev-ref" && args[2].to_uppercase() == "HEAD" {
            return show_current(stdout);
        }
    }
    if first == "diff" {
        if has("--shortstat") {
            return diff_stat_summary(stdout.trim()).map(|s| json!({"summary": s}));
        }
        if has("--stat") {
            return diff_stat(stdout);
        }
        if has("--name-status") {
            return name_status(stdout);
        }
        if has("--name-only") {
            return path_list(stdout);
        }
    }
    if first == "ls-files" && args[1..].iter().all(|a| a.starts_with('-')) {
        return path_list(stdout);
    }
    if first == "remote" && args.len() == 2 && (rest[0] == "-v" || rest[0] == "--verbose") {
        return remote_verbose(stdout);
    }
    None
}

fn summarize_git(args: &[String], parsed: &Value) -> Option<Value> {
    let sub = args.first().map(|a| a.to_lowercase()).unwrap_or_default();
    match sub.as_str() {
        "log" => parsed["commits"].as_array().map(|c| {
            let mut s = json!({"commitCount": c.len()});
            if let Some(first) = c.first() {
                s["latestCommit"] = first.clone();
            }
            s
        }),
        "status" => {
            let count = |k: &str| parsed[k].as_array().map_or(0, Vec::len);
            let mut s = json!({
                "stagedCount": count("staged"),
                "modifiedCount": count("modified"),
                "untrackedCount": count("untracked"),
            });
            let branch = &parsed["branch"];
            for key in ["head", "upstream"] {
                if let Some(v) = branch[key].as_str().filter(|v| !v.is_empty()) {
                    s[if key == "head" { "branch" } else { key }] = json!(v);
                }
            }
            for key in ["ahead", "behind"] {
                if branch[key].is_number() {
                    s[key] = branch[key].clone();
                }
            }
            Some(s)
        }
        "branch" => {
            if let Some(current) = parsed["current"].as_str() {
                return Some(json!({"current": current}));
            }
            let branches = parsed["branches"].as_array()?;
            let mut s = json!({"branchCount": branches.len()});
            if let Some(name) = branches
                .iter()
                .find(|b| b["current"] == true)
                .and_then(|b| b["name"].as_str())
                .filter(|n| !n.is_empty())
            {
                s["current"] = json!(name);
            }
            Some(s)
        }
        "rev-parse" => Some(parsed.clone()),
        "diff" => {
            if parsed.get("summary").is_some_and(|s| !s.is_null()) {
                return Some(parsed["summary"].clone());
            }
            if let Some(p) = parsed["paths"].as_array() {
                return Some(json!({"pathCount": p.len()}));
            }
            if let Some(f) = parsed["files"].as_array() {
                return Some(json!({"fileCount": f.len()}));
            }
            let changes = parsed["changes"].as_array()?;
            let mut statuses = Map::new();
            for c in changes {
                let key = c["status"].as_str().unwrap_or_default().to_string();
                let n = statuses.get(&key).and_then(Value::as_u64).unwrap_or(0);
                statuses.insert(key, json!(n + 1));
            }
            Some(json!({"changeCount": changes.len(), "statuses": statuses}))
        }
        "ls-files" => parsed["paths"]
            .as_array()
            .map(|p| json!({"pathCount": p.len()})),
        "remote" => parsed["remotes"].as_array().map(|r| {
            let names: Vec<Value> = r.iter().map(|x| x["name"].clone()).collect();
            json!({"remoteCount": r.len(), "names": names})
        }),
        _ => None,
    }
}

fn log_oneline_args(args: &[&str]) -> bool {
    static COUNT: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r"^(?:-[0-9]+|--max-count=[0-9]+)$").unwrap());
    match args {
        [] => true,
        [one] => COUNT.is_match(one),
        [flag, n] => {
            (*flag == "-n" || *flag == "--max-count")
                && !n.is_empty()
                && n.bytes().all(|b| b.is_ascii_digit())
        }
        _ => false,
    }
}

fn status_format_arg(a: &str) -> bool {
    matches!(a, "--short" | "--porcelain" | "--porcelain=v1")
}

fn branch_list_arg(a: &str) -> bool {
    matches!(
        a.to_lowercase().as_str(),
        "--list" | "-a" | "--all" | "-r" | "--remotes"
    )
}

fn branch_verbose_arg(a: &str) -> bool {
    matches!(a.to_lowercase().as_str(), "-v" | "-vv" | "--verbose")
}

fn is_tasklist_csv(args: &[&str]) -> bool {
    let l = lower(args);
    l.len() == 3 && l[0] == "/fo" && l[1] == "csv" && l[2] == "/nh"
}

fn log_oneline(stdout: &str) -> Option<Value> {
    static LINE: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r"(?i)^([0-9a-f]+)\s+(.+)$").unwrap());
    let commits: Vec<Value> = lines(stdout)
        .filter_map(|l| LINE.captures(l))
        .map(|c| json!({"hash": &c[1], "message": &c[2]}))
        .collect();
    (!commits.is_empty()).then(|| json!({"commits": commits}))
}

/// JavaScript's `String.prototype.slice(n)` over characters (the lines are ASCII-led).
fn from_char(s: &str, n: usize) -> &str {
    s.char_indices().nth(n).map_or("", |(i, _)| &s[i..])
}

fn status_porcelain(stdout: &str) -> Value {
    let (mut branch, mut staged, mut modified, mut untracked) =
        (Value::Null, Vec::new(), Vec::new(), Vec::new());
    for line in lines(stdout) {
        if let Some(b) = line.strip_prefix("## ") {
            branch = status_branch(b);
            continue;
        }
        if let Some(p) = line.strip_prefix("?? ") {
            untracked.push(p.to_string());
            continue;
        }
        if line.chars().count() < 4 {
            continue;
        }
        let status: Vec<char> = line.chars().take(2).collect();
        let Some(path) = from_char(line, 3)
            .split(" -> ")
            .last()
            .map(str::trim)
            .filter(|p| !p.is_empty())
        else {
            continue;
        };
        if status[0] != ' ' {
            staged.push(path.to_string());
        }
        if status[1] != ' ' {
            modified.push(path.to_string());
        }
    }
    json!({"branch": branch, "staged": staged, "modified": modified, "untracked": untracked})
}

/// Every `ahead N` / `behind N` in `text` into `into`.
fn ahead_behind(text: &str, into: &mut Value) {
    static AHEAD: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"ahead (\d+)").unwrap());
    static BEHIND: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"behind (\d+)").unwrap());
    for (key, re) in [("ahead", &*AHEAD), ("behind", &*BEHIND)] {
        if let Some(n) = re.captures(text).and_then(|c| c[1].parse::<u64>().ok()) {
            into[key] = json!(n);
        }
    }
}

fn status_branch(value: &str) -> Value {
    static BRANCH: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r"^([^\.\s]+)(?:\.\.\.([^\s]+))?(?: \[(.+)\])?$").unwrap());
    let Some(c) = BRANCH.captures(value) else {
        return json!({"head": value});
    };
    let mut branch = json!({"head": &c[1]});
    if let Some(up) = c.get(2) {
        branch["upstream"] = json!(up.as_str());
    }
    if let Some(tracking) = c.get(3) {
        ahead_behind(tracking.as_str(), &mut branch);
    }
    branch
}

fn branch_list(stdout: &str) -> Option<Value> {
    let branches: Vec<Value> = lines(stdout)
        .map(str::trim)
        .filter(|t| !t.is_empty())
        .map(|t| json!({"name": t.trim_start_matches(['*', ' ']), "current": t.starts_with('*')}))
        .collect();
    (!branches.is_empty()).then(|| json!({"branches": branches}))
}

fn branch_verbose(stdout: &str) -> Option<Value> {
    static LINE: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"(?i)^([*+ ])\s+(\S+)\s+([0-9a-f]+)\s+(?:\[(.+?)\]\s+)?(.*)$").unwrap()
    });
    let branches: Vec<Value> = lines(stdout)
        .filter_map(|l| LINE.captures(l))
        .map(|c| {
            let mut b = json!({"name": &c[2], "current": &c[1] == "*", "commit": &c[3]});
            let message = c[5].trim();
            if !message.is_empty() {
                b["message"] = json!(message);
            }
            if let Some(tracking) = c.get(4) {
                let mut parts = tracking.as_str().split(": ");
                b["upstream"] = json!(parts.next().unwrap_or_default());
                if let Some(state) = parts.next() {
                    if state.contains("gone") {
                        b["gone"] = json!(true);
                    }
                    ahead_behind(state, &mut b);
                }
            }
            b
        })
        .collect();
    (!branches.is_empty()).then(|| json!({"branches": branches}))
}

fn show_current(stdout: &str) -> Option<Value> {
    let current = stdout.trim();
    (!current.is_empty()).then(|| json!({"current": current}))
}

fn diff_stat_summary(line: &str) -> Option<Value> {
    static FILES: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"(\d+) files? changed").unwrap());
    static INS: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"(\d+) insertions?\(\+\)").unwrap());
    static DEL: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"(\d+) deletions?\(-\)").unwrap());
    let number = |re: &Regex| re.captures(line).and_then(|c| c[1].parse::<u64>().ok());
    let mut s = json!({"filesChanged": number(&FILES)?});
    if let Some(n) = number(&INS) {
        s["insertions"] = json!(n);
    }
    if let Some(n) = number(&DEL) {
        s["deletions"] = json!(n);
    }
    Some(s)
}

fn diff_stat(stdout: &str) -> Option<Value> {
    static LINE: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r"^\s*(.+?)\s+\|\s+([0-9]+)\s+(.+)$").unwrap());
    let all: Vec<&str> = lines(stdout).collect();
    let last = *all.last()?;
    let summary = diff_stat_summary(last);
    let file_lines = if summary.is_some() {
        &all[..all.len() - 1]
    } else {
        &all[..]
    };
    let files: Vec<Value> = file_lines
        .iter()
        .filter_map(|l| LINE.captures(l))
        .map(|c| {
            json!({
                "path": c[1].trim(),
                "changes": c[2].parse::<u64>().unwrap_or(0),
                "histogram": c[3].trim(),
            })
        })
        .collect();
    if files.is_empty() && summary.is_none() {
        return None;
    }
    let mut out = json!({"files": files});
    if let Some(s) = summary {
        out["summary"] = s;
    }
    Some(out)
}

fn name_status(stdout: &str) -> Option<Value> {
    let changes: Vec<Value> = lines(stdout)
        .filter_map(|line| {
            let parts: Vec<&str> = line.split('\t').collect();
            if parts.len() < 2 {
                return None;
            }
            let status = parts[0].trim();
            let path = parts[parts.len() - 1].trim();
            if status.is_empty() || path.is_empty() {
                return None;
            }
            let previous = parts[1].trim();
            Some(if parts.len() >= 3 && !previous.is_empty() {
                json!({"status": status, "path": path, "previousPath": previous})
            } else {
                json!({"status": status, "path": path})
            })
        })
        .collect();
    (!changes.is_empty()).then(|| json!({"changes": changes}))
}

fn remote_verbose(stdout: &str) -> Option<Value> {
    static LINE: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r"^(\S+)\s+(.+?)\s+\((fetch|push)\)$").unwrap());
    let mut remotes: Vec<Value> = Vec::new();
    for c in lines(stdout).filter_map(|l| LINE.captures(l)) {
        let at = match remotes.iter().position(|r| r["name"] == c[1]) {
            Some(i) => i,
            None => {
                remotes.push(json!({"name": &c[1]}));
                remotes.len() - 1
            }
        };
        let key = if &c[3] == "fetch" {
            "fetchUrl"
        } else {
            "pushUrl"
        };
        remotes[at][key] = json!(&c[2]);
    }
    (!remotes.is_empty()).then(|| json!({"remotes": remotes}))
}

/// JavaScript's `parseInt(value, 10)`, or the text when it does not start with a number.
fn number_or_raw(value: &str) -> Value {
    let t = value.trim_start();
    let (sign, digits) = match t.strip_prefix('-') {
        Some(d) => (-1i64, d),
        None => (1, t.strip_prefix('+').unwrap_or(t)),
    };
    let end = digits
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(digits.len());
    match digits[..end].parse::<i64>() {
        Ok(n) => json!(sign * n),
        Err(_) => json!(value),
    }
}

fn tasklist_csv(stdout: &str) -> Option<Value> {
    let processes: Vec<Value> = lines(stdout)
        .filter_map(|line| {
            let inner = line.strip_prefix('"')?.strip_suffix('"')?;
            let fields: Vec<&str> = inner.split("\",\"").collect();
            let (image, pid) = (*fields.first()?, *fields.get(1)?);
            if image.is_empty() || pid.is_empty() {
                return None;
            }
            // A field upstream reads as `undefined` is left out of its JSON.
            let mut p = json!({"imageName": image, "pid": number_or_raw(pid)});
            if let Some(s) = fields.get(2) {
                p["sessionName"] = json!(s);
            }
            if let Some(n) = fields.get(3) {
                p["sessionNumber"] = number_or_raw(n);
            }
            if let Some(m) = fields.get(4) {
                p["memUsage"] = json!(m);
            }
            Some(p)
        })
        .collect();
    (!processes.is_empty()).then(|| json!({"processes": processes}))
}

fn path_list(stdout: &str) -> Option<Value> {
    let paths: Vec<&str> = stdout
        .split('\n')
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    (!paths.is_empty()).then(|| json!({"paths": paths}))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(v: &[&str]) -> Vec<String> {
        v.iter().map(|a| a.to_string()).collect()
    }

    #[test]
    fn signatures_and_nulls() {
        assert_eq!(parse("git", &s(&["show"]), "raw output"), None);
        assert_eq!(parse("git", &s(&["status", "--short"]), ""), None);
        assert_eq!(
            parse("git", &s(&["log", "--oneline", "--graph"]), "abc x\n"),
            None
        );
        assert_eq!(command_name("/usr/bin/Where.EXE"), "where");
        assert_eq!(number_or_raw("25,000 K"), json!(25));
        assert_eq!(number_or_raw("n/a"), json!("n/a"));
    }
}
