//! Writing a file: atomically (temp file in the same directory, fsync, rename) unless
//! appending, keeping an existing file's permissions and following a symlink to its target.

use std::fs::{self, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use crate::error::{Error, Result};

/// What a write did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Written {
    /// The file written (a symlink's target when the path was a symlink).
    pub path: PathBuf,
    pub bytes_written: u64,
    /// The file's size afterwards.
    pub size: u64,
    /// The file did not exist before.
    pub created: bool,
    pub appended: bool,
}

/// Writes `bytes` to the absolute `path`: replaced atomically, or appended.
/// `create_dirs` creates missing parent directories.
pub fn write(path: &Path, bytes: &[u8], append: bool, create_dirs: bool) -> Result<Written> {
    let target = target_of(path)?;
    let existing = fs::metadata(&target).ok();
    let parent = target
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .ok_or_else(|| {
            Error::InvalidInput(format!(
                "`{}` has no parent directory; pass a file path.",
                path.display()
            ))
        })?;
    if !parent.is_dir() {
        if parent.exists() {
            return Err(Error::InvalidInput(format!(
                "`{}` is not a directory, so `{}` cannot be created in it.",
                parent.display(),
                path.display()
            )));
        }
        if !create_dirs {
            return Err(Error::InvalidInput(format!(
                "The directory `{}` does not exist; create it or pass create_dirs true.",
                parent.display()
            )));
        }
        fs::create_dir_all(parent).map_err(|e| {
            Error::io(
                format!("Could not create `{}`", parent.display()),
                "Check the path and permissions",
                e,
            )
        })?;
    }
    if append {
        let mut file = OpenOptions::new()
            .append(true)
            .create(true)
            .open(&target)
            .map_err(|e| io_error(&target, e))?;
        file.write_all(bytes).map_err(|e| io_error(&target, e))?;
        file.sync_all().map_err(|e| io_error(&target, e))?;
    } else {
        replace(&target, bytes, existing.as_ref())?;
    }
    let size = fs::metadata(&target).map(|m| m.len()).unwrap_or(0);
    Ok(Written {
        path: target,
        bytes_written: bytes.len() as u64,
        size,
        created: existing.is_none(),
        appended: append,
    })
}

/// The file a write lands in: `path`, or the target of the symlink `path` is. A directory
/// is an error.
fn target_of(path: &Path) -> Result<PathBuf> {
    let target = match fs::symlink_metadata(path) {
        Ok(m) if m.file_type().is_symlink() => fs::canonicalize(path).unwrap_or(path.to_path_buf()),
        _ => path.to_path_buf(),
    };
    if target.is_dir() {
        return Err(Error::InvalidInput(format!(
            "`{}` is a directory; pass the path of a file.",
            path.display()
        )));
    }
    Ok(target)
}

/// Replaces `target` with `bytes` atomically, keeping `existing`'s permissions.
pub(crate) fn replace(target: &Path, bytes: &[u8], existing: Option<&fs::Metadata>) -> Result<()> {
    let parent = target.parent().unwrap_or(Path::new("."));
    let name = target
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or("file");
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    let temp = parent.join(format!(".{name}.{}.{nanos}.tmp", std::process::id()));
    let result = (|| -> std::io::Result<()> {
        let mut file = OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&temp)?;
        file.write_all(bytes)?;
        if let Some(meta) = existing {
            fs::set_permissions(&temp, meta.permissions())?;
        }
        file.sync_all()?;
        drop(file);
        fs::rename(&temp, target)?;
        sync_dir(parent);
        Ok(())
    })();
    result.map_err(|e| {
        let _ = fs::remove_file(&temp);
        io_error(target, e)
    })
}

/// Makes the rename durable (Unix); best effort.
fn sync_dir(dir: &Path) {
    #[cfg(unix)]
    if let Ok(d) = fs::File::open(dir) {
        let _ = d.sync_all();
    }
    #[cfg(not(unix))]
    let _ = dir;
}

fn io_error(path: &Path, e: std::io::Error) -> Error {
    Error::io(
        format!("Could not write `{}`", path.display()),
        "Check the path, its permissions and free space; the file was left as it was",
        e,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn create_replace_append() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("a/b/c.txt");
        let w = write(&f, b"one\n", false, true).unwrap();
        assert!(w.created && !w.appended && w.size == 4);
        let w = write(&f, b"two\n", true, true).unwrap();
        assert!(!w.created && w.appended && w.size == 8);
        assert_eq!(fs::read(&f).unwrap(), b"one\ntwo\n");
        write(&f, b"new", false, true).unwrap();
        assert_eq!(fs::read(&f).unwrap(), b"new");
        let leftovers: Vec<_> = fs::read_dir(f.parent().unwrap()).unwrap().collect();
        assert_eq!(leftovers.len(), 1, "no temp file is left behind");
    }

    #[test]
    fn directories_and_missing_parents_are_errors() {
        let dir = tempfile::tempdir().unwrap();
        let e = write(dir.path(), b"x", false, true)
            .unwrap_err()
            .to_string();
        assert!(e.contains("is a directory"), "{e}");
        let e = write(&dir.path().join("no/x"), b"x", false, false)
            .unwrap_err()
            .to_string();
        assert!(e.contains("does not exist"), "{e}");
        assert!(!dir.path().join("no").exists());
    }

    #[cfg(unix)]
    #[test]
    fn keeps_permissions_and_follows_symlinks() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("run.sh");
        fs::write(&f, "old").unwrap();
        fs::set_permissions(&f, fs::Permissions::from_mode(0o751)).unwrap();
        write(&f, b"new", false, true).unwrap();
        assert_eq!(
            fs::metadata(&f).unwrap().permissions().mode() & 0o777,
            0o751
        );
        let link = dir.path().join("link");
        std::os::unix::fs::symlink(&f, &link).unwrap();
        let w = write(&link, b"via link", false, true).unwrap();
        assert!(
            fs::symlink_metadata(&link)
                .unwrap()
                .file_type()
                .is_symlink()
        );
        assert_eq!(fs::read(&f).unwrap(), b"via link");
        assert_eq!(w.path, fs::canonicalize(&f).unwrap());
    }
}
