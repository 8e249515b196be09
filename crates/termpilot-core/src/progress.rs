//! Progress reports from long waits, without knowing who listens.
//!
//! A long wait in the core (a command, a pattern, a job) calls [`Progress::report`] every few
//! seconds; the MCP face implements it with `notifications/progress` when the client sent a
//! progress token, and with nothing otherwise.

use std::time::Duration;

/// Something that wants to hear how a long wait is going.
pub trait Progress: Send + Sync {
    /// `elapsed` since the wait began; `message` is a short status (e.g. the latest line).
    fn report(&self, elapsed: Duration, message: &str);
}

/// A listener that hears nothing.
pub struct NoProgress;

impl Progress for NoProgress {
    fn report(&self, _elapsed: Duration, _message: &str) {}
}
