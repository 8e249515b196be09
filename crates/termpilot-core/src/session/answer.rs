//! Waiting for a program's answer to typed input: `terminal_write`, keys and batches return
//! as soon as the program has taken the input and waits for more, not after a fixed quiet.
//!
//! The rule (Linux): the program answered when all of these hold at once —
//!
//! 1. the reader has scanned every byte written before the program was seen waiting
//!    ([`Session::scanned_all`], asked after the look at the program: a program asleep in
//!    its read has written all it wrote before it; the kernel's queue between the two ends
//!    of the terminal is flushed by the question). No quiet window is needed on top: the
//!    look comes at once after each output event, and at growing gaps while none comes;
//! 2. a process of the terminal's foreground group sleeps reading the terminal
//!    ([`platform::waiting_for_input`], the rule `waitingForInput` uses). A wait with a timer
//!    counts too (node's REPL waits 15 ms to save its history, then for good), except right
//!    after input that ended with ESC: then a wait of [`ESCAPE_WAIT`] or less is the program
//!    telling a lone Escape key from the start of a sequence (vim's `ttimeout`, fish's escape
//!    delay), and the screen changes when it ends;
//! 3. it did so *again* after the input: the group leader was switched out since the write
//!    (its context-switch count moved), or the foreground group changed, or the shell drew a
//!    prompt (`B` mark) since. A program still asleep in the read it was in before the write
//!    has not seen the input yet — on a loaded machine its wake-up can lag the kernel's echo;
//! 4. nothing written to the terminal is left unread ([`platform::unread_input`]): a
//!    program that woke for its own timer and went back to sleep just before the input
//!    reached the terminal has moved its count without taking the input;
//! 5. and the program still holds the terminal as it did: one (not the shell) that read keys
//!    one by one before the input and has since put the terminal back to echoed lines let go
//!    of it — it is leaving (node's REPL after `.exit` waits 15 ms to save its history, then
//!    ends) or handing over, and its wait is not for the user. The shell's own `read` is
//!    not held to this (readline reads keys, `read` lines).
//!
//! Where that cannot be known (a remote session, whose programs are not in this `/proc`; no
//! `/proc` at all) the answer is the output once it has been quiet for [`FALLBACK_QUIET`],
//! as before. A program that keeps printing, or that sleeps on something other than the
//! terminal (a long computation, a timer), is answered by the fallback too. Every wait is
//! bounded by `max`.

use std::time::{Duration, Instant};

use tokio_util::sync::CancellationToken;

use super::call::SessionCall;
use super::command_state::Verdict;
use super::phase::CommandPhase;
use super::waiter::{Look, Waited, Waiter};
use crate::platform::{self, InputMode};

/// Where readiness cannot be known: the answer is the output once it was quiet this long.
pub(super) const FALLBACK_QUIET: Duration = Duration::from_millis(200);
/// After input that ended with ESC, a read that times out this soon is the program waiting
/// to tell a lone Escape from a key sequence (vim 100 ms, fish 30 ms), not waiting for the user.
const ESCAPE_WAIT: Duration = Duration::from_millis(250);
/// The first gap between two readiness checks while nothing is printed; it doubles. Short:
/// a program seen still running just after its answer (node writes its prompt, then goes
/// back to its event loop) is usually asleep in its read a few hundred microseconds later,
/// and the waiter sleeps this precisely ([`super::fine_sleep`]).
const MIN_CHECK_GAP: Duration = Duration::from_micros(250);
/// The longest gap between two readiness checks while nothing is printed.
const MAX_CHECK_GAP: Duration = Duration::from_millis(25);

/// What the terminal looked like just before input was written.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct InputSnapshot {
    /// The foreground process group then.
    pub group: Option<i32>,
    /// Its leader's context switches then.
    pub switches: Option<u64>,
    /// The command phase then.
    pub phase: CommandPhase,
    /// The input ended with ESC (a lone Escape key, or Alt pressed alone).
    pub ends_with_escape: bool,
    /// How the terminal took input then.
    pub mode: Option<InputMode>,
}

/// Why [`SessionCall::wait_answer`] returned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Answered {
    /// The program took the input and waits for more.
    Ready,
    /// The output was quiet for [`FALLBACK_QUIET`].
    Quiet,
    /// `max` passed with output still coming.
    TimedOut,
    /// The program ended, or the call was cancelled.
    Ended,
}

