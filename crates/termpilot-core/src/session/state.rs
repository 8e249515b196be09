//! What the reader feeds, in one place: the owners of a session's parts that change with
//! every output chunk, behind one short-held lock so they always agree with each other.
//!
//! - [`Emulator`]: the screen (alacritty_terminal).
//! - [`Output`]: the raw log, the line history, when output last came, an exec's capture.
//! - [`Input`]: the agent's echo mask, read cursor, last write and its snapshot.
//! - [`CommandState`]: the shell's marks, the phase, the main process's end: the one end
//!   rule (`command_state.rs`).
//! - [`Clients`]: people attached over the socket, who get every chunk in order.
//!
//! The lock is held briefly and never across an await or a blocking wait; nothing else
//! is locked while it is held (the PTY's master and the session's other mutexes are
//! taken apart from it).

use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

use alacritty_terminal::grid::Dimensions;

use super::command_state::CommandState;
use super::emulator::{Emulator, Size};
use super::input::Input;
use super::output::Output;
use super::phase::CommandPhase;
use super::socket::Clients;

/// The parts of a session the reader feeds, read by tool calls under a short lock.
pub(crate) struct State {
    /// The screen.
    pub(super) emu: Emulator,
    pub(super) output: Output,
    pub(super) input: Input,
    /// The shell's marks, its command phase and the main process's end: the one owner of
    /// "has the command ended" (`command_state.rs`).
    pub(super) command: CommandState,
    /// People attached over the session's socket; every output chunk is queued for them.
    pub(super) attached: Clients,
}

/// Answers to the emulator's queries, each with whether a command was running where it
/// was asked and how many command boundaries came before it ([`super::replies`]'s rule).
pub(super) type Replies = Vec<(Vec<u8>, bool, u64)>;

impl State {
    pub(super) fn new(size: Size, scrollback: usize, command: CommandState, now: Instant) -> Self {
        State {
            emu: Emulator::new(size, scrollback),
            output: Output::new(now),
            input: Input::default(),
            command,
            attached: Clients::default(),
        }
    }

    /// The command phase now.
    pub(super) fn phase(&self) -> &CommandPhase {
        self.command.phase()
    }

    /// The screen's size now.
    pub(super) fn size(&self) -> Size {
        let grid = self.emu.term().grid();
        Size {
            cols: grid.columns() as u16,
            rows: grid.screen_lines() as u16,
        }
    }

    /// Where a wait or watch without `since` starts (see [`Input::wait_start`]).
    pub(super) fn wait_start(&self) -> u64 {
        self.input.wait_start(self.output.end())
    }

    /// The agent has read everything so far; returns where the output ends.
    pub(super) fn read_to_end(&mut self) -> u64 {
        let end = self.output.end();
        self.input.read_to(end);
        end
    }

    /// Feeds one chunk the program printed `at` (since the session started) to every owner,
    /// and returns the emulator's answers to queries in it.
    pub(super) fn feed(&mut self, chunk: &[u8], at: Duration) -> Replies {
        let start = self.output.push(chunk, at);
        self.input.observe(chunk, start);
        let before = (self.phase().inside_command(), self.phase().boundaries());
        let cuts = self.command.on_output(chunk, start);
        self.attached.broadcast(chunk);
        self.feed_emulator(chunk, start, before, &cuts)
    }

    /// The output reached its end: the command state learns it, attached people are let go.
    pub(super) fn on_eof(&mut self) {
        self.command.on_eof();
        self.attached.end();
    }

    /// Feeds `chunk` (at `at`) to the emulator, split where the command phase changes, and
    /// returns its answers to queries, each with whether a command was running where it was
    /// asked and how many command boundaries came before it ([`super::replies`]'s rule).
    fn feed_emulator(
        &mut self,
        chunk: &[u8],
        at: u64,
        before: (bool, u64),
        cuts: &[(u64, bool, u64)],
    ) -> Replies {
        let mut replies = Vec::new();
        let mut from = 0;
        let (mut inside, mut boundaries) = before;
        let ends = cuts
            .iter()
            .map(|&(pos, inside, seen)| ((pos - at) as usize, Some((inside, seen))))
            .chain([(chunk.len(), None)]);
        for (to, after) in ends {
            if to > from {
                let answer = self.emu.feed(&chunk[from..to]);
                if !answer.is_empty() {
                    replies.push((answer, inside, boundaries));
                }
                from = to;
            }
            if let Some(after) = after {
                (inside, boundaries) = after;
            }
        }
        replies
    }
}

/// Locks `state`, taking it over from a thread that panicked holding it.
pub(super) fn lock(state: &Mutex<State>) -> MutexGuard<'_, State> {
    state.lock().unwrap_or_else(|e| e.into_inner())
}
