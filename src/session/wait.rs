//! Waiting on a session: for a pattern, for the command to end, for quiet, for idle output.
//!
//! Waits are events, not polling: a waiter sleeps on the session's event counter (bumped by
//! every output chunk and by exit) and on a timer for its own deadline, idle or quiet window.
//! The one exception is the foreground process group, which the kernel does not announce:
//! an exit wait also re-checks it every [`FOREGROUND_RECHECK`], which only matters when a
//! command ends without the shell printing anything.

use std::time::{Duration, Instant};

use regex::Regex;
use tokio_util::sync::CancellationToken;

use super::scan::LineScan;
use super::screen;
use super::terminal::{Exit, Session};
use crate::progress::Progress;

/// The longest any session wait may last (10 minutes); watches may last an hour.
pub const MAX_WAIT: Duration = Duration::from_secs(600);
/// How often an exit wait re-checks the foreground process group.
pub const FOREGROUND_RECHECK: Duration = Duration::from_millis(250);
/// The shell must own the terminal and the output be still this long for "command ended".
pub const SETTLE: Duration = Duration::from_millis(50);
/// How often a long wait reports progress.
pub const PROGRESS_EVERY: Duration = Duration::from_secs(2);

/// Where a pattern is looked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum On {
    /// The rendered output stream since `since` (line by line; the echo of typed input is
    /// skipped).
    Stream,
    /// The current screen, as text.
    Screen,
}

/// What a wait waits for.
#[derive(Debug, Clone)]
pub enum Until {
    Pattern(Regex, On),
    /// The command ends (the shell owns the terminal again), or a command session's program
    /// exits.
    Exit,
    /// No output for this long.
    Quiet(Duration),
}

/// Why a wait returned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reason {
    Matched,
    /// The command ended (shell session) or the program exited (command session).
    Exit,
    Quiet,
    Timeout,
    Cancelled,
}

impl Reason {
    pub fn as_str(self) -> &'static str {
        match self {
            Reason::Matched => "pattern",
            Reason::Exit => "exit",
            Reason::Quiet => "quiet",
            Reason::Timeout => "timeout",
            Reason::Cancelled => "cancelled",
        }
    }
}

/// What a wait found.
#[derive(Debug, Clone)]
pub struct Outcome {
    pub reason: Reason,
    /// The text the pattern matched, and the whole line (stream) it was on.
    pub matched: Option<String>,
    pub matched_line: Option<String>,
    /// Output position when the wait returned (or just after the matched line).
    pub position: u64,
    /// How the session's program ended, if it has.
    pub exit: Option<Exit>,
}

/// Looks for `re` in the output the scan has not read yet: a completed line (the position
/// returned is just after it) or the line still being printed (the position is the end).
fn find_in_stream(
    scan: &mut LineScan,
    session: &Session,
    re: &Regex,
) -> Option<(String, String, u64)> {
    let mut found = None;
    let after = scan.next(session, |line| match re.find(line) {
        Some(m) => {
            found = Some((m.as_str().to_string(), line.to_string()));
            true
        }
        None => false,
    });
    if let (Some((m, line)), Some(pos)) = (found, after) {
        return Some((m, line, pos));
    }
    let partial = scan.partial();
    re.find(&partial)
        .map(|m| (m.as_str().to_string(), partial.clone(), scan.pos))
}

