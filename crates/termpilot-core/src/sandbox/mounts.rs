//! The sandbox's private mount namespace: termpilot's socket folders hidden, and
//! `.git/hooks` and `.git/config` of a write root kept read-only.
//!
//! Landlock does not mediate `connect()` on a named Unix socket, and seccomp lets `AF_UNIX`
//! through (programs need it), so a confined program could connect to the sockets in
//! termpilot's private runtime folder: a session's attach socket (and type into a session
//! confined less or not at all) or a session host's MCP socket (and run commands there). So
//! each of those folders ([`super::Policy::hidden`]) is covered by an empty read-only tmpfs:
//! nothing in it can be named, by its path or through `/proc/<pid>/root` (Landlock's ptrace
//! scope, and the user namespace when not root, refuse that for processes outside). The
//! folders above them that a write root could rename are pinned (bind-mounted onto themselves),
//! so the private folder cannot be moved away and replaced by an uncovered one, and the private
//! folder itself is read-only (but for the sandbox's own `TMPDIR` when it lies there), so a write
//! root holding it cannot plant shell-integration scripts an unconfined session later sources.
//!
//! Landlock cannot take a right away from a path beneath one that has it, and a write root
//! must stay writable at its top, so the two git paths are protected by mounts too: `.git` is
//! bind-mounted onto itself (a mount point cannot be renamed or removed, so `.git` cannot be
//! swapped for another), and `hooks` and `config` are re-mounted read-only.
//!
//! The child gets its own mount namespace (as root directly, otherwise inside a user namespace
//! that maps the user to itself) and `/` is made private so nothing leaks back to the host.
//! Where no mount namespace can be had the wrapper fails, so the sandbox is refused at start
//! (fail closed): a sandbox that can type into an unconfined shell confines nothing. Landlock,
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
            "creating a mount namespace (needed to hide termpilot's sockets and keep .git/hooks and .git/config read-only)",
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

/// The folders above the `hidden` ones that a program writing in `write_roots` could rename
/// (their parent lies in a write root), outermost first: each is bind-mounted onto itself, so
/// the hidden folders cannot be moved out from under their cover and replaced by new ones.
pub(super) fn pins(hidden: &[PathBuf], write_roots: &[PathBuf]) -> Vec<PathBuf> {
    let mut pins: Vec<PathBuf> = Vec::new();
    for dir in hidden {
        for above in dir.ancestors().skip(1) {
            let renameable = above
                .parent()
                .is_some_and(|parent| write_roots.iter().any(|r| parent.starts_with(r)));
            if renameable && !pins.iter().any(|p| p == above) {
                pins.push(above.to_path_buf());
            }
        }
    }
    pins.sort_by_key(|p| p.components().count());
    pins
}

/// In a new mount namespace of this process: pins the folders above `hidden` ([`pins`]), makes
/// the folders holding them (the private folder) read-only but for `tmp` inside, hides each
/// folder of `hidden`, then applies `p`.
pub(super) fn apply(
    p: &Protected,
    hidden: &[PathBuf],
    write_roots: &[PathBuf],
    tmp: &Path,
) -> Result<(), String> {
    if p.is_empty() && hidden.is_empty() {
        return Ok(());
    }
    enter_namespace()?;
    let root = cstr(Path::new("/"))?;
    if !mount(None, &root, libc::MS_REC | libc::MS_PRIVATE) {
        return Err(os_err("making the mount namespace private"));
    }
    for dir in hidden {
        let mut builder = std::fs::DirBuilder::new();
        std::os::unix::fs::DirBuilderExt::mode(builder.recursive(true), 0o700);
        builder
            .create(dir)
            .map_err(|e| format!("cannot create {} to hide it ({e})", dir.display()))?;
    }
    let mut private: Vec<&Path> = hidden.iter().filter_map(|h| h.parent()).collect();
    private.dedup();
    let mut binds = pins(hidden, write_roots);
    binds.extend(private.iter().map(|p| p.to_path_buf()));
    binds.dedup();
    for dir in &binds {
        bind(dir)?;
    }
    // The private folder read-only (a write root holding it must not let the program plant
    // shell-integration scripts a later, unconfined session sources), the sandbox's own
    // `TMPDIR` in it kept writable by a mount of its own first.
    for dir in &private {
        if tmp.starts_with(dir) {
            bind(tmp)?;
        }
        read_only(dir)?;
    }
    for dir in hidden {
        hide(dir)?;
    }
    for dir in &p.pinned {
        bind(dir)?;
    }
    for path in &p.read_only {
        bind(path)?;
        read_only(path)?;
    }
    Ok(())
}

/// Bind-mounts `path` onto itself (a mount point cannot be renamed or removed).
fn bind(path: &Path) -> Result<(), String> {
    let c = cstr(path)?;
    if !mount(Some(&c), &c, libc::MS_BIND | libc::MS_REC) {
        return Err(os_err(&format!("bind-mounting {}", path.display())));
    }
    Ok(())
}

/// Makes the bind mount at `path` read-only (not the mounts beneath it).
fn read_only(path: &Path) -> Result<(), String> {
    let c = cstr(path)?;
    let flags = libc::MS_REMOUNT | libc::MS_BIND | libc::MS_RDONLY | kept_flags(&c);
    if !mount(None, &c, flags) {
        return Err(os_err(&format!("making {} read-only", path.display())));
    }
    Ok(())
}

/// Covers `dir` (made first when missing, so a socket folder made later falls under the
/// cover too) with an empty read-only tmpfs.
fn hide(dir: &Path) -> Result<(), String> {
    let target = cstr(dir)?;
    let fstype = c"tmpfs";
    let data = c"size=4k,nr_inodes=1,mode=0500";
    let flags = libc::MS_RDONLY | libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC;
    // SAFETY: every pointer is a NUL-terminated string, as mount(2) expects.
    let ok = unsafe {
        libc::mount(
            fstype.as_ptr(),
            target.as_ptr(),
            fstype.as_ptr(),
            flags,
            data.as_ptr().cast(),
        ) == 0
    };
    if !ok {
        return Err(os_err(&format!(
            "hiding termpilot's socket folder {}",
            dir.display()
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pins_every_folder_above_the_hidden_ones_a_write_root_could_rename() {
        let hidden: Vec<PathBuf> = vec![
            "/t/x/run/termpilot/attach".into(),
            "/t/x/run/termpilot/keep".into(),
        ];
        let pins = pins(&hidden, &["/t/x".into()]);
        assert_eq!(
            pins,
            vec![PathBuf::from("/t/x/run"), "/t/x/run/termpilot".into()]
        );
        assert!(super::pins(&hidden, &["/elsewhere".into()]).is_empty());
        // The folder holding the private one is itself the write root: its child is pinned.
        let pins = super::pins(&hidden, &["/t/x/run".into()]);
        assert_eq!(pins, vec![PathBuf::from("/t/x/run/termpilot")]);
    }

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
