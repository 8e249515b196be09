//! Exact text edits: replace one occurrence (or all), or fail and leave the file untouched.

use std::fs;
use std::path::{Path, PathBuf};

use std::io::Read;

use super::write::{Pin, check_links, pinned_target, replace, target_of};
use crate::error::{Error, Fault, Result};

/// What an edit did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Edited {
    pub path: PathBuf,
    pub replacements: usize,
}

/// The largest file `edit` reads (64 MiB).
pub(crate) const MAX_EDIT_BYTES: u64 = 64 * 1024 * 1024;

/// Replaces `old` with `new` in the UTF-8 file at `path`. Without `replace_all`, `old` must
/// occur exactly once; 0 or 2+ occurrences are an error and the file is not touched.
/// The rewrite is atomic and keeps the file's owner, group and permissions. Only an existing
/// regular file of at most [`MAX_EDIT_BYTES`] is edited (a symlink's regular target is); a
/// file with other hard links only with `break_links`.
pub fn edit(
    path: &Path,
    old: &str,
    new: &str,
    replace_all: bool,
    break_links: bool,
) -> Result<Edited> {
    edit_at(path, None, old, new, replace_all, break_links)
}

/// As [`edit`], through `pin` when there is one (see [`Pin`]).
pub fn edit_at(
    path: &Path,
    pin: Option<Pin<'_>>,
    old: &str,
    new: &str,
    replace_all: bool,
    break_links: bool,
) -> Result<Edited> {
    if old.is_empty() {
        return Err(Fault::EditEmptyText.into());
    }
    let (target, meta) = match pin {
        Some(pin) => pinned_target(path, pin.at)?,
        None => target_of(path)?,
    };
    let Some(meta) = meta else {
        return Err(Fault::EditMissingFile { path: path.into() }.into());
    };
    if meta.len() > MAX_EDIT_BYTES {
        return Err(Fault::EditTooLarge {
            path: path.into(),
            mib: meta.len() / (1024 * 1024),
            limit_mib: MAX_EDIT_BYTES / (1024 * 1024),
        }
        .into());
    }
    check_links(path, &meta, break_links)?;
    let bytes = read_bounded(&target).map_err(|e| {
        Error::io(
            format!("Could not read `{}`", path.display()),
            "Check its permissions",
            e,
        )
    })?;
    if bytes.len() as u64 > MAX_EDIT_BYTES {
        return Err(Fault::EditGrew {
            path: path.into(),
            limit_mib: MAX_EDIT_BYTES / (1024 * 1024),
        }
        .into());
    }
    let text = String::from_utf8(bytes).map_err(|_| Fault::EditNotText { path: path.into() })?;
    let count = text.matches(old).count();
    if count == 0 {
        return Err(Fault::EditNoMatch { path: path.into() }.into());
    }
    if count > 1 && !replace_all {
        return Err(Fault::EditManyMatches {
            path: path.into(),
            count,
        }
        .into());
    }
    let updated = if replace_all {
        text.replace(old, new)
    } else {
        text.replacen(old, new, 1)
    };
    replace(&target, updated.as_bytes(), Some(&meta))?;
    Ok(Edited {
        path: pin.map_or(target, |p| p.real.to_path_buf()),
        replacements: count,
    })
}

/// At most one byte past [`MAX_EDIT_BYTES`] of `path`, opened without following a link or
/// blocking, and only if it is still a regular file.
fn read_bounded(path: &Path) -> std::io::Result<Vec<u8>> {
    let mut options = fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::custom_flags(
        &mut options,
        libc::O_NOFOLLOW | libc::O_NONBLOCK,
    );
    let file = options.open(path)?;
    if !file.metadata()?.is_file() {
        return Err(std::io::Error::other("it is no longer a regular file"));
    }
    let mut bytes = Vec::new();
    file.take(MAX_EDIT_BYTES + 1).read_to_end(&mut bytes)?;
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_match_all_matches_and_failures_leave_the_file_alone() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("x.txt");
        fs::write(&f, "a b a\r\nc").unwrap();
        let e = edit(&f, "a", "z", false, false).unwrap_err().to_string();
        assert!(e.contains("matches 2 times"), "{e}");
        let e = edit(&f, "q", "z", false, false).unwrap_err().to_string();
        assert!(e.contains("0 matches"), "{e}");
        assert_eq!(fs::read(&f).unwrap(), b"a b a\r\nc");
        assert_eq!(edit(&f, "b", "B", false, false).unwrap().replacements, 1);
        assert_eq!(edit(&f, "a", "z", true, false).unwrap().replacements, 2);
        assert_eq!(fs::read_to_string(&f).unwrap(), "z B z\r\nc");
    }

    #[test]
    fn non_text_and_directories_are_errors() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("bin");
        fs::write(&f, [0xff, 0xfe, b'a']).unwrap();
        assert!(
            edit(&f, "a", "b", false, false)
                .unwrap_err()
                .to_string()
                .contains("not UTF-8")
        );
        assert_eq!(fs::read(&f).unwrap(), [0xff, 0xfe, b'a']);
        assert!(
            edit(dir.path(), "a", "b", false, false)
                .unwrap_err()
                .to_string()
                .contains("directory")
        );
        assert!(edit(&dir.path().join("none"), "a", "b", false, false).is_err());
        assert!(edit(&f, "", "b", false, false).is_err());
    }
}
