//! What the session tools do, in the core's terms: read output, write input, press keys,
//! read history. The MCP face only maps parameters onto these and shapes the results.

use std::time::{Duration, Instant};

use alacritty_terminal::term::TermMode;
use tokio_util::sync::CancellationToken;

use super::call::SessionCall;
use super::keys;
use super::mouse::{self, Direction};
use super::text;
use super::waiter::{Look, Waiter};
use crate::error::Result;

/// After a write, the answer is awaited (see `answer.rs`) never longer than this.
pub const WRITE_MAX_WAIT: Duration = Duration::from_secs(10);

/// What the line standing for lines left out of a read says after its count, given where
/// the read output starts: how to read them all (the face knows which tool that is).
pub type ReadMore = fn(u64) -> String;

/// Rendered (or raw) output read from a session.
#[derive(Debug, Clone)]
pub struct OutputRead {
    pub output: String,
    /// Where the next read should start (`since`).
    pub position: u64,
    /// Lines left out of the middle (head and tail kept).
    pub omitted_lines: usize,
    /// Bytes asked for that the 1 MiB log no longer holds.
    pub dropped_bytes: u64,
}

/// Longest wait for a remote shell's first mark: the connect timeout, a login and the user's
/// profile on a slow or loaded machine.
pub(super) const CONNECT_MAX: Duration = Duration::from_secs(20);
/// A new session is ready once its prompt is drawn: at most this long is waited for it.
pub(super) const READY_MAX: Duration = Duration::from_secs(10);
/// Without a prompt's `B` mark, "drawn" means output that has been still this long…
pub(super) const READY_IDLE: Duration = Duration::from_millis(150);
/// …or this long for a hooked shell that printed no mark at all.
pub(super) const READY_IDLE_UNMARKED: Duration = Duration::from_secs(1);
/// How often a silent command session's program is asked whether it reads the terminal.
const READY_RECHECK: Duration = Duration::from_millis(20);

impl SessionCall {
    /// Waits until the shell's first prompt is drawn, the program exits, or [`READY_MAX`].
    /// "Drawn" is the prompt's `B` mark when the shell has hooks (printed by the line editor
    /// once it reads the terminal itself, so nothing typed after it is echoed twice); output
    /// followed by [`READY_IDLE`] of quiet once the prompt's `A` came (a prompt framework may
    /// drop `B`), or without hooks; and with hooks but no prompt mark (the user's startup
    /// files broke them, or are still running after the first `D`), output followed by
    /// [`READY_IDLE_UNMARKED`] of quiet.
    pub(crate) async fn wait_prompt(&self, cancel: &CancellationToken) {
        self.wait_ready_until(Instant::now() + READY_MAX, cancel)
            .await
    }

    /// [`SessionCall::wait_prompt`], until `deadline` (a call's own, which the wait spends).
    pub(crate) async fn wait_ready_until(&self, deadline: Instant, cancel: &CancellationToken) {
        Waiter::new(self)
            .until(deadline)
            .cancel(cancel)
            .run(|now| {
                let (prompted, marked, printed, last_output, gone) = {
                    let s = self.state();
                    (
                        s.phase().ever_ready(),
                        s.phase().prompt_seen(),
                        s.output.end() > 0,
                        s.output.last_output(),
                        s.command.ending(),
                    )
                };
                if prompted || gone {
                    return Look::Done(());
                }
                let quiet = if marked || !self.hooked || self.is_command() {
                    READY_IDLE
                } else {
                    READY_IDLE_UNMARKED
                };
                let idle_at = last_output + quiet;
                match printed {
                    true if now >= idle_at => Look::Done(()),
                    true => Look::Until(idle_at),
                    // A command session's program that prints nothing first (`cat`) is ready
                    // once it sleeps reading the terminal.
                    false if self.is_command() => match self.reads_terminal() {
                        true => Look::Done(()),
                        false => Look::Until(now + READY_RECHECK),
                    },
                    false => Look::Output,
                }
            })
            .await;
    }

    /// The terminal's foreground program sleeps reading it (local sessions only).
    fn reads_terminal(&self) -> bool {
        if self.shape.remote.is_some() {
            return false;
        }
        let group = self.foreground_group().unwrap_or(self.pid);
        self.stdin_tty()
            .is_some_and(|tty| crate::platform::waiting_for_input(group, &tty))
    }

