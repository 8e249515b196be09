//! The wait between attempts of a retried command (`terminal_retry`'s schedule).
//!
//! Pure: the attempt that just failed (1 for the first run) and the base delay give the wait
//! before the next one. Fixed waits the base every time, linear `base × attempt`, exponential
//! `base × 2^(attempt−1)` with the doubling stopped after 20 steps; every wait is capped at
//! [`MAX_DELAY`] (10 minutes), so no schedule overflows or sleeps for hours.

use std::time::Duration;

/// The longest wait between two attempts.
pub(crate) const MAX_DELAY: Duration = Duration::from_millis(600_000);
/// The most doublings an exponential schedule makes (2^20 × base, then the cap).
const MAX_DOUBLINGS: u32 = 20;

/// How the wait grows from one attempt to the next.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Backoff {
    /// The base delay, doubled after each failed attempt.
    #[default]
    Exponential,
    /// The base delay times the attempt number.
    Linear,
    /// The base delay every time.
    Fixed,
}

/// The wait after failed attempt `attempt` (1-based; 0 is taken as 1), capped at [`MAX_DELAY`].
pub fn delay(backoff: Backoff, base: Duration, attempt: u32) -> Duration {
    let attempt = attempt.max(1);
    let factor: u32 = match backoff {
        Backoff::Fixed => 1,
        Backoff::Linear => attempt,
        Backoff::Exponential => 1u32 << (attempt - 1).min(MAX_DOUBLINGS),
    };
    base.saturating_mul(factor).min(MAX_DELAY)
}

#[cfg(test)]
mod tests {
    use super::*;

    const SECOND: Duration = Duration::from_secs(1);

    fn schedule(b: Backoff, base: Duration) -> Vec<u64> {
        (1..=5)
            .map(|a| delay(b, base, a).as_millis() as u64)
            .collect()
    }

    #[test]
    fn fixed_linear_and_exponential_grow_as_named() {
        assert_eq!(schedule(Backoff::Fixed, SECOND), [1000; 5]);
        assert_eq!(
            schedule(Backoff::Linear, SECOND),
            [1000, 2000, 3000, 4000, 5000]
        );
        assert_eq!(
            schedule(Backoff::Exponential, SECOND),
            [1000, 2000, 4000, 8000, 16000]
        );
    }

    #[test]
    fn every_wait_is_capped_and_never_overflows() {
        assert_eq!(delay(Backoff::Exponential, SECOND, 11), MAX_DELAY);
        assert_eq!(delay(Backoff::Exponential, SECOND, u32::MAX), MAX_DELAY);
        assert_eq!(delay(Backoff::Linear, SECOND, u32::MAX), MAX_DELAY);
        assert_eq!(delay(Backoff::Fixed, Duration::MAX, 1), MAX_DELAY);
        // The doubling stops at 2^20: half a millisecond base stays under the cap there.
        let half_ms = Duration::from_micros(500);
        assert_eq!(
            delay(Backoff::Exponential, half_ms, 21),
            Duration::from_millis(524_288)
        );
        assert_eq!(
            delay(Backoff::Exponential, half_ms, 40),
            Duration::from_millis(524_288)
        );
    }

    #[test]
    fn attempt_zero_is_the_first_and_a_zero_base_waits_nothing() {
        assert_eq!(delay(Backoff::Exponential, SECOND, 0), SECOND);
        assert_eq!(delay(Backoff::Linear, Duration::ZERO, 7), Duration::ZERO);
    }
}
