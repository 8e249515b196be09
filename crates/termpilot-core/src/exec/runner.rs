//! The one-shot runner: start a process, feed its stdin, capture its output, bound its time.
//!
//! The child runs in a process group of its own (a new process group on Windows) and, on
//! Linux, is forked from the one spawner thread with a parent-death signal, so it dies with
//! the server ([`super::spawner`]); on
//! timeout or cancellation the whole tree is killed and the child reaped before [`run`]
//! returns. However it ends, whatever the run started that still runs — in its group or out
//! of it — is ended through its marker ([`crate::host::marker`]) before [`run`] returns, and what
//! cannot be ended is named in [`Outcome::survivors`]. When something still holds the output
//! pipes open after that, its group is killed after a short grace so the call never hangs.

use std::path::PathBuf;
use std::process::Stdio;
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::io::AsyncWriteExt;
use tokio::process::Command;
use tokio_util::sync::CancellationToken;

use super::capture::{Captured, OutputCap, capture};
use super::shell::Shell;
use crate::error::{Error, Fault, Result};
use crate::host::Spills;
use crate::host::env::CHILD_ENV;
use crate::host::marker;
use crate::platform;

/// Default time a one-shot command may run.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);
/// Default preview kept per stream (director-shell keeps ~50 KiB).
pub const DEFAULT_PREVIEW_BYTES: u64 = 50 * 1024;
/// How long output pipes may stay open after the child exited before leftovers are killed.
const PIPE_GRACE: Duration = Duration::from_millis(250);
/// How long readers get to finish once everything holding the pipes was killed.
const DRAIN_LIMIT: Duration = Duration::from_secs(2);

/// What to run and how.
#[derive(Debug, Clone)]
pub struct Spec {
    pub program: String,
    pub args: Vec<String>,
    /// On Windows, pass `args` verbatim (cmd.exe command lines).
    pub verbatim: bool,
    /// Working directory; `None` = the server's.
    pub cwd: Option<PathBuf>,
    /// Set after [`CHILD_ENV`], so they override it.
    pub env: Vec<(String, String)>,
    /// Written to the child's stdin, which is then closed; `None` = no stdin at all.
    pub stdin: Option<Vec<u8>>,
    pub timeout: Duration,
    pub cap: OutputCap,
}

impl Spec {
    /// Runs `program` with `args` directly: no shell, nothing expanded.
    pub fn direct(program: impl Into<String>, args: Vec<String>) -> Spec {
        Spec {
            program: program.into(),
            args,
            verbatim: false,
            cwd: None,
            env: Vec::new(),
            stdin: None,
            timeout: DEFAULT_TIMEOUT,
            cap: OutputCap::Each(DEFAULT_PREVIEW_BYTES),
        }
    }

    /// Runs the command string `command` in `shell`.
    pub fn shell(shell: Shell, command: &str) -> Result<Spec> {
        let line = shell.command(command)?;
        let mut spec = Spec::direct(line.program, line.args);
        spec.verbatim = line.verbatim;
        Ok(spec)
    }
}

/// How a run ended.
#[derive(Debug, Clone)]
pub struct Outcome {
    /// The exit code; `None` when killed by a signal or on timeout.
    pub exit_code: Option<i32>,
    /// The signal that ended the child (Unix).
    pub signal: Option<i32>,
    pub timed_out: bool,
    pub duration: Duration,
    pub stdout: Captured,
    pub stderr: Captured,
    /// The program actually started (after PATH resolution on Windows).
    pub program: String,
    /// Processes the run started that could not be ended when it returned (see [`marker`]).
    pub survivors: Vec<marker::Survivor>,
}

