//! Writing a file: atomically (temp file in the same directory, fsync, rename) unless
//! appending, keeping an existing file's owner, group and permissions.
//!
//! Only regular files are written: a device, FIFO, socket, directory or a file of a pseudo
//! file system (`/proc`, `/sys`, cgroups) is refused, so nothing is replaced by a plain file
//! and no write blocks on a pipe. A symlink is written through to its target only when that
//! target exists and is a regular file (a dangling link is an error, never replaced). A file
//! with more than one hard link is refused unless the caller passes `break_links`: the
//! atomic replace gives the path a new file, and the other names keep the old contents.

use std::fs::{self, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use crate::error::{Error, Fault, Result};

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

/// How a write may treat what it finds.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct WriteOptions {
    pub append: bool,
    /// Create missing parent directories.
    pub create_dirs: bool,
    /// Replace a file that has other hard links (they keep the old contents).
    pub break_links: bool,
}

/// A file's place held open by the sandbox (`sandbox::pin_write`): every operation goes
/// through `at` (`/proc/self/fd/<folder>/<name>`) and a symlink there is refused, never
/// followed; `real` is the path results name.
#[derive(Debug, Clone, Copy)]
pub struct Pin<'a> {
    pub at: &'a Path,
    pub real: &'a Path,
}

/// Writes `bytes` to the absolute `path`: replaced atomically, or appended.
pub fn write(path: &Path, bytes: &[u8], opts: WriteOptions) -> Result<Written> {
    write_at(path, None, bytes, opts)
}

/// As [`write`], through `pin` when there is one.
pub fn write_at(
    path: &Path,
    pin: Option<Pin<'_>>,
    bytes: &[u8],
    opts: WriteOptions,
) -> Result<Written> {
    let (target, existing) = match pin {
        Some(pin) => pinned_target(path, pin.at)?,
        None => target_of(path)?,
    };
    if let Some(meta) = &existing
        && !opts.append
    {
        check_links(path, meta, opts.break_links)?;
    }
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
        if !opts.create_dirs {
            return Err(Fault::MissingDirectory { dir: parent.into() }.into());
        }
        fs::create_dir_all(parent).map_err(|e| {
            Error::io(
                format!("Could not create `{}`", parent.display()),
                "Check the path and permissions",
                e,
            )
        })?;
    }
    if opts.append {
        append(&target, bytes)?;
    } else {
        replace(&target, bytes, existing.as_ref())?;
    }
    let size = fs::symlink_metadata(&target).map(|m| m.len()).unwrap_or(0);
    Ok(Written {
        path: pin.map_or(target, |p| p.real.to_path_buf()),
        bytes_written: bytes.len() as u64,
        size,
        created: existing.is_none(),
        appended: opts.append,
    })
}

/// Appends in place: opened without following a link and without blocking, then checked to
/// be the regular file it was a moment ago.
fn append(target: &Path, bytes: &[u8]) -> Result<()> {
    let mut options = OpenOptions::new();
    options.append(true).create(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options
            .mode(0o666)
            .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK);
    }
    let mut file = options.open(target).map_err(|e| io_error(target, e))?;
    let meta = file.metadata().map_err(|e| io_error(target, e))?;
    if !meta.is_file() {
        return Err(not_regular(target, &meta.file_type()));
    }
    file.write_all(bytes).map_err(|e| io_error(target, e))?;
    file.sync_all().map_err(|e| io_error(target, e))
}

/// What is at `at` itself (a symlink is not followed), or `None` for a new path (refused on a
/// pseudo file system); errors name `path`, the path the caller gave.
fn inspect(path: &Path, at: &Path) -> Result<Option<fs::Metadata>> {
    match fs::symlink_metadata(at) {
        Ok(m) => Ok(Some(m)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            refuse_pseudo(at)?;
            Ok(None)
        }
        Err(e) => Err(Error::io(
            format!("Could not inspect `{}`", path.display()),
            "Check the path and its permissions",
            e,
        )),
    }
}

