//! `terminal_exec`: type one command at the shell prompt and return exactly its output, exit
//! status and the new working directory, the moment it ends.
//!
//! With shell integration ([`Mode::Osc133`]) the command has ended when the shell prints its
//! `D` mark and the next prompt (`B`); the output is what lies between `C` and `D`, so no
//! prompt, no echoed command line and no marker text reach the agent. Without it
//! ([`Mode::ProcessGroup`]) the command has ended when the shell owns the terminal again (at two
//! looks [`SETTLE`] apart) and output has been still for [`SETTLE`]; the exit status is then unknown.
//!
//! While it runs, a command that stops to read the terminal (a `read -p` prompt, `input()`,
//! a y/n question, vim) is reported as waiting for input instead of running into the timeout:
//! see [`platform::waiting_for_input`] for the rule, and `prompt_exec_input` for when it is
//! asked.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use alacritty_terminal::term::TermMode;
use tokio_util::sync::CancellationToken;

use super::call::SessionCall;
use super::command_state::{Follow, Verdict};
use super::integration::{MarkKind, Mode};
use super::phase::Baseline;
use super::prompt_exec_capture::ExecCapture;
use super::prompt_exec_input::InputLooks;
use super::prompt_exec_render::{Ahead, KEEP_BACK, render_bounded};
use super::screen;
use super::terminal::Session;
use super::wait::PROGRESS_EVERY;
use super::waiter::{Look, Waited, Waiter};
use crate::error::{Error, Fault, Result};
use crate::platform;
use crate::progress::Progress;

/// The longest command `terminal_exec` types (longer ones go in a file the shell sources).
pub(super) const MAX_COMMAND_BYTES: usize = 64 * 1024;

/// How far past the typed command its echo's last newline is looked for.
const ECHO_WINDOW: u64 = 4 * MAX_COMMAND_BYTES as u64;

/// After a cancelled exec, how long Ctrl+C is given to end the command before its process
/// group is killed, and how long the prompt is then awaited.
const INTERRUPT_GRACE: Duration = Duration::from_secs(2);

/// What to run and how long to wait.
#[derive(Debug, Clone)]
pub struct ExecRequest {
    pub command: String,
    pub timeout: Duration,
    pub max_lines: usize,
    /// Return early once output has been quiet this long…
    pub quiet_exit: Option<Duration>,
    /// …after at least this many bytes of output.
    pub min_output_bytes: u64,
    /// How the output's lines are cleaned ([`super::text::Style::Plain`]: as
    /// smart-terminal-mcp does, with its truncation marker and trailing blank lines trimmed).
    pub style: super::text::Style,
    /// Who answers a secret prompt in the agent's place ([`super::secret`]), if anyone.
    pub person: Option<super::secret::Asker>,
}

/// What came of it.
#[derive(Debug, Clone)]
pub struct ExecOutcome {
    pub output: String,
    pub exit_code: Option<i32>,
    pub cwd: PathBuf,
    pub timed_out: bool,
    pub duration: Duration,
    pub quiet_exited: bool,
    /// The prompt line, when the command stopped to read the terminal.
    pub waiting_for_input: Option<String>,
    pub cancelled: bool,
    /// Lines cut from the middle of `output`.
    pub omitted_lines: usize,
    /// Lines cut short (whole in `full_output_path`).
    pub cut_lines: usize,
    /// The whole output, when `output` was cut.
    pub full_output_path: Option<PathBuf>,
    /// Why there is no `full_output_path` although `output` was cut (what failed, where).
    pub spill_error: Option<String>,
    /// Output position after the command's output.
    pub position: u64,
    pub mode: Mode,
    /// The screen, when the command is still running on the alternate screen (vim, less,
    /// htop): its text stands in for `output`, which for such a program is only cursor
    /// moves and padding.
    pub screen: Option<super::screen::ScreenText>,
    /// The command waits at a secret prompt (echo off): the agent must not be asked for it.
    pub secret_prompt: bool,
    /// What a person did about a secret prompt during the call.
    pub person: Option<super::secret::PersonOutcome>,
}

