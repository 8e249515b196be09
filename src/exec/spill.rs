//! Spill files: where a stream that outgrew its cap is written in full.
//!
//! They live in `spill/` of the private folder ([`super::private`]: 0700, checked) and are
//! never deleted by the call that wrote them: the agent reads them afterwards. Each is capped
//! ([`cap`], 1 GiB by default); a server removes its own when it exits, and the first server
//! to use the folder sweeps those of dead servers that are over a day old.

use std::fs::{File, OpenOptions};
use std::path::PathBuf;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use crate::error::{Error, Result};

/// Default cap on one spill file (1 GiB): past it the rest of a stream is dropped, and the
/// result says so.
pub const DEFAULT_CAP: u64 = crate::config::DEFAULT_MAX_SPILL_BYTES;

static CAP: AtomicU64 = AtomicU64::new(DEFAULT_CAP);

/// The most bytes one spill file takes.
pub fn cap() -> u64 {
    CAP.load(Ordering::Relaxed)
}

/// Sets the cap on one spill file (from the configuration, at start-up).
pub fn set_cap(bytes: u64) {
    CAP.store(bytes.max(1), Ordering::Relaxed);
}

/// How old a dead server's spill file must be before a starting server removes it.
const STALE_AFTER: Duration = Duration::from_secs(24 * 60 * 60);

/// Spill files this server made, removed when it exits ([`remove_mine`]).
static MINE: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

/// The directory holding spill files, created on first use; the first use also sweeps the
/// spill files of dead servers that are over a day old.
pub fn dir() -> Result<PathBuf> {
    let dir = private_dir("spill")?;
    static SWEPT: std::sync::Once = std::sync::Once::new();
    SWEPT.call_once(|| sweep_stale(&dir, STALE_AFTER));
    Ok(dir)
}

/// Removes every spill file this server made except kept transcripts (they are swept like
/// any stale file later); called when the server exits.
pub fn remove_mine() {
    let mine = std::mem::take(&mut *MINE.lock().unwrap_or_else(|e| e.into_inner()));
    for path in mine {
        if !path.to_string_lossy().ends_with("-transcript.log") {
            let _ = std::fs::remove_file(path);
        }
    }
}

/// Removes spill files in `dir` whose server is gone and that are older than `age`.
fn sweep_stale(dir: &std::path::Path, age: Duration) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let Some(pid) = name.split('-').nth(1).and_then(|p| p.parse::<u32>().ok()) else {
            continue;
        };
        let old = entry
            .metadata()
            .and_then(|m| m.modified())
            .ok()
            .and_then(|t| t.elapsed().ok())
            .is_some_and(|e| e > age);
        if old && pid != std::process::id() && !server_alive(pid) {
            let _ = std::fs::remove_file(entry.path());
        }
    }
}

#[cfg(unix)]
fn server_alive(pid: u32) -> bool {
    crate::platform::pid_exists(pid as i32)
}

#[cfg(windows)]
fn server_alive(_pid: u32) -> bool {
    // No cheap check here: only age decides.
    false
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
    MINE.lock()
        .unwrap_or_else(|e| e.into_inner())
        .push(path.clone());
    Ok((file, path))
}