/// The file a write lands in, and its metadata when it exists: `path`, or the target of the
/// symlink `path` is when that target is an existing regular file. Anything but a regular
/// file or a new path is an error.
pub(crate) fn target_of(path: &Path) -> Result<(PathBuf, Option<fs::Metadata>)> {
    let Some(link) = inspect(path, path)? else {
        return Ok((path.to_path_buf(), None));
    };
    let (target, meta) = if link.file_type().is_symlink() {
        let target = fs::canonicalize(path).map_err(|_| {
            let to = fs::read_link(path)
                .map(|t| t.display().to_string())
                .unwrap_or_default();
            Error::InvalidInput(format!(
                "`{}` is a symlink to `{to}`, which does not exist; write the target path itself, or remove the dangling link.",
                path.display()
            ))
        })?;
        let meta = fs::metadata(&target).map_err(|e| io_error(&target, e))?;
        (target, meta)
    } else {
        (path.to_path_buf(), link)
    };
    if meta.is_dir() {
        return Err(Error::InvalidInput(format!(
            "`{}` is a directory; pass the path of a file.",
            path.display()
        )));
    }
    if !meta.is_file() {
        return Err(not_regular(path, &meta.file_type()));
    }
    refuse_pseudo(&target)?;
    Ok((target, Some(meta)))
}

/// As [`target_of`] for a pinned place `at` (messages name `path`): a symlink there means the
/// path changed since it was judged, and is refused rather than followed.
pub(crate) fn pinned_target(path: &Path, at: &Path) -> Result<(PathBuf, Option<fs::Metadata>)> {
    let Some(meta) = inspect(path, at)? else {
        return Ok((at.to_path_buf(), None));
    };
    if meta.file_type().is_symlink() {
        return Err(Error::InvalidInput(format!(
            "`{}` became a symlink while it was being written; nothing was written, check the path and try again.",
            path.display()
        )));
    }
    if meta.is_dir() {
        return Err(Error::InvalidInput(format!(
            "`{}` is a directory; pass the path of a file.",
            path.display()
        )));
    }
    if !meta.is_file() {
        return Err(not_regular(path, &meta.file_type()));
    }
    refuse_pseudo(at)?;
    Ok((at.to_path_buf(), Some(meta)))
}

/// A file with other hard links is refused unless `break_links`.
pub(crate) fn check_links(path: &Path, meta: &fs::Metadata, break_links: bool) -> Result<()> {
    #[cfg(unix)]
    {
        let links = std::os::unix::fs::MetadataExt::nlink(meta);
        if links > 1 && !break_links {
            return Err(Fault::HardLinks {
                path: path.into(),
                links,
            }
            .into());
        }
    }
    #[cfg(not(unix))]
    let _ = (path, meta, break_links);
    Ok(())
}

/// The error for a path that exists but is not a regular file.
pub(crate) fn not_regular(path: &Path, kind: &fs::FileType) -> Error {
    Error::InvalidInput(format!(
        "`{}` is not a regular file ({}); only regular files are written or edited, so nothing was changed.",
        path.display(),
        kind_name(kind)
    ))
}

fn kind_name(kind: &fs::FileType) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if kind.is_char_device() {
            return "a character device";
        }
        if kind.is_block_device() {
            return "a block device";
        }
        if kind.is_fifo() {
            return "a FIFO";
        }
        if kind.is_socket() {
            return "a socket";
        }
    }
    if kind.is_dir() {
        "a directory"
    } else if kind.is_symlink() {
        "a symlink"
    } else {
        "a special file"
    }
}

