//! What the program printed: the positioned raw log, the line history, when output last
//! came, and the running `terminal_exec`'s whole capture — one owner, fed by the reader
//! under the session's state lock ([`super::state::State::feed`]).

use std::time::{Duration, Instant};

use super::log::{DEFAULT_CAPACITY, OutputLog};
use super::prompt_exec_capture::ExecCapture;
use super::text::LineHistory;

/// The session's output, by position: everything a read, a wait or an exec looks back at.
pub(crate) struct Output {
    log: OutputLog,
    history: LineHistory,
    last_output: Instant,
    /// The whole output of the running `terminal_exec`, if one runs.
    capture: Option<ExecCapture>,
}

impl Output {
    pub(super) fn new(now: Instant) -> Self {
        Output {
            log: OutputLog::new(DEFAULT_CAPACITY),
            history: LineHistory::default(),
            last_output: now,
            capture: None,
        }
    }

    /// Takes one chunk the program printed `at` (since the session started); returns the
    /// chunk's position.
    pub(super) fn push(&mut self, chunk: &[u8], at: Duration) -> u64 {
        let start = self.log.end();
        self.log.push(chunk, at);
        self.history.feed(chunk);
        if let Some(capture) = &mut self.capture {
            capture.push(chunk);
        }
        self.last_output = Instant::now();
        start
    }

    /// The output position now: how many bytes the program has printed.
    pub(super) fn end(&self) -> u64 {
        self.log.end()
    }

    /// The bytes still kept from `from` on, with where they really start.
    pub(super) fn since(&self, from: u64) -> (u64, Vec<u8>) {
        self.log.since(from)
    }

    /// The bytes kept between two positions.
    pub(super) fn range(&self, from: u64, to: u64) -> Vec<u8> {
        self.log.range(from, to)
    }

    /// The kept output in the chunks it came in, each with when it came.
    pub(super) fn timed_chunks(&self) -> Vec<(Duration, Vec<u8>)> {
        self.log.timed_chunks()
    }

    /// When output last came (the session's start before any).
    pub(super) fn last_output(&self) -> Instant {
        self.last_output
    }

    /// The rendered lines that scrolled by.
    pub(super) fn history(&self) -> &LineHistory {
        &self.history
    }

    /// Forgets the line history (`terminal_clear`).
    pub(super) fn clear_history(&mut self) {
        self.history.clear();
    }

    /// Starts capturing everything from the position now on (a `terminal_exec` begins);
    /// returns that position.
    /// Its file, if the output outgrows memory, is made in `spills`.
    pub(super) fn start_capture(&mut self, spills: std::sync::Arc<crate::host::Spills>) -> u64 {
        let from = self.log.end();
        self.capture = Some(ExecCapture::new(from, spills));
        from
    }

    /// Ends the capture and hands it over.
    pub(super) fn take_capture(&mut self) -> Option<ExecCapture> {
        self.capture.take()
    }

    /// The running capture.
    pub(super) fn capture_mut(&mut self) -> Option<&mut ExecCapture> {
        self.capture.as_mut()
    }

    /// Where the running capture reaches (its first position plus its length).
    pub(super) fn captured_to(&self) -> Option<u64> {
        self.capture.as_ref().map(|c| c.start + c.len())
    }
}
