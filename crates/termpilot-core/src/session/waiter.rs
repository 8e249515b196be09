//! The one wait loop every session wait runs: look, then sleep until the session's next output
//! event, the time the look asked to be woken at, the deadline, or cancellation.
//!
//! Waits are events, not polling: the session's event counter is bumped by every output chunk,
//! exit, resize and end of output, and a look may ask for a timer of its own (a quiet window,
//! a settle time, the foreground-group re-check the kernel does not announce), slept to a
//! fraction of a millisecond when it is near ([`super::fine_sleep`]). The loop also
//! reports progress every [`PROGRESS_EVERY`] when asked to. Every wait here is bounded by its
//! deadline or by the caller.

use std::time::Instant;

use tokio_util::sync::CancellationToken;

use super::terminal::Session;
use super::wait::PROGRESS_EVERY;
use crate::progress::Progress;

/// What one look found.
pub(super) enum Look<T> {
    /// The wait is over with this.
    Done(T),
    /// Look again at the next output event or at this time, whichever comes first.
    Until(Instant),
    /// Look again at the next output event.
    Output,
}

/// How a wait ended.
pub(super) enum Waited<T> {
    Done(T),
    /// The deadline passed (after one last look).
    Deadline,
    Cancelled,
}

/// A wait on one session: its bounds and who hears of its progress.
pub(super) struct Waiter<'a> {
    session: &'a Session,
    deadline: Option<Instant>,
    cancel: Option<&'a CancellationToken>,
    progress: Option<&'a dyn Progress>,
}

impl<'a> Waiter<'a> {
    pub(super) fn new(session: &'a Session) -> Self {
        Waiter {
            session,
            deadline: None,
            cancel: None,
            progress: None,
        }
    }

    /// Gives up at `deadline`.
    pub(super) fn until(mut self, deadline: Instant) -> Self {
        self.deadline = Some(deadline);
        self
    }

    /// Ends as soon as `cancel` is cancelled.
    pub(super) fn cancel(mut self, cancel: &'a CancellationToken) -> Self {
        self.cancel = Some(cancel);
        self
    }

    /// Reports the time waited and the output's last line every [`PROGRESS_EVERY`].
    pub(super) fn progress(mut self, progress: &'a dyn Progress) -> Self {
        self.progress = Some(progress);
        self
    }

    /// Looks (at once, then after every event or asked-for time) until a look is done.
    pub(super) async fn run<T>(self, mut look: impl FnMut(Instant) -> Look<T>) -> Waited<T> {
        let started = Instant::now();
        let mut next_progress = started + PROGRESS_EVERY;
        let mut rx = self.session.subscribe();
        loop {
            rx.borrow_and_update();
            let now = Instant::now();
            let mut wake = match look(now) {
                Look::Done(value) => return Waited::Done(value),
                Look::Until(at) => Some(at),
                Look::Output => None,
            };
            if let Some(deadline) = self.deadline {
                if now >= deadline {
                    return Waited::Deadline;
                }
                wake = Some(wake.map_or(deadline, |w| w.min(deadline)));
            }
            if let Some(progress) = self.progress {
                if now >= next_progress {
                    let last = self.session.last_line();
                    progress.report(started.elapsed(), &last);
                    next_progress = now + PROGRESS_EVERY;
                }
                wake = Some(wake.map_or(next_progress, |w| w.min(next_progress)));
            }
            let sleep = async {
                match wake {
                    Some(at) => super::fine_sleep::sleep_until(at).await,
                    None => std::future::pending().await,
                }
            };
            let cancelled = async {
                match self.cancel {
                    Some(cancel) => cancel.cancelled().await,
                    None => std::future::pending().await,
                }
            };
            tokio::select! {
                _ = rx.changed() => {}
                _ = sleep => {}
                _ = cancelled => return Waited::Cancelled,
            }
        }
    }
}
