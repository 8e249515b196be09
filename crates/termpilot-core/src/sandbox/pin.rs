//! termpilot's own writes for the agent under the sandbox, race-free.
//!
//! Checking a path and then writing it are two steps: a sandboxed process flipping a symlink
//! (or a parent folder) in between would make the server write outside the write roots. So a
//! write is *pinned*: the path is resolved and judged once ([`super::paths::write_root`]), then
//! its folder is opened relative to the write root's own descriptor with `openat2`
//! (`RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS`: no link is followed, no
//! `..` leaves the root), or — on kernels without `openat2` — one component at a time with
//! `O_NOFOLLOW`. Missing folders are made with `mkdirat` on the way. The write then goes
//! through `/proc/self/fd/<folder>/<name>`, which names a file in that very folder whatever is
//! renamed or relinked meanwhile; the final name is never followed (the file tools refuse a
//! symlink there, and the atomic replace renames over the name itself).

use std::ffi::CString;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Component, Path, PathBuf};

use super::paths;
use super::policy::Policy;
use crate::error::{Error, Fault, Result};

/// A file's place, held open: while this lives, [`Pinned::at`] names `name` in the folder it
/// was resolved to.
#[derive(Debug)]
pub struct Pinned {
    dir: OwnedFd,
    name: PathBuf,
    real: PathBuf,
}

impl Pinned {
    /// The resolved path, for results and messages.
    pub fn real(&self) -> &Path {
        &self.real
    }

    /// The path every file operation uses: `/proc/self/fd/<folder>/<name>`.
    pub fn at(&self) -> PathBuf {
        PathBuf::from(format!("/proc/self/fd/{}", self.dir.as_raw_fd())).join(&self.name)
    }
}

/// Pins `path` for a write under `policy`: refused unless it resolves into a write root (or
/// the private temp dir), outside the deny-read and protected git paths; the missing folders
/// on the way are created when `create_dirs`.
pub fn for_write(policy: &Policy, path: &Path, create_dirs: bool) -> Result<Pinned> {
    let (real, root) = paths::write_root(policy, path)?;
    let name = real.file_name().map(PathBuf::from).ok_or_else(|| {
        Error::InvalidInput(format!(
            "`{}` names no file; pass a file path.",
            path.display()
        ))
    })?;
    let parent = real.parent().unwrap_or(&root);
    let rel = parent.strip_prefix(&root).unwrap_or(Path::new(""));
    let root_fd = open_dir(libc::AT_FDCWD, &root).map_err(|e| changed(path, &root, e))?;
    let dir = walk(root_fd, rel, create_dirs).map_err(|e| match e.raw_os_error() {
        Some(libc::ENOENT) => Fault::MissingDirectory { dir: parent.into() }.into(),
        _ => changed(path, parent, e),
    })?;
    Ok(Pinned { dir, name, real })
}

fn changed(path: &Path, dir: &Path, e: std::io::Error) -> Error {
    if matches!(
        e.raw_os_error(),
        Some(libc::ELOOP | libc::EXDEV | libc::ENOTDIR)
    ) {
        return Error::InvalidInput(format!(
            "`{}` changed while it was being written (a folder on the way to it is now a symlink or not a folder: `{}`); nothing was written, check the path and try again.",
            path.display(),
            dir.display()
        ));
    }
    Error::io(
        format!("Could not open the folder `{}`", dir.display()),
        "Check the path and its permissions",
        e,
    )
}

/// The folder `rel` beneath `root` (which this consumes), each missing one created when
/// `create`.
fn walk(root: OwnedFd, rel: &Path, create: bool) -> std::io::Result<OwnedFd> {
    if rel.as_os_str().is_empty() {
        return Ok(root);
    }
    if !create {
        match beneath(root.as_raw_fd(), rel) {
            Err(e) if e.raw_os_error() == Some(libc::ENOSYS) => {}
            other => return other,
        }
    }
    let mut cur = root;
    for part in rel.components() {
        let Component::Normal(name) = part else {
            return Err(std::io::Error::from_raw_os_error(libc::EXDEV));
        };
        let name = Path::new(name);
        let next = match open_one(cur.as_raw_fd(), name) {
            Err(e) if create && e.raw_os_error() == Some(libc::ENOENT) => {
                let c = cstr(name)?;
                // SAFETY: mkdirat with a descriptor we own and a NUL-terminated name.
                if unsafe { libc::mkdirat(cur.as_raw_fd(), c.as_ptr(), 0o777) } != 0 {
                    let e = std::io::Error::last_os_error();
                    if e.raw_os_error() != Some(libc::EEXIST) {
                        return Err(e);
                    }
                }
                open_one(cur.as_raw_fd(), name)?
            }
            other => other?,
        };
        cur = next;
    }
    Ok(cur)
}

