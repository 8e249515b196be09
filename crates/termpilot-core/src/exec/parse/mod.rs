//! Structured parsers for read-only commands, chosen by the exact command signature.
//!
//! [`parse`] looks at the program and its arguments and, for a signature listed in
//! smart-terminal's contract (git log/status/branch/rev-parse/diff/ls-files/remote, tasklist,
//! where/which), runs one small pure parser over stdout. Each returns a JSON value and a one
//! line summary. An unknown signature is `None`: the raw output stays the answer.

mod git_branch;
mod git_diff;
mod git_log;
mod git_misc;
mod git_status;
mod tasklist;
mod which;

use serde_json::Value;

/// A parsed output and its one-line summary.
#[derive(Debug, Clone, PartialEq)]
pub struct Parsed {
    pub value: Value,
    pub summary: String,
}

/// The hint for a large output of a command that could have a parser but has none.
pub(crate) const HINT: &str = "Structured parser unavailable for this command signature. If you need this often, propose one.";

/// Raw stdout at least this long earns the [`HINT`].
pub(crate) const HINT_MIN_BYTES: usize = 2048;

/// The program's bare name: no directory, no `.exe`, lower case.
fn program_name(cmd: &str) -> String {
    let base = cmd
        .rsplit(['/', '\\'])
        .next()
        .unwrap_or(cmd)
        .to_ascii_lowercase();
    base.strip_suffix(".exe").map(String::from).unwrap_or(base)
}

/// Parses `stdout` of `cmd args` when the signature is one we know.
pub fn parse(cmd: &str, args: &[String], stdout: &str) -> Option<Parsed> {
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    match program_name(cmd).as_str() {
        "git" => {
            let (sub, rest) = args.split_first()?;
            match *sub {
                "log" => git_log::matches(rest).then(|| git_log::parse(stdout)),
                "status" => git_status::matches(rest).then(|| git_status::parse(stdout)),
                "branch" => git_branch::parse(rest, stdout),
                "rev-parse" => git_misc::rev_parse(rest, stdout),
                "diff" => git_diff::parse(rest, stdout),
                "ls-files" => git_misc::ls_files(rest, stdout),
                "remote" => git_misc::remote(rest, stdout),
                _ => None,
            }
        }
        "which" | "where" => which::matches(&args).then(|| which::parse(stdout)),
        "tasklist" => tasklist::matches(&args).then(|| tasklist::parse(stdout)),
        _ => None,
    }
}

/// Whether a command with no parser earns the [`HINT`]: git, where and which only, after a
/// success with a large output.
pub(crate) fn wants_hint(cmd: &str, succeeded: bool, stdout_len: usize) -> bool {
    matches!(program_name(cmd).as_str(), "git" | "where" | "which")
        && succeeded
        && stdout_len >= HINT_MIN_BYTES
}

/// True for positional arguments (revisions, paths), which never change an output format.
fn positional(arg: &str) -> bool {
    !arg.starts_with('-')
}

/// Lines of `text` without line ends and without empty lines.
fn lines(text: &str) -> impl Iterator<Item = &str> {
    text.lines()
        .map(|l| l.trim_end_matches('\r'))
        .filter(|l| !l.trim().is_empty())
}

/// Undoes git's C-style quoting of unusual paths (`"sp ace.txt"`, `"tab\there"`).
fn unquote(path: &str) -> String {
    let Some(inner) = path.strip_prefix('"').and_then(|p| p.strip_suffix('"')) else {
        return path.to_string();
    };
    let mut bytes = Vec::with_capacity(inner.len());
    let mut chars = inner.bytes().peekable();
    while let Some(b) = chars.next() {
        if b != b'\\' {
            bytes.push(b);
            continue;
        }
        match chars.next() {
            Some(b'n') => bytes.push(b'\n'),
            Some(b't') => bytes.push(b'\t'),
            Some(b'r') => bytes.push(b'\r'),
            Some(d @ b'0'..=b'7') => {
                let mut v = u32::from(d - b'0');
                for _ in 0..2 {
                    if let Some(&n @ b'0'..=b'7') = chars.peek() {
                        v = v * 8 + u32::from(n - b'0');
                        chars.next();
                    }
                }
                bytes.push(v as u8);
            }
            Some(other) => bytes.push(other),
            None => bytes.push(b'\\'),
        }
    }
    String::from_utf8_lossy(&bytes).into_owned()
}

fn plural(n: usize, word: &str) -> String {
    if n == 1 {
        format!("1 {word}")
    } else {
        format!("{n} {word}s")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(v: &[&str]) -> Vec<String> {
        v.iter().map(|a| a.to_string()).collect()
    }

    #[test]
    fn dispatch_by_signature() {
        assert!(parse("git", &s(&["log", "--oneline"]), "abc x\n").is_some());
        assert!(parse("/usr/bin/git", &s(&["status", "--short"]), "").is_some());
        assert!(parse("git.exe", &s(&["ls-files"]), "a\n").is_some());
        assert!(parse("git", &s(&["log"]), "commit abc\n").is_none());
        assert!(parse("git", &s(&["log", "--oneline", "--graph"]), "* abc x\n").is_none());
        assert!(parse("git", &s(&["show"]), "").is_none());
        assert!(parse("ls", &s(&[]), "a\n").is_none());
    }

    #[test]
    fn hint_only_for_large_successful_git_where_which() {
        assert!(wants_hint("git", true, 5000));
        assert!(!wants_hint("git", false, 5000));
        assert!(!wants_hint("git", true, 10));
        assert!(!wants_hint("ls", true, 5000));
    }

    #[test]
    fn unquotes_git_paths() {
        assert_eq!(unquote("\"sp ace.txt\""), "sp ace.txt");
        assert_eq!(unquote("\"t\\tab\""), "t\tab");
        assert_eq!(unquote("\"\\303\\251t\\303\\251\""), "été");
        assert_eq!(unquote("plain"), "plain");
    }
}