impl Session {
    /// Waits for `until`, looking at output from `since`, for at most `timeout`.
    pub async fn wait_until(
        &self,
        until: &Until,
        since: u64,
        timeout: Duration,
        cancel: &CancellationToken,
        progress: &dyn Progress,
    ) -> Outcome {
        let start = Instant::now();
        // Marks from `since` on count: a command that ended between the input and this
        // call (vim quit by the write before) has ended for this wait too.
        let base = self.state().baseline_at(since);
        let deadline = tokio::time::Instant::now() + timeout.min(MAX_WAIT * 6);
        let mut rx = self.subscribe();
        let mut scan = LineScan::new(since);
        let mut next_progress = start + PROGRESS_EVERY;
        loop {
            rx.borrow_and_update();
            let (end, last_output, exit, gone, gone_at) = {
                let s = self.state();
                (
                    s.log.end(),
                    s.last_output,
                    s.exit.clone(),
                    s.gone(),
                    s.gone_at(),
                )
            };
            let done = |reason, matched: Option<(String, String, u64)>| {
                let (m, line, pos) = match matched {
                    Some((m, l, p)) => (Some(m), Some(l), p),
                    None => (None, None, end),
                };
                Outcome {
                    reason,
                    matched: m,
                    matched_line: line,
                    position: pos,
                    exit: exit.clone(),
                }
            };
            // When the next timer-driven check is due, if nothing else happens first.
            let mut wake_at: Option<Instant> = None;
            match until {
                Until::Pattern(re, On::Stream) => {
                    if let Some(found) = find_in_stream(&mut scan, self, re) {
                        return done(Reason::Matched, Some(found));
                    }
                }
                Until::Pattern(re, On::Screen) => {
                    let text = screen::match_text(&self.state().emu);
                    if let Some(m) = re.find(&text) {
                        let line_start = text[..m.start()].rfind('\n').map_or(0, |i| i + 1);
                        let line_end = text[m.end()..]
                            .find('\n')
                            .map_or(text.len(), |i| m.end() + i);
                        let line = text[line_start..line_end].to_string();
                        return done(Reason::Matched, Some((m.as_str().to_string(), line, end)));
                    }
                }
                Until::Exit => {
                    if self.is_command() {
                        if gone {
                            return done(Reason::Exit, None);
                        }
                    } else {
                        // With prompt marks, a command between `C` and `D` is still running
                        // even when the shell itself owns the terminal (`read -p`).
                        let (running, prompted) = {
                            let s = self.state();
                            (
                                s.command_running(),
                                s.phase().prompt_back_since(&base.phase),
                            )
                        };
                        let shell_owns =
                            self.foreground_group().is_none_or(|pg| pg == self.pid) && !running;
                        // A prompt drawn since the wait began says the command is over at once;
                        // without marks, the output must also have settled.
                        let settled_at = last_output.max(start) + SETTLE;
                        if shell_owns && (prompted || Instant::now() >= settled_at) {
                            return done(Reason::Exit, None);
                        }
                        wake_at = Some(if shell_owns {
                            settled_at
                        } else {
                            Instant::now() + FOREGROUND_RECHECK
                        });
                    }
                }
                Until::Quiet(quiet) => {
                    let quiet_at = last_output.max(start) + *quiet;
                    if Instant::now() >= quiet_at {
                        return done(Reason::Quiet, None);
                    }
                    wake_at = Some(quiet_at);
                }
            }
            if gone {
                // The program is gone: nothing more will come.
                return done(Reason::Exit, None);
            }
            if let Some(at) = gone_at {
                wake_at = Some(wake_at.map_or(at, |w| w.min(at)));
            }
            if Instant::now() >= next_progress {
                let last_line = self.state().history.last_line();
                progress.report(start.elapsed(), &last_line);
                next_progress = Instant::now() + PROGRESS_EVERY;
            }
            let mut sleep_until = next_progress;
            if let Some(w) = wake_at {
                sleep_until = sleep_until.min(w);
            }
            let sleep_until = tokio::time::Instant::from_std(sleep_until).min(deadline);
            tokio::select! {
                _ = rx.changed() => {}
                _ = tokio::time::sleep_until(sleep_until) => {}
                _ = cancel.cancelled() => return done(Reason::Cancelled, None),
            }
            if tokio::time::Instant::now() >= deadline {
                let s = self.state();
                return Outcome {
                    reason: Reason::Timeout,
                    matched: None,
                    matched_line: None,
                    position: s.log.end(),
                    exit: s.exit.clone(),
                };
            }
        }
    }

    /// Waits until output has been idle for `idle` (counting from now at the latest), for at
    /// most `max`. Returns true if it stopped because output kept coming until `max`.
    pub async fn wait_idle(
        &self,
        idle: Duration,
        max: Duration,
        cancel: &CancellationToken,
    ) -> bool {
        let start = Instant::now();
        let deadline = tokio::time::Instant::now() + max;
        let mut rx = self.subscribe();
        loop {
            rx.borrow_and_update();
            let (last_output, gone) = {
                let s = self.state();
                (s.last_output, s.exit.is_some() && s.eof)
            };
            let idle_at = last_output.max(start) + idle;
            if Instant::now() >= idle_at || gone {
                return false;
            }
            let wake = tokio::time::Instant::from_std(idle_at).min(deadline);
            tokio::select! {
                _ = rx.changed() => {}
                _ = tokio::time::sleep_until(wake) => {}
                _ = cancel.cancelled() => return false,
            }
            if tokio::time::Instant::now() >= deadline {
                return true;
            }
        }
    }
}
