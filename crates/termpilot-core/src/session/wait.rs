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

use super::call::SessionCall;
use super::command_state::{End, Follow, Verdict};
use super::scan::LineScan;
use super::screen;
use super::terminal::{Exit, Session};
use super::waiter::{Look, Waited, Waiter};
use crate::progress::Progress;

/// The longest any session wait may last (10 minutes); watches may last an hour.
pub(super) const MAX_WAIT: Duration = Duration::from_secs(600);
/// How often an exit wait re-checks the foreground process group.
pub(super) const FOREGROUND_RECHECK: Duration = Duration::from_millis(250);
/// The shell must own the terminal and the output be still this long for "command ended".
pub(super) const SETTLE: Duration = Duration::from_millis(50);
/// How often a long wait reports progress.
pub(super) const PROGRESS_EVERY: Duration = Duration::from_secs(2);

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
pub struct WaitOutcome {
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

impl SessionCall {
    /// Waits for `until`, looking at output from `since`, for at most `timeout`.
    pub(crate) async fn wait_until(
        &self,
        until: &Until,
        since: u64,
        timeout: Duration,
        cancel: &CancellationToken,
        progress: &dyn Progress,
    ) -> WaitOutcome {
        let start = Instant::now();
        // Marks from `since` on count: a command that ended between the input and this
        // call (vim quit by the write before) has ended for this wait too.
        let base = self.state().command.baseline_at(since);
        let mut follow = Follow::current(base, self.is_command(), start);
        let mut scan = LineScan::new(since);
        let outcome = |reason, matched: Option<(String, String, u64)>, exit: Option<Exit>| {
            let s = self.state();
            let (m, line, pos) = match matched {
                Some((m, l, p)) => (Some(m), Some(l), p),
                None => (None, None, s.output.end()),
            };
            WaitOutcome {
                reason,
                matched: m,
                matched_line: line,
                position: pos,
                exit: exit.or_else(|| s.command.exit().cloned()),
            }
        };
        let waited = Waiter::new(self)
            .until(start + timeout.min(MAX_WAIT * 6))
            .cancel(cancel)
            .progress(progress)
            .run(|now| {
                // Output and command state only: the screen is not caught up on each wake.
                let (end, last_output) = {
                    let s = self.output_state();
                    (s.output.end(), s.output.last_output())
                };
                let found = match until {
                    Until::Pattern(re, On::Stream) => find_in_stream(&mut scan, self, re),
                    Until::Pattern(re, On::Screen) => {
                        let text = screen::match_text(&self.state().emu);
                        re.find(&text).map(|m| {
                            let line_start = text[..m.start()].rfind('\n').map_or(0, |i| i + 1);
                            let line_end = text[m.end()..]
                                .find('\n')
                                .map_or(text.len(), |i| m.end() + i);
                            let line = text[line_start..line_end].to_string();
                            (m.as_str().to_string(), line, end)
                        })
                    }
                    Until::Exit | Until::Quiet(_) => None,
                };
                if let Some(found) = found {
                    return Look::Done((Reason::Matched, Some(found), None));
                }
                // The end of the command (or of the program: nothing more will come).
                let ended = match until {
                    Until::Exit => {
                        let seen = self.seen(now, last_output);
                        self.output_state().command.command_end(&mut follow, &seen)
                    }
                    _ => self
                        .output_state()
                        .command
                        .program_end(now)
                        .map(|exit| End {
                            to: None,
                            status: exit.code,
                            exit: Some(exit),
                        }),
                };
                let mut wake_at = match ended {
                    Verdict::Yes(end) => return Look::Done((Reason::Exit, None, end.exit)),
                    other => other.look_at(),
                };
                if let Until::Quiet(quiet) = until {
                    let quiet_at = last_output.max(start) + *quiet;
                    if now >= quiet_at {
                        return Look::Done((Reason::Quiet, None, None));
                    }
                    wake_at = Some(wake_at.map_or(quiet_at, |w| w.min(quiet_at)));
                }
                wake_at.map_or(Look::Output, Look::Until)
            })
            .await;
        match waited {
            Waited::Done((reason, matched, exit)) => outcome(reason, matched, exit),
            Waited::Deadline => outcome(Reason::Timeout, None, None),
            Waited::Cancelled => outcome(Reason::Cancelled, None, None),
        }
    }

    /// Waits until output has been idle for `idle` (counting from now at the latest), for at
    /// most `max`. Returns true if it stopped because output kept coming until `max`.
    pub(crate) async fn wait_idle(
        &self,
        idle: Duration,
        max: Duration,
        cancel: &CancellationToken,
    ) -> bool {
        let start = Instant::now();
        let waited = Waiter::new(self)
            .until(start + max)
            .cancel(cancel)
            .run(|now| {
                let (last_output, ended) = {
                    let s = self.state();
                    (s.output.last_output(), s.command.program_end(now))
                };
                let idle_at = last_output.max(start) + idle;
                if now >= idle_at || matches!(ended, Verdict::Yes(_)) {
                    return Look::Done(());
                }
                Look::Until(ended.look_at().map_or(idle_at, |at| at.min(idle_at)))
            })
            .await;
        matches!(waited, Waited::Deadline)
    }
}
