//! Events instead of polling: a directory that changed, a process that exited.
//!
//! On Linux, [`DirWatch`] is an inotify descriptor and [`ExitWatch`] a pidfd (which works for
//! processes that are not our children), both driven by tokio's reactor, so a waiter wakes the
//! moment something happens. Elsewhere both fall back to a short bounded tick
//! ([`FALLBACK_TICK`]): callers re-check their condition after every wake-up either way, so
//! the fallback is slower but never wrong.

use std::path::Path;
use std::time::Duration;

/// How often the non-Linux fallbacks wake up.
pub const FALLBACK_TICK: Duration = Duration::from_millis(50);

#[cfg(target_os = "linux")]
mod imp {
    use std::io;
    use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
    use std::os::unix::ffi::OsStrExt;
    use std::path::Path;

    use tokio::io::Interest;
    use tokio::io::unix::AsyncFd;

    /// Registers an owned descriptor with tokio's reactor for readability.
    fn register(fd: OwnedFd) -> io::Result<AsyncFd<OwnedFd>> {
        // SAFETY: the AsyncFd owns `fd`, so it stays open and the same for its lifetime.
        Ok(unsafe { AsyncFd::register_with_interest(fd, Interest::READABLE) }?)
    }

    /// Wakes when an entry of one directory is created, renamed, deleted or written.
    pub struct DirWatch {
        fd: AsyncFd<OwnedFd>,
    }

    impl DirWatch {
        pub fn new(dir: &Path) -> io::Result<Self> {
            // SAFETY: plain syscalls; the returned descriptor is owned right away.
            let raw = unsafe { libc::inotify_init1(libc::IN_NONBLOCK | libc::IN_CLOEXEC) };
            if raw < 0 {
                return Err(io::Error::last_os_error());
            }
            // SAFETY: `raw` is a fresh descriptor nobody else owns.
            let fd = unsafe { OwnedFd::from_raw_fd(raw) };
            let path = std::ffi::CString::new(dir.as_os_str().as_bytes())
                .map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))?;
            let mask = libc::IN_CREATE
                | libc::IN_MOVED_TO
                | libc::IN_MOVED_FROM
                | libc::IN_DELETE
                | libc::IN_CLOSE_WRITE
                | libc::IN_DELETE_SELF;
            // SAFETY: `path` is a valid C string, `fd` an inotify descriptor.
            if unsafe { libc::inotify_add_watch(fd.as_raw_fd(), path.as_ptr(), mask) } < 0 {
                return Err(io::Error::last_os_error());
            }
            Ok(DirWatch { fd: register(fd)? })
        }

        /// Resolves after at least one change (events are drained, not reported).
        pub async fn changed(&self) {
            loop {
                let Ok(mut guard) = self.fd.readable().await else {
                    return std::future::pending().await;
                };
                let mut buf = [0u8; 4096];
                let mut got = false;
                loop {
                    // SAFETY: reading into a local buffer of the stated size.
                    let n = unsafe {
                        libc::read(self.fd.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len())
                    };
                    if n > 0 {
                        got = true;
                        continue;
                    }
                    break;
                }
                guard.clear_ready();
                if got {
                    return;
                }
            }
        }
    }

    /// Wakes when one process exits, whether or not it is our child (pidfd).
    pub struct ExitWatch {
        fd: AsyncFd<OwnedFd>,
    }

    impl ExitWatch {
        pub fn new(pid: i32) -> io::Result<Self> {
            // SAFETY: pidfd_open(2) takes a pid and flags, returns a new descriptor.
            let raw = unsafe { libc::syscall(libc::SYS_pidfd_open, pid, 0) } as i32;
            if raw < 0 {
                return Err(io::Error::last_os_error());
            }
            // SAFETY: `raw` is a fresh descriptor nobody else owns.
            let fd = unsafe { OwnedFd::from_raw_fd(raw) };
            Ok(ExitWatch { fd: register(fd)? })
        }

        /// Resolves once the process has exited.
        pub async fn exited(&self) {
            match self.fd.readable().await {
                Ok(_guard) => {}
                Err(_) => std::future::pending().await,
            }
        }
    }
}

#[cfg(not(target_os = "linux"))]
mod imp {
    use std::io;
    use std::path::Path;

    use super::FALLBACK_TICK;

    /// Fallback: wakes every [`FALLBACK_TICK`]; the caller re-checks the directory.
    pub struct DirWatch;

    impl DirWatch {
        pub fn new(_dir: &Path) -> io::Result<Self> {
            Ok(DirWatch)
        }

        pub async fn changed(&self) {
            tokio::time::sleep(FALLBACK_TICK).await;
        }
    }

    /// Fallback: checks every [`FALLBACK_TICK`] whether the pid is gone.
    pub struct ExitWatch {
        pid: i32,
    }

    impl ExitWatch {
        pub fn new(pid: i32) -> io::Result<Self> {
            Ok(ExitWatch { pid })
        }

        pub async fn exited(&self) {
            while crate::platform::pid_exists(self.pid) {
                tokio::time::sleep(FALLBACK_TICK).await;
            }
        }
    }
}

pub use imp::{DirWatch, ExitWatch};

/// A watch on `dir`, or `None` when it cannot be set up (the caller then re-checks on its
/// own bounded tick).
pub fn watch_dir(dir: &Path) -> Option<DirWatch> {
    match DirWatch::new(dir) {
        Ok(w) => Some(w),
        Err(e) => {
            tracing::debug!("cannot watch {}: {e}", dir.display());
            None
        }
    }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;
    use std::time::Instant;

    #[tokio::test]
    async fn dir_watch_wakes_on_rename() {
        let dir = tempfile::tempdir().unwrap();
        let watch = DirWatch::new(dir.path()).unwrap();
        let path = dir.path().to_path_buf();
        let writer = tokio::spawn(async move {
            std::fs::write(path.join("a.tmp"), "1").unwrap();
            std::fs::rename(path.join("a.tmp"), path.join("a")).unwrap();
        });
        tokio::time::timeout(Duration::from_secs(5), watch.changed())
            .await
            .expect("woken");
        writer.await.unwrap();
    }

    #[tokio::test]
    async fn exit_watch_wakes_when_a_process_ends() {
        let mut child = std::process::Command::new("sleep")
            .arg("0.2")
            .spawn()
            .unwrap();
        let watch = ExitWatch::new(child.id() as i32).unwrap();
        let start = Instant::now();
        tokio::time::timeout(Duration::from_secs(5), watch.exited())
            .await
            .expect("woken");
        assert!(start.elapsed() < Duration::from_secs(4));
        child.wait().unwrap();
    }
}
