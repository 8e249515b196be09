//! A job on disk: where its files are, its metadata, and its recorded exit.
//!
//! ```text
//! <state-dir>/jobs/<job_id>/job.json        metadata (JobMeta), written once at start
//!                           stdout.log      the command's stdout
//!                           stderr.log      the command's stderr
//!                           combined.log    both, interleaved as they came
//!                           exit_code.txt   the exit code and a newline, written by the wrapper
//!                                           when the command ends (or by job_kill), created
//!                                           exclusively and never replaced
//!                           killed_at.txt   present when job_kill ended the job
//! ```
//! The job folder is 0700 and every file in it 0600 (the jobs folder 0700, the state dir
//! 0700 when termpilot creates it). The metadata is written to a temp name and renamed into place; the exit code is complete
//! once it ends in a newline. Its creation and close are the events `job_wait` wakes on.

use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

use crate::error::{Error, Fault, Result};

pub(crate) const META: &str = "job.json";
pub(crate) const STDOUT: &str = "stdout.log";
pub(crate) const STDERR: &str = "stderr.log";
pub(crate) const COMBINED: &str = "combined.log";
pub(crate) const EXIT: &str = "exit_code.txt";
pub(crate) const KILLED: &str = "killed_at.txt";

/// What `job_start` recorded about a job. Storage, not the wire: these serde derives and
/// field names are `job.json`'s on-disk format, read back by every later server.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct JobMeta {
    pub job_id: String,
    pub name: Option<String>,
    pub command: String,
    pub shell: String,
    pub cwd: String,
    /// The wrapper's pid (it leads the job's session and process group).
    pub pid: i32,
    /// The wrapper's start time (clock ticks since boot on Linux): a reused pid has another.
    pub pid_start_time: Option<u64>,
    /// RFC 3339, UTC.
    pub started_at: String,
    pub started_at_ms: u64,
}

/// Where a job's output goes.
#[derive(Debug, Clone)]
pub struct LogPaths {
    pub stdout: String,
    pub stderr: String,
    pub combined: String,
}

impl LogPaths {
    pub fn of(dir: &Path) -> Self {
        let s = |f: &str| dir.join(f).display().to_string();
        LogPaths {
            stdout: s(STDOUT),
            stderr: s(STDERR),
            combined: s(COMBINED),
        }
    }
}

