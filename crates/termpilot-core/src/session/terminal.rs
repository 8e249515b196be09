//! A live terminal session: the PTY, its threads, and the state they feed.
//!
//! Three small threads serve each session. The reader only reads the PTY and feeds every
//! chunk, once, to the emulator, the raw log, the line history and the echo mask (under a
//! short-held lock, no await inside), writes the emulator's query replies back, and bumps an
//! event counter that wakes waiters. The writer owns the PTY's input side, so a program that
//! stops reading can never block a tool call. The waiter reaps the child and records how it
//! ended. Tool calls on one session are serialised by [`Session::op`].

use std::io::{Read, Write};
use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use alacritty_terminal::grid::Dimensions;
use portable_pty::{CommandBuilder, MasterPty, PtySize, native_pty_system};
use tokio::sync::{oneshot, watch};

use super::command_state::{CommandState, Seen};
use super::echo::EchoMask;
use super::emulator::{Emulator, Size};
use super::integration::{self, Mode, Scanner};
use super::log::{DEFAULT_CAPACITY, OutputLog};
use super::phase::CommandPhase;
use super::replies::{Asker, ReplyContext};
use super::shell::SessionShell;
use super::text::LineHistory;
use crate::error::{Error, Fault, Result};
use crate::exec::env::CHILD_ENV;
use crate::platform;

/// How long a write may wait for the program to take its input.
const WRITE_TIMEOUT: Duration = Duration::from_secs(5);
/// Size of one read from the PTY.
const READ_CHUNK: usize = 64 * 1024;
/// While more output is already waiting, waiters are woken once per this many bytes instead
/// of once per read: a flood of output costs a few wake-ups, not thousands.
const WAKE_BATCH: usize = 256 * 1024;

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
    pub remote: Option<crate::remote::shell::RemoteShell>,
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
    /// Since the last call or output.
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

/// Everything the reader feeds; read by tool calls under a short lock.
pub(crate) struct State {
    pub(super) emu: Emulator,
    pub(super) log: OutputLog,
    pub(super) history: LineHistory,
    pub(super) echo: EchoMask,
    /// Where the next `terminal_read` without `since` starts.
    pub(super) read_cursor: u64,
    /// The output position when input was last written: a wait without `since` starts at
    /// the later of this and `read_cursor`, so output that arrived between a write and the
    /// wait is seen, and unread output from before the write is not taken for its answer.
    pub(super) input_at: u64,
    /// Taken at the last write, before the bytes went out (see `answer.rs`).
    pub(super) input_snapshot: super::answer::InputSnapshot,
    pub(super) last_output: Instant,
    /// When each `terminal_watch` trigger last matched, for its cooldown.
    pub(super) cooldowns: std::collections::HashMap<String, Instant>,
    /// The whole output of the running `terminal_exec`, if one runs.
    pub(super) capture: Option<super::prompt_exec_capture::ExecCapture>,
    /// The shell's marks, its command phase and the main process's end: the one owner of
    /// "has the command ended" (`command_state.rs`).
    pub(super) command: CommandState,
    /// People attached over the session's socket; every output chunk is queued for them.
    pub(super) attached: super::socket::Clients,
}

/// The longest [`Session::exit_now`] waits for the waiter thread to record an exit it reaped.
const EXIT_RECORD_WAIT: Duration = Duration::from_secs(1);

impl State {
    /// The command phase now.
    pub fn phase(&self) -> &CommandPhase {
        self.command.phase()
    }

