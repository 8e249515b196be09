//! The rule for the emulator's answers to terminal queries (cursor position, device
//! attributes, colours, sizes, modes): a finished program's answer never reaches the shell.
//!
//! A program asks by printing a query (`ESC[6n`, `ESC[c`, `ESC]11;?`, …) and the emulator
//! answers by typing the reply into the terminal. If the program ends before it reads the
//! answer (`printf '\e[6n'` does; so does `head -c 10M /dev/urandom`, whose bytes hold
//! queries by chance), the answer lands at the shell's prompt and the next command runs
//! garbage. The rule:
//!
//! | the query was printed…                                   | its answer is…                     |
//! |----------------------------------------------------------|------------------------------------|
//! | by the shell itself (outside a command, shell in front)  | written at once (fish, zsh plugins) |
//! | by a command (between its `C` and `D` — for dash, which prints no `C`, between `B` and `D` —, or while another process group owns the terminal) | written once a process of the foreground group waits to read the terminal and every byte the shell printed before that wait has been scanned (so a `D` cannot be missed) |
//! | …but the command ended first (a `D`/prompt mark arrived; without hooks, the shell took the terminal back) | dropped |
//! | …and nobody read for [`REPLY_WAIT`] | dropped (and the command's further answers are written only if it reads at that moment, without a new wait) |
//!
//! A shell builtin that asks and reads (`printf '\e[6n'; read -rs -d R`) is served: the shell
//! itself waits to read before its `D`.
//!
//! Answers keep their order: they travel through the session's one writer, which waits here
//! (bounded by [`REPLY_WAIT`]) before writing a held answer.

use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use crate::platform;

/// Longest a command's answer is held for the program to read the terminal.
pub(super) const REPLY_WAIT: Duration = Duration::from_millis(300);

/// Who asked: decides whether an answer is written at once or held.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Asker {
    Shell,
    Command,
}

/// What the writer needs to decide on a held answer.
pub(super) struct ReplyContext {
    /// The terminal's master side, for its foreground group.
    pub master_fd: Option<i32>,
    /// The session's main process (the shell).
    pub shell_pid: i32,
    /// How many command ends (`D` or prompt marks) the session has seen so far.
    pub ends_seen: Arc<dyn Fn() -> u64 + Send + Sync>,
    /// The shell prints marks: a command's end is known from them.
    pub marked: bool,
    /// True while the reader is blocked reading the terminal (it has scanned all before).
    pub reader_idle: Arc<AtomicBool>,
    /// The terminal's device path, looked up once.
    tty: OnceLock<Option<PathBuf>>,
    /// The command (by its count of ends) whose answer went unread for the whole wait.
    unread: Option<u64>,
}

impl ReplyContext {
    pub(super) fn new(
        master_fd: Option<i32>,
        shell_pid: i32,
        marked: bool,
        ends_seen: Arc<dyn Fn() -> u64 + Send + Sync>,
        reader_idle: Arc<AtomicBool>,
    ) -> ReplyContext {
        ReplyContext {
            master_fd,
            shell_pid,
            ends_seen,
            marked,
            reader_idle,
            tty: OnceLock::new(),
            unread: None,
        }
    }

    /// Every byte written so far has been scanned: the reader waits and nothing is pending.
    fn caught_up(&self) -> bool {
        super::pty::scanned_all(self.master_fd, &self.reader_idle)
    }

    fn tty(&self) -> Option<&PathBuf> {
        self.tty
            .get_or_init(|| platform::stdin_tty(self.shell_pid))
            .as_ref()
    }

    /// Waits (at most [`REPLY_WAIT`]) until a command's answer, asked when the session had
    /// seen `ends_at` command ends, should be written (`true`) or dropped (`false`).
    pub(super) fn should_write(&mut self, ends_at: u64) -> bool {
        // A command that left an answer unread gets no second wait.
        let wait = if self.unread == Some(ends_at) {
            Duration::ZERO
        } else {
            REPLY_WAIT
        };
        let deadline = Instant::now() + wait;
        let mut pause = Duration::from_micros(500);
        loop {
            if (self.ends_seen)() > ends_at {
                return false;
            }
            let Some(group) = self.master_fd.and_then(platform::foreground_group) else {
                // Nothing to ask (no job control here): behave like a plain terminal.
                return true;
            };
            if group == self.shell_pid && !self.marked {
                return false;
            }
            let reading = self
                .tty()
                .is_some_and(|tty| platform::waiting_for_input(group, tty));
            if reading && self.caught_up() {
                // All the shell printed before this read is scanned: a `D` would be counted.
                return (self.ends_seen)() <= ends_at;
            }
            if Instant::now() >= deadline {
                self.unread = Some(ends_at);
                return false;
            }
            std::thread::sleep(pause);
            pause = (pause * 2).min(Duration::from_millis(10));
        }
    }
}

/// Shared access to a value the reader updates: a tiny helper so the writer can read
/// `ends_seen` without knowing the session's state type.
pub(super) fn counter<T: Send + 'static>(
    state: &Arc<Mutex<T>>,
    read: fn(&T) -> u64,
) -> Arc<dyn Fn() -> u64 + Send + Sync> {
    let state = state.clone();
    Arc::new(move || read(&state.lock().unwrap_or_else(|e| e.into_inner())))
}