/// Files of pseudo file systems (`/proc`, `/sys`, cgroups, debugfs…) look regular but are
/// kernel interfaces: refused, as is creating a file in one.
pub(crate) fn refuse_pseudo(path: &Path) -> Result<()> {
    #[cfg(target_os = "linux")]
    {
        let probe = if path.exists() {
            Some(path)
        } else {
            path.ancestors().skip(1).find(|p| p.exists())
        };
        if let Some(fs_name) = probe.and_then(pseudo_fs) {
            return Err(Error::InvalidInput(format!(
                "`{}` is not a regular file (it is on {fs_name}, a kernel pseudo file system); only regular files are written or edited, so nothing was changed.",
                path.display()
            )));
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = path;
    Ok(())
}

/// The name of the pseudo file system `path` is on, if it is on one.
#[cfg(target_os = "linux")]
fn pseudo_fs(path: &Path) -> Option<&'static str> {
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(path.as_os_str().as_bytes()).ok()?;
    // SAFETY: statfs fills the zeroed struct for a NUL-terminated path we own.
    let mut st: libc::statfs = unsafe { std::mem::zeroed() };
    if unsafe { libc::statfs(c.as_ptr(), &mut st) } != 0 {
        return None;
    }
    const KNOWN: [(i64, &str); 9] = [
        (0x9fa0, "procfs"),
        (0x6265_6572, "sysfs"),
        (0x0027_e0eb, "cgroupfs"),
        (0x6367_7270, "cgroup2"),
        (0x6462_6720, "debugfs"),
        (0x7363_6673, "securityfs"),
        (0x7472_6163, "tracefs"),
        (0xcafe_4a11, "bpffs"),
        (0x1cd1, "devpts"),
    ];
    let kind = st.f_type as i64;
    KNOWN.iter().find(|(m, _)| *m == kind).map(|(_, n)| *n)
}

/// Replaces `target` with `bytes` atomically, keeping `existing`'s owner and group (when
/// permitted) and permissions.
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
        let mut options = OpenOptions::new();
        options.write(true).create_new(true);
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt;
            // A replacement is private until it takes the old file's permissions, so no one
            // reads a secret through a looser umask; a new file gets 0666 less the umask.
            let mode = if existing.is_some() { 0o600 } else { 0o666 };
            options.mode(mode).custom_flags(libc::O_NOFOLLOW);
        }
        let mut file = options.open(&temp)?;
        file.write_all(bytes)?;
        if let Some(meta) = existing {
            keep_owner(&file, meta);
            file.set_permissions(meta.permissions())?;
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

/// Gives the new file the old one's owner and group; each only when permitted (root may set
/// both, an owner may set a group they belong to).
fn keep_owner(file: &fs::File, meta: &fs::Metadata) {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        if std::os::unix::fs::fchown(file, Some(meta.uid()), Some(meta.gid())).is_err() {
            let _ = std::os::unix::fs::fchown(file, None, Some(meta.gid()));
        }
    }
    #[cfg(not(unix))]
    let _ = (file, meta);
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

    fn opts(append: bool) -> WriteOptions {
        WriteOptions {
            append,
            create_dirs: true,
            break_links: false,
        }
    }

    #[test]
    fn create_replace_append() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("a/b/c.txt");
        let w = write(&f, b"one\n", opts(false)).unwrap();
        assert!(w.created && !w.appended && w.size == 4);
        let w = write(&f, b"two\n", opts(true)).unwrap();
        assert!(!w.created && w.appended && w.size == 8);
        assert_eq!(fs::read(&f).unwrap(), b"one\ntwo\n");
        write(&f, b"new", opts(false)).unwrap();
        assert_eq!(fs::read(&f).unwrap(), b"new");
        let leftovers: Vec<_> = fs::read_dir(f.parent().unwrap()).unwrap().collect();
        assert_eq!(leftovers.len(), 1, "no temp file is left behind");
    }

    #[test]
    fn directories_and_missing_parents_are_errors() {
        let dir = tempfile::tempdir().unwrap();
        let e = write(dir.path(), b"x", opts(false))
            .unwrap_err()
            .to_string();
        assert!(e.contains("is a directory"), "{e}");
        let e = write(&dir.path().join("no/x"), b"x", WriteOptions::default())
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
        write(&f, b"new", opts(false)).unwrap();
        assert_eq!(
            fs::metadata(&f).unwrap().permissions().mode() & 0o777,
            0o751
        );
        let link = dir.path().join("link");
        std::os::unix::fs::symlink(&f, &link).unwrap();
        let w = write(&link, b"via link", opts(false)).unwrap();
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
