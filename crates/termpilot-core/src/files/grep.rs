//! Searching files with ripgrep's libraries (`ignore` walks, `grep-searcher` reads).
//!
//! Skips the usual build and vendor folders (node_modules, .git, bin, obj, dist, target),
//! files over 5 MiB and binary files (a NUL byte: any matches already found in that file are
//! dropped), and honours `.gitignore` inside git repositories as ripgrep does. Files are
//! visited in name order so results are deterministic. Each match carries its own context
//! lines before and after, even when neighbouring matches share them.
//!
//! Patterns are JavaScript-style: what ripgrep's engine accepts runs on it; a pattern it
//! refuses (lookaround, backreferences) runs on [`super::backtrack`] instead, and only a
//! pattern both engines refuse is an error — never a silent "no matches".

use std::collections::VecDeque;
use std::path::{Path, PathBuf};

use grep_matcher::Matcher;
use grep_regex::RegexMatcherBuilder;
use grep_searcher::{BinaryDetection, Searcher, SearcherBuilder, Sink, SinkContext, SinkMatch};
use ignore::WalkBuilder;
use ignore::overrides::OverrideBuilder;
use tokio_util::sync::CancellationToken;

use crate::error::{Error, Result};
use crate::exec::checks::invalid_regex;
use crate::files::backtrack::BacktrackMatcher;

/// Directories never searched.
pub(crate) const SKIPPED_DIRS: &[&str] = &["node_modules", ".git", "bin", "obj", "dist", "target"];
/// Files larger than this are not searched.
pub(crate) const MAX_FILE_BYTES: u64 = 5 * 1024 * 1024;
/// A matched or context line longer than this is cut (minified files).
pub(crate) const MAX_LINE_CHARS: usize = 1000;

/// What to look for, and where.
#[derive(Debug, Clone)]
pub struct GrepOptions {
    pub pattern: String,
    /// An absolute file or directory.
    pub path: PathBuf,
    /// A file-name filter with `*` and `?` (gitignore-style globs also work).
    pub glob: Option<String>,
    pub case_sensitive: bool,
    pub max_results: usize,
    pub context_lines: usize,
}

/// One matching line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GrepMatch {
    pub file: String,
    pub line_number: u64,
    pub line: String,
    pub before: Vec<String>,
    pub after: Vec<String>,
}

/// Everything a search found.
#[derive(Debug, Clone, Default)]
pub struct GrepResult {
    pub matches: Vec<GrepMatch>,
    pub files_scanned: usize,
    /// More matches exist than `max_results`.
    pub truncated: bool,
    pub skipped_binary: usize,
    pub skipped_large: usize,
}

/// Searches `opts.path`; blocking (run it on a blocking thread). Stops when `cancel` fires.
pub fn grep(opts: &GrepOptions, cancel: &CancellationToken) -> Result<GrepResult> {
    let fast = RegexMatcherBuilder::new()
        .case_insensitive(!opts.case_sensitive)
        .line_terminator(Some(b'\n'))
        .build(&opts.pattern);
    let fast_error = match fast {
        Ok(matcher) => return search(opts, cancel, &matcher, || None),
        Err(e) => e.to_string(),
    };
    let Ok(backtracking) = BacktrackMatcher::new(&opts.pattern, !opts.case_sensitive) else {
        return Err(invalid_regex(&opts.pattern, &fast_error));
    };
    search(opts, cancel, &backtracking, || backtracking.take_failure())
}

