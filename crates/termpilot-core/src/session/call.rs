//! A tool call's turn on one session: the only way to read, type into, wait on or reset it.
//!
//! [`crate::session_manager::SessionManager::call`] hands out a [`SessionCall`] once no other call
//! holds the session, and holds that turn until it is dropped, so calls on one session run
//! one at a time by construction. Everything a call does that reads or moves the session's
//! state goes through here — the read cursor moves inside, the emulator and history are never
//! handed out. What needs no turn (the status, the exit, the screen as text for a person or a
//! resource, the id and shape) is on [`Session`], which a call derefs to.

use std::ops::Deref;
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::OwnedMutexGuard;
use tokio_util::sync::CancellationToken;

use super::emulator::Size;
use super::ops::{OutputRead, ReadMore, WRITE_MAX_WAIT};
use super::program_ready::ProgramReady;
use super::screen::{self, ScreenOptions, ScreenText};
use super::terminal::{Exit, Session};
use super::wait::{Until, WaitOutcome};
use crate::error::Result;
use crate::progress::Progress;
use crate::render::{Png, Theme};

/// One call's turn on a session; the turn ends when this is dropped.
pub struct SessionCall {
    session: Arc<Session>,
    _turn: OwnedMutexGuard<()>,
}

/// What the program printed in answer to typed input.
#[derive(Debug, Clone)]
pub struct Answer {
    /// The output since the write (head and tail of at most 200 lines).
    pub output: String,
    /// The screen, when asked for.
    pub screen: Option<ScreenText>,
    /// Output position after what is returned.
    pub end_position: u64,
    /// The exit status of a command that ended while answering (vim quit by `:q!`), or of
    /// a command session's program.
    pub exit_code: Option<i32>,
    /// How the session's main process ended, when it has (the input ended it).
    pub exited: Option<Exit>,
}

impl Deref for SessionCall {
    type Target = Session;

    fn deref(&self) -> &Session {
        &self.session
    }
}

impl SessionCall {
    pub(crate) fn new(session: Arc<Session>, turn: OwnedMutexGuard<()>) -> Self {
        SessionCall {
            session,
            _turn: turn,
        }
    }

    /// The session, to keep past this call (a screenshot on the blocking pool).
    pub fn session(&self) -> &Arc<Session> {
        &self.session
    }

    /// Waits until a new (or restarted) session's first prompt is drawn (see
    /// [`SessionCall::wait_prompt`]); a remote shell first gets time to connect and log in.
    pub async fn wait_ready(&self, cancel: &CancellationToken) {
        self.wait_connected(cancel).await;
        self.wait_prompt(cancel).await;
    }

    /// Waits until a new session is ready: a local command session's program until it waits
    /// for input as `terminal_exec` tells it ([`SessionCall::wait_program_ready`]: its prompt line
    /// and full screen come back), any other session as [`SessionCall::wait_ready`] does.
    pub async fn wait_started(&self, cancel: &CancellationToken) -> ProgramReady {
        if self.session.is_command() && self.session.shape.remote.is_none() {
            return self.wait_program_ready(cancel).await;
        }
        self.wait_ready(cancel).await;
        ProgramReady::default()
    }

    /// What a new session printed so far (its banner), at most `max_lines` (a cut says
    /// `more`); later reads start after it.
    pub fn take_banner(&self, max_lines: usize, more: ReadMore) -> OutputRead {
        let read = self.output_since(0, max_lines, false, more);
        self.session.state().input.read_to(read.position);
        read
    }

    /// `terminal_read`'s output view: waits until output is idle for `idle` (at most
    /// `timeout`), then returns what came since `since` (default: the read cursor); the cursor
    /// moves past it (a cut says `more`). Also returns whether output kept coming until
    /// `timeout`.
    #[allow(clippy::too_many_arguments)]
    pub async fn read(
        &self,
        since: Option<u64>,
        idle: Duration,
        timeout: Duration,
        max_lines: usize,
        raw: bool,
        more: ReadMore,
        cancel: &CancellationToken,
    ) -> (OutputRead, bool) {
        let from = since.unwrap_or_else(|| self.session.state().input.read_cursor());
        let timed_out = self.wait_idle(idle, timeout, cancel).await;
        let read = self.output_since(from, max_lines, raw, more);
        self.session.state().input.read_to(read.position);
        (read, timed_out)
    }

