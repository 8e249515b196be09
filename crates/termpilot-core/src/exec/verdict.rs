//! `terminal_run`'s rules after a run: whether it succeeded, which parser reads its stdout
//! and what of it the caller gets, and the success-file check.
//!
//! Pure decisions on an [`Outcome`]; the face maps parameters to [`Rules`] and shapes the
//! [`Verdict`] into its result. A run is `ok` when it did not time out, its exit code is the
//! expected one (any, when none is expected) and, with a success file, the file exists and
//! matches its pattern. Only direct commands are parsed (a shell line's stdout is not one
//! command's); the parser is chosen by the command signature ([`parse::parse`]). A stdout cut
//! short by its cap is summarised from the whole stream (when it is at most
//! [`MAX_PARSE_BYTES`]) but never returned parsed, since `parsed` must describe all of it.

use std::path::PathBuf;

use regex::Regex;
use serde_json::Value;

use super::capture::Captured;
use super::checks::{self, FileCheck};
use super::parse;
use super::runner::Outcome;

/// Parsing reads at most this much of a spilled stream (for summaries).
pub(crate) const MAX_PARSE_BYTES: u64 = 16 * 1024 * 1024;

/// What the caller asked of a run's result.
#[derive(Debug, Clone, Default)]
pub struct Rules {
    /// The exit code that means success; `None` accepts any.
    pub success_exit_code: Option<i32>,
    /// A file the command must leave (absolute, or already joined to the run's directory).
    pub success_file: Option<PathBuf>,
    /// A regex the success file's text must match.
    pub success_file_pattern: Option<Regex>,
    /// The command line went through a shell (its stdout is never parsed).
    pub shell: bool,
    /// Return the parser's value.
    pub parse: bool,
    /// Return the parser's one-line summary instead of the raw text.
    pub summary: bool,
    /// With `parse`, drop the raw text once a value is returned.
    pub parse_only: bool,
}

/// What the rules made of a run.
#[derive(Debug, Clone, Default)]
pub struct Verdict {
    pub ok: bool,
    /// The exit code was the expected one.
    pub exit_ok: bool,
    /// The parser's one-line summary, when asked for and a parser read the stream.
    pub summary: Option<String>,
    /// The parser's value, when asked for and the whole stream was parsed.
    pub parsed: Option<Value>,
    /// The raw text is replaced by the summary or the parsed value.
    pub drop_raw: bool,
    /// Said when parsing was asked for, no parser fits and the output was large.
    pub hint: Option<&'static str>,
    /// The success-file check, when a success file was named.
    pub file: Option<FileCheck>,
}

/// The text of a whole stream for a parser or summary, when it is not too big.
pub(crate) fn whole_text(stream: &Captured) -> Option<String> {
    (stream.total_bytes <= MAX_PARSE_BYTES).then(|| stream.full_text())
}

/// Judges `out`, the run of `cmd args`, by `rules`.
pub fn judge(cmd: &str, args: &[String], out: &Outcome, rules: &Rules) -> Verdict {
    let exit_ok = rules
        .success_exit_code
        .is_none_or(|c| out.exit_code == Some(c));
    let mut v = Verdict {
        ok: !out.timed_out && exit_ok,
        exit_ok,
        ..Verdict::default()
    };
    if !out.timed_out && !rules.shell {
        read_stdout(cmd, args, &out.stdout, rules, &mut v);
    }
    if let Some(path) = &rules.success_file {
        let check = checks::success_file(path, rules.success_file_pattern.as_ref());
        v.ok &= check.ok;
        v.file = Some(check);
    }
    v
}

/// The parser's part: which parser, and what of its reading the caller gets.
fn read_stdout(cmd: &str, args: &[String], stdout: &Captured, rules: &Rules, v: &mut Verdict) {
    let parsed = if stdout.truncated {
        if rules.summary {
            whole_text(stdout).and_then(|t| parse::parse(cmd, args, &t))
        } else {
            None
        }
    } else {
        parse::parse(cmd, args, &stdout.text())
    };
    match parsed {
        Some(parsed) => {
            if rules.summary {
                v.summary = Some(parsed.summary);
                v.drop_raw = true;
            }
            if rules.parse && !stdout.truncated {
                v.parsed = Some(parsed.value);
                if rules.parse_only {
                    v.drop_raw = true;
                }
            }
        }
        None if rules.parse && parse::wants_hint(cmd, v.exit_ok, stdout.total_bytes as usize) => {
            v.hint = Some(parse::HINT);
        }
        None => {}
    }
}

