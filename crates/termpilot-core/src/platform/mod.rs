//! The few things that differ per operating system: process groups, killing a tree, telling
//! whether a pid is still the process we started, and the terminal's foreground group.
//!
//! Everything above this module is platform-blind; `unix.rs` and `windows.rs` sit side by
//! side with the same functions.

#[cfg(unix)]
mod unix;
#[cfg(unix)]
pub use unix::*;

mod events;
pub use events::{DirWatch, ExitWatch, FALLBACK_TICK, watch_dir};

/// How a terminal hands typed input to the program reading it ([`input_mode`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InputMode {
    /// Key by key (canonical mode off): a REPL's line editor, a full-screen program.
    Keys,
    /// Whole lines, edited by the terminal itself; `echo` when what is typed is shown.
    Lines { echo: bool },
}

#[cfg(windows)]
mod windows;
#[cfg(windows)]
pub use windows::*;
