//! One-shot processes: run a command to completion without a session.
//!
//! [`runner::run`] is the single runner every tool that runs a command without a terminal
//! uses (`terminal_run`, `terminal_run_paged`, `run_python`, and the presets' one-shot tools):
//! argv without a shell by default, its own process group, the whole tree killed on timeout or
//! cancellation and reaped, stdout and stderr captured separately under byte caps with the
//! rest spilled to a file. Around it: shell command lines ([`shell`]), program resolution on
//! Windows ([`resolve`]), structured parsers for read-only commands ([`parse`]), stdout
//! paging ([`pager`]), success checks ([`checks`]), `terminal_run`'s rules ([`verdict`]), Python ([`python`]) and the retry schedule ([`backoff`]).
//! Not here: sessions (a PTY and an emulator) and detached jobs.

pub(crate) mod backoff;
pub(crate) mod capture;
pub(crate) mod checks;
pub(crate) mod pager;
pub(crate) mod parse;
pub(crate) mod python;
pub mod resolve;
pub mod runner;
pub(crate) mod shell;
pub(crate) mod spawner;
pub(crate) mod verdict;

pub use backoff::{Backoff, delay as backoff_delay};
pub use capture::{Captured, OutputCap};
pub use checks::{FileCheck, user_regex};
pub use pager::{Page, page_captured};
pub use parse::{Parsed, parse as parse_output};
pub use python::run_code as run_python;
pub use runner::{DEFAULT_PREVIEW_BYTES, Outcome, RUN_MARKER, Spec, run};
pub use shell::{Shell, ShellCommand};
pub use verdict::{Rules, Verdict, judge, paged_ok, paged_summary};
