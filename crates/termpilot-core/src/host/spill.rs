//! Spill files: where a stream that outgrew its cap is written in full.
//!
//! They live in `spill/` of the private folder ([`super::private`]: 0700, checked) and are
//! never deleted by the call that wrote them: the agent reads them afterwards. Each is capped
//! ([`cap`], 1 GiB by default); a server removes its own when it exits, and those a session's
//! `terminal_exec` wrote when that session ends ([`create_owned`], [`remove_owned`]).
//!
//! A file is named `<ms>-<pid>_<start>-<seq>-<label>.log`: the server's pid and its start time
//! (clock ticks since boot, `0` where unknown) name the server for good. When a server first
//! uses the folder it removes the files of servers that are no longer running, whatever
//! their age; kept transcripts, and files of the older `<ms>-<pid>-<seq>-<label>.log` form
//! (a pid alone may have been reused), go once they are over a day old.

use std::fs::{File, OpenOptions};
use std::path::PathBuf;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use crate::error::{Error, Result};

/// Default cap on one spill file (1 GiB): past it the rest of a stream is dropped, and the
/// result says so.
pub(crate) const DEFAULT_CAP: u64 = 1024 * 1024 * 1024;

static CAP: AtomicU64 = AtomicU64::new(DEFAULT_CAP);

/// The most bytes one spill file takes.
pub(crate) fn cap() -> u64 {
    CAP.load(Ordering::Relaxed)
}

/// Sets the cap on one spill file (from the configuration, at start-up).
pub(crate) fn set_cap(bytes: u64) {
    CAP.store(bytes.max(1), Ordering::Relaxed);
}

/// How old a dead server's spill file must be before a starting server removes it.
const STALE_AFTER: Duration = Duration::from_secs(24 * 60 * 60);

/// Spill files this server made, removed when it exits ([`remove_mine`]).
static MINE: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

/// Spill files made on behalf of an owner (a session), removed when it ends.
static OWNED: Mutex<Option<std::collections::HashMap<String, Vec<PathBuf>>>> = Mutex::new(None);

/// Removes the spill files owned by `owner` (kept transcripts aside): its session ended.
pub(crate) fn remove_owned(owner: &str) {
    let paths = OWNED
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .as_mut()
        .and_then(|owned| owned.remove(owner))
        .unwrap_or_default();
    if paths.is_empty() {
        return;
    }
    MINE.lock()
        .unwrap_or_else(|e| e.into_inner())
        .retain(|p| !paths.contains(p));
    for path in paths {
        if !is_transcript(&path) {
            let _ = std::fs::remove_file(path);
        }
    }
}

fn is_transcript(path: &std::path::Path) -> bool {
    path.to_string_lossy().ends_with("-transcript.log")
}

/// This server as spill file names say it: `<pid>_<start time>`.
fn me() -> &'static str {
    static ME: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    ME.get_or_init(|| {
        let pid = std::process::id();
        let start = crate::platform::process_start_time(pid as i32).unwrap_or(0);
        format!("{pid}_{start}")
    })
}

/// The directory holding spill files, created on first use; the first use also sweeps the
/// spill files of dead servers that are over a day old.
pub(crate) fn dir() -> Result<PathBuf> {
    let dir = private_dir("spill")?;
    static SWEPT: std::sync::Once = std::sync::Once::new();
    SWEPT.call_once(|| sweep_stale(&dir, STALE_AFTER));
    Ok(dir)
}

/// Removes every spill file this server made except kept transcripts (they are swept like
/// any stale file later); called when the server exits.
pub(crate) fn remove_mine() {
    let mine = std::mem::take(&mut *MINE.lock().unwrap_or_else(|e| e.into_inner()));
    for path in mine {
        if !is_transcript(&path) {
            let _ = std::fs::remove_file(path);
        }
    }
}

/// Removes spill files in `dir` whose server is gone: at once when the name says which
/// server (pid and start time), else (a pid alone), and for kept transcripts, once they are
/// older than `age`.
fn sweep_stale(dir: &std::path::Path, age: Duration) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let Some(owner) = name.split('-').nth(1) else {
            continue;
        };
        let (pid, start) = match owner.split_once('_') {
            Some((pid, start)) => (pid, start.parse::<u64>().ok()),
            None => (owner, None),
        };
        let Ok(pid) = pid.parse::<u32>() else {
            continue;
        };
        if owner == me() || (start.is_none() && pid == std::process::id()) {
            continue;
        }
        let old = || {
            entry
                .metadata()
                .and_then(|m| m.modified())
                .ok()
                .and_then(|t| t.elapsed().ok())
                .is_some_and(|e| e > age)
        };
        let dead = match start {
            // Known start time: the server runs only if that pid (not a zombie) started then.
            Some(start) if start != 0 => !crate::platform::is_same_process(pid as i32, Some(start)),
            _ => !server_alive(pid),
        };
        let exact = start.is_some_and(|s| s != 0);
        if dead && ((exact && !is_transcript(&entry.path())) || old()) {
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
pub(crate) fn private_dir(name: &str) -> Result<PathBuf> {
    super::private::dir(name)
}

/// `termpilot-<user>`: the per-user folder under the temp dir (spill files, attach sockets).
#[cfg(unix)]
pub(crate) fn user_folder() -> String {
    format!("termpilot-{}", crate::platform::uid())
}

/// `termpilot-<user>`: the per-user folder under the temp dir (spill files, attach sockets).
#[cfg(windows)]
pub fn user_folder() -> String {
    let user = std::env::var("USERNAME").unwrap_or_else(|_| "user".into());
    format!("termpilot-{user}")
}

/// Creates a new, empty spill file for a stream called `label` (`stdout`, `stderr`),
/// removed when the server exits.
pub fn create(label: &str) -> Result<(File, PathBuf)> {
    create_for(label, None)
}

/// Creates a new, empty spill file for a stream called `label`, owned by `owner` (e.g. one
/// session's incarnation) so [`remove_owned`] removes it when the owner ends.
pub(crate) fn create_owned(label: &str, owner: &str) -> Result<(File, PathBuf)> {
    create_for(label, Some(owner))
}

fn create_for(label: &str, owner: Option<&str>) -> Result<(File, PathBuf)> {
    static SEQ: AtomicU64 = AtomicU64::new(0);
    let dir = dir()?;
    let ms = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis())
        .unwrap_or(0);
    let seq = SEQ.fetch_add(1, Ordering::Relaxed);
    let path = dir.join(format!("{ms}-{}-{seq}-{label}.log", me()));
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
    if let Some(owner) = owner {
        OWNED
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get_or_insert_with(Default::default)
            .entry(owner.to_string())
            .or_default()
            .push(path.clone());
    }
    Ok((file, path))
}
