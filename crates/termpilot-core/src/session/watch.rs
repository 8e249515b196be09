//! `terminal_watch`: one call that waits for the first of several trigger patterns, for quiet
//! output, for the program's exit, or for the timeout — instead of a polling loop.

use std::collections::VecDeque;
use std::time::{Duration, Instant};

use regex::Regex;
use tokio_util::sync::CancellationToken;

use super::call::SessionCall;
use super::command_state::Verdict;
use super::scan::LineScan;
use super::waiter::{Look, Waited, Waiter};
use crate::progress::Progress;

/// The longest a watch may last (1 hour).
pub(super) const MAX_WATCH: Duration = Duration::from_secs(3600);

/// One trigger.
#[derive(Debug, Clone)]
pub struct Trigger {
    pub id: String,
    pub regex: Regex,
    /// Minimum time between two matches of this trigger (across calls).
    pub cooldown: Duration,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WatchReason {
    Trigger,
    Quiet,
    Timeout,
    Exit,
    Cancelled,
}

impl WatchReason {
    pub fn as_str(self) -> &'static str {
        match self {
            WatchReason::Trigger => "trigger",
            WatchReason::Quiet => "quiet",
            WatchReason::Timeout => "timeout",
            WatchReason::Exit => "exit",
            WatchReason::Cancelled => "cancelled",
        }
    }
}

#[derive(Debug, Clone)]
pub struct WatchOutcome {
    pub reason: WatchReason,
    pub trigger_id: Option<String>,
    pub matched_line: Option<String>,
    /// Up to `context_lines` lines before the matched line.
    pub context: Vec<String>,
    pub position: u64,
}

impl SessionCall {
    /// Watches the output from `since` (default: [`Session::wait_start`]) line by line; the
    /// read cursor moves to where the watch ended.
    #[allow(clippy::too_many_arguments)]
    pub async fn watch(
        &self,
        triggers: &[Trigger],
        quiet: Option<Duration>,
        since: Option<u64>,
        timeout: Duration,
        context_lines: usize,
        cancel: &CancellationToken,
        progress: &dyn Progress,
    ) -> WatchOutcome {
        let start = Instant::now();
        let mut scan = LineScan::new(since.unwrap_or_else(|| self.wait_start()));
        let mut recent: VecDeque<String> = VecDeque::new();
        let waited = Waiter::new(self)
            .until(start + timeout.min(MAX_WATCH))
            .cancel(cancel)
            .progress(progress)
            .run(|now| {
                let (last_output, program) = {
                    let s = self.state();
                    (s.output.last_output(), s.command.program_end(now))
                };
                let mut hit: Option<(String, String, Vec<String>)> = None;
                let after = scan.next(self, |line| {
                    if let Some(t) = self.first_trigger(triggers, line) {
                        hit = Some((t, line.to_string(), recent.iter().cloned().collect()));
                        return true;
                    }
                    if context_lines > 0 {
                        recent.push_back(line.to_string());
                        if recent.len() > context_lines {
                            recent.pop_front();
                        }
                    }
                    false
                });
                // A prompt that ends without a newline (`Password: `) is a line too.
                if hit.is_none() {
                    let partial = scan.partial();
                    if !partial.is_empty()
                        && let Some(t) = self.first_trigger(triggers, &partial)
                    {
                        hit = Some((t, partial, recent.iter().cloned().collect()));
                    }
                }
                let pos = after.unwrap_or(scan.pos);
                if let Some((id, line, context)) = hit {
                    return Look::Done(WatchOutcome {
                        reason: WatchReason::Trigger,
                        trigger_id: Some(id),
                        matched_line: Some(line),
                        context,
                        position: pos,
                    });
                }
                if let Verdict::Yes(_) = program {
                    return Look::Done(ended(WatchReason::Exit, pos));
                }
                let mut wake = program.look_at();
                if let Some(q) = quiet {
                    let quiet_at = last_output.max(start) + q;
                    if now >= quiet_at {
                        return Look::Done(ended(WatchReason::Quiet, pos));
                    }
                    wake = Some(wake.map_or(quiet_at, |w| w.min(quiet_at)));
                }
                wake.map_or(Look::Output, Look::Until)
            })
            .await;
        let outcome = match waited {
            Waited::Done(outcome) => outcome,
            Waited::Deadline => ended(WatchReason::Timeout, scan.pos),
            Waited::Cancelled => ended(WatchReason::Cancelled, scan.pos),
        };
        self.state().input.read_to(outcome.position);
        outcome
    }

    /// The first trigger matching `line` that is not cooling down; records the match.
    fn first_trigger(&self, triggers: &[Trigger], line: &str) -> Option<String> {
        let mut s = self.state();
        for t in triggers {
            if !t.regex.is_match(line) {
                continue;
            }
            if s.input.trigger_fires(&t.id, t.cooldown, Instant::now()) {
                return Some(t.id.clone());
            }
        }
        None
    }
}

/// A watch that ended without a trigger, at output position `position`.
fn ended(reason: WatchReason, position: u64) -> WatchOutcome {
    WatchOutcome {
        reason,
        trigger_id: None,
        matched_line: None,
        context: Vec::new(),
        position,
    }
}
