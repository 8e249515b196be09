//! The wire: the JSON shapes of core values, as agents send and see them.
//!
//! The core's types carry no schema and no wire names (only the protocol layer knows JSON);
//! each file here holds one family's serialisable counterparts — the same field names and
//! shapes the tools always had — with `From` conversions from the core values, and the
//! parameter enums the face parses, mapped to the core's.

pub mod errors;
pub mod files;
pub mod jobs;
pub mod locks;
pub mod read_more;
pub mod sandbox;
pub mod screen;
pub mod system;
