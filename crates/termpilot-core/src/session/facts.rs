//! What anyone may ask a session without a turn: its status and working directory, the
//! screen (as text, its size, a picture), the line history, the last look at an ended
//! session, who holds its keyboard and the socket people join through. Each answer comes
//! from the part that owns it (the state's owners under one short lock, [`super::control::Control`], the
//! attach socket); nothing here moves the read cursor or types.

use std::path::{Path, PathBuf};
use std::sync::{Arc, MutexGuard};
use std::time::{Duration, Instant};

use super::control::Controller;
use super::integration::Mode;
use super::secret::SecretPrompt;
use super::socket::Viewer;
use super::state::State;
use super::terminal::{LastLook, Session, Status};
use crate::error::{Error, Result};
use crate::platform::{self, InputMode};
use crate::render::{self, Png, RenderOptions, Screen, Theme};

impl Session {
    /// The secret prompt this session's foreground program waits at, if any: line mode with
    /// echo off, and a process of the foreground group asleep reading the terminal.
    pub fn secret_prompt(&self) -> Option<SecretPrompt> {
        if self.shape.remote.is_some() {
            return None;
        }
        if self.input_mode()? != (InputMode::Lines { echo: false }) {
            return None;
        }
        let group = self.foreground_group().unwrap_or(self.pid);
        let tty = self.stdin_tty()?;
        if !platform::waiting_for_input(group, &tty) {
            return None;
        }
        let prompt = self.cursor_line().trim().to_string();
        Some(SecretPrompt {
            session: self.id.clone(),
            program: platform::process_name(group).unwrap_or_else(|| "a program".into()),
            prompt,
            group,
        })
    }

