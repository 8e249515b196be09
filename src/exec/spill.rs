//! Spill files: where a stream that outgrew its cap is written in full.
//!
//! They live in `spill/` of the private folder ([`super::private`]: 0700, checked) and are
//! never deleted by the call that wrote them: the agent reads them afterwards.

use std::fs::{File, OpenOptions};
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

use crate::error::{Error, Result};

/// The directory holding spill files, created on first use.
pub fn dir() -> Result<PathBuf> {
    private_dir("spill")
}

/// `<private folder>/<name>`, created on first use and checked to be this user's alone
/// (see [`super::private`]).
pub fn private_dir(name: &str) -> Result<PathBuf> {
    super::private::dir(name)
}

/// `termpilot-<user>`: the per-user folder under the temp dir (spill files, attach sockets).
#[cfg(unix)]
pub fn user_folder() -> String {
    format!("termpilot-{}", crate::platform::uid())
}

/// `termpilot-<user>`: the per-user folder under the temp dir (spill files, attach sockets).
#[cfg(windows)]
pub fn user_folder() -> String {
    let user = std::env::var("USERNAME").unwrap_or_else(|_| "user".into());
    format!("termpilot-{user}")
}

/// Creates a new, empty spill file for a stream called `label` (`stdout`, `stderr`).
pub fn create(label: &str) -> Result<(File, PathBuf)> {
    static SEQ: AtomicU64 = AtomicU64::new(0);
    let dir = dir()?;
    let ms = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis())
        .unwrap_or(0);
    let seq = SEQ.fetch_add(1, Ordering::Relaxed);
    let path = dir.join(format!("{ms}-{}-{seq}-{label}.log", std::process::id()));
    let mut options = OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let file = options.open(&path).map_err(|e| {
        Error::io(
            format!("Could not create the spill file {}", path.display()),
            "Check that the temp directory is writable",
            e,
        )
    })?;
    Ok((file, path))
}