/// Milliseconds since the Unix epoch.
pub(crate) fn epoch_ms(t: SystemTime) -> u64 {
    t.duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

/// RFC 3339 in UTC with milliseconds.
pub fn rfc3339(t: SystemTime) -> String {
    humantime::format_rfc3339_millis(t).to_string()
}

/// A job id is a directory name we made: letters, digits, `-`, `_`, `.`; never `.`/`..`.
pub(crate) fn check_id(id: &str) -> Result<()> {
    let ok = !id.is_empty()
        && id.len() <= 100
        && !id.starts_with('.')
        && id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
    if ok {
        Ok(())
    } else {
        Err(Fault::NotAJobId { id: id.into() }.into())
    }
}

/// A builder of folders only this user can enter (0700 on Unix).
fn private_dirs() -> std::fs::DirBuilder {
    let mut builder = std::fs::DirBuilder::new();
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder
}

/// Creates the state dir (0700 when new) and `root`, the jobs folder, closed to others.
fn prepare_root(root: &Path) -> std::io::Result<()> {
    if let Some(state) = root.parent() {
        crate::config::prepare_state_dir(state)?;
    }
    match private_dirs().create(root) {
        Err(e) if e.kind() != std::io::ErrorKind::AlreadyExists => return Err(e),
        _ => {}
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::{MetadataExt, PermissionsExt};
        let meta = std::fs::symlink_metadata(root)?;
        if meta.is_dir() && meta.uid() == crate::platform::uid() && meta.mode() & 0o077 != 0 {
            std::fs::set_permissions(root, std::fs::Permissions::from_mode(0o700))?;
        }
    }
    Ok(())
}

/// Creates the (empty) log files of a new job, readable by this user only; the wrapper
/// appends to them.
pub(crate) fn create_logs(dir: &Path) -> std::io::Result<()> {
    for name in [STDOUT, STDERR, COMBINED] {
        private_file(&dir.join(name))?;
    }
    Ok(())
}

/// Creates `path` new, 0600 on Unix.
fn private_file(path: &Path) -> std::io::Result<std::fs::File> {
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    options.open(path)
}

/// Makes a fresh job directory (0700) under `root` with a readable unique id
/// (`calm-otter-3f9a`).
pub(crate) fn create(root: &Path) -> Result<(String, PathBuf)> {
    prepare_root(root).map_err(|e| {
        Error::io(
            format!("Cannot create the jobs directory {}", root.display()),
            "Check --state-dir points somewhere writable.",
            e,
        )
    })?;
    let mut last = None;
    for _ in 0..16 {
        let words = petname::petname(2, "-").unwrap_or_else(|| "job".into());
        let suffix = &uuid::Uuid::new_v4().simple().to_string()[..4];
        let id = format!("{words}-{suffix}");
        let dir = root.join(&id);
        match private_dirs().create(&dir) {
            Ok(()) => return Ok((id, dir)),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => last = Some(e),
            Err(e) => {
                return Err(Error::io(
                    format!("Cannot create the job directory {}", dir.display()),
                    "Check --state-dir points somewhere writable.",
                    e,
                ));
            }
        }
    }
    Err(Error::io(
        "Cannot find a free job id",
        "Try again.",
        last.unwrap_or_else(|| std::io::Error::other("collisions")),
    ))
}

/// Writes `contents` to `dir/name` atomically (temp file, then rename).
pub(crate) fn write_atomic(dir: &Path, name: &str, contents: &[u8]) -> std::io::Result<()> {
    let tmp = write_temp(dir, name, contents)?;
    std::fs::rename(&tmp, dir.join(name))
}

/// A new 0600 temp file in `dir` holding `contents`.
fn write_temp(dir: &Path, name: &str, contents: &[u8]) -> std::io::Result<PathBuf> {
    use std::io::Write;
    let tmp = dir.join(format!(
        ".{name}.{}.{}.tmp",
        std::process::id(),
        uuid::Uuid::new_v4().simple()
    ));
    private_file(&tmp)?.write_all(contents)?;
    Ok(tmp)
}

/// Writes `dir/name` only if it does not exist yet (hard link of a temp file: atomic, no
/// replace). Returns false when it was already there.
pub(crate) fn write_once(dir: &Path, name: &str, contents: &[u8]) -> std::io::Result<bool> {
    let tmp = write_temp(dir, name, contents)?;
    let linked = std::fs::hard_link(&tmp, dir.join(name));
    let _ = std::fs::remove_file(&tmp);
    match linked {
        Ok(()) => Ok(true),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(false),
        Err(e) => Err(e),
    }
}

pub(crate) fn write_meta(dir: &Path, meta: &JobMeta) -> Result<()> {
    let json = serde_json::to_vec_pretty(meta).expect("metadata is plain data");
    write_atomic(dir, META, &json).map_err(|e| {
        Error::io(
            format!("Cannot write {}", dir.join(META).display()),
            "Check --state-dir points somewhere writable.",
            e,
        )
    })
}

/// The metadata of the job in `dir`, or a sentence saying what is wrong with it.
pub(crate) fn read_meta(dir: &Path) -> std::result::Result<JobMeta, String> {
    let path = dir.join(META);
    let text = std::fs::read_to_string(&path)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    serde_json::from_str(&text)
        .map_err(|e| format!("{} is not valid job metadata: {e}", path.display()))
}

/// The recorded exit code and when it was recorded, if the job has ended. A file without
/// its final newline is still being written and does not count yet.
pub(crate) fn read_exit(dir: &Path) -> Option<(Option<i32>, SystemTime)> {
    let path = dir.join(EXIT);
    let text = std::fs::read_to_string(&path).ok()?;
    if !text.ends_with('\n') {
        return None;
    }
    let when = std::fs::metadata(&path)
        .and_then(|m| m.modified())
        .unwrap_or_else(|_| SystemTime::now());
    Some((text.trim().parse().ok(), when))
}

pub(crate) fn was_killed(dir: &Path) -> bool {
    dir.join(KILLED).exists()
}

/// When the combined log was last written (the best guess at when a lost job ended).
pub(crate) fn last_output(dir: &Path) -> Option<SystemTime> {
    std::fs::metadata(dir.join(COMBINED)).ok()?.modified().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_checked() {
        assert!(check_id("calm-otter-3f9a").is_ok());
        for bad in ["", "..", ".", "a/b", "../x", ".hidden"] {
            assert!(check_id(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn write_once_never_replaces() {
        let dir = tempfile::tempdir().unwrap();
        assert!(write_once(dir.path(), EXIT, b"0\n").unwrap());
        assert!(!write_once(dir.path(), EXIT, b"137\n").unwrap());
        assert_eq!(read_exit(dir.path()).unwrap().0, Some(0));
        assert_eq!(
            std::fs::read_dir(dir.path()).unwrap().count(),
            1,
            "no temp left"
        );
    }

    #[test]
    fn created_ids_are_unique_and_readable() {
        let dir = tempfile::tempdir().unwrap();
        let (a, _) = create(dir.path()).unwrap();
        let (b, _) = create(dir.path()).unwrap();
        assert_ne!(a, b);
        assert!(check_id(&a).is_ok() && a.matches('-').count() >= 2, "{a}");
    }
}
