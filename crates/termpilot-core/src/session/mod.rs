//! One terminal: a shell or a program on a PTY, behind an emulator.
//!
//! The modules are private: what the rest of the core and the face use is re-exported
//! here (a [`Session`], its [`SessionCall`] turn, their requests and outcomes). Three stay
//! public because they are namespaces of their own: [`shell`] (finding a shell), [`socket`]
//! (the attach protocol, shared with the attach client) and [`transcript`] (what a stopped
//! session leaves on disk).
//!
//! - [`call`]: a tool call's turn on a session — the only way to read, type, wait or reset.
//! - [`emulator`] and [`screen`]: what a person sees (alacritty_terminal); [`capture`],
//!   [`scrollback`] and [`extents`]: the rows that scroll off, kept packed.
//! - [`log`]: the positioned raw output log; [`text`]: rendered lines from raw bytes.
//! - [`keys`]: key names to bytes; [`echo`]: masking the echo of typed input.
//! - [`shell`]: which shell, and how it starts; [`terminal`]: the session, composed of
//!   its owners — [`pty`] (the PTY and its threads), [`state`] (what the reader feeds:
//!   the emulator, [`output`], [`input`], the command state, attached people) — with
//!   [`facts`] (what needs no turn); [`phase`]: the command phase decided from OSC 133 marks; [`command_state`]: the
//!   one owner of the marks, the phase and the main process's end, and the one end rule
//!   every wait asks; [`ops`]: reads and
//!   writes; [`answer`]: when typed input was answered; [`waiter`]: the one wait loop
//!   ([`fine_sleep`]: its short sleeps);
//!   [`wait`] and [`watch`]: waits for a pattern, the end, quiet, triggers;
//!   [`prompt_exec`] (with [`prompt_exec_capture`], [`prompt_exec_input`],
//!   [`prompt_exec_render`]): `terminal_exec`,
//!   a command typed at the prompt; [`transcript`]: what a stopped session leaves on disk.
//! - [`mouse`]: clicks and wheel turns in the program's mouse protocol; [`batch`]: several
//!   inputs in one call; [`paste`]: bracketed paste, markers in the text stripped; [`socket`] and [`redraw`]: people joining a session over a socket;
//!   [`control`]: who holds the keyboard (the agent, or a person from the web page);
//!   [`secret`]: secret prompts (echo off) answered by a person, never the agent.

#![warn(unreachable_pub)]

mod answer;
mod batch;
mod call;
mod capture;
mod command_state;
mod control;
mod dcs_query;
mod echo;
mod emulator;
mod extents;
mod facts;
mod fairness;
mod fine_sleep;
mod input;
mod integration;
mod keys;
mod log;
mod mouse;
mod ops;
mod output;
mod paste;
mod phase;
mod plain_run;
mod program_ready;
mod prompt_exec;
mod prompt_exec_capture;
mod prompt_exec_input;
mod prompt_exec_render;
mod pty;
mod redraw;
mod remote_shell;
mod replies;
mod scan;
mod screen;
mod scrollback;
pub(crate) mod secret;
pub(crate) mod shell;
pub(crate) mod socket;
mod state;
mod terminal;
mod text;
pub(crate) mod transcript;
mod wait;
mod waiter;
mod watch;

pub use batch::{Action, BatchOutcome, BatchPerson, MAX_ACTIONS};
pub use call::{Answer, SessionCall};
pub use control::{CONTROL_LEASE, Controller};
pub use echo::EchoMask;
pub use emulator::{Emulator, Size};
pub use integration::Mode;
pub use log::{DEFAULT_CAPACITY, OutputLog};
pub use mouse::{Direction, Encoding, MAX_SCROLL};
pub use ops::{OutputRead, ReadMore, WRITE_MAX_WAIT};
pub use program_ready::ProgramReady;
pub use prompt_exec::{ExecOutcome, ExecRequest};
pub use remote_shell::RemoteShell;
pub use screen::{NoHighlights, ScreenOptions, ScreenText};
pub use secret::{AskPerson, Asker, MAX_ASKS, PersonOutcome, PersonReply, SecretPrompt};
pub use shell::resolve as resolve_shell;
pub use socket::{
    FRAME_DETACH, FRAME_INPUT, FRAME_KEYS, FRAME_RELEASE, FRAME_RESIZE, FRAME_TAKE, Viewer,
    find as find_sockets, frame as socket_frame, socket_dir,
};
pub use terminal::{Exit, LastLook, Session, Shape, Status, describe_exit};
pub use text::{LineHistory, Style};
pub use transcript::{
    asciicast, check_path as check_transcript_path, is_cast, render as render_transcript,
    save as save_transcript,
};
pub use wait::{On, Reason, Until, WaitOutcome};
pub use watch::{Trigger, WatchOutcome, WatchReason};

pub(crate) use integration::new_nonce;
