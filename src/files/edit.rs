//! Exact text edits: replace one occurrence (or all), or fail and leave the file untouched.

use std::fs;
use std::path::{Path, PathBuf};

use super::write::replace;
use crate::error::{Error, Result};

/// What an edit did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Edited {
    pub path: PathBuf,
    pub replacements: usize,
}

/// Replaces `old` with `new` in the UTF-8 file at `path`. Without `replace_all`, `old` must
/// occur exactly once; 0 or 2+ occurrences are an error and the file is not touched.
/// The rewrite is atomic and keeps the file's permissions.
pub fn edit(path: &Path, old: &str, new: &str, replace_all: bool) -> Result<Edited> {
    if old.is_empty() {
        return Err(Error::InvalidInput(
            "`old_text` is empty; pass the exact text to replace.".into(),
        ));
    }
    let target = fs::canonicalize(path).unwrap_or(path.to_path_buf());
    let meta = fs::metadata(&target).map_err(|e| {
        Error::io(
            format!("Could not read `{}`", path.display()),
            "Check that the file exists; terminal_write_file creates new files",
            e,
        )
    })?;
    if meta.is_dir() {
        return Err(Error::InvalidInput(format!(
            "`{}` is a directory; pass the path of a file.",
            path.display()
        )));
    }
    let bytes = fs::read(&target).map_err(|e| {
        Error::io(
            format!("Could not read `{}`", path.display()),
            "Check its permissions",
            e,
        )
    })?;
    let text = String::from_utf8(bytes).map_err(|_| {
        Error::InvalidInput(format!(
            "`{}` is not UTF-8 text, so it cannot be edited as text; rewrite it with terminal_write_file instead.",
            path.display()
        ))
    })?;
    let count = text.matches(old).count();
    if count == 0 {
        return Err(Error::InvalidInput(format!(
            "`old_text` was not found in `{}` (0 matches); the file is unchanged. Check whitespace and line endings, or read the file first.",
            path.display()
        )));
    }
    if count > 1 && !replace_all {
        return Err(Error::InvalidInput(format!(
            "`old_text` matches {count} times in `{}`; the file is unchanged. Include more surrounding text to make it unique, or pass replace_all true.",
            path.display()
        )));
    }
    let updated = if replace_all {
        text.replace(old, new)
    } else {
        text.replacen(old, new, 1)
    };
    replace(&target, updated.as_bytes(), Some(&meta))?;
    Ok(Edited {
        path: target,
        replacements: count,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_match_all_matches_and_failures_leave_the_file_alone() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("x.txt");
        fs::write(&f, "a b a\r\nc").unwrap();
        let e = edit(&f, "a", "z", false).unwrap_err().to_string();
        assert!(e.contains("matches 2 times"), "{e}");
        let e = edit(&f, "q", "z", false).unwrap_err().to_string();
        assert!(e.contains("0 matches"), "{e}");
        assert_eq!(fs::read(&f).unwrap(), b"a b a\r\nc");
        assert_eq!(edit(&f, "b", "B", false).unwrap().replacements, 1);
        assert_eq!(edit(&f, "a", "z", true).unwrap().replacements, 2);
        assert_eq!(fs::read_to_string(&f).unwrap(), "z B z\r\nc");
    }

    #[test]
    fn non_text_and_directories_are_errors() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("bin");
        fs::write(&f, [0xff, 0xfe, b'a']).unwrap();
        assert!(
            edit(&f, "a", "b", false)
                .unwrap_err()
                .to_string()
                .contains("not UTF-8")
        );
        assert_eq!(fs::read(&f).unwrap(), [0xff, 0xfe, b'a']);
        assert!(
            edit(dir.path(), "a", "b", false)
                .unwrap_err()
                .to_string()
                .contains("directory")
        );
        assert!(edit(&dir.path().join("none"), "a", "b", false).is_err());
        assert!(edit(&f, "", "b", false).is_err());
    }
}
