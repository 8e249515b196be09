//! Other machines: SSH hosts, containers and pods, and one command across a fleet.
//!
//! termpilot rides on the transports people already run — the system `ssh` (with the
//! user's ssh config as the inventory), `docker`/`podman exec` and `kubectl exec` — and
//! never speaks a wire protocol of its own here. [`target`] parses the `host` strings,
//! [`transport`] builds the argv (SSH always strict about host keys, never prompting),
//! [`script`] the POSIX text run on the target, [`failure`] tells a broken link from a
//! failing command, [`ending`] ends what was started inside a container or pod, and
//! [`fleet`] runs one command on many targets. One-shot runs go through the one runner,
//! [`crate::exec::run`], like every other process. A plain-terminal session on a target (the
//! transport on a local PTY, hooks delivered in band) is a session's business:
//! `session/remote_shell.rs`.

pub(crate) mod ending;
pub(crate) mod failure;
pub(crate) mod fleet;
pub(crate) mod script;
pub(crate) mod target;
pub(crate) mod transport;

use std::time::Duration;

use tokio_util::sync::CancellationToken;

use crate::error::{Error, Fault, Result};
use crate::exec::{Outcome, OutputCap, Spec};
pub use ending::{end as end_marked, start_failed, sweep_argv};
pub use failure::LinkFailure;
pub use fleet::{
    DEFAULT_CONCURRENCY, MAX_TARGETS, Report, exit_ok, judge as judge_fleet, run as run_fleet,
};
pub use script::RemoteCommand;
pub use target::{Engine, Target};
pub use transport::{RemoteOptions, Tty, argv as transport_argv, check_remote_bin};

/// How a remote one-shot run went: the command ran (whatever its exit code), or the link
/// to the target failed before it could.
#[derive(Debug)]
pub enum Ran {
    Done(Box<Outcome>),
    LinkFailed(LinkFailure),
}

/// One run's inputs besides the target.
#[derive(Debug, Clone)]
pub struct OneShot {
    pub command: RemoteCommand,
    pub stdin: Option<Vec<u8>>,
    pub timeout: Duration,
    pub cap: OutputCap,
}

/// Runs `job` on `target` without a terminal: exit code, stdout and stderr kept apart.
///
/// In a container or a pod the command runs carrying a marker of its own, and nothing it
/// started is left running there when the call returns ([`ending`]): what it left in the
/// background is swept in the same exec when it ends by itself, and by a second exec when it
/// timed out or was cancelled (killing the local client ends nothing in the target). What
/// could not be ended is named in the outcome's `survivors`.
pub async fn run(
    target: &Target,
    options: &RemoteOptions,
    job: &OneShot,
    spills: &std::sync::Arc<crate::host::Spills>,
    cancel: &CancellationToken,
) -> Result<Ran> {
    let mut remote = job.command.argv()?;
    let inside = ending::reaches_inside(target);
    let value = crate::host::marker::for_run();
    if inside {
        ending::remember_for_undertaker(target, options);
        remote = ending::marked_run(&remote[2], &value);
    }
    let mut argv = transport::argv(target, options, Tty::No, &remote);
    let program = argv.remove(0);
    let mut spec = Spec::direct(program.clone(), argv);
    spec.stdin = job.stdin.clone();
    spec.timeout = job.timeout;
    spec.cap = job.cap;
    let ran = crate::exec::run(spec, spills, cancel).await;
    let left = match &ran {
        Ok(out) => out.timed_out || out.stderr.text().contains(&ending::left_behind_tag(&value)),
        Err(_) => true,
    };
    let survivors = if inside && left {
        ending::end(target, options, &value).await
    } else {
        Vec::new()
    };
    let mut out = match ran {
        // The transport itself is missing here (typed: the runner's own "not found").
        Err(Error::Fault(Fault::ProgramNotFound { .. })) => {
            return Err(Error::InvalidInput(format!(
                "`{target}` is reached through `{program}`, which is not installed here; install it or put it on PATH."
            )));
        }
        Err(Error::Other(m)) if !survivors.is_empty() => {
            return Err(Error::Other(format!(
                "{m} Inside `{target}` these could not be ended and still run: {}.",
                crate::host::marker::describe(&survivors)
            )));
        }
        other => other?,
    };
    out.survivors.extend(survivors);
    if !out.timed_out
        && let Some(failure) = failure::classify(target, out.exit_code, &out.stderr.text())
    {
        return Ok(Ran::LinkFailed(failure));
    }
    Ok(Ran::Done(Box::new(out)))
}
