//! Sleeping to a fraction of a millisecond, for the short re-looks of a wait.
//!
//! tokio's timer ticks in whole milliseconds and rounds a deadline up to the next tick, so a
//! look asked for 250 µs from now comes 1 to 2 ms later. That is the whole difference between
//! a REPL that has already gone back to its read when its answer arrives (python3) and one that
//! still runs a few hundred microseconds after writing it (node redraws its prompt, then
//! returns to libuv's loop). A wake-up due within [`FINE_SPAN`] is therefore slept on a
//! `timerfd` (Linux) watched by tokio's reactor; a longer one, or where no timerfd can be made,
//! on tokio's timer.

use std::time::{Duration, Instant};

/// Wake-ups due sooner than this are slept precisely.
const FINE_SPAN: Duration = Duration::from_millis(2);

/// Sleeps until `at`.
pub(super) async fn sleep_until(at: Instant) {
    #[cfg(target_os = "linux")]
    {
        let left = at.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return;
        }
        if left < FINE_SPAN
            && let Some(timer) = linux::Timer::after(left)
        {
            timer.wait().await;
            return;
        }
    }
    tokio::time::sleep_until(tokio::time::Instant::from_std(at)).await;
}

#[cfg(target_os = "linux")]
mod linux {
    use std::os::fd::{FromRawFd, OwnedFd};
    use std::time::Duration;

    use tokio::io::Interest;
    use tokio::io::unix::AsyncFd;

    /// A one-shot monotonic timer, readable once it fired.
    pub(super) struct Timer(AsyncFd<OwnedFd>);

    impl Timer {
        /// A timer that fires `after` from now (`after` > 0); `None` when none can be made
        /// (no descriptors left, no tokio reactor).
        pub(super) fn after(after: Duration) -> Option<Timer> {
            // SAFETY: timerfd_create takes no pointers; a descriptor it returns is ours.
            let fd = unsafe {
                libc::timerfd_create(
                    libc::CLOCK_MONOTONIC,
                    libc::TFD_NONBLOCK | libc::TFD_CLOEXEC,
                )
            };
            if fd < 0 {
                return None;
            }
            // SAFETY: `fd` was just created and is owned here alone.
            let fd = unsafe { OwnedFd::from_raw_fd(fd) };
            let spec = libc::itimerspec {
                it_interval: libc::timespec {
                    tv_sec: 0,
                    tv_nsec: 0,
                },
                it_value: libc::timespec {
                    tv_sec: after.as_secs() as libc::time_t,
                    // Never 0 with 0 seconds: an all-zero value disarms the timer.
                    tv_nsec: (after.subsec_nanos().max(1)) as libc::c_long,
                },
            };
            use std::os::fd::AsRawFd;
            // SAFETY: `spec` outlives the call; the old value is not asked for.
            let r =
                unsafe { libc::timerfd_settime(fd.as_raw_fd(), 0, &spec, std::ptr::null_mut()) };
            if r != 0 {
                return None;
            }
            // SAFETY: the OwnedFd is moved in and stays open, the same descriptor, for as
            // long as the AsyncFd holds it.
            unsafe { AsyncFd::register_with_interest(fd, Interest::READABLE) }
                .ok()
                .map(Timer)
        }

        /// Waits until the timer fired (the descriptor is closed when the timer is dropped).
        pub(super) async fn wait(&self) {
            // Readable means expired: the expiry count need not be read for a one-shot timer
            // that is dropped right after.
            let _ = self.0.readable().await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_short_sleep_ends_on_time_and_not_before() {
        for micros in [50u64, 250, 900, 1500, 3000] {
            let start = Instant::now();
            let at = start + Duration::from_micros(micros);
            sleep_until(at).await;
            assert!(Instant::now() >= at, "woke before {micros} µs");
        }
        // A deadline already past returns at once.
        sleep_until(Instant::now() - Duration::from_millis(1)).await;
    }
}