/// Walks and searches with one matcher; `failure` says whether the matcher failed at run
/// time on the file just searched (the backtracking engine's limit), which is an error.
fn search<M: Matcher>(
    opts: &GrepOptions,
    cancel: &CancellationToken,
    matcher: &M,
    failure: impl Fn() -> Option<String>,
) -> Result<GrepResult> {
    if !opts.path.is_absolute() {
        return Err(Error::InvalidInput(format!(
            "`{}` is a relative path; pass an absolute file or directory.",
            opts.path.display()
        )));
    }
    if !opts.path.exists() {
        return Err(Error::InvalidInput(format!(
            "`{}` does not exist; pass an existing file or directory.",
            opts.path.display()
        )));
    }
    let mut walk = WalkBuilder::new(&opts.path);
    walk.hidden(false)
        .sort_by_file_name(|a, b| a.cmp(b))
        .filter_entry(|e| {
            !(e.depth() > 0
                && e.file_type().is_some_and(|t| t.is_dir())
                && e.file_name()
                    .to_str()
                    .is_some_and(|n| SKIPPED_DIRS.contains(&n)))
        });
    if let Some(glob) = opts.glob.as_deref().filter(|g| !g.trim().is_empty()) {
        let mut ob = OverrideBuilder::new(&opts.path);
        ob.add(glob).map_err(|e| {
            Error::InvalidInput(format!(
                "`{glob}` is not a valid glob ({e}); pass a name pattern like *.rs."
            ))
        })?;
        walk.overrides(ob.build().map_err(|e| {
            Error::InvalidInput(format!(
                "`{glob}` is not a valid glob ({e}); pass a name pattern like *.rs."
            ))
        })?);
    }
    let mut searcher = SearcherBuilder::new()
        .line_number(true)
        .before_context(opts.context_lines)
        .after_context(opts.context_lines)
        .binary_detection(BinaryDetection::quit(b'\x00'))
        .build();

    let mut result = GrepResult::default();
    for entry in walk.build() {
        if cancel.is_cancelled() {
            return Err(Error::Other("The search was cancelled.".into()));
        }
        let Ok(entry) = entry else { continue };
        if !entry.file_type().is_some_and(|t| t.is_file()) {
            continue;
        }
        if crate::sandbox::check_read(entry.path()).is_err() {
            continue; // a deny-read path of the sandbox
        }
        if entry.metadata().map(|m| m.len()).unwrap_or(0) > MAX_FILE_BYTES {
            result.skipped_large += 1;
            continue;
        }
        let remaining = opts.max_results - result.matches.len();
        let mut sink = FileSink::new(entry.path(), opts.context_lines, remaining);
        // Judged again on the file actually opened: a link swapped in since the walk saw
        // the entry cannot lead into a deny-read path.
        let searched = match crate::sandbox::open_read(entry.path()) {
            Ok(file) => searcher.search_file(matcher, &file, &mut sink),
            Err(e) => Err(e),
        };
        if let Some(reason) = failure() {
            return Err(Error::InvalidInput(format!(
                "`{}` is too costly to match on {} ({reason}); simplify the pattern.",
                opts.pattern,
                entry.path().display()
            )));
        }
        if searched.is_err() {
            continue; // unreadable: permissions, vanished
        }
        result.files_scanned += 1;
        if sink.binary {
            result.skipped_binary += 1;
            continue;
        }
        result.matches.extend(sink.matches);
        if sink.overflow {
            result.truncated = true;
            break;
        }
    }
    Ok(result)
}

/// Collects one file's matches with their own before/after lines.
struct FileSink {
    file: String,
    context: u64,
    /// The last `context` lines the searcher reported (matches and context alike).
    recent: VecDeque<(u64, String)>,
    matches: Vec<GrepMatch>,
    remaining: usize,
    overflow: bool,
    binary: bool,
}

impl FileSink {
    fn new(path: &Path, context: usize, remaining: usize) -> Self {
        FileSink {
            file: path.display().to_string(),
            context: context as u64,
            recent: VecDeque::new(),
            matches: Vec::new(),
            remaining,
            overflow: false,
            binary: false,
        }
    }

    /// A line the searcher reported: after-context of earlier matches, before-context of later.
    fn saw(&mut self, number: u64, text: &str) {
        if self.context == 0 {
            return;
        }
        for m in self.matches.iter_mut().rev() {
            if number <= m.line_number {
                continue;
            }
            if number - m.line_number > self.context {
                break;
            }
            m.after.push(text.to_string());
        }
        self.recent.push_back((number, text.to_string()));
        while self.recent.len() as u64 > self.context {
            self.recent.pop_front();
        }
    }
}

fn line_text(bytes: &[u8]) -> String {
    let mut b = bytes;
    b = b.strip_suffix(b"\n").unwrap_or(b);
    b = b.strip_suffix(b"\r").unwrap_or(b);
    let text = String::from_utf8_lossy(b);
    if text.chars().count() > MAX_LINE_CHARS {
        let cut: String = text.chars().take(MAX_LINE_CHARS).collect();
        format!("{cut}…")
    } else {
        text.into_owned()
    }
}

impl Sink for FileSink {
    type Error = std::io::Error;

    fn matched(&mut self, _: &Searcher, mat: &SinkMatch<'_>) -> Result<bool, Self::Error> {
        let number = mat.line_number().unwrap_or(0);
        let text = line_text(mat.bytes());
        if self.remaining == 0 {
            self.overflow = true;
            return Ok(false);
        }
        let before: Vec<String> = self
            .recent
            .iter()
            .filter(|(n, _)| *n < number && number - *n <= self.context)
            .map(|(_, t)| t.clone())
            .collect();
        self.saw(number, &text);
        self.matches.push(GrepMatch {
            file: self.file.clone(),
            line_number: number,
            line: text,
            before,
            after: Vec::new(),
        });
        self.remaining -= 1;
        Ok(true)
    }

    fn context(&mut self, _: &Searcher, ctx: &SinkContext<'_>) -> Result<bool, Self::Error> {
        let number = ctx.line_number().unwrap_or(0);
        self.saw(number, &line_text(ctx.bytes()));
        Ok(true)
    }