/// How an exec wait ended.
enum End {
    /// The command ended; its output ends at `to`, with this status.
    Done {
        to: u64,
        exit: Option<i32>,
    },
    Timeout,
    Quiet,
    WaitingForInput(String),
    Cancelled,
}

impl SessionCall {
    /// Refuses with a clear error when the shell is not at its prompt.
    fn check_at_prompt(&self) -> Result<()> {
        if let Some(exit) = self.exit() {
            return Err(Error::Other(format!(
                "The shell of session {} has ended ({}); start a new session.",
                self.id,
                super::terminal::describe_exit(&exit)
            )));
        }
        if self.is_command() {
            return Err(Fault::NotAShell {
                id: self.id.clone(),
            }
            .into());
        }
        if let Some(pg) = self.foreground_group()
            && pg != self.pid
        {
            let name = platform::process_name(pg).unwrap_or_else(|| "a program".into());
            return Err(Fault::ProgramInForeground {
                id: self.id.clone(),
                program: name,
            }
            .into());
        }
        if self.state().phase().running() {
            return Err(Fault::CommandStillRunning {
                id: self.id.clone(),
            }
            .into());
        }
        Ok(())
    }

    /// Runs one command at the prompt.
    pub async fn exec(
        &self,
        req: &ExecRequest,
        cancel: &CancellationToken,
        progress: &dyn Progress,
    ) -> Result<ExecOutcome> {
        if req.command.trim().is_empty() {
            return Err(Error::InvalidInput(
                "`command` is empty; pass the command line to run.".into(),
            ));
        }
        if req.command.len() > MAX_COMMAND_BYTES {
            return Err(Fault::CommandTooLong {
                bytes: req.command.len(),
                limit_kib: MAX_COMMAND_BYTES / 1024,
            }
            .into());
        }
        // One deadline for the whole call: the wait for the prompt spends the command's time.
        let deadline = Instant::now() + req.timeout;
        if self.hooked && !self.prompt_seen() {
            // Started moments ago (or on a loaded machine): type only once the prompt is up.
            self.wait_ready_until(deadline, cancel).await;
        }
        self.check_at_prompt()?;
        let mode = self.mode();
        let (base, pos0, bracketed, prompt_line) = {
            let mut s = self.state();
            // Captured from this very position: nothing can slip in between.
            let pos0 = s.output.start_capture(self.spills.clone());
            (
                s.command.baseline(),
                pos0,
                s.emu.mode().contains(TermMode::BRACKETED_PASTE),
                screen::cursor_line(&s.emu),
            )
        };
        let command = req.command.trim_end_matches(['\r', '\n']);
        let (typed, echo) = self.typed_form(command, bracketed);
        // Lines the terminal echoes before the output, for shells that mark no output start.
        let echo_lines = echo.lines().count().max(1);
        let started = Instant::now();
        if let Err(e) = self.write(typed.into_bytes(), Some(&echo)).await {
            self.state().output.take_capture();
            // Never leave a half-typed line behind for the next command.
            self.interrupt(mode, &base).await;
            return Err(e);
        }
        let mut ahead = None;
        let (mut deadline, mut asks, mut person, mut resumed) = (deadline, 0, None, started);
        let mut secret_prompt;
        let end = loop {
            let end = {
                let wait = self.exec_wait(
                    req,
                    mode,
                    &base,
                    pos0,
                    (resumed, deadline),
                    cancel,
                    progress,
                );
                tokio::pin!(wait);
                tokio::select! {
                    end = &mut wait => end,
                    never = self.render_ahead(&mut ahead, mode, &base, req.max_lines, req.style) => match never {},
                }
            };
            // A secret prompt goes to a person (the asker), never to the agent.
            let prompt = match &end {
                End::WaitingForInput(_) => self.secret_prompt(),
                _ => None,
            };
            secret_prompt = prompt.is_some();
            let (Some(prompt), Some(asker)) = (prompt, &req.person) else {
                break end;
            };
            if asks == super::secret::MAX_ASKS {
                break end;
            }
            asks += 1;
            let asked_at = Instant::now();
            let outcome = self.ask_person(asker, &prompt, cancel, progress).await;
            deadline = super::secret::extend(deadline, asked_at);
            // Quiet counts afresh from here: the program has its answer to take.
            resumed = Instant::now();
            let go_on = matches!(
                outcome,
                super::secret::PersonOutcome::Answered | super::secret::PersonOutcome::PromptGone
            );
            person = Some(outcome);
            if !go_on || cancel.is_cancelled() {
                break if cancel.is_cancelled() {
                    End::Cancelled
                } else {
                    end
                };
            }
        };
        let duration = started.elapsed();
        if matches!(end, End::Cancelled) {
            // Cancelled like a one-shot run: the command is stopped, the prompt back.
            self.interrupt(mode, &base).await;
        }

        let (mut capture, from, to, exit_code) = {
            let mut s = self.state();
            let mut capture = s
                .output
                .take_capture()
                .unwrap_or_else(|| ExecCapture::new(pos0, self.spills.clone()));
            let from = output_start(&s, &mut capture, mode, &base, pos0, echo_lines);
            let (to, exit_code) = match &end {
                End::Done { to, exit } => (*to, *exit),
                _ => (s.output.end(), None),
            };
            (capture, from, to, exit_code)
        };
        // Without marks, the shell's next prompt follows the output: it is not output.
        let drop_last = (mode == Mode::ProcessGroup && matches!(end, End::Done { .. }))
            .then(|| prompt_line.trim_end().to_string());
        let rendered = match ahead {
            Some(ahead) if ahead.from == from && ahead.at <= to => {
                ahead.finish(&mut capture, to, drop_last.as_deref())?
            }
            _ => render_bounded(
                &mut capture,
                from,
                to,
                req.max_lines,
                req.style,
                drop_last.as_deref(),
                self.spill_owner(),
            )?,
        };
        let (timed_out, quiet_exited, cancelled) = (
            matches!(end, End::Timeout),
            matches!(end, End::Quiet),
            matches!(end, End::Cancelled),
        );
        let still_running = matches!(end, End::WaitingForInput(_) | End::Timeout | End::Quiet);
        let waiting = match end {
            End::WaitingForInput(p) => Some(p),
            _ => None,
        };
        let (lines, omitted_lines, cut_lines, full_output_path, spill_error) = (
            rendered.lines,
            rendered.omitted,
            rendered.cut_lines,
            rendered.full_output_path,
            rendered.spill_error,
        );
        let position = self.state().read_to_end();
        let screen = still_running.then(|| self.full_screen()).flatten();
        let output = if screen.is_some() {
            String::new()
        } else if req.style == super::text::Style::Plain {
            plain_trim(&lines.join("\n"))
        } else {
            lines.join("\n")
        };
        Ok(ExecOutcome {
            output,
            screen,
            exit_code,
            cwd: self.cwd(),
            timed_out,
            duration,
            quiet_exited,
            waiting_for_input: waiting,
            cancelled,
            omitted_lines,
            cut_lines,
            full_output_path,
            spill_error,
            position,
            mode,
            secret_prompt,
            person,
        })
    }

