//! Named inter-agent locks under `<state-dir>/locks/`, shared by every termpilot on the host.
//!
//! A lock is the directory `locks/<name>/` holding `owner.json` (token, owner pid and its
//! start time, note, time). It is taken by building that directory under `.locks-work/` and
//! renaming it into place: the rename is atomic and fails while the name exists, so exactly
//! one contender wins and the holder's record is never half-written. Release and recovery
//! rename the directory out of the way again. The owner is the server process that acquired
//! it; a lock whose owner is gone (or whose pid now names another process) is stale and is
//! recovered by the next acquirer. Removal of a lock (release, recovery) happens under a
//! short `flock` guard per name, so it never removes a lock other than the one it checked.
//!
//! Waiting is event-driven: an inotify watch on `locks/` (a release or recovery renames an
//! entry) and a pidfd on the owner (its death makes the lock stale) wake the waiter.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime};

use serde::{Deserialize, Serialize};
use tokio_util::sync::CancellationToken;

use crate::error::{Error, Fault, Result};
use crate::jobs::store::{epoch_ms, rfc3339};
use crate::platform;

/// The longest `wait_ms` accepted.
pub const MAX_WAIT_MS: u64 = 600_000;
/// The longest lock name.
pub const MAX_NAME_LEN: usize = 64;
const OWNER: &str = "owner.json";

/// Who holds a lock, as recorded in its `owner.json`. Storage, not the wire: these serde
/// derives and field names are the on-disk format every termpilot on the host reads.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct Owner {
    name: String,
    token: String,
    pid: i32,
    pid_start_time: Option<u64>,
    note: Option<String>,
    acquired_at: String,
    acquired_at_ms: u64,
}

impl Owner {
    fn alive(&self) -> bool {
        platform::is_same_process(self.pid, self.pid_start_time)
    }

    fn held_for(&self) -> String {
        let ms = epoch_ms(SystemTime::now()).saturating_sub(self.acquired_at_ms);
        format!("{:.1} s", ms as f64 / 1000.0)
    }

    fn describe(&self) -> String {
        match &self.note {
            Some(note) => format!("pid {} (note: \"{note}\")", self.pid),
            None => format!("pid {}", self.pid),
        }
    }
}

/// A stale lock that was recovered on the way to acquiring it.
#[derive(Debug, Clone)]
pub struct Recovered {
    /// The dead owner's pid.
    pub pid: i32,
    pub note: Option<String>,
    pub acquired_at: String,
}

/// A lock now held by the caller.
#[derive(Debug, Clone)]
pub struct Acquired {
    pub name: String,
    /// Pass this to lock_release.
    pub token: String,
    pub acquired_at: String,
    pub waited_ms: u64,
    /// Present when a lock left by a dead owner was recovered.
    pub recovered: Option<Recovered>,
}

/// A lock released.
#[derive(Debug, Clone)]
pub struct Released {
    pub name: String,
    pub released: bool,
    pub held_ms: u64,
}

enum Attempt {
    Got(Owner),
    Held(Owner),
}

/// The locks of one state directory.
pub struct Locks {
    root: PathBuf,
    work: PathBuf,
}

/// Checks a lock name: `[A-Za-z0-9_.-]{1,64}`, and not `.` or `..`.
pub fn check_name(name: &str) -> Result<()> {
    let ok = !name.is_empty()
        && name.len() <= MAX_NAME_LEN
        && name != "."
        && name != ".."
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-'));
    if ok {
        Ok(())
    } else {
        Err(Error::InvalidInput(format!(
            "`{name}` is not a valid lock name; use 1 to {MAX_NAME_LEN} letters, digits, `_`, `.` or `-`."
        )))
    }
}

fn io_err(what: &str, path: &Path, e: std::io::Error) -> Error {
    Error::io(
        format!("Cannot {what} {}", path.display()),
        "Check --state-dir points somewhere writable.",
        e,
    )
}

impl Locks {
    pub fn new(state_dir: &Path) -> Self {
        Locks {
            root: state_dir.join("locks"),
            work: state_dir.join(".locks-work"),
        }
    }