    fn binary_data(&mut self, _: &Searcher, _offset: u64) -> Result<bool, Self::Error> {
        self.binary = true;
        Ok(false)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    fn opts(path: &Path, pattern: &str) -> GrepOptions {
        GrepOptions {
            pattern: pattern.into(),
            path: path.to_path_buf(),
            glob: None,
            case_sensitive: false,
            max_results: 200,
            context_lines: 0,
        }
    }

    fn tree() -> tempfile::TempDir {
        let d = tempfile::tempdir().unwrap();
        let p = d.path();
        fs::write(
            p.join("a.txt"),
            "one\nNeedle two\nthree\nneedle four\nfive\n",
        )
        .unwrap();
        fs::create_dir_all(p.join("node_modules/x")).unwrap();
        fs::write(p.join("node_modules/x/n.txt"), "needle\n").unwrap();
        fs::create_dir_all(p.join("src")).unwrap();
        fs::write(p.join("src/b.rs"), "fn needle() {}\n").unwrap();
        fs::write(p.join("bin.dat"), b"needle\0\x01\x02").unwrap();
        d
    }

    #[test]
    fn finds_skips_and_filters() {
        let d = tree();
        let r = grep(&opts(d.path(), "needle"), &CancellationToken::new()).unwrap();
        let found: Vec<(String, u64)> = r
            .matches
            .iter()
            .map(|m| {
                (
                    m.file.rsplit('/').next().unwrap().to_string(),
                    m.line_number,
                )
            })
            .collect();
        assert_eq!(
            found,
            vec![("a.txt".into(), 2), ("a.txt".into(), 4), ("b.rs".into(), 1)]
        );
        assert_eq!(r.skipped_binary, 1);
        assert!(!r.truncated);
        let mut o = opts(d.path(), "needle");
        o.glob = Some("*.rs".into());
        o.case_sensitive = true;
        let r = grep(&o, &CancellationToken::new()).unwrap();
        assert_eq!(r.matches.len(), 1);
        assert_eq!(r.matches[0].line, "fn needle() {}");
    }

    #[test]
    fn context_is_per_match() {
        let d = tree();
        let mut o = opts(&d.path().join("a.txt"), "needle");
        o.context_lines = 2;
        let r = grep(&o, &CancellationToken::new()).unwrap();
        assert_eq!(r.matches[0].before, vec!["one"]);
        assert_eq!(r.matches[0].after, vec!["three", "needle four"]);
        assert_eq!(r.matches[1].before, vec!["Needle two", "three"]);
        assert_eq!(r.matches[1].after, vec!["five"]);
    }

    #[test]
    fn javascript_lookaround_and_backreferences() {
        let d = tempfile::tempdir().unwrap();
        fs::write(
            d.path().join("js.txt"),
            "foobar\nfoobaz\nabba\nabcd\nprice: $5\n",
        )
        .unwrap();
        let lines = |pattern: &str, case_sensitive: bool| -> Vec<u64> {
            let mut o = opts(d.path(), pattern);
            o.case_sensitive = case_sensitive;
            grep(&o, &CancellationToken::new())
                .unwrap()
                .matches
                .iter()
                .map(|m| m.line_number)
                .collect()
        };
        assert_eq!(lines("foo(?=bar)", true), vec![1]);
        assert_eq!(lines("foo(?!bar)", true), vec![2]);
        assert_eq!(lines("FOO(?=BAR)", false), vec![1]);
        assert_eq!(lines(r"(b)\1", true), vec![3]);
        assert_eq!(lines(r"(?<=\$)\d", true), vec![5]);
        // A lookahead does not see past the end of its line.
        assert_eq!(lines("baz(?=\\s*abba)", true), Vec::<u64>::new());
        let mut o = opts(d.path(), "(?=a(");
        o.case_sensitive = true;
        let e = grep(&o, &CancellationToken::new()).unwrap_err().to_string();
        assert!(e.contains("not a valid regex"), "{e}");
    }

    #[test]
    fn limit_and_errors() {
        let d = tree();
        let mut o = opts(d.path(), "needle");
        o.max_results = 2;
        let r = grep(&o, &CancellationToken::new()).unwrap();
        assert_eq!((r.matches.len(), r.truncated), (2, true));
        let e = grep(&opts(d.path(), "a("), &CancellationToken::new())
            .unwrap_err()
            .to_string();
        assert!(e.contains("not a valid regex"), "{e}");
        assert!(grep(&opts(Path::new("rel"), "x"), &CancellationToken::new()).is_err());
        assert!(
            grep(
                &opts(&d.path().join("nope"), "x"),
                &CancellationToken::new()
            )
            .is_err()
        );
    }
}