    /// What `terminal_list` shows, read with one short lock.
    pub fn status(&self) -> Status {
        let (exited, last_output, reported_cwd, size, person) = {
            let s = self.state();
            (
                s.command.exit().is_some(),
                s.output.last_output(),
                s.command.reported_cwd().map(str::to_string),
                s.size(),
                s.attached.last_seen(),
            )
        };
        let used = self.last_used();
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
                .or_else(|| match &self.shape.remote {
                    Some(remote) => Some(remote.cwd.clone().unwrap_or_else(|| "~".into()).into()),
                    None => platform::process_cwd(self.pid),
                })
                .unwrap_or_else(|| self.shape.cwd.clone()),
            // A person attached (even silent) keeps it from idling; their leaving counts too.
            idle: used.max(last_output).max(person.unwrap_or(used)).elapsed(),
            size,
        }
    }

    /// How long the session has been quiet (no call, no output, no attached person; zero while
    /// one is attached): [`Status::idle`] without asking the OS anything.
    pub fn quiet_for(&self) -> Duration {
        let (last_output, person) = {
            let s = self.state();
            (s.output.last_output(), s.attached.last_seen())
        };
        let used = self.last_used();
        used.max(last_output).max(person.unwrap_or(used)).elapsed()
    }

    /// The working directory the shell last reported, if it did.
    pub fn reported_cwd(&self) -> Option<String> {
        self.state().command.reported_cwd().map(str::to_string)
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

    /// True while the program on screen has turned on bracketed paste (`ESC [?2004h`).
    pub fn bracketed_paste(&self) -> bool {
        use alacritty_terminal::term::TermMode;
        self.state().emu.mode().contains(TermMode::BRACKETED_PASTE)
    }

    /// The output position now: how many bytes the program has printed.
    pub fn position(&self) -> u64 {
        self.state().output.end()
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
        LastLook {
            text: super::screen::plain_text(&s.emu),
            redraw: super::redraw::redraw(&s.emu),
            cwd: s
                .command
                .reported_cwd()
                .map_or_else(|| self.shape.cwd.display().to_string(), str::to_string),
            size: s.size(),
            exit: s.command.exit().cloned(),
        }
    }

    /// True once a hooked shell has drawn a prompt (its `A` or `B` mark): typed input then
    /// reaches its line editor, not the terminal's cooked echo.
    pub fn prompt_seen(&self) -> bool {
        self.state().phase().prompt_seen()
    }

    /// Checks that 1-based (`row`, `col`) is on the screen.
    pub fn check_cell(&self, row: usize, col: usize) -> Result<()> {
        let (rows, cols) = self.screen_size();
        if row == 0 || col == 0 || row > rows || col > cols {
            return Err(Error::InvalidInput(format!(
                "The cell at row {row}, column {col} is outside the screen; rows go from 1 to {rows} and columns from 1 to {cols}."
            )));
        }
        Ok(())
    }

    /// The screen's size now: (rows, columns).
    pub fn screen_size(&self) -> (usize, usize) {
        use alacritty_terminal::grid::Dimensions;
        let s = self.state();
        (s.emu.term().screen_lines(), s.emu.term().columns())
    }

    /// The screen as PNG in `theme` (default: the session's), with a ring around 1-based
    /// `ring` when given. The state is locked only to copy the screen.
    pub fn screenshot(&self, theme: Option<Theme>, ring: Option<(usize, usize)>) -> Result<Png> {
        let theme = match theme {
            Some(t) => t,
            None => Theme::parse(&self.shape.theme).unwrap_or_default(),
        };
        if let Some((row, col)) = ring {
            self.check_cell(row, col)?;
        }
        let screen = Screen::capture(self.state().emu.term());
        render::render(
            &screen,
            &RenderOptions {
                theme,
                ring: ring.map(|(r, c)| (r - 1, c - 1)),
                show_cursor: true,
            },
        )
    }

    /// The rendered line history: `max_lines` lines ending `offset` lines before the newest.
    /// Returns the lines, the total kept, and the 0-based range returned.
    pub fn history(&self, offset: usize, max_lines: usize) -> (Vec<String>, usize, usize, usize) {
        let lines = self.state().output.history().lines();
        let total = lines.len();
        let to = total.saturating_sub(offset);
        let from = to.saturating_sub(max_lines);
        (lines[from..to].to_vec(), total, from, to)
    }

    /// Who owns the spill files this session's calls write ([`crate::host::spill::Owner`]):
    /// this incarnation of the session, so a restart under the same id ends them too.
    pub(crate) fn spill_owner(&self) -> crate::host::spill::Owner {
        crate::host::spill::Owner::new(
            self.spills.clone(),
            format!("session {} pid {}", self.id, self.pid),
        )
    }

    /// Gives the keyboard to person `who` (replacing any other person's hold).
    pub fn take_control(&self, who: u64) {
        self.control.take(who);
    }

    /// Gives the keyboard to person `who` unless another person holds it; else who does, and
    /// how long ago their last key (or their taking it) was (see [`super::control::Control::try_take`]).
    pub fn try_take_control(&self, who: u64) -> std::result::Result<(), (u64, Duration)> {
        self.control.try_take(who)
    }

    /// Gives the keyboard back to the agent, if `who` holds it.
    pub fn release_control(&self, who: u64) {
        self.control.release(who);
    }

    /// Whether person `who` holds the keyboard now.
    pub fn holds_control(&self, who: u64) -> bool {
        self.control.holds(who)
    }

    /// Who types into this session now.
    pub fn controller(&self) -> Controller {
        self.control.controller()
    }

    /// Person `who`'s keys: sent to the program (and the lease renewed) if they hold
    /// control. Returns whether the keys were sent.
    pub fn person_keys(&self, who: u64, bytes: Vec<u8>) -> bool {
        if !self.control.key_from(who) {
            return false;
        }
        self.send_input(bytes);
        true
    }

    /// Refuses the agent's typing while a person holds the keyboard.
    pub fn agent_may_type(&self) -> Result<()> {
        self.control.agent_may_type(&self.id)
    }

    /// The socket people attach through, while the session listens.
    pub fn attach_socket(&self) -> Option<&Path> {
        self.attach.get().and_then(|l| l.live_path())
    }

    /// The command a person runs to join this session.
    pub fn attach_command(&self) -> Option<String> {
        self.attach_socket()
            .map(|p| super::socket::command_line(&self.id, p))
    }

    /// Stops listening for people and removes the socket.
    pub fn close_attach(&self) {
        if let Some(l) = self.attach.get() {
            l.close();
        }
    }

    /// How many people are attached now.
    pub fn attached(&self) -> usize {
        self.state().attached.count()
    }

    /// Joins the session as a viewer (see [`super::socket::view`]).
    pub fn view(self: &Arc<Self>) -> Viewer {
        super::socket::view(self)
    }

    /// The screen as text while a program holds the alternate screen, else `None`.
    pub(crate) fn full_screen(&self) -> Option<super::screen::ScreenText> {
        super::screen::alternate(&self.state().emu)
    }

    /// A program holds the alternate screen.
    pub(crate) fn alternate_screen(&self) -> bool {
        use alacritty_terminal::term::TermMode;
        self.state().emu.mode().contains(TermMode::ALT_SCREEN)
    }

    /// The screen line the cursor is on: a waiting program's prompt.
    pub(crate) fn cursor_line(&self) -> String {
        super::screen::cursor_line(&self.state().emu)
    }

    /// The terminal modes the program on screen turned on (cursor keys, mouse, paste, …).
    pub(crate) fn term_mode(&self) -> alacritty_terminal::term::TermMode {
        self.state().emu.mode()
    }

    /// The newest line of the rendered history (the line being written, if unfinished).
    pub(crate) fn last_line(&self) -> String {
        self.state().output.history().last_line()
    }

    /// The raw output still kept from `from` on, with where it really starts.
    pub(crate) fn output_since_position(&self, from: u64) -> (u64, Vec<u8>) {
        self.state().output.since(from)
    }

    /// The raw output still kept, in the chunks it came in, each with when it came.
    pub(crate) fn timed_output(&self) -> Vec<(Duration, Vec<u8>)> {
        self.state().output.timed_chunks()
    }
}
