//! Success checks after a run: a file the command wrote, and a pattern it must contain.
//!
//! For tools that always exit 0 and report success only in a log file (`successFile` +
//! `successFilePattern` of `terminal_run`).

use std::path::{Path, PathBuf};

use regex::Regex;

use crate::error::{Error, Result};

/// The most of a success file that is read for the pattern.
pub(crate) const MAX_CHECK_BYTES: u64 = 16 * 1024 * 1024;

/// What the success-file check found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileCheck {
    pub path: PathBuf,
    pub exists: bool,
    /// Whether the pattern matched; `None` when no pattern was given or the file is missing.
    pub matched: Option<bool>,
    pub ok: bool,
}

/// Compiles a user's regex, or says clearly why it is not one.
pub fn user_regex(pattern: &str) -> Result<Regex> {
    Regex::new(pattern).map_err(|e| invalid_regex(pattern, &e.to_string()))
}

/// The error for a pattern that is not a valid regex: the first line of the parser's reason.
pub(crate) fn invalid_regex(pattern: &str, detail: &str) -> Error {
    let reason = detail
        .lines()
        .map(str::trim)
        .filter(|l| l.starts_with("error:"))
        .map(|l| l.trim_start_matches("error:").trim())
        .next()
        .unwrap_or_else(|| detail.lines().next().unwrap_or("").trim());
    Error::InvalidInput(format!(
        "`{pattern}` is not a valid regex ({reason}); fix it or escape special characters with \\."
    ))
}

/// Checks that `path` exists and, when `pattern` is given, that its text matches.
pub(crate) fn success_file(path: &Path, pattern: Option<&Regex>) -> FileCheck {
    let exists = path.is_file();
    let matched = match (exists, pattern) {
        (true, Some(re)) => Some(read_capped(path).is_some_and(|text| re.is_match(&text))),
        _ => None,
    };
    FileCheck {
        path: path.to_path_buf(),
        exists,
        matched,
        ok: exists && matched != Some(false),
    }
}

fn read_capped(path: &Path) -> Option<String> {
    use std::io::Read;
    let mut bytes = Vec::new();
    // Under the sandbox, never a deny-read file (a link to one is judged where it leads).
    crate::sandbox::open_read(path)
        .ok()?
        .take(MAX_CHECK_BYTES)
        .read_to_end(&mut bytes)
        .ok()?;
    Some(String::from_utf8_lossy(&bytes).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_and_pattern() {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("build.log");
        std::fs::write(&log, "done: 0 error(s)\n").unwrap();
        let re = user_regex(r"0 error").unwrap();
        assert!(success_file(&log, Some(&re)).ok);
        let bad = user_regex(r"^fatal").unwrap();
        let c = success_file(&log, Some(&bad));
        assert_eq!((c.exists, c.matched, c.ok), (true, Some(false), false));
        let c = success_file(&dir.path().join("missing"), Some(&re));
        assert_eq!((c.exists, c.matched, c.ok), (false, None, false));
        assert!(success_file(&log, None).ok);
    }

    #[test]
    fn invalid_regex_is_one_sentence() {
        let e = user_regex("a(b").unwrap_err().to_string();
        assert!(
            e.starts_with("`a(b` is not a valid regex (unclosed group)"),
            "{e}"
        );
        assert!(!e.contains('\n'), "{e}");
    }
}