fn cstr(p: &Path) -> std::io::Result<CString> {
    CString::new(p.as_os_str().as_bytes())
        .map_err(|_| std::io::Error::from_raw_os_error(libc::EINVAL))
}

/// `path` (absolute, or relative to `dirfd`) opened as a folder handle.
fn open_dir(dirfd: RawFd, path: &Path) -> std::io::Result<OwnedFd> {
    let c = cstr(path)?;
    // SAFETY: openat with a NUL-terminated path; the result is checked before it is owned.
    let fd = unsafe {
        libc::openat(
            dirfd,
            c.as_ptr(),
            libc::O_PATH | libc::O_DIRECTORY | libc::O_CLOEXEC,
        )
    };
    owned(fd)
}

/// One folder `name` in `dirfd`, never through a symlink.
fn open_one(dirfd: RawFd, name: &Path) -> std::io::Result<OwnedFd> {
    let c = cstr(name)?;
    // SAFETY: as in `open_dir`.
    let fd = unsafe {
        libc::openat(
            dirfd,
            c.as_ptr(),
            libc::O_PATH | libc::O_DIRECTORY | libc::O_NOFOLLOW | libc::O_CLOEXEC,
        )
    };
    owned(fd)
}

/// `rel` beneath `dirfd` in one `openat2` call that follows no symlink and cannot leave
/// `dirfd` (`ENOSYS` where the kernel lacks it: the caller walks instead).
fn beneath(dirfd: RawFd, rel: &Path) -> std::io::Result<OwnedFd> {
    let c = cstr(rel)?;
    // SAFETY: open_how is plain integers; all zero is its empty value.
    let mut how: libc::open_how = unsafe { std::mem::zeroed() };
    how.flags = (libc::O_PATH | libc::O_DIRECTORY | libc::O_CLOEXEC) as u64;
    how.resolve = libc::RESOLVE_BENEATH | libc::RESOLVE_NO_SYMLINKS | libc::RESOLVE_NO_MAGICLINKS;
    // SAFETY: openat2 with a NUL-terminated path and an open_how of the size we pass.
    let fd = unsafe {
        libc::syscall(
            libc::SYS_openat2,
            dirfd,
            c.as_ptr(),
            &how as *const libc::open_how,
            std::mem::size_of::<libc::open_how>(),
        )
    };
    owned(fd as RawFd)
}

fn owned(fd: RawFd) -> std::io::Result<OwnedFd> {
    if fd < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: a descriptor the kernel just gave us, owned by nothing else.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_walk_never_follows_a_link_out() {
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path().canonicalize().unwrap();
        let (root, out) = (base.join("root"), base.join("out"));
        std::fs::create_dir_all(root.join("a")).unwrap();
        std::fs::create_dir_all(&out).unwrap();
        std::os::unix::fs::symlink(&out, root.join("link")).unwrap();
        std::os::unix::fs::symlink("../out", root.join("a/rel")).unwrap();
        let r = || open_dir(libc::AT_FDCWD, &root).unwrap();
        assert!(walk(r(), Path::new("a"), false).is_ok());
        for (rel, create) in [
            ("link", false),
            ("link", true),
            ("a/rel", false),
            ("a/rel/x", true),
        ] {
            let e = walk(r(), Path::new(rel), create).unwrap_err();
            assert!(
                matches!(
                    e.raw_os_error(),
                    Some(libc::ELOOP | libc::ENOTDIR | libc::EXDEV)
                ),
                "{rel}: {e}"
            );
        }
        assert!(
            std::fs::read_dir(&out).unwrap().next().is_none(),
            "made nothing outside"
        );
        let made = walk(r(), Path::new("new/deeper"), true).unwrap();
        assert!(root.join("new/deeper").is_dir());
        let at = PathBuf::from(format!("/proc/self/fd/{}", made.as_raw_fd())).join("f");
        std::fs::write(&at, "x").unwrap();
        assert_eq!(
            std::fs::read_to_string(root.join("new/deeper/f")).unwrap(),
            "x"
        );
    }
}
