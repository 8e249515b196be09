//! Where a session host lives: `<private folder>/keep/<key>.sock` (its socket, 0600),
//! `<key>.lock` (held by the running host), `<key>.json` (its record) and `<key>.log` (its
//! stderr), in the 0700 private folder ([`termpilot_core::host::private_dir`]).
//!
//! `key` names the sandbox policy: `host` for servers without a sandbox, `host-<hash>` for
//! each sandbox policy (the FNV-1a hash of its flags, stable across builds). A server only
//! ever reaches the host of its own policy, so a host cannot loosen a server's sandbox.

use std::path::PathBuf;

/// The key of a policy given as its flags.
pub fn key(policy: &[String]) -> String {
    if policy.is_empty() {
        return "host".into();
    }
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in policy.join("\0").bytes() {
        hash ^= u64::from(byte);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    format!("host-{hash:016x}")
}

/// The folder of the hosts' files, created 0700 and checked.
pub fn dir() -> termpilot_core::Result<PathBuf> {
    termpilot_core::host::private_dir("keep")
}

/// The files of the host of `key` in `dir`.
pub struct Files {
    pub socket: PathBuf,
    pub lock: PathBuf,
    pub record: PathBuf,
    pub log: PathBuf,
}

impl Files {
    pub fn of(dir: &std::path::Path, key: &str) -> Files {
        Files {
            socket: dir.join(format!("{key}.sock")),
            lock: dir.join(format!("{key}.lock")),
            record: dir.join(format!("{key}.json")),
            log: dir.join(format!("{key}.log")),
        }
    }
}

/// Every host key with a socket or a record in `dir` (for `termpilot sessions`).
pub fn keys(dir: &std::path::Path) -> Vec<String> {
    let mut keys: Vec<String> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            name.strip_suffix(".sock")
                .or_else(|| name.strip_suffix(".json"))
                .map(str::to_string)
        })
        .collect();
    keys.sort();
    keys.dedup();
    keys
}

#[cfg(test)]
mod tests {
    use super::key;

    /// The key is part of the protocol: two builds (or versions) of termpilot must find the
    /// same host for the same policy, so the hash may not depend on the build.
    #[test]
    fn keys_are_stable_and_tell_policies_apart() {
        assert_eq!(key(&[]), "host");
        let ro = [
            "--sandbox".to_string(),
            "read-only".into(),
            "--cwd".into(),
            "/w".into(),
        ];
        let ww = [
            "--sandbox".to_string(),
            "workspace-write".into(),
            "--cwd".into(),
            "/w".into(),
        ];
        assert_eq!(key(&ro), key(&ro.clone()));
        assert_ne!(key(&ro), key(&ww));
        // FNV-1a 64 of the flags joined by NUL, as computed independently.
        assert_eq!(key(&ro), "host-190a24499c5995af");
    }
}