/// Runs `spec` to completion, or until its timeout or `cancel` fires (then the tree is
/// killed). Cancellation is an error; a timeout is a normal outcome with `timed_out`. Output
/// past a stream's preview goes to spill files of `spills`.
pub async fn run(spec: Spec, spills: &Arc<Spills>, cancel: &CancellationToken) -> Result<Outcome> {
    if let Some(cwd) = &spec.cwd
        && !cwd.is_dir()
    {
        return Err(Error::InvalidInput(format!(
            "The working directory `{}` does not exist or is not a directory; pass an existing directory as cwd.",
            cwd.display()
        )));
    }
    let (program, args, verbatim) = platform_program(&spec);
    let mut cmd = crate::sandbox::tokio_command(&program);
    add_args(&mut cmd, &args, verbatim);
    if let Some(cwd) = &spec.cwd {
        cmd.current_dir(cwd);
    }
    cmd.envs(CHILD_ENV.iter().copied());
    cmd.envs(spec.env.iter().map(|(k, v)| (k, v)));
    let run_id = marker::for_run();
    cmd.env(marker::MARKER, &run_id);
    cmd.stdin(if spec.stdin.is_some() {
        Stdio::piped()
    } else {
        Stdio::null()
    })
    .stdout(Stdio::piped())
    .stderr(Stdio::piped())
    .kill_on_drop(true);
    own_group(&mut cmd);
    #[cfg(unix)]
    crate::sandbox::seal_tokio(&mut cmd);

    let started = Instant::now();
    let mut child = super::spawner::spawn(cmd)
        .await
        .map_err(|e| spawn_error(&spec.program, e))?;
    let pid = child.id().map(|p| p as i32).unwrap_or(0);
    tracing::debug!(pid, program = %program, "one-shot started");

    if let (Some(data), Some(mut stdin)) = (spec.stdin, child.stdin.take()) {
        tokio::spawn(async move {
            // A child that exits without reading its input is not an error.
            let _ = stdin.write_all(&data).await;
            let _ = stdin.shutdown().await;
        });
    }
    let stop = CancellationToken::new();
    let (out_budget, err_budget) = spec.cap.budgets();
    let mut out_task = tokio::spawn(capture(
        child.stdout.take().expect("piped stdout"),
        out_budget,
        "stdout",
        spills.clone(),
        stop.clone(),
    ));
    let mut err_task = tokio::spawn(capture(
        child.stderr.take().expect("piped stderr"),
        err_budget,
        "stderr",
        spills.clone(),
        stop.clone(),
    ));

    let mut timed_out = false;
    let mut cancelled = false;
    let status = tokio::select! {
        s = child.wait() => s.ok(),
        _ = tokio::time::sleep(spec.timeout) => { timed_out = true; None }
        _ = cancel.cancelled() => { cancelled = true; None }
    };
    let status = match status {
        Some(s) => Some(s),
        None => {
            platform::kill_tree(pid);
            let reaped = tokio::time::timeout(DRAIN_LIMIT, child.wait())
                .await
                .ok()
                .and_then(|r| r.ok());
            // A fork bomb refills its group as it is killed: kill until it stays empty.
            empty_group(pid).await;
            reaped
        }
    };
    let duration = started.elapsed();
    // A one-shot leaves nothing running: what it started, in its group or out of it
    // (`cmd &`, `setsid -f`, a double fork), still carries the run's marker. This also
    // closes the pipes such a process held.
    let survivors = marker::end(&run_id).await;
    if !survivors.is_empty() {
        tracing::warn!(survivors = %marker::describe(&survivors), "a run's processes could not be ended");
    }

    // Collect both streams, killing whatever still holds the pipes after a grace.
    let both = async { ((&mut out_task).await, (&mut err_task).await) };
    let (stdout, stderr) = match tokio::time::timeout(PIPE_GRACE, both).await {
        Ok((o, e)) => (o.unwrap_or_default(), e.unwrap_or_default()),
        Err(_) => {
            tracing::debug!(pid, "output pipes held open after exit; killing leftovers");
            kill_leftovers(pid);
            empty_group(pid).await;
            let both = async { ((&mut out_task).await, (&mut err_task).await) };
            match tokio::time::timeout(DRAIN_LIMIT, both).await {
                Ok((o, e)) => (o.unwrap_or_default(), e.unwrap_or_default()),
                Err(_) => {
                    stop.cancel();
                    (
                        out_task.await.unwrap_or_default(),
                        err_task.await.unwrap_or_default(),
                    )
                }
            }
        }
    };
    if cancelled {
        return Err(Error::Other(format!(
            "The command `{}` was cancelled after {} ms; its process tree was killed{}.",
            spec.program,
            duration.as_millis(),
            if survivors.is_empty() {
                String::new()
            } else {
                format!(
                    ", except these, which could not be ended and still run: {}",
                    marker::describe(&survivors)
                )
            }
        )));
    }
    let (exit_code, signal) = match status {
        Some(s) if !timed_out => (s.code(), exit_signal(&s)),
        Some(s) => (None, exit_signal(&s)),
        None => (None, None),
    };
    Ok(Outcome {
        exit_code,
        signal,
        timed_out,
        duration,
        stdout,
        stderr,
        program,
        survivors,
    })
}

