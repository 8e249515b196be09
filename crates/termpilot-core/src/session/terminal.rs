//! A live terminal session: what composes it, how it starts, how input reaches it, how it ends.
//!
//! A [`Session`] composes its owners: the [`Pty`] (the terminal, its program and the
//! threads that serve it, `pty.rs`), and the [`State`] the reader feeds (`state.rs`: the
//! screen, the output, the agent's input, the command state, the attached people) behind
//! one short lock, plus who holds the keyboard and the attach socket. Tool calls on one
//! session are serialised by its turn (`call.rs`).

use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use tokio::sync::watch;

use super::command_state::{CommandState, Seen};
use super::emulator::Size;
use super::integration::{self, Scanner};
use super::pty::{self, Feeds, Pty};
use super::shell::SessionShell;
use super::state::{State, lock};
use crate::error::{Fault, Result};
use crate::host::env::CHILD_ENV;
use crate::platform;

/// How a session was asked to start; kept so it can be started again the same way.
#[derive(Debug, Clone)]
pub struct Shape {
    pub shell: SessionShell,
    /// A command session runs this one program (through the shell) instead of a prompt.
    pub command: Option<String>,
    pub cwd: PathBuf,
    pub env: Vec<(String, String)>,
    pub size: Size,
    pub scrollback: usize,
    pub login: bool,
    pub name: Option<String>,
    pub theme: String,
    /// A plain-terminal session on another machine: the transport is the program here.
    pub remote: Option<crate::session::remote_shell::RemoteShell>,
}

/// A session's state at a glance.
#[derive(Debug, Clone)]
pub struct Status {
    pub alive: bool,
    /// A command (or a command session's program) is running.
    pub busy: bool,
    /// The foreground command when it is not the shell.
    pub foreground: Option<String>,
    pub cwd: PathBuf,
    /// Since the last call, output or attached person (zero while one is attached).
    pub idle: Duration,
    /// The terminal's size now (after any resize).
    pub size: Size,
}

/// A session's screen and facts at one moment (see [`Session::last_look`]).
#[derive(Debug, Clone)]
pub struct LastLook {
    pub text: String,
    /// Bytes that redraw the screen elsewhere (`redraw.rs`).
    pub redraw: Vec<u8>,
    pub cwd: String,
    pub size: Size,
    pub exit: Option<Exit>,
}

/// How the session's main process ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Exit {
    pub code: Option<i32>,
    pub signal: Option<String>,
}

/// The longest [`Session::exit_now`] waits for the waiter thread to record an exit it reaped.
const EXIT_RECORD_WAIT: Duration = Duration::from_secs(1);

/// One terminal session.
pub struct Session {
    pub(crate) id: String,
    pub(crate) shape: Shape,
    /// The server's spill files: this session's `terminal_exec` outputs are made there.
    pub(crate) spills: Arc<crate::host::Spills>,
    /// The main process (a start without one is refused).
    pub(crate) pid: i32,
    pub(crate) started: Instant,
    /// The shell was started with prompt hooks, so its first prompt brings marks.
    pub(crate) hooked: bool,
    /// When the main process started (with `pid`, names it for good).
    pid_start: Option<u64>,
    /// This incarnation's marker value: everything it starts carries it (see
    /// [`crate::host::marker`]), so what left its tree is ended too.
    mark: String,
    /// What carried the marker and could not be ended when the session was killed (`None`
    /// until it was).
    survivors: Mutex<Option<Vec<crate::host::marker::Survivor>>>,
    /// The screen, the output, the agent's input, the command state and the attached
    /// people, fed by the reader (`state.rs`).
    state: Arc<Mutex<State>>,
    /// The terminal, its program's input and the threads serving it (`pty.rs`).
    pty: Pty,
    events: Arc<watch::Sender<u64>>,
    /// Held by a tool call for its whole duration (a [`super::call::SessionCall`]): calls on
    /// one session run one at a time.
    pub(super) turn: Arc<tokio::sync::Mutex<()>>,
    last_used: Mutex<Instant>,
    /// The socket people attach through (see `attach.rs`).
    pub(super) attach: std::sync::OnceLock<super::socket::AttachSocket>,
    /// Who holds the keyboard (see `control.rs`).
    pub(super) control: super::control::Control,
    /// The terminal the main process reads, once found (see [`Session::stdin_tty`]).
    tty: std::sync::OnceLock<std::path::PathBuf>,
    /// The foreground program's `schedstat`, kept open: looked at before every write.
    switches: Mutex<platform::SwitchCounter>,
}

