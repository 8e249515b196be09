//! One terminal: a shell or a program on a PTY, behind an emulator.
//!
//! - [`call`]: a tool call's turn on a session — the only way to read, type, wait or reset.
//! - [`emulator`] and [`screen`]: what a person sees (alacritty_terminal); [`capture`],
//!   [`scrollback`] and [`extents`]: the rows that scroll off, kept packed.
//! - [`log`]: the positioned raw output log; [`text`]: rendered lines from raw bytes.
//! - [`keys`]: key names to bytes; [`echo`]: masking the echo of typed input.
//! - [`shell`]: which shell, and how it starts; [`terminal`]: the live session (PTY, threads,
//!   state); [`phase`]: the command phase decided from OSC 133 marks; [`command_state`]: the
//!   one owner of the marks, the phase and the main process's end, and the one end rule
//!   every wait asks; [`ops`]: reads and
//!   writes; [`answer`]: when typed input was answered; [`waiter`]: the one wait loop;
//!   [`wait`] and [`watch`]: waits for a pattern, the end, quiet, triggers;
//!   [`prompt_exec`] (with [`prompt_exec_capture`], [`prompt_exec_input`],
//!   [`prompt_exec_render`]): `terminal_exec`,
//!   a command typed at the prompt; [`transcript`]: what a stopped session leaves on disk.
//! - [`mouse`]: clicks and wheel turns in the program's mouse protocol; [`batch`]: several
//!   inputs in one call; [`paste`]: bracketed paste, markers in the text stripped; [`socket`] and [`redraw`]: people joining a session over a socket;
//!   [`control`]: who holds the keyboard (the agent, or a person from the web page).

pub mod answer;
pub mod batch;
pub mod call;
pub mod capture;
pub mod command_state;
pub mod control;
pub mod dcs_query;
pub mod echo;
pub mod emulator;
pub mod extents;
pub mod integration;
pub mod keys;
pub mod log;
pub mod mouse;
pub mod ops;
pub mod paste;
pub mod phase;
pub mod program_ready;
pub mod prompt_exec;
pub mod prompt_exec_capture;
pub mod prompt_exec_input;
pub mod prompt_exec_render;
pub mod redraw;
pub mod remote_shell;
pub mod replies;
pub mod scan;
pub mod screen;
pub mod scrollback;
pub mod shell;
pub mod socket;
pub mod terminal;
pub mod text;
pub mod transcript;
pub mod wait;
pub mod waiter;
pub mod watch;
