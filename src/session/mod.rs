//! One terminal: a shell or a program on a PTY, behind an emulator.
//!
//! - [`emulator`] and [`screen`]: what a person sees (alacritty_terminal).
//! - [`log`]: the positioned raw output log; [`text`]: rendered lines from raw bytes.
//! - [`keys`]: key names to bytes.

pub mod emulator;
pub mod keys;
pub mod log;
pub mod screen;
pub mod text;