fn spawn_error(program: &str, e: std::io::Error) -> Error {
    match e.kind() {
        std::io::ErrorKind::NotFound => Fault::ProgramNotFound {
            program: program.into(),
            source: e,
        }
        .into(),
        std::io::ErrorKind::PermissionDenied => Error::InvalidInput(format!(
            "`{program}` is not executable (permission denied); check the path and its permissions."
        )),
        _ => Error::io(
            format!("Could not start `{program}`"),
            "Check the program and the working directory",
            e,
        ),
    }
}

#[cfg(unix)]
fn platform_program(spec: &Spec) -> (String, Vec<String>, bool) {
    (spec.program.clone(), spec.args.clone(), false)
}

#[cfg(windows)]
fn platform_program(spec: &Spec) -> (String, Vec<String>, bool) {
    if spec.verbatim {
        return (spec.program.clone(), spec.args.clone(), true);
    }
    super::resolve::windows_program(&spec.program, &spec.args)
}

#[cfg(unix)]
fn add_args(cmd: &mut Command, args: &[String], _verbatim: bool) {
    cmd.args(args);
}

#[cfg(windows)]
fn add_args(cmd: &mut Command, args: &[String], verbatim: bool) {
    if verbatim {
        for a in args {
            cmd.raw_arg(a);
        }
    } else {
        cmd.args(args);
    }
}

/// Its own session (so its own process group, and on Linux its own scheduler autogroup: a
/// fork bomb competes with the server as one group, not as hundreds of processes); on Linux
/// it also dies with the server (see [`super::spawner`]).
#[cfg(unix)]
fn own_group(cmd: &mut Command) {
    // SAFETY: getpid has no preconditions.
    let server = unsafe { libc::getpid() };
    // SAFETY: the hook only calls setsid, prctl, getppid and _exit (async-signal-safe).
    unsafe {
        cmd.pre_exec(move || {
            if libc::setsid() < 0 {
                return Err(std::io::Error::last_os_error());
            }
            #[cfg(target_os = "linux")]
            super::spawner::die_with_parent(server)?;
            #[cfg(not(target_os = "linux"))]
            let _ = server;
            Ok(())
        });
    }
}

#[cfg(windows)]
fn own_group(cmd: &mut Command) {
    const CREATE_NEW_PROCESS_GROUP: u32 = 0x0000_0200;
    const CREATE_NO_WINDOW: u32 = 0x0800_0000;
    cmd.creation_flags(CREATE_NEW_PROCESS_GROUP | CREATE_NO_WINDOW);
}

/// The environment variable naming the run a process belongs to (inherited by everything it
/// starts, whatever session or group it moves to): see [`marker`].
pub const RUN_MARKER: &str = marker::MARKER;

/// How long the runner keeps re-killing a process group that refills (a fork bomb).
const EMPTY_LIMIT: Duration = Duration::from_millis(700);

