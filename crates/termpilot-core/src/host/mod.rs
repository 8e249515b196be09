//! What this server keeps on the host for everything it starts: the floor under one-shot
//! runs (`exec/`), sessions (`session/`), jobs and the sandbox.
//!
//! The per-user private folder ([`private`]: 0700, checked before each use), spill files
//! under it ([`spill`]), the environment every child starts with ([`env`]), the marker every
//! run and session gives its processes ([`marker`]) and the undertaker that ends them when
//! the server dies ([`undertaker`]), and the one PATH lookup ([`path`]). Nothing here knows
//! of runs, sessions or the sandbox.

pub mod env;
pub mod marker;
pub mod path;
pub mod private;
pub mod spill;
pub mod undertaker;
