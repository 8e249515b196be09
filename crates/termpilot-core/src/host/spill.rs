//! Spill files: where a stream that outgrew its cap is written in full.
//!
//! They live in `spill/` of the private folder ([`super::private`]: 0700, checked) and are
//! never deleted by the call that wrote them: the agent reads them afterwards. Each is capped
//! ([`Spills::cap`], 1 GiB by default: [`crate::config::DEFAULT_MAX_SPILL_BYTES`]); a server
//! removes its own when it exits, and those a session's `terminal_exec` wrote when that
//! session ends ([`Owner`]).
//!
//! A file is named `<ms>-<pid>_<start>-<seq>-<label>.log`: the server's pid and its start time
//! (clock ticks since boot, `0` where unknown) name the server for good. When a server first
//! uses the folder it removes the files of servers that are no longer running, whatever
//! their age; kept transcripts, and files of the older `<ms>-<pid>-<seq>-<label>.log` form
//! (a pid alone may have been reused), go once they are over a day old.
//!
//! All of this is one value, [`Spills`], that the server's `Core` owns and passes to whatever
//! writes spill files (one-shot runs, sessions, the face): nothing here is a static.

use std::collections::HashMap;
use std::fs::{File, OpenOptions};
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, Once};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use crate::error::{Error, Result};

/// How old a dead server's spill file must be before a starting server removes it.
const STALE_AFTER: Duration = Duration::from_secs(24 * 60 * 60);

/// This server's spill files: the cap on each, the name that marks them as this server's,
/// the ones it made (removed when it exits) and those made for an owner (a session; removed
/// when it ends).
#[derive(Debug)]
pub struct Spills {
    /// The most bytes one spill file takes: past it the rest of a stream is dropped, and
    /// the result says so.
    cap: u64,
    /// This server as spill file names say it: `<pid>_<start time>`.
    me: String,
    /// Numbers the files this server makes.
    seq: AtomicU64,
    /// Spill files this server made, removed when it exits ([`Spills::remove_mine`]).
    mine: Mutex<Vec<PathBuf>>,
    /// Spill files made on behalf of an owner (a session), removed when it ends.
    owned: Mutex<HashMap<String, Vec<PathBuf>>>,
    /// The first use of the folder sweeps dead servers' files, once.
    swept: Once,
}

impl Spills {
    /// This server's spill files, each capped at `cap` bytes (at least 1).
    pub fn new(cap: u64) -> Self {
        let pid = std::process::id();
        let start = crate::platform::process_start_time(pid as i32).unwrap_or(0);
        Spills {
            cap: cap.max(1),
            me: format!("{pid}_{start}"),
            seq: AtomicU64::new(0),
            mine: Mutex::new(Vec::new()),
            owned: Mutex::new(HashMap::new()),
            swept: Once::new(),
        }
    }

    /// The most bytes one spill file takes.
    pub(crate) fn cap(&self) -> u64 {
        self.cap
    }

    /// The directory holding spill files, created on first use; the first use also sweeps
    /// the spill files of dead servers.
    pub(crate) fn dir(&self) -> Result<PathBuf> {
        let dir = private_dir("spill")?;
        self.swept
            .call_once(|| sweep_stale(&dir, STALE_AFTER, &self.me));
        Ok(dir)
    }

    /// Creates a new, empty spill file for a stream called `label` (`stdout`, `stderr`),
    /// removed when the server exits.
    pub fn create(&self, label: &str) -> Result<(File, PathBuf)> {
        self.create_for(label, None)
    }

    /// Removes the spill files owned by `owner` (kept transcripts aside): its session ended.
    fn remove_owned(&self, owner: &str) {
        let paths = lock(&self.owned).remove(owner).unwrap_or_default();
        if paths.is_empty() {
            return;
        }
        lock(&self.mine).retain(|p| !paths.contains(p));
        for path in paths {
            if !is_transcript(&path) {
                let _ = std::fs::remove_file(path);
            }
        }
    }

    /// Removes every spill file this server made except kept transcripts (they are swept
    /// like any stale file later); called when the server exits.
    pub(crate) fn remove_mine(&self) {
        let mine = std::mem::take(&mut *lock(&self.mine));
        for path in mine {
            if !is_transcript(&path) {
                let _ = std::fs::remove_file(path);
            }
        }
    }

    fn create_for(&self, label: &str, owner: Option<&str>) -> Result<(File, PathBuf)> {
        let dir = self.dir()?;
        let ms = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_millis())
            .unwrap_or(0);
        let mut options = OpenOptions::new();
        options.write(true).create_new(true);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
        // Another `Spills` of this process (a test's) may have taken the name: the next
        // number is free.
        let mut tries = 0;
        let (file, path) = loop {
            let seq = self.seq.fetch_add(1, Ordering::Relaxed);
            let path = dir.join(format!("{ms}-{}-{seq}-{label}.log", self.me));
            match options.open(&path) {
                Ok(file) => break (file, path),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && tries < 64 => tries += 1,
                Err(e) => {
                    return Err(Error::io(
                        format!("Could not create the spill file {}", path.display()),
                        "Check that the temp directory is writable",
                        e,
                    ));
                }
            }
        };
        lock(&self.mine).push(path.clone());
        if let Some(owner) = owner {
            lock(&self.owned)
                .entry(owner.to_string())
                .or_default()
                .push(path.clone());
        }
        Ok((file, path))
    }
}

/// Who owns spill files: one incarnation of a session, with the server's [`Spills`] they
/// are made in. Its files go when it ends ([`Owner::remove`]).
#[derive(Debug, Clone)]
pub(crate) struct Owner {
    spills: Arc<Spills>,
    name: String,
}

impl Owner {
    pub(crate) fn new(spills: Arc<Spills>, name: String) -> Self {
        Owner { spills, name }
    }

    /// Creates a new, empty spill file for a stream called `label`, owned by this owner.
    pub(crate) fn create(&self, label: &str) -> Result<(File, PathBuf)> {
        self.spills.create_for(label, Some(&self.name))
    }

    /// Removes this owner's spill files (kept transcripts aside): it ended.
    pub(crate) fn remove(&self) {
        self.spills.remove_owned(&self.name);
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

fn is_transcript(path: &std::path::Path) -> bool {
    path.to_string_lossy().ends_with("-transcript.log")
}

/// Removes spill files in `dir` whose server is gone: at once when the name says which
/// server (pid and start time), else (a pid alone), and for kept transcripts, once they are
/// older than `age`.
fn sweep_stale(dir: &std::path::Path, age: Duration, me: &str) {
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
        if owner == me || (start.is_none() && pid == std::process::id()) {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn two_spills_share_nothing() {
        let (a, b) = (Arc::new(Spills::new(10)), Arc::new(Spills::new(20)));
        assert_eq!((a.cap(), b.cap()), (10, 20));
        let (_, in_a) = Owner::new(a.clone(), "s".into()).create("t").unwrap();
        let (_, in_b) = Owner::new(b.clone(), "s".into()).create("t").unwrap();
        let (_, a_own) = a.create("t").unwrap();
        assert!(in_a != in_b && in_a != a_own);
        Owner::new(a.clone(), "s".into()).remove();
        assert!(!in_a.exists() && in_b.exists() && a_own.exists());
        a.remove_mine();
        assert!(!a_own.exists() && in_b.exists());
        b.remove_mine();
        assert!(!in_b.exists());
    }
}