impl Session {
    /// Starts the shell (or command) of `shape` on a new PTY; its spill files are made in
    /// `spills`.
    pub fn spawn(
        id: String,
        shape: Shape,
        spills: Arc<crate::host::Spills>,
    ) -> Result<Arc<Session>> {
        let opened = pty::open(shape.size)?;
        let mut cmd: portable_pty::CommandBuilder =
            crate::sandbox::pty_command(&shape.shell.program, &shape.env);
        let mut integration_env = Vec::new();
        let mut integration_remove = Vec::new();
        let mut hooked = false;
        let mut scanner = Scanner::default();
        let mark = crate::host::marker::for_session();
        if let Some(remote) = &shape.remote {
            // A remote shell: the transport runs here, the hooks (and the marker) travel in
            // its command line.
            let launch = remote.launch(&mark);
            cmd = portable_pty::CommandBuilder::from_argv(
                launch.argv.iter().map(Into::into).collect(),
            );
            scanner = Scanner::signed_with(&launch.nonce);
            hooked = true;
        }
        match &shape.command {
            _ if shape.remote.is_some() => {}
            Some(command) => cmd.args(shape.shell.command_args(command, shape.login)),
            None => match integration::prepare(&shape.shell, shape.login, &shape.env)? {
                Some(launch) => {
                    cmd.args(launch.args);
                    integration_env = launch.env;
                    integration_remove = launch.remove_env;
                    scanner = Scanner::signed_with(&launch.nonce);
                    hooked = true;
                }
                None => cmd.args(shape.shell.interactive_args(shape.login)),
            },
        }
        cmd.cwd(&shape.cwd);
        for (k, v) in CHILD_ENV {
            cmd.env(k, v);
        }
        // A real terminal emulator is behind this one: programs may use 24-bit colour.
        cmd.env("COLORTERM", "truecolor");
        cmd.env("TERMPILOT_SESSION", &id);
        // A remote session's env is the target's (it travels in the transport's command
        // line): the local transport, which runs outside the sandbox, never gets it, so no
        // `LD_PRELOAD` or the like acts on it.
        for (k, v) in shape.env.iter().filter(|_| shape.remote.is_none()) {
            cmd.env(k, v);
        }
        // After the session's env: integration wraps the PS1 the caller asked for.
        for (k, v) in &integration_env {
            cmd.env(k, v);
        }
        for k in &integration_remove {
            cmd.env_remove(k);
        }
        // Last: the marker is the server's, whatever the session's env said.
        cmd.env(crate::host::marker::MARKER, &mark);
        // Then the environment is sealed for the sandbox wrapper (marker included).
        #[cfg(unix)]
        crate::sandbox::seal_pty(&mut cmd);
        let now = Instant::now();
        let command = CommandState::new(
            scanner,
            hooked,
            hooked && shape.shell.kind == super::shell::ShellKind::Sh,
        );
        let state = Arc::new(Mutex::new(State::new(
            shape.size,
            shape.scrollback,
            command,
            now,
        )));
        let (events, _) = watch::channel(0u64);
        let events = Arc::new(events);
        let pty = opened.start(
            &id,
            cmd,
            &shape,
            Feeds {
                state: state.clone(),
                events: events.clone(),
                hooked,
                command: shape.command.is_some(),
                started: now,
            },
        )?;
        let pid = pty.pid();

        let session = Arc::new(Session {
            id,
            shape,
            spills,
            pid,
            started: now,
            hooked,
            pid_start: platform::process_start_time(pid),
            mark,
            survivors: Mutex::new(None),
            state,
            pty,
            events,
            turn: Arc::new(tokio::sync::Mutex::new(())),
            last_used: Mutex::new(now),
            attach: Default::default(),
            control: Default::default(),
            tty: std::sync::OnceLock::new(),
            switches: Mutex::new(platform::SwitchCounter::default()),
        });
        super::socket::listen(&session);
        Ok(session)
    }

