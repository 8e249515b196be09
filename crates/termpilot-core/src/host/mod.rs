//! What this server keeps on the host for everything it starts: the floor under one-shot
//! runs (`exec/`), sessions (`session/`), jobs and the sandbox.
//!
//! The per-user private folder ([`private`]: 0700, checked before each use), spill files
//! under it ([`spill`]), the environment every child starts with ([`env`]), the marker every
//! run and session gives its processes ([`marker`]) and the undertaker that ends them when
//! the server dies ([`undertaker`]), and the one PATH lookup ([`path`]). Nothing here knows
//! of runs, sessions or the sandbox.

pub(crate) mod bounded;
pub(crate) mod env;
pub(crate) mod marker;
pub(crate) mod path;
pub(crate) mod private;
pub(crate) mod spill;
pub(crate) mod undertaker;

// What the face uses, at this level (the modules are the crate's own).
pub use bounded::run_bounded;
pub use marker::{Survivor, describe as describe_survivors};
pub use private::dir as private_dir;
pub use spill::Spills;
pub use undertaker::start as start_undertaker;
