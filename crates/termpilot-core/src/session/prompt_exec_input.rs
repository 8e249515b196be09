//! When `terminal_exec` asks whether the running command stopped to read the terminal: the
//! quiet it waits for first, and the schedule of looks after that.
//!
//! A look costs a few `/proc` reads (and, when the group's leader is not the reader, a scan of
//! `/proc`), so it comes only once output has been still, and less often the longer it stays
//! still. Which wait counts depends on how long it has been still:
//!
//! - after [`SCREEN_QUIET`] (30 ms): a program on the alternate screen that reads the terminal
//!   (vim, htop: interactive by nature, it has drawn and waits for keys), or any program asleep
//!   in a plain `read` of it (`read -p`, `input()`, a password prompt: it waits for a line and
//!   nothing else);
//! - after [`INPUT_QUIET`] (250 ms): any wait that includes the terminal, a poll or select over
//!   it and other descriptors too. Such a program may be passing the terminal on while it works
//!   (ssh, `docker run -it`), so a short pause in its output is not yet a prompt. The shell's
//!   own read waits this long too: without marks it may be the prompt the command ended at,
//!   which the end rule (`SETTLE`) finds first.

use std::time::{Duration, Instant};

/// Output still this long: any wait on the terminal counts as waiting for input.
pub(super) const INPUT_QUIET: Duration = Duration::from_millis(250);
/// Output still this long: a full-screen program's wait, or a plain read, counts.
pub(super) const SCREEN_QUIET: Duration = Duration::from_millis(30);

/// When to look next: [`SCREEN_QUIET`] after the output stopped, then at gaps that double up to
/// [`INPUT_QUIET`], never skipping the moment the quiet reaches [`INPUT_QUIET`]. New output
/// starts the schedule again.
#[derive(Debug, Clone, Copy)]
pub(super) struct InputLooks {
    last: Instant,
    gap: Duration,
}

impl InputLooks {
    pub(super) fn new(started: Instant) -> InputLooks {
        InputLooks {
            last: started,
            gap: SCREEN_QUIET,
        }
    }

    /// When the next look is due, output having been still since `quiet_since`.
    pub(super) fn due(&mut self, quiet_since: Instant) -> Instant {
        if quiet_since > self.last {
            self.gap = SCREEN_QUIET;
        }
        let long = quiet_since + INPUT_QUIET;
        let mut next = self.last + self.gap;
        if self.last < long {
            next = next.min(long);
        }
        next.max(quiet_since + SCREEN_QUIET)
    }

    /// Whether, output having been still since `quiet_since`, any wait on the terminal counts
    /// (else only a full-screen program's or a plain read).
    pub(super) fn any_wait_counts(now: Instant, quiet_since: Instant) -> bool {
        now >= quiet_since + INPUT_QUIET
    }

    /// A look was taken at `now` and found no wait that counts.
    pub(super) fn looked(&mut self, now: Instant) {
        self.last = now;
        self.gap = (self.gap * 2).min(INPUT_QUIET);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn looks_come_after_the_short_quiet_then_back_off_and_never_miss_the_long_one() {
        let t0 = Instant::now();
        let ms = |n: u64| t0 + Duration::from_millis(n);
        let mut looks = InputLooks::new(t0);
        // Output until 100 ms: the first look 30 ms after it.
        assert_eq!(looks.due(ms(100)), ms(130));
        let mut at = Vec::new();
        for _ in 0..6 {
            let due = looks.due(ms(100));
            at.push(due);
            looks.looked(due);
        }
        // 30 ms after the output, then gaps of 60, 120, then the 250 ms mark, then 250 apart.
        assert_eq!(at, [ms(130), ms(190), ms(310), ms(350), ms(600), ms(850)]);
        assert!(!InputLooks::any_wait_counts(ms(349), ms(100)));
        assert!(InputLooks::any_wait_counts(ms(350), ms(100)));
        // New output starts over.
        assert_eq!(looks.due(ms(900)), ms(930));
        looks.looked(ms(930));
        assert_eq!(looks.due(ms(900)), ms(990));
    }
}