    /// Renders the running command's output as it arrives (marked shells only: the output
    /// starts at `C`), up to [`KEEP_BACK`] bytes short of the newest and never past the
    /// first `D`, so the end has only the last stretch left to do. Never returns.
    async fn render_ahead(
        &self,
        ahead: &mut Option<Ahead>,
        mode: Mode,
        base: &Baseline,
        max_lines: usize,
        style: super::text::Style,
    ) -> std::convert::Infallible {
        let mut rx = self.subscribe();
        loop {
            if rx.changed().await.is_err() {
                // The session is gone; the wait ends the exec.
                return std::future::pending().await;
            }
            if mode != Mode::Osc133 {
                continue;
            }
            loop {
                let bytes = {
                    let mut s = self.state();
                    let from = s.command.first_since(base, is_output_start).map(|c| c.end);
                    let first_end = s.command.first_since(base, is_command_end).map(|d| d.start);
                    let (Some(from), Some(capture_end)) = (from, s.output.captured_to()) else {
                        break;
                    };
                    let ahead = ahead.get_or_insert_with(|| {
                        Ahead::new(from, max_lines, style, self.spill_owner())
                    });
                    let limit = capture_end
                        .saturating_sub(KEEP_BACK)
                        .min(first_end.unwrap_or(u64::MAX));
                    let Some(stop) = ahead.next_stop(limit) else {
                        break;
                    };
                    let at = ahead.at;
                    match s.output.capture_mut() {
                        Some(capture) => capture.range(at, stop),
                        None => break,
                    }
                };
                if bytes.is_empty() {
                    break;
                }
                if let Some(ahead) = ahead.as_mut() {
                    ahead.feed(&bytes);
                }
                // Let the wait (and everything else on this worker) run between chunks.
                tokio::task::yield_now().await;
            }
        }
    }