/// Kills process group `pgid` again and again until nothing but zombies is left in it, for
/// at most [`EMPTY_LIMIT`]. Each `kill(-pgid, SIGKILL)` reaches every member at once, and a
/// fork racing it is cancelled by the kernel, so a bomb shrinks with every round.
#[cfg(unix)]
async fn empty_group(pgid: i32) {
    let deadline = Instant::now() + EMPTY_LIMIT;
    let mut rounds = 0u32;
    loop {
        if !platform::signal_group(pgid, libc::SIGKILL) {
            return;
        }
        rounds += 1;
        let live = platform::group_members(pgid)
            .into_iter()
            .filter(|&p| platform::process_state(p) != Some('Z'))
            .count();
        if live == 0 {
            return;
        }
        if Instant::now() >= deadline {
            tracing::warn!(
                pgid,
                live,
                rounds,
                "process group still not empty after re-killing it"
            );
            return;
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

#[cfg(windows)]
async fn empty_group(_pgid: i32) {}

/// Kills what is left of the child's process group (the child itself is already reaped).
#[cfg(unix)]
fn kill_leftovers(pgid: i32) {
    platform::signal_group(pgid, libc::SIGKILL);
}

#[cfg(windows)]
fn kill_leftovers(_pgid: i32) {
    // The tree root is gone, so taskkill /T cannot find the leftovers; readers are stopped.
}

#[cfg(unix)]
fn exit_signal(status: &std::process::ExitStatus) -> Option<i32> {
    std::os::unix::process::ExitStatusExt::signal(status)
}

#[cfg(windows)]
fn exit_signal(_status: &std::process::ExitStatus) -> Option<i32> {
    None
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    fn sh(command: &str) -> Spec {
        Spec::shell(Shell::Sh, command).unwrap()
    }

    /// [`super::run`] with spill files of a fresh [`Spills`].
    async fn run(spec: Spec, cancel: &CancellationToken) -> Result<Outcome> {
        let spills = Arc::new(Spills::new(crate::config::DEFAULT_MAX_SPILL_BYTES));
        super::run(spec, &spills, cancel).await
    }

    #[tokio::test]
    async fn captures_streams_and_exit_code() {
        let out = run(
            sh("echo out; echo err >&2; exit 3"),
            &CancellationToken::new(),
        )
        .await
        .unwrap();
        assert_eq!(out.stdout.text(), "out\n");
        assert_eq!(out.stderr.text(), "err\n");
        assert_eq!(out.exit_code, Some(3));
        assert!(!out.timed_out);
    }

    #[tokio::test]
    async fn stdin_is_fed_and_closed() {
        let mut spec = Spec::direct("cat", vec![]);
        spec.stdin = Some(b"fed\n".to_vec());
        let out = run(spec, &CancellationToken::new()).await.unwrap();
        assert_eq!(out.stdout.text(), "fed\n");
    }

    #[tokio::test]
    async fn a_background_child_holding_the_pipe_does_not_hang_the_call() {
        let mut spec = sh("sleep 100 & echo started");
        spec.timeout = Duration::from_secs(20);
        let t = Instant::now();
        let out = run(spec, &CancellationToken::new()).await.unwrap();
        assert_eq!(out.stdout.text(), "started\n");
        assert_eq!(out.exit_code, Some(0));
        assert!(t.elapsed() < Duration::from_secs(5), "{:?}", t.elapsed());
    }

    #[tokio::test]
    async fn cancellation_kills_and_errors() {
        let cancel = CancellationToken::new();
        let c = cancel.clone();
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(100)).await;
            c.cancel();
        });
        let e = run(sh("sleep 100"), &cancel).await.unwrap_err().to_string();
        assert!(e.contains("cancelled"), "{e}");
    }

    #[tokio::test]
    async fn a_missing_program_and_cwd_are_clear_errors() {
        let e = run(
            Spec::direct("no-such-prog-xyz", vec![]),
            &CancellationToken::new(),
        )
        .await
        .unwrap_err()
        .to_string();
        assert!(e.contains("was not found"), "{e}");
        let mut spec = Spec::direct("true", vec![]);
        spec.cwd = Some("/no/such/dir".into());
        let e = run(spec, &CancellationToken::new())
            .await
            .unwrap_err()
            .to_string();
        assert!(e.contains("does not exist"), "{e}");
    }
}
