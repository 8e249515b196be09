//! One terminal: a shell or a program on a PTY, behind an emulator.
//!
//! - [`emulator`] and [`screen`]: what a person sees (alacritty_terminal).
//! - [`log`]: the positioned raw output log; [`text`]: rendered lines from raw bytes.
//! - [`keys`]: key names to bytes; [`echo`]: masking the echo of typed input.
//! - [`shell`]: which shell, and how it starts; [`terminal`]: the live session (PTY, threads,
//!   state); [`ops`]: reads and writes; [`answer`]: when typed input was answered;
//!   [`wait`] and [`watch`]: event-driven waits;
//!   [`transcript`]: what a stopped session leaves on disk.
//! - [`mouse`]: clicks and wheel turns in the program's mouse protocol; [`batch`]: several
//!   inputs in one call; [`attach`] and [`redraw`]: people joining a session over a socket;
//!   [`control`]: who holds the keyboard (the agent, or a person from the web page).

pub mod answer;
pub mod attach;
pub mod batch;
pub mod call;
pub mod capture;
pub mod control;
pub mod dcs_query;
pub mod echo;
pub mod emulator;
pub mod exec;
pub mod exec_render;
pub mod integration;
pub mod keys;
pub mod log;
pub mod mouse;
pub mod ops;
pub mod phase;
pub mod redraw;
pub mod replies;
pub mod scan;
pub mod screen;
pub mod shell;
pub mod terminal;
pub mod text;
pub mod transcript;
pub mod wait;
pub mod waiter;
pub mod watch;
