//! termpilot's own file tools under the sandbox: the same write roots and deny-read paths,
//! judged on the resolved path (symlinks followed, `..` resolved), so a link that escapes a
//! write root is refused like a path outside it.

use std::path::{Component, Path, PathBuf};

use super::policy::{Mode, Policy};
use crate::error::{Error, Result};

/// Most symlinks followed while resolving one path (as the kernel's limit).
const MAX_LINKS: usize = 40;

/// `path` with every symlink followed and `.`/`..` resolved, whether or not it exists: the
/// file a write to `path` would create or replace.
pub(super) fn resolve(path: &Path) -> PathBuf {
    let mut links = 0;
    resolve_from(PathBuf::from("/"), path, &mut links)
}

fn resolve_from(mut out: PathBuf, path: &Path, links: &mut usize) -> PathBuf {
    for part in path.components() {
        match part {
            Component::RootDir => out = PathBuf::from("/"),
            Component::Prefix(_) | Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            Component::Normal(name) => {
                let next = out.join(name);
                match std::fs::read_link(&next) {
                    Ok(target) if *links < MAX_LINKS => {
                        *links += 1;
                        // A relative target is relative to the link's directory.
                        out = resolve_from(out, &target, links);
                    }
                    _ => out = next,
                }
            }
        }
    }
    out
}

fn inside(path: &Path, dirs: &[PathBuf]) -> Option<PathBuf> {
    dirs.iter().find(|d| path.starts_with(d)).cloned()
}

/// Refuses reading `path` when it resolves into a deny-read path.
pub(super) fn check_read(policy: &Policy, path: &Path) -> Result<()> {
    if !policy.active() {
        return Ok(());
    }
    let real = resolve(path);
    if let Some(denied) = inside(&real, &policy.deny_read) {
        return Err(Error::InvalidInput(format!(
            "The sandbox denies reading `{}`: it resolves to `{}`, inside the deny-read path `{}`; ask the person running termpilot to change --deny-read.",
            path.display(),
            real.display(),
            denied.display()
        )));
    }
    Ok(())
}

/// Refuses writing `path` unless it resolves into a write root (workspace-write) or the
/// private temp dir, outside the deny-read paths and the protected git paths.
pub(super) fn check_write(policy: &Policy, path: &Path) -> Result<()> {
    if !policy.active() {
        return Ok(());
    }
    write_root(policy, path).map(drop)
}

/// `path` resolved, and the write root (or the private temp dir) it resolves into; refused as
/// [`check_write`] refuses. The policy is active.
pub(super) fn write_root(policy: &Policy, path: &Path) -> Result<(PathBuf, PathBuf)> {
    let real = resolve(path);
    if let Some(denied) = inside(&real, &policy.deny_read) {
        return Err(Error::InvalidInput(format!(
            "The sandbox denies writing `{}`: it resolves to `{}`, inside the deny-read path `{}`; ask the person running termpilot to change --deny-read.",
            path.display(),
            real.display(),
            denied.display()
        )));
    }
    if real.starts_with(&policy.tmp) {
        return Ok((real, policy.tmp.clone()));
    }
    let roots: &[PathBuf] = if policy.mode == Mode::WorkspaceWrite {
        &policy.write_roots
    } else {
        &[]
    };
    let Some(root) = inside(&real, roots) else {
        let why = if policy.mode == Mode::ReadOnly {
            "the sandbox is read-only".to_string()
        } else {
            let list: Vec<String> = roots.iter().map(|r| r.display().to_string()).collect();
            format!("it is outside the write roots ({})", list.join(", "))
        };
        return Err(Error::InvalidInput(format!(
            "The sandbox denies writing `{}` (resolved: `{}`): {why}; write under a write root, or ask the person running termpilot for --writable.",
            path.display(),
            real.display()
        )));
    };
    for protected in [".git/hooks", ".git/config"] {
        if real.starts_with(root.join(protected)) {
            return Err(Error::InvalidInput(format!(
                "The sandbox keeps `{}` read-only (a planted git hook or config would run outside the sandbox); edit it outside termpilot.",
                root.join(protected).display()
            )));
        }
    }
    Ok((real, root))
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use crate::sandbox::policy::Network;

    fn policy(mode: Mode, root: &Path, deny: &Path) -> Policy {
        Policy {
            mode,
            network: Network::Off,
            write_roots: vec![root.to_path_buf()],
            deny_read: vec![deny.to_path_buf()],
            tmp: root.join("never-used-tmp"),
            hidden: Vec::new(),
        }
    }

    #[test]
    fn writes_are_judged_on_the_resolved_path() {
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path().canonicalize().unwrap();
        let root = base.join("root");
        let outside = base.join("outside");
        let secret = base.join("secret");
        for d in [&root, &outside, &secret] {
            std::fs::create_dir_all(d).unwrap();
        }
        std::os::unix::fs::symlink(&outside, root.join("escape")).unwrap();
        std::os::unix::fs::symlink("../secret/key", root.join("key")).unwrap();
        let p = policy(Mode::WorkspaceWrite, &root, &secret);
        assert!(check_write(&p, &root.join("new/file.txt")).is_ok());
        let e = check_write(&p, &root.join("escape/x"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("outside the write roots"), "{e}");
        assert!(check_write(&p, &root.join("../outside/x")).is_err());
        let e = check_write(&p, &root.join("key")).unwrap_err().to_string();
        assert!(e.contains("deny-read"), "{e}");
        let e = check_write(&p, &root.join(".git/hooks/pre-commit"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("read-only"), "{e}");
        let ro = policy(Mode::ReadOnly, &root, &secret);
        let e = check_write(&ro, &root.join("a")).unwrap_err().to_string();
        assert!(e.contains("read-only"), "{e}");
        assert!(check_read(&ro, &secret.join("x")).is_err());
        assert!(check_read(&ro, &root.join("a")).is_ok());
        let off = policy(Mode::Off, &root, &secret);
        assert!(check_write(&off, &outside.join("x")).is_ok());
    }
}
