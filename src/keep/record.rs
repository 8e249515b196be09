//! The host's record: a small JSON file (0600, in the 0700 folder) of the kept session ids
//! the running host holds, and of those its predecessor held when it died.
//!
//! The host rewrites it whenever its set of sessions changes (atomically: a temporary file
//! renamed over it) and removes it when it ends by itself. A host killed outright leaves it
//! behind: a server that finds the record but no live host says that those sessions ended
//! with their host; the next host carries the ids over as `ended`, so servers started later
//! still say so.

use std::io::Write;
use std::path::Path;

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Record {
    /// The host's process id.
    pub pid: u32,
    /// The termpilot version of the host.
    pub version: String,
    /// How long kept sessions stay without a call, output or attached person.
    pub keep_idle_secs: u64,
    /// The kept sessions it holds.
    pub ids: Vec<String>,
    /// The sessions an earlier host held when it died.
    #[serde(default)]
    pub ended: Vec<String>,
}

/// The record at `path`, if there is a readable one.
pub fn read(path: &Path) -> Option<Record> {
    let text = std::fs::read_to_string(path).ok()?;
    serde_json::from_str(&text).ok()
}

/// Writes `record` to `path` atomically, 0600.
pub fn write(path: &Path, record: &Record) -> std::io::Result<()> {
    let tmp = path.with_extension("json.tmp");
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let mut file = options.open(&tmp)?;
    file.write_all(&serde_json::to_vec(record).unwrap_or_default())?;
    drop(file);
    std::fs::rename(&tmp, path)
}

/// True while process `pid` exists and is not a zombie (a host killed outright may wait
/// unreaped for a while under a parent that does not reap).
pub fn alive(pid: u32) -> bool {
    if pid == 0 {
        return false;
    }
    #[cfg(target_os = "linux")]
    if let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        let state = stat.rfind(')').and_then(|i| stat.get(i + 2..i + 3));
        return !matches!(state, Some("Z" | "X"));
    }
    // SAFETY: kill(2) with signal 0 only checks that the process exists.
    unsafe { libc::kill(pid as i32, 0) == 0 }
}

/// The sentence for sessions whose host is gone.
pub fn ended_sentence(ids: &[String], pid: u32) -> String {
    format!(
        "its session host (pid {pid}) is gone (it died or was killed), and the kept sessions it held ended with it ({})",
        ids.join(", ")
    )
}
