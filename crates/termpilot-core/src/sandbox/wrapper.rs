//! `termpilot __sandbox-exec <policy> -- program args…`: the process every sandboxed child
//! starts as. It applies the policy to itself, then execs the program, which keeps the pid,
//! the process group, the terminal and the file descriptors it was given.
//!
//! Its own environment holds nothing but the program's, sealed (see [`super::sealed`]): the
//! dynamic loader and libc had nothing of the caller's to act on before the policy is applied.
//!
//! Order: the private temp dir is created, termpilot's socket folders are hidden and the git
//! paths protected by mounts (which Landlock would forbid later), Landlock restricts the file system (and sets
//! `no_new_privs`), the seccomp filter turns the network off, then `TMPDIR` and
//! `TERMPILOT_SANDBOX` are set and the program is exec'd. Any failure ends the wrapper with
//! exit code 126 and one line on stderr; the program never runs unsandboxed.

use std::ffi::OsString;
use std::os::unix::process::CommandExt;

use super::policy::{Mode, Network, Policy};
use super::{landlock, mounts, sealed, seccomp};

/// The program name that makes the wrapper apply the policy and exit 0 without exec'ing
/// anything: the server's start-up self-test.
pub(crate) const PROBE: &str = "__probe";

/// Exit code when the sandbox could not be applied (the program was not run).
pub(crate) const FAILED: i32 = 126;

/// When this process was started as the wrapper, runs it (only returning when it failed),
/// before anything else in `main` — no threads, no logging, no runtime.
pub fn from_argv() -> Option<u8> {
    let args: Vec<OsString> = std::env::args_os().skip(1).collect();
    if args.first().is_none_or(|a| a != super::WRAPPER_ARG) {
        return None;
    }
    Some(main(&args[1..]) as u8)
}

/// Applies the policy on `args` (everything after `__sandbox-exec`) and execs the program.
/// Returns only on failure, with the exit code to use.
pub(crate) fn main(args: &[OsString]) -> i32 {
    let (policy, argv) = match Policy::from_args(args) {
        Ok(parsed) => parsed,
        Err(e) => {
            eprintln!("termpilot sandbox: {e}; nothing was run.");
            return FAILED;
        }
    };
    let env = match sealed::decode(|k| std::env::var_os(k)) {
        Ok(env) => env,
        Err(e) => {
            eprintln!("termpilot sandbox: {e}; nothing was run.");
            return FAILED;
        }
    };
    if let Err(e) = apply(&policy) {
        eprintln!("termpilot sandbox: {e}; the command was not run.");
        return FAILED;
    }
    if argv[0] == PROBE {
        return 0;
    }
    let err = std::process::Command::new(&argv[0])
        .args(&argv[1..])
        .env_clear()
        .envs(env)
        .env("TMPDIR", &policy.tmp)
        .env("TERMPILOT_SANDBOX", policy.mode.as_str())
        .exec();
    let program = argv[0].to_string_lossy();
    eprintln!("termpilot sandbox: cannot run `{program}`: {err}");
    if err.kind() == std::io::ErrorKind::NotFound {
        127
    } else {
        FAILED
    }
}

/// Everything but the exec, on this (single-threaded) process.
pub(crate) fn apply(policy: &Policy) -> Result<(), String> {
    let mut dir = std::fs::DirBuilder::new();
    std::os::unix::fs::DirBuilderExt::mode(dir.recursive(true), 0o700);
    dir.create(&policy.tmp).map_err(|e| {
        format!(
            "cannot create the private temp dir {} ({e})",
            policy.tmp.display()
        )
    })?;
    if policy.mode != Mode::Off {
        let git = if policy.mode == Mode::WorkspaceWrite {
            mounts::protected(&policy.write_roots)
        } else {
            mounts::Protected::default()
        };
        mounts::apply(&git, &policy.hidden, &policy.write_roots, &policy.tmp)?;
        landlock::restrict(policy)?;
    }
    if policy.network == Network::Off {
        // SAFETY: prctl(PR_SET_NO_NEW_PRIVS) has no memory arguments.
        if unsafe { libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) } != 0 {
            return Err(format!(
                "cannot set no_new_privs ({})",
                std::io::Error::last_os_error()
            ));
        }
        seccomp::install().map_err(|e| format!("cannot install the network filter ({e})"))?;
    }
    Ok(())
}