    /// Feeds `chunk` (at `at`) to the emulator, split where the command phase changes, and
    /// returns its answers to queries, each with whether a command was running where it was
    /// asked and how many command boundaries came before it ([`super::replies`]'s rule).
    fn feed_emulator(
        &mut self,
        chunk: &[u8],
        at: u64,
        before: (bool, u64),
        cuts: &[(u64, bool, u64)],
    ) -> Vec<(Vec<u8>, bool, u64)> {
        let mut replies = Vec::new();
        let mut from = 0;
        let (mut inside, mut boundaries) = before;
        let ends = cuts
            .iter()
            .map(|&(pos, inside, seen)| ((pos - at) as usize, Some((inside, seen))))
            .chain([(chunk.len(), None)]);
        for (to, after) in ends {
            if to > from {
                let answer = self.emu.feed(&chunk[from..to]);
                if !answer.is_empty() {
                    replies.push((answer, inside, boundaries));
                }
                from = to;
            }
            if let Some(after) = after {
                (inside, boundaries) = after;
            }
        }
        replies
    }
}

struct WriteJob {
    bytes: Vec<u8>,
    done: Option<oneshot::Sender<std::io::Result<()>>>,
    /// A command's answer to a query, asked after this many command ends: written only
    /// if the command reads it ([`ReplyContext::should_write`]).
    held: Option<u64>,
}

/// One terminal session.
pub struct Session {
    pub(crate) id: String,
    pub(crate) shape: Shape,
    /// The main process (a start without one is refused).
    pub(crate) pid: i32,
    pub(crate) started: Instant,
    /// The shell was started with prompt hooks, so its first prompt brings marks.
    pub(crate) hooked: bool,
    /// When the main process started (with `pid`, names it for good).
    pid_start: Option<u64>,
    /// This incarnation's marker value: everything it starts carries it (see
    /// [`crate::exec::marker`]), so what left its tree is ended too.
    mark: String,
    /// What carried the marker and could not be ended when the session was killed (`None`
    /// until it was).
    survivors: Mutex<Option<Vec<crate::exec::marker::Survivor>>>,
    state: Arc<Mutex<State>>,
    input: std::sync::mpsc::Sender<WriteJob>,
    master: Mutex<Box<dyn MasterPty + Send>>,
    master_fd: Option<i32>,
    /// Set while the reader waits for output (see [`Session::scanned_all`]).
    reader_idle: Arc<std::sync::atomic::AtomicBool>,
    events: Arc<watch::Sender<u64>>,
    /// Held by a tool call for its whole duration (a [`super::call::SessionCall`]): calls on
    /// one session run one at a time.
    pub(super) turn: Arc<tokio::sync::Mutex<()>>,
    last_used: Mutex<Instant>,
    /// The socket people attach through (see `attach.rs`).
    pub(super) attach: std::sync::OnceLock<super::socket::AttachSocket>,
    /// Who holds the keyboard (see `control.rs`).
    pub(super) control: super::control::Control,
}