    /// How the session's main process ended, once it has: also for one reaped a moment ago
    /// whose exit is about to be recorded (waited for, at most 1 s). `None` while it runs.
    pub async fn exited(&self) -> Option<Exit> {
        self.session.exit_settled().await
    }

    /// The screen as text, and the output position it shows.
    pub fn read_screen(&self, options: ScreenOptions) -> (ScreenText, u64) {
        let s = self.session.state();
        (screen::read(&s.emu, options), s.output.end())
    }

    /// Waits (at most [`WRITE_MAX_WAIT`]) for the answer to the input written at `position`
    /// (see `answer.rs`), then returns it, with the screen when `screen` is asked; the read
    /// cursor moves past it. A cut in the output says `more`.
    pub async fn answer(
        &self,
        position: u64,
        screen: bool,
        more: ReadMore,
        cancel: &CancellationToken,
    ) -> Answer {
        self.wait_answer(WRITE_MAX_WAIT, cancel).await;
        let read = self.output_since(position, 200, false, more);
        self.session.state().input.read_to(read.position);
        let screen = screen.then(|| self.read_screen(ScreenOptions::CURRENT).0);
        let exited = self.session.exit_settled().await;
        Answer {
            output: read.output,
            screen,
            end_position: read.position,
            exit_code: self.ended_since_input(),
            exited,
        }
    }

    /// Where a wait or watch without `since` starts (see [`Session::wait_start`]).
    pub fn wait_start(&self) -> u64 {
        self.session.wait_start()
    }

    /// Waits for `until` in the output from `since` (see `wait.rs`); the read cursor moves to
    /// where the wait ended.
    pub async fn wait(
        &self,
        until: &Until,
        since: u64,
        timeout: Duration,
        cancel: &CancellationToken,
        progress: &dyn Progress,
    ) -> WaitOutcome {
        let outcome = self
            .wait_until(until, since, timeout, cancel, progress)
            .await;
        self.session.state().input.read_to(outcome.position);
        outcome
    }

    /// Changes the terminal size.
    pub fn resize(&self, size: Size) -> Result<()> {
        self.session.resize(size)
    }

    /// A soft reset: the screen and scrollback cleared (the program is not told), the read
    /// cursor at the end. Returns the screen after.
    pub fn clear(&self) -> String {
        let mut s = self.session.state();
        s.emu.clear();
        s.output.clear_history();
        s.read_to_end();
        screen::plain_text(&s.emu)
    }

    /// After a restart: later reads start at the end. Returns the screen.
    pub fn skip_to_end(&self) -> String {
        let mut s = self.session.state();
        s.read_to_end();
        screen::plain_text(&s.emu)
    }

    /// A PNG of the screen.
    pub fn screenshot(&self, theme: Option<Theme>, ring: Option<(usize, usize)>) -> Result<Png> {
        self.session.screenshot(theme, ring)
    }
}

impl Session {
    /// This session's turn, once no other call holds it (or `None` when `cancel` fires
    /// first).
    pub(crate) async fn turn(self: &Arc<Self>, cancel: &CancellationToken) -> Option<SessionCall> {
        let turn = tokio::select! {
            turn = self.turn.clone().lock_owned() => turn,
            _ = cancel.cancelled() => return None,
        };
        self.touch();
        Some(SessionCall::new(self.clone(), turn))
    }

    /// This session's turn if no call holds it now (the idle sweep, eviction, a new session).
    pub(crate) fn try_turn(self: &Arc<Self>) -> Option<SessionCall> {
        let turn = self.turn.clone().try_lock_owned().ok()?;
        Some(SessionCall::new(self.clone(), turn))
    }
}
