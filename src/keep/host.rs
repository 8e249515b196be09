//! The session host: `termpilot __session-host`, the one owner of this user's kept sessions
//! (for one sandbox policy).
//!
//! It runs its own [`Core`] (ids in the kept namespace, `--keep-idle` as its idle timeout,
//! the sandbox policy it was started with) and the native tools, all registered directly,
//! and serves MCP on its Unix socket ([`super::paths`]): one rmcp server per connection, all
//! on the same core, so two servers' calls on one session take turns (`SessionCall`). Every
//! connection's peer uid is checked (`SO_PEERCRED`) before a byte of MCP: another uid is
//! closed at once, and logged. It holds a lock file for its life (one host per policy),
//! starts the undertaker like a server (its sessions' processes die with it, `kill -9`
//! included), keeps its record ([`super::record`]) current, and ends by itself once it has
//! held no session, run no call and taken no connection for [`EMPTY_GRACE`]. At rest it gives back the memory it does not use
//! ([`super::rest`]).

use std::io::Write;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use rmcp::ServiceExt;
use termpilot_core::config::SessionIds;

use crate::mcp::registry::Surface;
use termpilot_core::sandbox;
use termpilot_core::{Config, Core};

use super::paths::{self, Files};
use super::record::{self, Record};
use crate::mcp::compat::{ErrorShape, Identity};

/// How long the host stays with no session before it ends.
pub const EMPTY_GRACE: Duration = Duration::from_secs(5);
/// How often it looks at its sessions (record, emptiness).
const TICK: Duration = Duration::from_millis(500);

/// What a server starts the host with: its keep-idle and its sandbox policy.
#[derive(Debug, clap::Args)]
pub struct HostArgs {
    /// Kept sessions end after this many seconds with no call, no output, no attached person.
    #[arg(long, value_name = "SECS")]
    pub keep_idle: u64,
    #[arg(long, value_parser = sandbox::Mode::parse, default_value = "off")]
    pub sandbox: sandbox::Mode,
    #[arg(long = "writable", value_name = "DIR")]
    pub writable: Vec<PathBuf>,
    #[arg(long, value_parser = sandbox::Network::parse)]
    pub network: Option<sandbox::Network>,
    #[arg(long = "deny-read", value_name = "PATH")]
    pub deny_read: Vec<PathBuf>,
    #[arg(long)]
    pub cwd: Option<PathBuf>,
}