    /// The session's id (readable, or a number under terminal-use).
    pub fn id(&self) -> &str {
        &self.id
    }

    /// How it was started (shell, command, cwd, env, size, name, theme, remote target).
    pub fn shape(&self) -> &Shape {
        &self.shape
    }

    /// The main process's id.
    pub fn pid(&self) -> i32 {
        self.pid
    }

    /// The state, locked, its screen up to date. Hold it briefly and never across an await.
    pub(crate) fn state(&self) -> MutexGuard<'_, State> {
        let mut s = lock(&self.state);
        s.emu.catch_up();
        s
    }

    /// The state, locked, its screen possibly behind the output (plain text not parsed yet,
    /// `emulator.rs`): for readers of the output, the input and the command state only.
    pub(super) fn output_state(&self) -> MutexGuard<'_, State> {
        lock(&self.state)
    }

    /// A receiver woken on every output chunk and on exit.
    pub fn subscribe(&self) -> watch::Receiver<u64> {
        self.events.subscribe()
    }

    /// Marks the session as used now (for the idle sweep).
    pub fn touch(&self) {
        *self.last_used.lock().unwrap_or_else(|e| e.into_inner()) = Instant::now();
    }

    /// When the session was last used (for the idle sweep and its status).
    pub(super) fn last_used(&self) -> Instant {
        *self.last_used.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub fn is_command(&self) -> bool {
        self.shape.command.is_some()
    }

    /// How the main process ended, if it has.
    pub fn exit(&self) -> Option<Exit> {
        self.state().command.exit().cloned()
    }

    /// [`Session::exit`], also for a process already reaped whose end the waiter thread is
    /// about to record (it does so right after reaping): that record is waited for, up to
    /// [`EXIT_RECORD_WAIT`], so a caller that saw the process gone sees the session ended.
    pub fn exit_now(&self) -> Option<Exit> {
        if let Some(exit) = self.exit() {
            return Some(exit);
        }
        // Alive, or a zombie not yet reaped: nothing to wait for.
        if platform::pid_exists(self.pid) {
            return None;
        }
        let deadline = Instant::now() + EXIT_RECORD_WAIT;
        while Instant::now() < deadline {
            std::thread::sleep(Duration::from_micros(200));
            if let Some(exit) = self.exit() {
                return Some(exit);
            }
        }
        None
    }

    /// The main process still runs: it exists, is no zombie, and is the one started.
    pub(crate) fn main_alive(&self) -> bool {
        platform::is_same_process(self.pid, self.pid_start)
    }

    /// The shell (not a program it started) owns the terminal, or its owner is unknown.
    pub(crate) fn shell_owns(&self) -> bool {
        self.foreground_group().is_none_or(|pg| pg == self.pid)
    }

    /// What a look at `now` sees outside the command state (see `command_state.rs`).
    pub(crate) fn seen(&self, now: Instant, last_output: Instant) -> Seen {
        Seen {
            now,
            shell_owns: self.shell_owns(),
            last_output,
        }
    }

    /// [`Session::exit`], waiting (bounded by [`EXIT_RECORD_WAIT`], woken by the record's
    /// event) when the main process is already gone or a zombie but its exit is not
    /// recorded yet: a caller that saw the program end is told how. `None` at once while it
    /// lives.
    pub(crate) async fn exit_settled(&self) -> Option<Exit> {
        if let Some(exit) = self.exit() {
            return Some(exit);
        }
        if self.main_alive() {
            return None;
        }
        let waited = super::waiter::Waiter::new(self)
            .until(Instant::now() + EXIT_RECORD_WAIT)
            .run(|_| match self.exit() {
                Some(exit) => super::waiter::Look::Done(exit),
                None => super::waiter::Look::Output,
            })
            .await;
        match waited {
            super::waiter::Waited::Done(exit) => Some(exit),
            _ => None,
        }
    }

    /// The terminal the main process reads (its standard input's path, `/dev/pts/N`) while
    /// it runs. Looked up once and kept: a session's terminal never changes, and a readlink
    /// in `/proc` on every call was 3 % of the server's CPU under fifty HTTP clients.
    pub(crate) fn stdin_tty(&self) -> Option<std::path::PathBuf> {
        if self.exit().is_some() {
            return None;
        }
        if let Some(tty) = self.tty.get() {
            return Some(tty.clone());
        }
        let tty = platform::stdin_tty(self.pid)?;
        Some(self.tty.get_or_init(|| tty).clone())
    }

    /// The terminal's foreground process group (Unix), if known.
    pub fn foreground_group(&self) -> Option<i32> {
        self.pty.foreground_group()
    }

    /// How the terminal takes input right now: key by key or in lines.
    pub fn input_mode(&self) -> Option<platform::InputMode> {
        self.pty.input_mode()
    }

    /// True when every byte the programs wrote so far has been scanned (marks counted): the
    /// reader waits for more and nothing is pending. Asked before trusting that a shell
    /// blocked reading is still inside a command, since its `D` may be in flight.
    pub fn scanned_all(&self) -> bool {
        self.pty.scanned_all()
    }

    /// When the main process exited, if it has.
    pub fn exited_at(&self) -> Option<Instant> {
        self.state().command.exited_at()
    }

    /// Where a wait or watch without `since` starts: the later of the read cursor and the
    /// last write, so nothing that arrived after the agent's input or last read is missed.
    pub(crate) fn wait_start(&self) -> u64 {
        self.state().wait_start()
    }

    /// Writes bytes to the program. `echo` is the text whose echo waits must not match.
    /// Returns the output position at the moment of writing.
    pub(crate) async fn write(&self, bytes: Vec<u8>, echo: Option<&str>) -> Result<u64> {
        self.agent_may_type()?;
        if let Some(exit) = self.exit() {
            return Err(Fault::ProgramExited {
                id: self.id.clone(),
                how: describe_exit(&exit),
            }
            .into());
        }
        let position = {
            let mut state = self.state();
            let position = state.output.end();
            state.input.wrote(position, echo);
            position
        };
        let snapshot = self.input_snapshot(bytes.last() == Some(&0x1b));
        self.state().input.set_snapshot(snapshot);
        self.touch();
        self.pty.write(bytes).await.map(|()| position)
    }

    /// The facts [`super::call::SessionCall::wait_answer`] compares against; taken before writing input that
    /// ends with ESC or not.
    fn input_snapshot(&self, ends_with_escape: bool) -> super::answer::InputSnapshot {
        let group = self.foreground_group();
        let phase = *self.state().phase();
        super::answer::InputSnapshot {
            group,
            switches: group.and_then(|group| self.context_switches(group)),
            phase,
            ends_with_escape,
            mode: self.input_mode(),
        }
    }

    /// How many times process `group` has run ([`platform::context_switches`]).
    pub(super) fn context_switches(&self, group: i32) -> Option<u64> {
        self.switches
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .read(group)
    }

    /// Queues bytes for the program without waiting (input from an attached person).
    pub(super) fn send_input(&self, bytes: Vec<u8>) {
        self.touch();
        self.pty.send(bytes);
    }

    /// Changes the terminal size.
    pub(crate) fn resize(&self, size: Size) -> Result<()> {
        self.pty.resize(size)?;
        self.state().emu.resize(size);
        self.events.send_modify(|n| *n += 1);
        Ok(())
    }

    /// Processes the session started that could not be ended when it was killed (by pid and
    /// command line): a reply names them instead of saying they are gone.
    pub fn survivors(&self) -> Vec<crate::host::marker::Survivor> {
        self.survivors
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
            .unwrap_or_default()
    }

    /// Kills the whole process tree, and what left it carrying the session's marker, and
    /// waits (bounded) until the main process is reaped.
    pub(crate) async fn kill(&self) {
        self.close_attach();
        if self.exit().is_none() {
            platform::kill_tree(self.pid);
        }
        // What the shell left behind in its terminal session, even after it exited.
        platform::kill_session(self.pid, self.pid_start);
        // What left the session too (`setsid -f`, a double fork) still carries the marker.
        let mut survivors = crate::host::marker::end(&self.mark).await;
        // What it started inside a container or pod (see `remote::ending`).
        if let Some(remote) = &self.shape.remote {
            survivors.extend(remote.end(&self.mark).await);
        }
        if !survivors.is_empty() {
            tracing::warn!(
                "session {}: could not end {}",
                self.id,
                crate::host::marker::describe(&survivors)
            );
        }
        *self.survivors.lock().unwrap_or_else(|e| e.into_inner()) = Some(survivors);
        let reaped = super::waiter::Waiter::new(self)
            .until(Instant::now() + Duration::from_secs(3))
            .run(|_| match self.exit() {
                Some(_) => super::waiter::Look::Done(()),
                None => super::waiter::Look::Output,
            })
            .await;
        if !matches!(reaped, super::waiter::Waited::Done(())) {
            tracing::warn!(
                "session {}: process {} not reaped in time",
                self.id,
                self.pid
            );
        }
    }
}

