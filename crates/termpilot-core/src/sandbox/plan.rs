//! Which Landlock rule goes on which path: the policy as a list of `(path, grant)`.
//!
//! Landlock only adds rights, and a right on a directory holds for everything beneath it. So
//! a path that must get *less* than its ancestors (a deny-read path under `/` or under a write
//! root) is carved out by splitting: each directory on the way down to it keeps only
//! [`Grant::ListOnly`] (its names can be listed), and every other entry of those directories
//! gets the ancestor's grant. Symlinks among those entries are skipped: Landlock judges the
//! resolved file, whose own rule applies. Pure: the directory listing is passed in.

use std::path::{Path, PathBuf};

use super::policy::{Mode, Policy};

/// What a rule allows, before it is turned into Landlock access rights.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Grant {
    /// List the directory (and everything beneath); read nothing.
    ListOnly,
    /// Read, list and execute.
    Read,
    /// Read and write a device node (no creating or removing).
    Device,
    /// Everything: create, write, rename, remove.
    Write,
}

/// Device nodes every sandboxed process may write: the bit buckets, the terminal, new PTYs.
pub(super) const DEVICES: &[&str] = &[
    "/dev/null",
    "/dev/zero",
    "/dev/full",
    "/dev/random",
    "/dev/urandom",
    "/dev/tty",
    "/dev/ptmx",
    "/dev/pts",
];

/// The rules for `policy`. `list(dir)` returns the entries of `dir` that are not symlinks.
pub(super) fn rules(
    policy: &Policy,
    list: &dyn Fn(&Path) -> Vec<PathBuf>,
) -> Vec<(PathBuf, Grant)> {
    let mut grants: Vec<(PathBuf, Grant)> = vec![(PathBuf::from("/"), Grant::Read)];
    grants.extend(DEVICES.iter().map(|d| (PathBuf::from(d), Grant::Device)));
    grants.push((policy.tmp.clone(), Grant::Write));
    if policy.mode == Mode::WorkspaceWrite {
        grants.extend(policy.write_roots.iter().map(|r| (r.clone(), Grant::Write)));
    }
    let mut out = Vec::new();
    for (path, grant) in grants {
        split(&path, grant, &policy.deny_read, list, &mut out);
    }
    out
}

fn split(
    path: &Path,
    grant: Grant,
    deny: &[PathBuf],
    list: &dyn Fn(&Path) -> Vec<PathBuf>,
    out: &mut Vec<(PathBuf, Grant)>,
) {
    if deny.iter().any(|d| path.starts_with(d)) {
        return;
    }
    let below: Vec<PathBuf> = deny
        .iter()
        .filter(|d| d.starts_with(path) && d.as_path() != path)
        .cloned()
        .collect();
    if below.is_empty() {
        out.push((path.to_path_buf(), grant));
        return;
    }
    out.push((path.to_path_buf(), Grant::ListOnly));
    for entry in list(path) {
        split(&entry, grant, &below, list, out);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sandbox::policy::Network;

    fn fake_fs(dir: &Path) -> Vec<PathBuf> {
        let names: &[&str] = match dir.to_str().unwrap() {
            "/" => &["bin", "home", "tmp", "dev"],
            "/home" => &["u"],
            "/home/u" => &[".ssh", ".bashrc", "proj"],
            "/home/u/proj" => &["src", ".env"],
            _ => &[],
        };
        names.iter().map(|n| dir.join(n)).collect()
    }

    fn policy(mode: Mode, roots: &[&str], deny: &[&str]) -> Policy {
        Policy {
            mode,
            network: Network::Off,
            write_roots: roots.iter().map(PathBuf::from).collect(),
            deny_read: deny.iter().map(PathBuf::from).collect(),
            tmp: "/tmp/private".into(),
            hidden: Vec::new(),
        }
    }

    fn grant_of(rules: &[(PathBuf, Grant)], p: &str) -> Vec<Grant> {
        rules
            .iter()
            .filter(|(path, _)| path == Path::new(p))
            .map(|(_, g)| *g)
            .collect()
    }

    #[test]
    fn a_deny_path_is_carved_out_of_read_everywhere() {
        let r = rules(&policy(Mode::ReadOnly, &[], &["/home/u/.ssh"]), &fake_fs);
        assert_eq!(grant_of(&r, "/"), [Grant::ListOnly]);
        assert_eq!(grant_of(&r, "/bin"), [Grant::Read]);
        assert_eq!(grant_of(&r, "/home"), [Grant::ListOnly]);
        assert_eq!(grant_of(&r, "/home/u"), [Grant::ListOnly]);
        assert_eq!(grant_of(&r, "/home/u/.bashrc"), [Grant::Read]);
        assert!(grant_of(&r, "/home/u/.ssh").is_empty());
        assert!(r.iter().all(|(p, _)| !p.starts_with("/home/u/.ssh")));
        assert_eq!(grant_of(&r, "/tmp/private"), [Grant::Write]);
        assert_eq!(grant_of(&r, "/dev/null"), [Grant::Device]);
    }

    #[test]
    fn write_roots_only_in_workspace_write_and_split_around_secrets() {
        let ro = rules(&policy(Mode::ReadOnly, &["/home/u/proj"], &[]), &fake_fs);
        assert!(grant_of(&ro, "/home/u/proj").is_empty());
        assert_eq!(grant_of(&ro, "/"), [Grant::Read]);
        let ww = rules(
            &policy(
                Mode::WorkspaceWrite,
                &["/home/u/proj"],
                &["/home/u/proj/.env"],
            ),
            &fake_fs,
        );
        assert_eq!(
            grant_of(&ww, "/home/u/proj"),
            [Grant::ListOnly, Grant::ListOnly]
        );
        assert_eq!(
            grant_of(&ww, "/home/u/proj/src"),
            [Grant::Read, Grant::Write]
        );
        assert!(grant_of(&ww, "/home/u/proj/.env").is_empty());
    }

    #[test]
    fn a_missing_deny_path_still_splits_its_parent() {
        let r = rules(&policy(Mode::ReadOnly, &[], &["/home/u/.aws"]), &fake_fs);
        assert_eq!(grant_of(&r, "/home/u"), [Grant::ListOnly]);
        assert_eq!(grant_of(&r, "/home/u/.ssh"), [Grant::Read]);
    }
}