    /// A remote session's shell: waits (bounded by [`CONNECT_MAX`], woken by output) until
    /// it printed its first mark, or the transport ended. A quiet pause in a slow login is not
    /// taken for readiness. Returns at once for a local session.
    pub(crate) async fn wait_connected(&self, cancel: &CancellationToken) {
        if self.shape.remote.is_none() {
            return;
        }
        Waiter::new(self)
            .until(Instant::now() + CONNECT_MAX)
            .cancel(cancel)
            .run(|_| {
                let s = self.state();
                match s.command.integrated() || s.command.ending() {
                    true => Look::Done(()),
                    false => Look::Output,
                }
            })
            .await;
    }

    /// Waits (at most `max`) until the main process exited and its output reached its end:
    /// a failed transport's last words are read by the reader, which can trail the reap.
    pub async fn wait_output_end(&self, max: Duration) {
        Waiter::new(self)
            .until(Instant::now() + max)
            .run(|_| match self.output_ended() {
                true => Look::Done(()),
                false => Look::Output,
            })
            .await;
    }

    /// Output between `from` and the end, rendered (or raw), cut to `max_lines` head + tail
    /// (the cut says `more` of where it starts).
    pub fn output_since(
        &self,
        from: u64,
        max_lines: usize,
        raw: bool,
        more: ReadMore,
    ) -> OutputRead {
        let (start, bytes, end) = {
            let s = self.state();
            let (start, bytes) = s.output.since(from);
            (start, bytes, s.output.end())
        };
        let dropped_bytes = start.saturating_sub(from);
        let hint = more(start);
        let (output, omitted_lines) = if raw {
            let text = String::from_utf8_lossy(&bytes).into_owned();
            let lines: Vec<String> = text.split('\n').map(String::from).collect();
            let (lines, cut) = text::head_tail(lines, max_lines, &hint);
            (lines.join("\n"), cut)
        } else {
            let (lines, cut) = text::head_tail(text::render(&bytes), max_lines, &hint);
            (lines.join("\n"), cut)
        };
        OutputRead {
            output,
            position: end,
            omitted_lines,
            dropped_bytes,
        }
    }

    /// Types `data` (or pastes it, bracketed when the program asked for that). Returns the
    /// output position at the moment of writing.
    pub async fn type_text(&self, data: &str, paste: bool) -> Result<u64> {
        let bytes = if paste {
            let bracketed = self.bracketed_paste();
            let body = data.replace("\r\n", "\r").replace('\n', "\r");
            if bracketed {
                super::paste::bracketed(&body).into_bytes()
            } else {
                body.into_bytes()
            }
        } else {
            data.as_bytes().to_vec()
        };
        self.write(bytes, Some(data)).await
    }

    /// Presses a key (or combo) `count` times.
    pub async fn press(&self, key: &str, count: usize) -> Result<u64> {
        let app_cursor = self.term_mode().contains(TermMode::APP_CURSOR);
        let one = keys::encode(key, app_cursor)?;
        let mut bytes = Vec::with_capacity(one.len() * count);
        for _ in 0..count {
            bytes.extend_from_slice(&one);
        }
        // An interrupt or a line edit changes what will be echoed.
        self.state().input.clear_expected_echo();
        self.write(bytes, None).await
    }

    /// Left-clicks 1-based (`row`, `col`) in the program's mouse protocol; an error (and
    /// nothing sent) when the program does not report the mouse. Returns the position and
    /// the encoding used.
    pub async fn click(&self, row: usize, col: usize) -> Result<(u64, mouse::Encoding)> {
        self.check_cell(row, col)?;
        let mode = self.term_mode();
        let bytes = mouse::click(mode, row, col)?;
        let encoding = mouse::encoding(mode).unwrap_or(mouse::Encoding::Sgr);
        Ok((self.write(bytes, None).await?, encoding))
    }

    /// Turns the wheel `amount` steps over 1-based (`row`, `col`): wheel reports to a
    /// mouse-aware program, arrow keys to an alternate-screen one, else an error. Returns the
    /// position and how it was sent (`wheel` or `keys`).
    pub async fn scroll(
        &self,
        row: usize,
        col: usize,
        direction: Direction,
        amount: usize,
    ) -> Result<(u64, &'static str)> {
        self.check_cell(row, col)?;
        let mode = self.term_mode();
        let plan = mouse::scroll(mode, row, col, direction, amount)?;
        Ok((self.write(plan.bytes, None).await?, plan.via))
    }
}