impl Drop for Session {
    /// The last holder may be an async worker: the tree kill and its `/proc` scans then run
    /// on the blocking pool (which the runtime finishes before it ends), else right here.
    fn drop(&mut self) {
        let (pid, start) = (self.pid, self.pid_start);
        let mark = std::mem::take(&mut self.mark);
        // Killed already (the usual way): its marker was swept then.
        let killed = match self.survivors.get_mut() {
            Ok(survivors) => survivors.is_some(),
            Err(_) => true,
        };
        let running = lock(&self.state).command.exit().is_none();
        let remote = self.shape.remote.clone().filter(|_| !killed);
        let kill = move || {
            if running {
                platform::kill_tree(pid);
            }
            platform::kill_session(pid, start);
            if !killed {
                crate::host::marker::end_blocking(&mark, false);
            }
            if let Some(remote) = remote {
                remote.end_blocking(&mark);
            }
        };
        match tokio::runtime::Handle::try_current() {
            Ok(runtime) => drop(runtime.spawn_blocking(kill)),
            Err(_) => kill(),
        }
    }
}

/// A human description of an exit.
pub fn describe_exit(exit: &Exit) -> String {
    match (&exit.code, &exit.signal) {
        (Some(code), _) => format!("exit status {code}"),
        (None, Some(signal)) => format!("killed by {}", signal_name(signal)),
        (None, None) => "exit status unknown".into(),
    }
}