/// Runs the host until it holds no session (or is told to stop).
pub fn run(args: HostArgs) -> Result<(), String> {
    // Before any thread starts (main's default is an arena per core): one malloc arena. The
    // host's few threads rarely allocate at once, and each arena keeps free pages and a
    // top of its own.
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt takes no pointer; no other thread runs yet.
    unsafe {
        libc::mallopt(libc::M_ARENA_MAX, 1);
    }
    let config = Config {
        cwd: args.cwd.clone(),
        idle_timeout: Duration::from_secs(args.keep_idle.max(1)),
        session_ids: SessionIds::Kept,
        sandbox: sandbox::Settings {
            mode: args.sandbox,
            writable: args.writable,
            network: args.network,
            deny_read: args.deny_read,
        },
        ..Config::default()
    };
    super::settings::configure(super::settings::Settings {
        is_host: true,
        ..Default::default()
    });
    let key = paths::key(&super::settings::policy_args(&config));
    let dir = paths::dir().map_err(|e| e.to_string())?;
    let files = Files::of(&dir, &key);
    sandbox::install(&config.sandbox, config.cwd.as_deref())?;
    let surface = Surface {
        all_direct: true,
        ..Default::default()
    };
    let registry = crate::mcp::registry::Registry::build(
        crate::mcp::tools::all(),
        &surface,
        crate::mcp::tools::extra::declaration,
    )?;
    // Before any thread: what the host starts ends with it, however it dies.
    termpilot_core::host::start_undertaker();
    let Some(_lock) = take_lock(&files)? else {
        // Another host of this policy runs: the server uses that one.
        say("busy");
        return Ok(());
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .map_err(|e| e.to_string())?;
    let keep_idle = args.keep_idle;
    let outcome = runtime.block_on(async move {
        let _ = std::fs::remove_file(&files.socket);
        let listener =
            tokio::net::UnixListener::bind(&files.socket).map_err(|e| e.to_string())?;
        set_mode(&files.socket, 0o600)?;
        let core = Core::new(config);
        let identity = Identity {
            name: Box::leak(super::settings::host_name().into_boxed_str()),
            title: "termpilot session host",
            instructions: Box::leak(format!("keepIdleSecs={keep_idle}").into_boxed_str()),
            errors: ErrorShape::Sentence,
            tool_names: &[],
            skill: None,
        };
        let server = crate::mcp::server::Server::new(core.clone(), Arc::new(registry))
            .with_identity(identity);
        let mut rec = Record {
            pid: std::process::id(),
            version: env!("CARGO_PKG_VERSION").into(),
            keep_idle_secs: keep_idle,
            ids: Vec::new(),
            // The ids a host that died left behind: servers are told they ended.
            ended: record::read(&files.record)
                .filter(|r| !record::alive(r.pid))
                .map(|r| r.ids.into_iter().chain(r.ended).collect())
                .unwrap_or_default(),
        };
        record::write(&files.record, &rec).map_err(|e| e.to_string())?;
        say("ready");
        quiet_stdout();
        tracing::info!(pid = rec.pid, socket = %files.socket.display(), "session host listening");
        let mut tick = tokio::time::interval(TICK);
        let mut empty_since = Some(Instant::now());
        let mut rest = super::rest::Schedule::default();
        let me = super::settings::my_uid();
        let stop = stop_signal();
        tokio::pin!(stop);
        // A start or an end is written to the record at once, not at the next tick.
        let mut changes = core.sessions.changes();
        // The calls it is answering: a host with no session yet ends only once none runs.
        let calls = server.drain();
        loop {
            tokio::select! {
                accepted = listener.accept() => {
                    let Ok((stream, _)) = accepted else { continue };
                    // A server connects to make or reach a session: the grace starts again.
                    empty_since = None;
                    match stream.peer_cred() {
                        Ok(cred) if cred.uid() == me => serve(server.clone(), stream),
                        Ok(cred) => {
                            tracing::warn!(uid = cred.uid(), "refused a connection from another user (uid {})", cred.uid());
                            drop(stream);
                        }
                        Err(e) => tracing::warn!("refused a connection whose uid could not be read: {e}"),
                    }
                }
                _ = changes.changed() => {
                    rec.ids = held(&core);
                    if let Err(e) = record::write(&files.record, &rec) {
                        tracing::warn!("the record could not be written: {e}");
                    }
                }
                _ = tick.tick() => {
                    // Cheap (no `/proc`): this runs every tick, at rest too.
                    let (ids, quiet_for) = core.sessions.quiet();
                    // Quiet (no call, no output, no person) for a moment: give memory back
                    // (again as the quiet spell goes on).
                    if rest.due(quiet_for.unwrap_or(Duration::MAX)) {
                        // The worker's stack too, from the worker (this loop runs on the
                        // thread that called `block_on`).
                        tokio::spawn(async { super::rest::trim_stack() });
                        let dropped = super::rest::settle();
                        tracing::debug!(dropped, "at rest: clean code and constant pages given back");
                    }
                    if ids != rec.ids {
                        rec.ids = ids;
                        if let Err(e) = record::write(&files.record, &rec) {
                            tracing::warn!("the record could not be written: {e}");
                        }
                    }
                    // Empty: no session, and no call running — a start that is slow to make
                    // its session (a loaded machine) must not lose the race with the grace.
                    if rec.ids.is_empty() && calls.running() == 0 {
                        let since = *empty_since.get_or_insert_with(Instant::now);
                        if since.elapsed() >= EMPTY_GRACE {
                            tracing::info!("no kept session left: ending");
                            break;
                        }
                    } else {
                        empty_since = None;
                    }
                }
                signal = &mut stop => {
                    tracing::info!("ending on {signal}");
                    break;
                }
            }
        }
        drop(listener);
        let _ = std::fs::remove_file(&files.socket);
        core.shutdown().await;
        let _ = std::fs::remove_file(&files.record);
        Ok::<(), String>(())
    });
    runtime.shutdown_timeout(Duration::from_millis(100));
    outcome
}

/// Serves one connection on its own task. Not inlined: the connection's future is built on
/// the stack before it moves to its task, and in the host's loop that would make the frame
/// its every tick runs in (and keeps resident at rest) tens of KiB deeper.
#[inline(never)]
fn serve(server: crate::mcp::server::Server, stream: tokio::net::UnixStream) {
    tokio::spawn(async move {
        if let Ok(service) = server.serve(stream).await {
            let _ = service.waiting().await;
        }
    });
}

/// The ids of the sessions the host holds, sorted.
fn held(core: &Core) -> Vec<String> {
    core.sessions.quiet().0
}

/// Takes the host lock of `files` (held until the process ends; close-on-exec, so no
/// session inherits it): `None` when another host holds it.
fn take_lock(files: &Files) -> Result<Option<std::fs::File>, String> {
    use std::os::fd::AsRawFd;
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&files.lock)
        .map_err(|e| format!("{}: {e}", files.lock.display()))?;
    // SAFETY: flock(2) on a descriptor this function owns.
    let taken = unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } == 0;
    Ok(taken.then_some(file))
}

fn set_mode(path: &std::path::Path, mode: u32) -> Result<(), String> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode))
        .map_err(|e| format!("{}: {e}", path.display()))
}

/// One line to the server that started this host.
fn say(word: &str) {
    let mut out = std::io::stdout();
    let _ = writeln!(out, "{word}");
    let _ = out.flush();
}

/// Lets go of the pipe to the server that started this host (it may end any time).
fn quiet_stdout() {
    // SAFETY: replacing this process's descriptor 1 with /dev/null.
    unsafe {
        let null = libc::open(c"/dev/null".as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC);
        if null >= 0 {
            libc::dup2(null, 1);
            libc::close(null);
        }
    }
}

async fn stop_signal() -> &'static str {
    use tokio::signal::unix::{SignalKind, signal};
    let (Ok(mut term), Ok(mut int)) = (
        signal(SignalKind::terminate()),
        signal(SignalKind::interrupt()),
    ) else {
        return std::future::pending().await;
    };
    tokio::select! {
        _ = term.recv() => "SIGTERM",
        _ = int.recv() => "SIGINT",
    }
}
