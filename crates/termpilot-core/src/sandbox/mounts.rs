//! Keeping `.git/hooks` and `.git/config` of a write root read-only: a private mount
//! namespace with those paths bind-mounted read-only over themselves.
//!
//! Landlock cannot take a right away from a path beneath one that has it, and a write root
//! must stay writable at its top, so these two paths are protected by mounts instead: the
//! child gets its own mount namespace (as root directly, otherwise inside a user namespace
//! that maps the user to itself), `/` is made private so nothing leaks back to the host,
//! `.git` is bind-mounted onto itself (a mount point cannot be renamed or removed, so `.git`
//! cannot be swapped for another), and `hooks` and `config` are re-mounted read-only. Landlock,
//! applied right after, forbids any later mount or unmount.

use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

/// What must be pinned and what made read-only under `roots`.
#[derive(Debug, Default, PartialEq, Eq)]
pub(super) struct Protected {
    /// `.git` directories: bind-mounted onto themselves.
    pub pinned: Vec<PathBuf>,
    /// Read-only bind mounts: `.git/hooks`, `.git/config`, or a `.git` file (a worktree's
    /// pointer to its git dir).
    pub read_only: Vec<PathBuf>,
}

impl Protected {
    pub(super) fn is_empty(&self) -> bool {
        self.pinned.is_empty() && self.read_only.is_empty()
    }
}

/// The git paths of the write roots that exist now.
pub(super) fn protected(roots: &[PathBuf]) -> Protected {
    let mut p = Protected::default();
    for root in roots {
        let git = root.join(".git");
        let Ok(meta) = std::fs::symlink_metadata(&git) else {
            continue;
        };
        if meta.is_dir() {
            p.pinned.push(git.clone());
            for name in ["hooks", "config"] {
                if std::fs::symlink_metadata(git.join(name)).is_ok() {
                    p.read_only.push(git.join(name));
                }
            }
        } else if meta.is_file() {
            p.read_only.push(git);
        }
    }
    p
}

fn cstr(p: &Path) -> Result<CString, String> {
    CString::new(p.as_os_str().as_bytes()).map_err(|_| format!("{} has a NUL byte", p.display()))
}

fn os_err(what: &str) -> String {
    format!("{what} failed ({})", std::io::Error::last_os_error())
}

fn mount(src: Option<&CString>, target: &CString, flags: libc::c_ulong) -> bool {
    let src = src.map_or(std::ptr::null(), |s| s.as_ptr());
    // SAFETY: every pointer is a NUL-terminated string or null, as mount(2) allows.
    unsafe {
        libc::mount(
            src,
            target.as_ptr(),
            std::ptr::null(),
            flags,
            std::ptr::null(),
        ) == 0
    }
}

/// A private mount namespace; inside a user namespace when the plain one is not allowed.
fn enter_namespace() -> Result<(), String> {
    // SAFETY: unshare(2) only changes this (single-threaded) process's namespaces.
    if unsafe { libc::unshare(libc::CLONE_NEWNS) } == 0 {
        return Ok(());
    }
    // SAFETY: as above; getuid/getgid cannot fail.
    let (uid, gid) = unsafe { (libc::getuid(), libc::getgid()) };
    if unsafe { libc::unshare(libc::CLONE_NEWUSER | libc::CLONE_NEWNS) } != 0 {
        return Err(os_err(
            "creating a mount namespace (needed to keep .git/hooks and .git/config read-only)",
        ));
    }
    let write = |file: &str, text: String| {
        std::fs::write(file, text).map_err(|e| format!("writing {file} failed ({e})"))
    };
    write("/proc/self/setgroups", "deny".into())?;
    write("/proc/self/uid_map", format!("{uid} {uid} 1"))?;
    write("/proc/self/gid_map", format!("{gid} {gid} 1"))?;
    Ok(())
}

/// The flags a read-only remount of `path`'s mount must keep (a user namespace may not
/// drop them).
fn kept_flags(path: &CString) -> libc::c_ulong {
    // SAFETY: statvfs fills the zeroed struct it is given.
    let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
    if unsafe { libc::statvfs(path.as_ptr(), &mut st) } != 0 {
        return 0;
    }
    let mut flags = 0;
    for (st_flag, ms_flag) in [
        (libc::ST_NOSUID, libc::MS_NOSUID),
        (libc::ST_NODEV, libc::MS_NODEV),
        (libc::ST_NOEXEC, libc::MS_NOEXEC),
        (libc::ST_NOATIME, libc::MS_NOATIME),
        (libc::ST_NODIRATIME, libc::MS_NODIRATIME),
        (libc::ST_RELATIME, libc::MS_RELATIME),
    ] {
        if st.f_flag & st_flag != 0 {
            flags |= ms_flag;
        }
    }
    flags
}

/// Applies `p` in a new mount namespace of this process.
pub(super) fn apply(p: &Protected) -> Result<(), String> {
    if p.is_empty() {
        return Ok(());
    }
    enter_namespace()?;
    let root = cstr(Path::new("/"))?;
    if !mount(None, &root, libc::MS_REC | libc::MS_PRIVATE) {
        return Err(os_err("making the mount namespace private"));
    }
    for dir in &p.pinned {
        let c = cstr(dir)?;
        if !mount(Some(&c), &c, libc::MS_BIND | libc::MS_REC) {
            return Err(os_err(&format!("bind-mounting {}", dir.display())));
        }
    }
    for path in &p.read_only {
        let c = cstr(path)?;
        if !mount(Some(&c), &c, libc::MS_BIND | libc::MS_REC) {
            return Err(os_err(&format!("bind-mounting {}", path.display())));
        }
        let flags = libc::MS_REMOUNT | libc::MS_BIND | libc::MS_RDONLY | kept_flags(&c);
        if !mount(None, &c, flags) {
            return Err(os_err(&format!("making {} read-only", path.display())));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_git_paths_that_exist() {
        let dir = tempfile::tempdir().unwrap();
        let repo = dir.path().join("repo");
        std::fs::create_dir_all(repo.join(".git/hooks")).unwrap();
        let worktree = dir.path().join("wt");
        std::fs::create_dir_all(&worktree).unwrap();
        std::fs::write(worktree.join(".git"), "gitdir: /elsewhere\n").unwrap();
        let plain = dir.path().join("plain");
        std::fs::create_dir_all(&plain).unwrap();
        let p = protected(&[repo.clone(), worktree.clone(), plain]);
        assert_eq!(p.pinned, vec![repo.join(".git")]);
        assert_eq!(
            p.read_only,
            vec![repo.join(".git/hooks"), worktree.join(".git")]
        );
    }
}