    fn ensure_dirs(&self) -> Result<()> {
        for dir in [&self.root, &self.work] {
            std::fs::create_dir_all(dir).map_err(|e| io_err("create", dir, e))?;
        }
        Ok(())
    }

    fn read_owner(&self, name: &str) -> Option<Owner> {
        let text = std::fs::read_to_string(self.root.join(name).join(OWNER)).ok()?;
        serde_json::from_str(&text).ok()
    }

    /// Holds the per-name guard for the duration of `f` (removal only).
    fn guarded<T>(&self, name: &str, f: impl FnOnce() -> T) -> Result<T> {
        let path = self.work.join(format!("{name}.guard"));
        let file = File::options()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)
            .map_err(|e| io_err("open", &path, e))?;
        file.lock().map_err(|e| io_err("lock", &path, e))?;
        let out = f();
        let _ = file.unlock();
        Ok(out)
    }

    /// Renames the lock directory away and deletes it, if it still holds `token`.
    fn remove_if(&self, name: &str, token: &str) -> Result<bool> {
        self.guarded(name, || {
            match self.read_owner(name) {
                Some(o) if o.token == token => {}
                _ => return false,
            }
            let trash = self
                .work
                .join(format!("{name}.{}.gone", uuid::Uuid::new_v4().simple()));
            if std::fs::rename(self.root.join(name), &trash).is_err() {
                return false;
            }
            let _ = std::fs::remove_dir_all(&trash);
            true
        })
    }

    /// One attempt: take the lock if free, recover it if stale, else report the holder.
    fn attempt(&self, name: &str, note: &Option<String>) -> Result<(Attempt, Option<Recovered>)> {
        let mut recovered = None;
        for _ in 0..8 {
            let now = SystemTime::now();
            let me = Owner {
                name: name.into(),
                token: uuid::Uuid::new_v4().to_string(),
                pid: std::process::id() as i32,
                pid_start_time: platform::process_start_time(std::process::id() as i32),
                note: note.clone(),
                acquired_at: rfc3339(now),
                acquired_at_ms: epoch_ms(now),
            };
            let staging = self
                .work
                .join(format!("{name}.{}.new", uuid::Uuid::new_v4().simple()));
            std::fs::create_dir(&staging).map_err(|e| io_err("create", &staging, e))?;
            let json = serde_json::to_vec_pretty(&me).expect("plain data");
            std::fs::write(staging.join(OWNER), json)
                .map_err(|e| io_err("write", &staging.join(OWNER), e))?;
            let renamed = std::fs::rename(&staging, self.root.join(name));
            if renamed.is_ok() {
                return Ok((Attempt::Got(me), recovered));
            }
            let _ = std::fs::remove_dir_all(&staging);
            let Some(holder) = self.read_owner(name) else {
                // Released (or being recovered) between our rename and the read: try again.
                continue;
            };
            if holder.alive() {
                return Ok((Attempt::Held(holder), recovered));
            }
            tracing::info!(lock = name, pid = holder.pid, "recovering a stale lock");
            if self.remove_if(name, &holder.token)? {
                recovered = Some(Recovered {
                    pid: holder.pid,
                    note: holder.note.clone(),
                    acquired_at: holder.acquired_at.clone(),
                });
            }
        }
        Err(Error::Other(format!(
            "Lock `{name}` changed hands too often to be taken; try again."
        )))
    }

    /// Takes lock `name`, waiting up to `wait` for its holder to release it.
    pub async fn acquire(
        &self,
        name: &str,
        wait: Duration,
        note: Option<String>,
        cancel: &CancellationToken,
    ) -> Result<Acquired> {
        check_name(name)?;
        self.ensure_dirs()?;
        let begun = Instant::now();
        let deadline = tokio::time::Instant::now() + wait;
        // Watch first, then try: a release between the two still wakes us.
        let watch = (!wait.is_zero())
            .then(|| platform::watch_dir(&self.root))
            .flatten();
        loop {
            let (attempt, recovered) = self.attempt(name, &note)?;
            let holder = match attempt {
                Attempt::Got(me) => {
                    return Ok(Acquired {
                        name: me.name,
                        token: me.token,
                        acquired_at: me.acquired_at,
                        waited_ms: begun.elapsed().as_millis() as u64,
                        recovered,
                    });
                }
                Attempt::Held(holder) => holder,
            };
            if tokio::time::Instant::now() >= deadline {
                return Err(Fault::LockHeld {
                    name: name.into(),
                    holder: holder.describe(),
                    held_for: holder.held_for(),
                    waited_ms: (!wait.is_zero()).then(|| begun.elapsed().as_millis() as u64),
                }
                .into());
            }
            let exit = platform::ExitWatch::new(holder.pid).ok();
            tokio::select! {
                _ = async { match &watch { Some(w) => w.changed().await,
                    None => tokio::time::sleep(platform::FALLBACK_TICK).await } } => {}
                _ = async { match &exit { Some(e) => e.exited().await,
                    None => tokio::time::sleep(platform::FALLBACK_TICK).await } } => {}
                _ = tokio::time::sleep_until(deadline) => {}
                _ = cancel.cancelled() => {
                    return Err(Error::Other(format!(
                        "The wait for lock `{name}` was cancelled; it was not acquired."
                    )));
                }
            }
        }
    }

    /// Releases lock `name` held with `token`; anything else is an error that changes nothing.
    pub fn release(&self, name: &str, token: &str) -> Result<Released> {
        check_name(name)?;
        let Some(holder) = self.read_owner(name) else {
            return Err(Error::InvalidInput(format!(
                "Lock `{name}` is not held; there is nothing to release."
            )));
        };
        if holder.token != token {
            return Err(Fault::WrongLockToken {
                name: name.into(),
                holder: holder.describe(),
            }
            .into());
        }
        self.ensure_dirs()?;
        if !self.remove_if(name, token)? {
            return Err(Error::InvalidInput(format!(
                "Lock `{name}` is no longer held with that token; nothing was released."
            )));
        }
        Ok(Released {
            name: name.into(),
            released: true,
            held_ms: epoch_ms(SystemTime::now()).saturating_sub(holder.acquired_at_ms),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_checked() {
        for good in ["build", "a.b-c_d", &"x".repeat(64)] {
            assert!(check_name(good).is_ok(), "{good}");
        }
        for bad in ["", ".", "..", "a/b", "sp ace", &"x".repeat(65)] {
            assert!(check_name(bad).is_err(), "{bad}");
        }
    }

    #[tokio::test]
    async fn held_lock_is_refused_and_wrong_token_changes_nothing() {
        let state = tempfile::tempdir().unwrap();
        let locks = Locks::new(state.path());
        let never = CancellationToken::new();
        let a = locks
            .acquire("x", Duration::ZERO, Some("tests".into()), &never)
            .await
            .unwrap();
        let e = locks
            .acquire("x", Duration::ZERO, None, &never)
            .await
            .unwrap_err()
            .to_string();
        assert!(e.contains("held by pid") && e.contains("tests"), "{e}");
        let e = locks.release("x", "nope").unwrap_err().to_string();
        assert!(e.contains("does not hold"), "{e}");
        locks.release("x", &a.token).unwrap();
        let e = locks.release("x", &a.token).unwrap_err().to_string();
        assert!(e.contains("not held"), "{e}");
    }

    #[tokio::test]
    async fn waiter_wakes_on_release() {
        let state = tempfile::tempdir().unwrap();
        let locks = std::sync::Arc::new(Locks::new(state.path()));
        let never = CancellationToken::new();
        let a = locks
            .acquire("w", Duration::ZERO, None, &never)
            .await
            .unwrap();
        let l2 = locks.clone();
        let waiter = tokio::spawn(async move {
            l2.acquire(
                "w",
                Duration::from_secs(20),
                None,
                &CancellationToken::new(),
            )
            .await
        });
        tokio::task::yield_now().await;
        locks.release("w", &a.token).unwrap();
        let b = tokio::time::timeout(Duration::from_secs(10), waiter)
            .await
            .expect("woken")
            .unwrap()
            .unwrap();
        assert_ne!(a.token, b.token);
    }
}
