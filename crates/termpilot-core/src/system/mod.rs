//! System views: the process list, who holds a file open, and desktop screenshots.
//!
//! Each is one file; platform differences stay inside it behind `cfg`.

mod capture;
pub mod lockers;
pub mod processes;
pub mod screenshot;
#[cfg(all(unix, not(target_os = "macos")))]
mod x11;
