//! The backtracking line matcher `grep_files` falls back to for JavaScript-style patterns.
//!
//! ripgrep's engine (finite automata, linear time) refuses lookaround (`foo(?=bar)`,
//! `(?<!x)y`) and backreferences (`(a)\1`), which JavaScript regexes have. For those
//! patterns the search uses `fancy-regex`, which handles them by backtracking and hands
//! everything else inside the pattern back to the fast engine. The matcher reports no line
//! terminator, so the searcher hands it one line at a time (terminator stripped): a
//! lookahead never sees past the end of its line, as in a per-line JavaScript `test`.
//!
//! A pattern that backtracks too much on some line is a runtime error in `fancy-regex`;
//! it is kept here and reported after the file's search, never taken for "no match".

use std::sync::Mutex;

use fancy_regex::{BytesMode, Regex, RegexBuilder};
use grep_matcher::{Match, Matcher, NoCaptures};

/// A `grep_matcher::Matcher` over `fancy_regex`, searching one line at a time.
#[derive(Debug)]
pub(crate) struct BacktrackMatcher {
    regex: Regex,
    /// The first runtime failure (backtrack limit), to be reported after the search.
    failure: Mutex<Option<String>>,
}

/// A runtime failure of the backtracking engine.
#[derive(Debug)]
pub(crate) struct BacktrackError(String);

impl std::fmt::Display for BacktrackError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl BacktrackMatcher {
    /// Compiles `pattern`; `Err` carries the engine's reason.
    pub(crate) fn new(pattern: &str, case_insensitive: bool) -> Result<Self, String> {
        let regex = RegexBuilder::new(pattern)
            .case_insensitive(case_insensitive)
            .bytes_mode(BytesMode::UnicodeBytes)
            .build()
            .map_err(|e| e.to_string())?;
        Ok(BacktrackMatcher {
            regex,
            failure: Mutex::new(None),
        })
    }

    /// The first runtime failure since the last call, if any (and clears it).
    pub(crate) fn take_failure(&self) -> Option<String> {
        self.failure.lock().ok()?.take()
    }
}

impl Matcher for BacktrackMatcher {
    type Captures = NoCaptures;
    type Error = BacktrackError;

    fn find_at(&self, haystack: &[u8], at: usize) -> Result<Option<Match>, BacktrackError> {
        match self.regex.find_from_pos(haystack, at) {
            Ok(found) => Ok(found.map(|m| Match::new(m.start(), m.end()))),
            Err(e) => {
                let reason = e.to_string();
                if let Ok(mut slot) = self.failure.lock() {
                    slot.get_or_insert(reason.clone());
                }
                Err(BacktrackError(reason))
            }
        }
    }

    fn new_captures(&self) -> Result<NoCaptures, BacktrackError> {
        Ok(NoCaptures::new())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn finds(pattern: &str, line: &str) -> Option<(usize, usize)> {
        let m = BacktrackMatcher::new(pattern, false).unwrap();
        m.find(line.as_bytes())
            .unwrap()
            .map(|m| (m.start(), m.end()))
    }

    #[test]
    fn lookaround_and_backreferences() {
        assert_eq!(finds("foo(?=bar)", "foobar"), Some((0, 3)));
        assert_eq!(finds("foo(?=bar)", "foobaz"), None);
        assert_eq!(finds("(?<!x)y", "xy ay"), Some((4, 5)));
        assert_eq!(finds(r"(a)\1", "ab aa"), Some((3, 5)));
        assert_eq!(finds(r"(?<q>['\x22]).*\k<q>", "say 'hi'"), Some((4, 8)));
    }

    #[test]
    fn not_utf8_is_searched() {
        let m = BacktrackMatcher::new("b(?=c)", false).unwrap();
        assert!(m.find(b"\xff\xfebc").unwrap().is_some());
    }

    #[test]
    fn case_insensitive() {
        let m = BacktrackMatcher::new("foo(?=bar)", true).unwrap();
        assert!(m.find(b"FOOBAR").unwrap().is_some());
    }
}