    /// Waits for the end of the command typed after `base` (the rule is the command
    /// state's: [`Follow::typed`]), for quiet, or for the command to stop and read the
    /// terminal, until the call's deadline.
    #[allow(clippy::too_many_arguments)]
    async fn exec_wait(
        &self,
        req: &ExecRequest,
        mode: Mode,
        base: &Baseline,
        pos0: u64,
        (started, deadline): (Instant, Instant),
        cancel: &CancellationToken,
        progress: &dyn Progress,
    ) -> End {
        let tty = self.stdin_tty();
        let mut looks = InputLooks::new(started);
        let mut follow = Follow::typed(*base, mode == Mode::Osc133, started);
        // Where the echoed command line ends (process-group mode): output starts there.
        let mut echo_end: Option<u64> = None;
        let waited = Waiter::new(self)
            .until(deadline)
            .cancel(cancel)
            .progress(progress)
            .run(|now| {
                let (last_output, output_bytes) = {
                    let s = self.state();
                    // minOutputBytes counts the command's output only, never its echo: from
                    // the `C` mark, else from the end of the echoed line. The echoed line
                    // ends with the first newline after it was typed; once seen, it stays
                    // seen (no need to copy the output again).
                    if echo_end.is_none() {
                        let head = s.output.range(pos0, pos0 + ECHO_WINDOW);
                        echo_end = memchr::memchr(b'\n', &head).map(|i| pos0 + i as u64 + 1);
                    }
                    let output_from = match mode {
                        Mode::Osc133 => s
                            .command
                            .first_since(base, is_output_start)
                            .map(|c| c.end)
                            .or(echo_end),
                        Mode::ProcessGroup => echo_end,
                    };
                    (
                        s.output.last_output(),
                        output_from.map_or(0, |from| s.output.end().saturating_sub(from)),
                    )
                };
                let seen = self.seen(now, last_output);
                let ended = match self.state().command.command_end(&mut follow, &seen) {
                    // Without marks, the shell owning the terminal counts only once the
                    // echo came back (before it, the shell has not read the line yet).
                    Verdict::Yes(end)
                        if mode == Mode::ProcessGroup
                            && echo_end.is_none()
                            && end.exit.is_none() =>
                    {
                        Verdict::LookAt(now + super::wait::FOREGROUND_RECHECK)
                    }
                    ended => ended,
                };
                let mut wake = now + PROGRESS_EVERY;
                match ended {
                    Verdict::Yes(end) => {
                        let to = end.to.unwrap_or_else(|| self.state().output.end());
                        return Look::Done(End::Done {
                            to,
                            exit: end.status,
                        });
                    }
                    Verdict::LookAt(at) => wake = wake.min(at),
                    Verdict::No => {}
                }
                let quiet_since = last_output.max(started);
                if let Some(quiet) = req.quiet_exit
                    && output_bytes >= req.min_output_bytes
                {
                    if now >= quiet_since + quiet {
                        return Look::Done(End::Quiet);
                    }
                    wake = wake.min(quiet_since + quiet);
                }
                // Stopped to read the terminal? Look only once output has been still a while.
                let due = looks.due(quiet_since);
                if now >= due {
                    let group = self.foreground_group().unwrap_or(self.pid);
                    // The shell's own read (`read -p`, or the prompt it is back at without
                    // marks to tell) waits for the long quiet: the end is found by then.
                    let program = group != self.pid;
                    if let Some(tty) = &tty
                        && self.input_wait_counts(now, quiet_since, group, program, tty, || {
                            program || self.state().command.command_open_since(base)
                        })
                    {
                        return Look::Done(End::WaitingForInput(self.cursor_line()));
                    }
                    looks.looked(now);
                    wake = wake.min(looks.due(quiet_since));
                } else {
                    wake = wake.min(due);
                }
                Look::Until(wake)
            })
            .await;
        match waited {
            Waited::Done(end) => end,
            Waited::Deadline => End::Timeout,
            Waited::Cancelled => End::Cancelled,
        }
    }