/// `terminal_run_paged`'s rule: it succeeded when it did not time out and exited 0.
pub fn paged_ok(out: &Outcome) -> bool {
    !out.timed_out && out.exit_code == Some(0)
}

/// The one-line summary of a paged run's whole stdout, when a parser reads it.
pub fn paged_summary(cmd: &str, args: &[String], out: &Outcome) -> Option<String> {
    if out.timed_out {
        return None;
    }
    whole_text(&out.stdout)
        .and_then(|t| parse::parse(cmd, args, &t))
        .map(|p| p.summary)
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    fn outcome(exit: Option<i32>, timed_out: bool, stdout: &str) -> Outcome {
        Outcome {
            exit_code: exit,
            signal: None,
            timed_out,
            duration: Duration::ZERO,
            stdout: Captured {
                preview: stdout.as_bytes().to_vec(),
                total_bytes: stdout.len() as u64,
                ..Captured::default()
            },
            stderr: Captured::default(),
            program: "git".into(),
            survivors: Vec::new(),
        }
    }

    fn args(a: &[&str]) -> Vec<String> {
        a.iter().map(|s| s.to_string()).collect()
    }

    const STATUS: &str = "## main\n M a.txt\n";

    #[test]
    fn ok_needs_the_expected_exit_code_and_no_timeout() {
        let rules = Rules {
            success_exit_code: Some(0),
            ..Rules::default()
        };
        assert!(judge("true", &[], &outcome(Some(0), false, ""), &rules).ok);
        assert!(!judge("false", &[], &outcome(Some(1), false, ""), &rules).ok);
        assert!(!judge("sleep", &[], &outcome(None, true, ""), &rules).ok);
        let any = Rules::default();
        assert!(judge("false", &[], &outcome(Some(1), false, ""), &any).ok);
        assert!(!judge("sleep", &[], &outcome(None, true, ""), &any).ok);
    }

    #[test]
    fn a_direct_command_is_parsed_by_its_signature_and_a_shell_line_is_not() {
        let a = args(&["status", "--porcelain=v1", "-b"]);
        let rules = Rules {
            parse: true,
            ..Rules::default()
        };
        let v = judge("git", &a, &outcome(Some(0), false, STATUS), &rules);
        assert!(v.parsed.is_some(), "{v:?}");
        assert!(!v.drop_raw);
        let shell = Rules {
            shell: true,
            ..rules.clone()
        };
        let v = judge("git", &a, &outcome(Some(0), false, STATUS), &shell);
        assert!(v.parsed.is_none() && v.summary.is_none());
        let only = Rules {
            parse_only: true,
            ..rules
        };
        assert!(judge("git", &a, &outcome(Some(0), false, STATUS), &only).drop_raw);
    }

    #[test]
    fn a_summary_replaces_the_raw_text_and_a_truncated_stream_is_never_parsed() {
        let a = args(&["status", "--porcelain=v1", "-b"]);
        let rules = Rules {
            parse: true,
            summary: true,
            ..Rules::default()
        };
        let v = judge("git", &a, &outcome(Some(0), false, STATUS), &rules);
        assert!(v.summary.is_some() && v.drop_raw);
        let mut cut = outcome(Some(0), false, STATUS);
        cut.stdout.truncated = true;
        let v = judge("git", &a, &cut, &rules);
        assert!(v.parsed.is_none(), "a cut stream has no parsed value");
        assert!(v.summary.is_some(), "summarised from the whole stream");
    }

    #[test]
    fn a_missing_success_file_fails_the_run() {
        let dir = tempfile::tempdir().unwrap();
        let rules = Rules {
            success_file: Some(dir.path().join("done.txt")),
            ..Rules::default()
        };
        let v = judge("true", &[], &outcome(Some(0), false, ""), &rules);
        assert!(!v.ok);
        assert!(!v.file.unwrap().exists);
        std::fs::write(dir.path().join("done.txt"), "BUILD OK\n").unwrap();
        let with_pattern = Rules {
            success_file_pattern: Some(Regex::new("BUILD OK").unwrap()),
            ..rules
        };
        let v = judge("true", &[], &outcome(Some(0), false, ""), &with_pattern);
        assert!(v.ok && v.file.unwrap().matched == Some(true));
    }

    #[test]
    fn paged_runs_succeed_on_exit_zero_only() {
        assert!(paged_ok(&outcome(Some(0), false, "")));
        assert!(!paged_ok(&outcome(Some(2), false, "")));
        assert!(!paged_ok(&outcome(None, true, "")));
    }
}
