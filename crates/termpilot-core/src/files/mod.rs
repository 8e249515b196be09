//! Files for agents: atomic writes, exact edits and search.
//!
//! [`write::write`] (create, replace or append, in five encodings), [`edit::edit`] (replace
//! exactly one match unless told otherwise) and [`grep::grep`] (ripgrep's libraries, with a backtracking engine for
//! lookaround and backreferences). Paths are
//! resolved by [`path::resolve`]: absolute, or relative to a base directory the caller names
//! (a session's cwd). Bad input is an error that changes nothing on disk.

pub(crate) mod backtrack;
pub(crate) mod edit;
pub(crate) mod encoding;
pub(crate) mod grep;
pub(crate) mod path;
pub(crate) mod write;

pub use edit::{edit as edit_file, edit_at};
pub use encoding::{Encoding, decode};
pub use grep::{GrepOptions, GrepResult, grep};
pub use path::resolve as resolve_path;
pub use write::{Pin, WriteOptions, write as write_file, write_at};
