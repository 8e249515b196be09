//! The file-system (and TCP) half of the sandbox: the rules of [`super::plan`] as one
//! Landlock ruleset, enforced on the calling thread.
//!
//! Every file-system right Landlock knows is handled, so anything a rule does not grant is
//! denied. ABI 3 (truncate) is required; rights of later ABIs (device ioctls, Unix-socket
//! connects) are handled where the kernel has them. With the network off, TCP bind and connect
//! are handled with no port allowed (ABI 4) and abstract Unix sockets outside the sandbox are
//! out of reach (ABI 6); signals to processes outside the sandbox are always scoped (ABI 6).

use std::path::{Path, PathBuf};

use landlock::{
    ABI, Access, AccessFs, AccessNet, BitFlags, CompatLevel, Compatible, PathBeneath, PathFd,
    Ruleset, RulesetAttr, RulesetCreatedAttr, RulesetStatus, Scope,
};

use super::plan::{self, Grant};
use super::policy::{Network, Policy};

/// The oldest Landlock ABI the sandbox runs on: 3 (Linux 6.2), the first that controls
/// truncation.
pub(super) const MIN_ABI: i32 = 3;

/// The running kernel's Landlock ABI version (0 when Landlock is missing or disabled).
pub(super) fn abi_version() -> i32 {
    const LANDLOCK_CREATE_RULESET_VERSION: u32 = 1;
    // SAFETY: with a null attribute and size 0 this only returns the ABI version.
    let v = unsafe {
        libc::syscall(
            libc::SYS_landlock_create_ruleset,
            std::ptr::null::<libc::c_void>(),
            0usize,
            LANDLOCK_CREATE_RULESET_VERSION,
        )
    };
    if v < 0 { 0 } else { v as i32 }
}

fn access(grant: Grant, network: Network) -> BitFlags<AccessFs> {
    let read = AccessFs::ReadFile | AccessFs::ReadDir | AccessFs::Execute;
    match grant {
        Grant::ListOnly => AccessFs::ReadDir.into(),
        Grant::Read if network == Network::On => read | AccessFs::ResolveUnix,
        Grant::Read => read,
        Grant::Device => read | AccessFs::WriteFile | AccessFs::Truncate | AccessFs::IoctlDev,
        Grant::Write => AccessFs::from_all(ABI::V10),
    }
}

/// The entries of `dir` that are not symlinks (unreadable directories have none).
fn entries(dir: &Path) -> Vec<PathBuf> {
    let Ok(read) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    read.flatten()
        .filter(|e| e.file_type().is_ok_and(|t| !t.is_symlink()))
        .map(|e| e.path())
        .collect()
}

/// Builds and enforces the ruleset for `policy` on this thread; `no_new_privs` is set too.
pub(super) fn restrict(policy: &Policy) -> Result<(), String> {
    let abi = abi_version();
    if abi < MIN_ABI {
        return Err(missing_abi(abi));
    }
    let fail = |e: landlock::RulesetError| format!("Landlock refused the ruleset ({e})");
    let mut ruleset = Ruleset::default()
        .set_compatibility(CompatLevel::BestEffort)
        .handle_access(AccessFs::from_all(ABI::V10))
        .map_err(fail)?
        .scope(Scope::Signal)
        .map_err(fail)?;
    if policy.network == Network::Off {
        ruleset = ruleset
            .handle_access(AccessNet::from_all(ABI::V4))
            .map_err(fail)?
            .scope(Scope::AbstractUnixSocket)
            .map_err(fail)?;
    }
    let mut created = ruleset.create().map_err(fail)?;
    for (path, grant) in plan::rules(policy, &entries) {
        // A path that does not exist (an absent device, a vanished entry) needs no rule.
        let Ok(fd) = PathFd::new(&path) else { continue };
        created = created
            .add_rule(PathBeneath::new(fd, access(grant, policy.network)))
            .map_err(|e| format!("Landlock refused the rule for {} ({e})", path.display()))?;
    }
    let status = created
        .no_new_privs(true)
        .restrict_self()
        .map_err(|e| format!("Landlock could not enforce the ruleset ({e})"))?;
    if status.ruleset == RulesetStatus::NotEnforced || !status.no_new_privs {
        return Err("Landlock did not enforce the ruleset".into());
    }
    Ok(())
}

/// The sentence for a kernel whose Landlock is missing or too old.
pub(super) fn missing_abi(abi: i32) -> String {
    if abi == 0 {
        "this kernel has no Landlock (it needs Linux 6.2 or later with `landlock` in the lsm= boot list)".into()
    } else {
        format!(
            "this kernel's Landlock is ABI {abi}, and the sandbox needs ABI {MIN_ABI} (Linux 6.2) to control truncation"
        )
    }
}