    /// The rule of `waitingForInput`, looked at with output still since `quiet_since`
    /// (see [`InputLooks`]): the foreground `group` sleeps reading `tty` in a wait that
    /// counts by now — after [`super::prompt_exec_input::SCREEN_QUIET`] a full-screen
    /// program's wait or a plain read by a `program` (not the shell itself), after
    /// [`super::prompt_exec_input::INPUT_QUIET`] any wait — everything it printed before is
    /// scanned, `may_wait` holds, and it has read all that reached it. Shared by
    /// `terminal_exec` and a command session's start ([`SessionCall::wait_program_ready`]).
    pub(super) fn input_wait_counts(
        &self,
        now: Instant,
        quiet_since: Instant,
        group: i32,
        program: bool,
        tty: &std::path::Path,
        may_wait: impl Fn() -> bool,
    ) -> bool {
        let full_screen = self.alternate_screen();
        let waits = || {
            if InputLooks::any_wait_counts(now, quiet_since) {
                platform::waiting_for_input(group, tty)
            } else if !program {
                false
            } else if full_screen {
                platform::waiting_for_input(group, tty)
            } else {
                platform::reading_terminal(group, tty)
            }
        };
        // A remote shell's programs are not in this machine's /proc (only ssh is).
        self.shape.remote.is_none()
            && may_wait()
            && waits()
            // What it printed before it was seen waiting (its prompt, or the shell's `D`) is
            // in: scanned after the look, not before it.
            && self.scanned_all()
            // Nothing came since the look began (the quiet it counted on holds), and what was
            // scanned meanwhile does not end the wait: a `D` fed between the look's first
            // question and now means the command is over, not waiting (the shell's prompt
            // was once taken for the command's question).
            && self.state().output.last_output() <= quiet_since
            && may_wait()
            // And it has read what reached it (the emulator's replies to its queries): else
            // it has not run since, and may draw more.
            && platform::unread_input(tty).is_none_or(|n| n == 0)
    }

    /// Stops what the command typed after `base` left running and brings the prompt
    /// back: Ctrl+C (the terminal's interrupt, for the foreground group), then — if the
    /// command ignores it — its process group killed as a tree. Bounded by
    /// [`INTERRUPT_GRACE`] twice; a shell that never returns is left as it is. Whether it
    /// still runs is the command state's answer ([`super::command_state::CommandState::still_running`]).
    async fn interrupt(&self, mode: Mode, base: &Baseline) {
        let marks = mode == Mode::Osc133;
        let running = |s: &Session| -> bool {
            let seen = s.seen(Instant::now(), Instant::now());
            s.state().command.still_running(base, marks, &seen)
        };
        if !running(self) {
            return;
        }
        let _ = self.write(b"\x03".to_vec(), None).await;
        if self.wait_for(INTERRUPT_GRACE, |s| !running(s)).await {
            return;
        }
        if let Some(pg) = self.foreground_group().filter(|&pg| pg != self.pid) {
            platform::kill_tree(pg);
        }
        self.wait_for(INTERRUPT_GRACE, |s| !running(s)).await;
    }

