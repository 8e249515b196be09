//! System views: the process list, who holds a file open, and desktop screenshots.
//!
//! Each is one file; platform differences stay inside it behind `cfg`.

mod capture;
pub(crate) mod lockers;
pub(crate) mod processes;
pub(crate) mod screenshot;
#[cfg(all(unix, not(target_os = "macos")))]
mod x11;

pub use lockers::{Locker, Lockers, find as find_lockers};
pub use processes::{
    DEFAULT_MAX_RESULTS, MAX_RESULTS, ProcessInfo, ProcessList, list as list_processes,
};
pub use screenshot::{Shot, Target as ScreenshotTarget, capture as take_screenshot};