impl Session {
    /// Starts the shell (or command) of `shape` on a new PTY.
    pub fn spawn(id: String, shape: Shape) -> Result<Arc<Session>> {
        let pty = native_pty_system();
        let pair = pty
            .openpty(PtySize {
                rows: shape.size.rows,
                cols: shape.size.cols,
                pixel_width: 0,
                pixel_height: 0,
            })
            .map_err(|e| Error::Other(format!("Could not open a pseudo-terminal ({e}); too many may be open, stop some sessions.")))?;
        let mut cmd: CommandBuilder = crate::sandbox::pty_command(&shape.shell.program, &shape.env);
        let mut integration_env = Vec::new();
        let mut integration_remove = Vec::new();
        let mut hooked = false;
        let mut scanner = Scanner::default();
        if let Some(remote) = &shape.remote {
            // A remote shell: the transport runs here, the hooks travel in its command line.
            let launch = remote.launch();
            cmd = CommandBuilder::from_argv(launch.argv.iter().map(Into::into).collect());
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
        let mark = crate::exec::marker::for_session();
        cmd.env(crate::exec::marker::MARKER, &mark);
        // Then the environment is sealed for the sandbox wrapper (marker included).
        #[cfg(unix)]
        crate::sandbox::seal_pty(&mut cmd);
        let mut child = pair.slave.spawn_command(cmd).map_err(|e| {
            Error::Other(format!(
                "Could not start `{}` in {} ({e}); check the shell and the working directory.",
                shape.shell.program.display(),
                shape.cwd.display()
            ))
        })?;
        // The slave must close here, or the reader never sees the end of the output.
        drop(pair.slave);
        // Every session has its main process's id: a start without one is refused, so no
        // "0 for none" travels on (the kill, the foreground checks and `/proc` need it).
        let Some(pid) = child.process_id().map(|p| p as i32) else {
            let _ = child.kill();
            return Err(Error::Other(
                "The terminal's program started but the system gave no process id for it; try again or pick another shell.".into(),
            ));
        };
        let reader = pair
            .master
            .try_clone_reader()
            .map_err(|e| Error::Other(format!("Could not read the terminal ({e}).")))?;
        let writer = pair
            .master
            .take_writer()
            .map_err(|e| Error::Other(format!("Could not write to the terminal ({e}).")))?;
        #[cfg(unix)]
        let master_fd = pair.master.as_raw_fd();
        #[cfg(not(unix))]
        let master_fd = None;

        let now = Instant::now();
        let state = Arc::new(Mutex::new(State {
            emu: Emulator::new(shape.size, shape.scrollback),
            log: OutputLog::new(DEFAULT_CAPACITY),
            history: LineHistory::default(),
            echo: EchoMask::default(),
            read_cursor: 0,
            input_at: 0,
            input_snapshot: Default::default(),
            last_output: now,
            cooldowns: Default::default(),
            capture: None,
            command: CommandState::new(
                scanner,
                hooked,
                hooked && shape.shell.kind == super::shell::ShellKind::Sh,
            ),
            attached: Default::default(),
        }));
        let (events, _) = watch::channel(0u64);
        let events = Arc::new(events);
        let (input, input_rx) = std::sync::mpsc::channel::<WriteJob>();

        let reader_idle = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let replies_idle = reader_idle.clone();
        let mut replies = ReplyContext::new(
            master_fd,
            pid,
            hooked,
            super::replies::counter(&state, |s: &State| s.phase().boundaries()),
            reader_idle.clone(),
        );
        spawn_thread(&id, "writer", move || {
            writer_loop(writer, input_rx, &mut replies)
        })?;
        {
            let state = state.clone();
            let events = events.clone();
            let input = input.clone();
            // A command session's program is the one asker: its answers go out at once.
            let shell = shape.command.is_none().then_some(pid);
            spawn_thread(&id, "reader", move || {
                let ctx = ReaderContext {
                    master_fd,
                    shell,
                    idle: reader_idle,
                    started: now,
                };
                reader_loop(reader, &ctx, state, events, input)
            })?;
        }
        {
            let state = state.clone();
            let events = events.clone();
            spawn_thread(&id, "waiter", move || {
                let status = child.wait();
                let exit = match status {
                    Ok(s) => Exit {
                        code: s.signal().is_none().then(|| s.exit_code() as i32),
                        signal: s.signal().map(String::from),
                    },
                    Err(_) => Exit {
                        code: None,
                        signal: None,
                    },
                };
                {
                    lock(&state).command.on_exit(exit, Instant::now());
                }
                events.send_modify(|n| *n += 1);
            })?;
        }

        let session = Arc::new(Session {
            id,
            shape,
            pid,
            started: now,
            hooked,
            pid_start: platform::process_start_time(pid),
            mark,
            survivors: Mutex::new(None),
            state,
            input,
            master: Mutex::new(pair.master),
            master_fd,
            reader_idle: replies_idle,
            events,
            turn: Arc::new(tokio::sync::Mutex::new(())),
            last_used: Mutex::new(now),
            attach: Default::default(),
            control: Default::default(),
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

    /// The state, locked. Hold it briefly and never across an await.
    pub(crate) fn state(&self) -> MutexGuard<'_, State> {
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

    /// The terminal's foreground process group (Unix), if known.
    pub fn foreground_group(&self) -> Option<i32> {
        self.master_fd.and_then(platform::foreground_group)
    }

    /// How the terminal takes input right now: key by key or in lines.
    pub fn input_mode(&self) -> Option<platform::InputMode> {
        self.master_fd.and_then(platform::input_mode)
    }

    /// True when every byte the programs wrote so far has been scanned (marks counted): the
    /// reader waits for more and nothing is pending. Asked before trusting that a shell
    /// blocked reading is still inside a command, since its `D` may be in flight.
    pub fn scanned_all(&self) -> bool {
        // Nothing readable first, then idle: every byte that had left the program by the
        // first question (the poll flushes the kernel's queue) was read, and its reading is
        // done by the second. The other order misses a chunk read between the two.
        !self.master_fd.is_some_and(platform::readable_now)
            && self.reader_idle.load(std::sync::atomic::Ordering::SeqCst)
    }

    /// What `terminal_list` shows, read with one short lock.
    pub fn status(&self) -> Status {
        let (exited, last_output, reported_cwd, size) = {
            let s = self.state();
            let grid = s.emu.term().grid();
            let size = Size {
                cols: grid.columns() as u16,
                rows: grid.screen_lines() as u16,
            };
            (
                s.command.exit().is_some(),
                s.last_output,
                s.command.reported_cwd().map(str::to_string),
                size,
            )
        };
        let used = *self.last_used.lock().unwrap_or_else(|e| e.into_inner());
        let foreground = self.foreground_group().filter(|&pg| pg != self.pid);
        let busy = self
            .state()
            .command
            .busy(self.is_command(), foreground.is_some());
        Status {
            alive: !exited,
            busy,
            foreground: foreground.and_then(platform::process_name),
            cwd: reported_cwd
                .map(PathBuf::from)
                .or_else(|| platform::process_cwd(self.pid))
                .unwrap_or_else(|| self.shape.cwd.clone()),
            idle: used.max(last_output).elapsed(),
            size,
        }
    }

    /// The shell's working directory: as the shell last reported it, else as the OS says.
    pub fn cwd(&self) -> PathBuf {
        if let Some(dir) = self.state().command.reported_cwd().map(str::to_string) {
            return PathBuf::from(dir);
        }
        platform::process_cwd(self.pid).unwrap_or_else(|| self.shape.cwd.clone())
    }

    /// How this session's commands are followed.
    pub fn mode(&self) -> Mode {
        if self.state().command.integrated() {
            Mode::Osc133
        } else {
            Mode::ProcessGroup
        }
    }

    /// The screen as `view:"screen"` reads it (see [`super::screen::read`]).
    pub fn read_screen(&self, options: super::screen::ScreenOptions) -> super::screen::ScreenText {
        super::screen::read(&self.state().emu, options)
    }

    /// When the main process exited, if it has.
    pub fn exited_at(&self) -> Option<Instant> {
        self.state().command.exited_at()
    }

    /// True while the program on screen has turned on bracketed paste (`ESC [?2004h`).
    pub fn bracketed_paste(&self) -> bool {
        use alacritty_terminal::term::TermMode;
        self.state().emu.mode().contains(TermMode::BRACKETED_PASTE)
    }

    /// The output position now: how many bytes the program has printed.
    pub fn position(&self) -> u64 {
        self.state().log.end()
    }

    /// True once the shell has printed a prompt mark: its commands can be followed exactly.
    pub fn integrated(&self) -> bool {
        self.state().command.integrated()
    }

    /// True once the main process exited and its output reached its end.
    pub fn output_ended(&self) -> bool {
        let s = self.state();
        s.command.exit().is_some() && s.command.output_ended()
    }

    /// True once the main process exited or its output reached its end.
    pub fn ending(&self) -> bool {
        self.state().command.ending()
    }

    /// The screen as plain text (for a person, a resource read, a last screen).
    pub fn screen_text(&self) -> String {
        super::screen::plain_text(&self.state().emu)
    }

    /// The screen as plain text once an exited program's last bytes are in (see
    /// [`Session::drained`]): the last screen of a shell that exited by itself.
    pub fn last_screen_text(&self) -> String {
        super::screen::plain_text(&self.drained().emu)
    }

    /// The state, once everything the exited main process printed has been read and fed to
    /// the emulator: its exit can be reaped before the reader has its last bytes, so this
    /// waits for the end of the output, at most [`DRAIN_GRACE`] after the exit (a background
    /// child may hold the terminal open). A running program is not waited for.
    fn drained(&self) -> MutexGuard<'_, State> {
        loop {
            let s = self.state();
            let exited = s.command.exit().is_some();
            if !exited
                || matches!(
                    s.command.program_end(Instant::now()),
                    super::command_state::Verdict::Yes(_)
                )
            {
                return s;
            }
            drop(s);
            std::thread::sleep(Duration::from_micros(500));
        }
    }

    /// The session as it is now, to remember once it ended.
    pub fn last_look(&self) -> LastLook {
        let s = self.drained();
        let grid = s.emu.term().grid();
        LastLook {
            text: super::screen::plain_text(&s.emu),
            redraw: super::redraw::redraw(&s.emu),
            cwd: s
                .command
                .reported_cwd()
                .map_or_else(|| self.shape.cwd.display().to_string(), str::to_string),
            size: Size {
                cols: grid.columns() as u16,
                rows: grid.screen_lines() as u16,
            },
            exit: s.command.exit().cloned(),
        }
    }

    /// Where a wait or watch without `since` starts: the later of the read cursor and the
    /// last write, so nothing that arrived after the agent's input or last read is missed.
    pub(crate) fn wait_start(&self) -> u64 {
        let s = self.state();
        s.read_cursor.max(s.input_at).min(s.log.end())
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
            if let Some(text) = echo {
                state.echo.expect(text);
            }
            state.input_at = state.log.end();
            state.input_at
        };
        let snapshot = self.input_snapshot(bytes.last() == Some(&0x1b));
        self.state().input_snapshot = snapshot;
        self.touch();
        let (done, ack) = oneshot::channel();
        self.input
            .send(WriteJob {
                bytes,
                done: Some(done),
                held: None,
            })
            .map_err(|_| {
                Error::Other("The session's terminal is closed; start a new session.".into())
            })?;
        match tokio::time::timeout(WRITE_TIMEOUT, ack).await {
            Ok(Ok(Ok(()))) => Ok(position),
            Ok(Ok(Err(e))) => Err(Error::Other(format!(
                "Writing to the terminal failed ({e}); the program may have exited."
            ))),
            Ok(Err(_)) => Err(Error::Other(
                "The session's terminal is closed; start a new session.".into(),
            )),
            Err(_) => Err(Fault::InputNotRead.into()),
        }
    }

    /// Queues bytes for the program without waiting (input from an attached person).
    pub(super) fn send_input(&self, bytes: Vec<u8>) {
        self.touch();
        let _ = self.input.send(WriteJob {
            bytes,
            done: None,
            held: None,
        });
    }

    /// Changes the terminal size.
    pub(crate) fn resize(&self, size: Size) -> Result<()> {
        self.master
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .resize(PtySize {
                rows: size.rows,
                cols: size.cols,
                pixel_width: 0,
                pixel_height: 0,
            })
            .map_err(|e| Error::Other(format!("Could not resize the terminal ({e}).")))?;
        self.state().emu.resize(size);
        self.events.send_modify(|n| *n += 1);
        Ok(())
    }

    /// Processes the session started that could not be ended when it was killed (by pid and
    /// command line): a reply names them instead of saying they are gone.
    pub fn survivors(&self) -> Vec<crate::exec::marker::Survivor> {
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
        let survivors = crate::exec::marker::end(&self.mark).await;
        if !survivors.is_empty() {
            tracing::warn!(
                "session {}: could not end {}",
                self.id,
                crate::exec::marker::describe(&survivors)
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
        let kill = move || {
            if running {
                platform::kill_tree(pid);
            }
            platform::kill_session(pid, start);
            if !killed {
                crate::exec::marker::end_blocking(&mark, false);
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

fn lock(state: &Mutex<State>) -> MutexGuard<'_, State> {
    state.lock().unwrap_or_else(|e| e.into_inner())
}

fn spawn_thread(id: &str, role: &str, f: impl FnOnce() + Send + 'static) -> Result<()> {
    std::thread::Builder::new()
        .name(format!("{role}-{id}"))
        .stack_size(256 * 1024)
        .spawn(f)
        .map(|_| ())
        .map_err(|e| Error::Other(format!("Could not start a thread for the session ({e}).")))
}

/// What the reader knows besides the state it feeds.
struct ReaderContext {
    master_fd: Option<i32>,
    /// The shell's pid, when the session runs a shell (its answers follow the reply rule).
    shell: Option<i32>,
    /// Set while waiting for output: everything before has been scanned.
    idle: Arc<std::sync::atomic::AtomicBool>,
    started: Instant,
}

fn reader_loop(
    mut reader: Box<dyn Read + Send>,
    ctx: &ReaderContext,
    state: Arc<Mutex<State>>,
    events: Arc<watch::Sender<u64>>,
    input: std::sync::mpsc::Sender<WriteJob>,
) {
    use std::sync::atomic::Ordering;
    let (master_fd, shell, started) = (ctx.master_fd, ctx.shell, ctx.started);
    let mut buf = vec![0u8; READ_CHUNK];
    let mut unannounced = 0;
    loop {
        // Idle only while waiting: bytes leave the terminal after the flag is down, so "idle
        // and nothing readable" means every byte written so far has been scanned.
        if let Some(fd) = master_fd {
            ctx.idle.store(true, Ordering::SeqCst);
            platform::wait_readable(&[fd]);
            ctx.idle.store(false, Ordering::SeqCst);
        }
        let n = match reader.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        let chunk = &buf[..n];
        let replies = {
            let mut s = lock(&state);
            let start = s.log.end();
            s.log.push(chunk, started.elapsed());
            s.history.feed(chunk);
            s.echo.observe(chunk, start);
            let before = (s.phase().inside_command(), s.phase().boundaries());
            let cuts = s.command.on_output(chunk, start);
            if let Some(capture) = &mut s.capture {
                capture.push(chunk);
            }
            s.last_output = Instant::now();
            s.attached.broadcast(chunk);
            s.feed_emulator(chunk, start, before, &cuts)
        };
        for (bytes, inside, ends_at) in replies {
            let asker = match shell {
                Some(pid)
                    if inside || master_fd.and_then(platform::foreground_group) != Some(pid) =>
                {
                    Asker::Command
                }
                _ => Asker::Shell,
            };
            let _ = input.send(WriteJob {
                bytes,
                done: None,
                held: (asker == Asker::Command).then_some(ends_at),
            });
        }
        unannounced += n;
        // Idle again before the event goes out: a wait woken by it finds this chunk scanned.
        if master_fd.is_some() {
            ctx.idle.store(true, Ordering::SeqCst);
        }
        let more_waiting = master_fd.is_some_and(platform::readable_now);
        if !more_waiting || unannounced >= WAKE_BATCH {
            events.send_modify(|n| *n += 1);
            unannounced = 0;
        }
    }
    {
        let mut s = lock(&state);
        s.command.on_eof();
        s.attached.end();
    }
    events.send_modify(|n| *n += 1);
}

fn writer_loop(
    mut writer: Box<dyn Write + Send>,
    jobs: std::sync::mpsc::Receiver<WriteJob>,
    replies: &mut ReplyContext,
) {
    while let Ok(job) = jobs.recv() {
        if let Some(ends_at) = job.held
            && !replies.should_write(ends_at)
        {
            continue;
        }
        let result = writer.write_all(&job.bytes).and_then(|_| writer.flush());
        if let Some(done) = job.done {
            let _ = done.send(result);
        }
    }
}
