//! The agent's side of the conversation: what it typed (the echo to mask, where the output
//! stood, the facts an answer is compared against), where its reads and waits start, and
//! when each of its watch triggers last fired — one owner inside the session's state.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use super::answer::InputSnapshot;
use super::echo::EchoMask;

/// The agent's input and reading position.
#[derive(Default)]
pub(crate) struct Input {
    echo: EchoMask,
    /// Where the next `terminal_read` without `since` starts.
    read_cursor: u64,
    /// The output position when input was last written: a wait without `since` starts at
    /// the later of this and `read_cursor`, so output that arrived between a write and the
    /// wait is seen, and unread output from before the write is not taken for its answer.
    input_at: u64,
    /// Taken at the last write, before the bytes went out (see `answer.rs`).
    snapshot: InputSnapshot,
    /// When each `terminal_watch` trigger last matched, for its cooldown.
    cooldowns: HashMap<String, Instant>,
}

impl Input {
    /// Notes output at `start` for the echo mask.
    pub(super) fn observe(&mut self, chunk: &[u8], start: u64) {
        self.echo.observe(chunk, start);
    }

    /// Input is written at output position `at`; `echo` is the text whose echo waits must
    /// not match.
    pub(super) fn wrote(&mut self, at: u64, echo: Option<&str>) {
        if let Some(text) = echo {
            self.echo.expect(text);
        }
        self.input_at = at;
    }

    /// Keys that are no text were typed: no echo is awaited any more.
    pub(super) fn clear_expected_echo(&mut self) {
        self.echo.clear_expected();
    }

    /// The echoes of typed input between two positions, to mask.
    pub(super) fn echo_between(&self, from: u64, to: u64) -> Vec<(u64, u64)> {
        self.echo.ranges_between(from, to)
    }

    /// Where the next read without `since` starts.
    pub(super) fn read_cursor(&self) -> u64 {
        self.read_cursor
    }

    /// The agent has read up to `position`.
    pub(super) fn read_to(&mut self, position: u64) {
        self.read_cursor = position;
    }

    /// Where a wait or watch without `since` starts, with the output at `end`: the later of
    /// the read cursor and the last write.
    pub(super) fn wait_start(&self, end: u64) -> u64 {
        self.read_cursor.max(self.input_at).min(end)
    }

    /// The facts taken at the last write.
    pub(super) fn snapshot(&self) -> &InputSnapshot {
        &self.snapshot
    }

    /// Records the facts taken before the last write.
    pub(super) fn set_snapshot(&mut self, snapshot: InputSnapshot) {
        self.snapshot = snapshot;
    }

    /// True (and recorded) when trigger `id` may fire at `now`: it never fired, or its
    /// `cooldown` passed since.
    pub(super) fn trigger_fires(&mut self, id: &str, cooldown: Duration, now: Instant) -> bool {
        if let Some(last) = self.cooldowns.get(id)
            && now.duration_since(*last) < cooldown
        {
            return false;
        }
        self.cooldowns.insert(id.to_string(), now);
        true
    }
}