    /// Waits until `done` holds (checked on every output event and every
    /// [`super::wait::FOREGROUND_RECHECK`]/5, since a foreground change is not announced),
    /// for at most `max`. Returns whether it held.
    async fn wait_for(&self, max: Duration, done: impl Fn(&Session) -> bool) -> bool {
        let waited = Waiter::new(self)
            .until(Instant::now() + max)
            .run(|now| match done(self) {
                true => Look::Done(()),
                false => Look::Until(now + super::wait::FOREGROUND_RECHECK / 5),
            })
            .await;
        matches!(waited, Waited::Done(()))
    }

    /// What to type for `command`, and the echo it brings: one command line whatever its
    /// lines. A multi-line command goes as a bracketed paste where the line editor asked for
    /// one; otherwise it is wrapped in `eval '…'`, so the shell reads it whole (heredocs,
    /// loops and separate lines alike) and it ends with one `D` mark: its output is exactly
    /// `C..D`, never the in-between prompts and echoes of one command per line.
    fn typed_form(&self, command: &str, bracketed: bool) -> (String, String) {
        let command = command.replace("\r\n", "\n");
        if !command.contains('\n') {
            return (format!("{command}\r"), command);
        }
        if bracketed {
            return (
                format!(
                    "{}\r",
                    super::paste::bracketed(&command.replace('\n', "\r"))
                ),
                command,
            );
        }
        let wrapped = match self.shape.shell.kind {
            super::shell::ShellKind::Fish => format!(
                "eval '{}'",
                command.replace('\\', "\\\\").replace('\'', "\\'")
            ),
            super::shell::ShellKind::Bash
            | super::shell::ShellKind::Zsh
            | super::shell::ShellKind::Sh => {
                format!("eval '{}'", command.replace('\'', "'\\''"))
            }
            // Other shells get the lines as typed.
            _ => command.clone(),
        };
        (format!("{}\r", wrapped.replace('\n', "\r")), wrapped)
    }
}

fn is_output_start(kind: &MarkKind) -> bool {
    matches!(kind, MarkKind::OutputStart)
}

fn is_command_end(kind: &MarkKind) -> bool {
    matches!(kind, MarkKind::CommandEnd(_))
}

/// Where the command's output begins: after its `C` mark, else after the echoed lines.
fn output_start(
    s: &super::state::State,
    capture: &mut ExecCapture,
    mode: Mode,
    base: &Baseline,
    pos0: u64,
    echo_lines: usize,
) -> u64 {
    if mode == Mode::Osc133
        && let Some(c) = s.command.first_since(base, is_output_start)
    {
        return c.end;
    }
    // The echoed command ends with its last line's newline (looked for in the first 64 KiB).
    let head = capture.range(pos0, pos0 + ECHO_WINDOW);
    match memchr::memchr_iter(b'\n', &head).nth(echo_lines - 1) {
        Some(i) => pos0 + i as u64 + 1,
        None => pos0 + head.len() as u64,
    }
}

/// A [`super::text::Style::Plain`] output without leading blank lines and trailing
/// whitespace (a first line's indentation is kept).
fn plain_trim(output: &str) -> String {
    let trimmed = output.trim_end();
    let start = trimmed
        .split_inclusive('\n')
        .take_while(|l| l.trim().is_empty())
        .map(str::len)
        .sum::<usize>();
    trimmed[start..].to_string()
}