/// A signal's name (`SIGKILL`) from its description as portable-pty gives it (strsignal's
/// `Killed`); an unknown description is kept, as `signal "…"`.
fn signal_name(described: &str) -> String {
    const NAMES: &[(&str, &str)] = &[
        ("Hangup", "SIGHUP"),
        ("Interrupt", "SIGINT"),
        ("Quit", "SIGQUIT"),
        ("Illegal instruction", "SIGILL"),
        ("Trace/breakpoint trap", "SIGTRAP"),
        ("Aborted", "SIGABRT"),
        ("Bus error", "SIGBUS"),
        ("Floating point exception", "SIGFPE"),
        ("Killed", "SIGKILL"),
        ("User defined signal 1", "SIGUSR1"),
        ("Segmentation fault", "SIGSEGV"),
        ("User defined signal 2", "SIGUSR2"),
        ("Broken pipe", "SIGPIPE"),
        ("Alarm clock", "SIGALRM"),
        ("Terminated", "SIGTERM"),
    ];
    if described.starts_with("SIG") {
        return described.to_string();
    }
    NAMES
        .iter()
        .find(|(d, _)| d.eq_ignore_ascii_case(described))
        .map(|(_, name)| name.to_string())
        .unwrap_or_else(|| format!("signal \"{described}\""))
}