impl SessionCall {
    /// The exit status of what ended since the last write: a command session's program, or
    /// a command that was running then or that the write started (the command state's
    /// answer). `None` otherwise.
    pub(crate) fn ended_since_input(&self) -> Option<i32> {
        let s = self.state();
        s.command
            .exit_since_input(&s.input.snapshot().phase, self.is_command())
    }

    /// True when the foreground program took the input written after `snap` and now sleeps
    /// reading the terminal again (rules 2 to 5 of the module doc).
    fn answered(&self, snap: &InputSnapshot, tty: &std::path::Path) -> bool {
        let Some(group) = self.foreground_group() else {
            return false;
        };
        // A leader still running is still at work on the input. Asked no further: looking
        // for another member of its group that waits scans every process of the machine,
        // milliseconds on a busy one, and the look comes again once the leader sleeps.
        if platform::process_state(group) == Some('R') {
            return false;
        }
        if group != self.pid
            && snap.group == Some(group)
            && snap.mode == Some(InputMode::Keys)
            && self.input_mode() == Some(InputMode::Lines { echo: true })
        {
            return false;
        }
        let shortest = if snap.ends_with_escape {
            ESCAPE_WAIT
        } else {
            Duration::ZERO
        };
        if !platform::waiting_longer_than(group, tty, shortest) {
            return false;
        }
        let prompted = self.state().command.prompt_ready_since(&snap.phase);
        let woke = snap.group != Some(group)
            || snap.switches.is_none()
            || self.context_switches(group) != snap.switches;
        (prompted || woke) && platform::unread_input(tty).is_none_or(|n| n == 0)
    }

    /// Waits until the program answered the input written last (see the module doc), the
    /// output was quiet for [`FALLBACK_QUIET`], or `max` passed.
    pub(crate) async fn wait_answer(&self, max: Duration, cancel: &CancellationToken) -> Answered {
        let start = Instant::now();
        let deadline = start + max;
        let snap = *self.state().input.snapshot();
        let tty = if self.shape.remote.is_none() && snap.group.is_some() {
            self.stdin_tty()
        } else {
            None
        };
        let mut gap = MIN_CHECK_GAP;
        let mut checked_at: Option<Instant> = None;
        let waited = Waiter::new(self)
            .until(deadline)
            .cancel(cancel)
            .run(|now| {
                let (last_output, program) = {
                    let s = self.state();
                    (
                        s.output.last_output().max(start),
                        s.command.program_end(now),
                    )
                };
                match program {
                    Verdict::Yes(_) => return Look::Done(Answered::Ended),
                    // Its exit (woken by its record), not a quiet screen, answers the input.
                    _ if self.state().command.program_leaving(|| self.main_alive()) => {
                        return program.look_at().map_or(Look::Output, Look::Until);
                    }
                    _ => {}
                }
                if now >= last_output + FALLBACK_QUIET {
                    return Look::Done(Answered::Quiet);
                }
                let mut wake = last_output + FALLBACK_QUIET;
                if let Some(tty) = &tty {
                    // A look at once after new output (the answer's last bytes are the
                    // usual wake-up), else at gaps that double while nothing comes. A look
                    // costs a few small /proc reads, at most one per output event.
                    let fresh = checked_at.is_none_or(|at| at < last_output);
                    if fresh {
                        gap = MIN_CHECK_GAP;
                    }
                    let due = checked_at.filter(|_| !fresh).map_or(now, |at| at + gap);
                    if now >= due {
                        // Scanned after the program was seen waiting: what it wrote
                        // before it went back to its read is in the answer. Asked before
                        // too, as a cheap filter: while a program floods the terminal
                        // something is always pending, and the look at /proc is spared.
                        if self.scanned_all() && self.answered(&snap, tty) && self.scanned_all() {
                            return Look::Done(Answered::Ready);
                        }
                        if !fresh {
                            gap = (gap * 2).min(MAX_CHECK_GAP);
                        }
                        checked_at = Some(now);
                        wake = wake.min(now + gap);
                    } else {
                        wake = wake.min(due);
                    }
                }
                Look::Until(wake)
            })
            .await;
        match waited {
            Waited::Done(answered) => answered,
            Waited::Deadline => Answered::TimedOut,
            Waited::Cancelled => Answered::Ended,
        }
    }
}
