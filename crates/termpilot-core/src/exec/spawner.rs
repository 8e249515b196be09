//! The thread every one-shot child is forked from, so `PR_SET_PDEATHSIG` means "the server
//! died".
//!
//! On Linux a child's parent-death signal fires when the *thread* that forked it exits, not
//! the process. Tokio's worker and blocking-pool threads may come and go (a blocking thread
//! ends after a few idle seconds), so a child forked from one could be killed while the
//! server lives on. Forking from this one thread — started once, never ending before the
//! process — ties the signal to the server's own death: `kill -9` of the server takes its
//! one-shot children with it. (Jobs are started elsewhere, without the signal, and survive.)

use std::sync::Mutex;
use std::sync::mpsc::{Sender, channel};

use tokio::process::{Child, Command};
use tokio::sync::oneshot;

type Request = (
    Command,
    tokio::runtime::Handle,
    oneshot::Sender<std::io::Result<Child>>,
);

/// Spawns `cmd` from the long-lived spawner thread, inside the current tokio runtime.
pub(crate) async fn spawn(cmd: Command) -> std::io::Result<Child> {
    let (tx, rx) = oneshot::channel();
    sender()
        .send((cmd, tokio::runtime::Handle::current(), tx))
        .map_err(|_| std::io::Error::other("the spawner thread is gone"))?;
    rx.await
        .map_err(|_| std::io::Error::other("the spawner thread dropped the request"))?
}

/// The channel to the spawner thread, started on first use.
fn sender() -> Sender<Request> {
    static SENDER: Mutex<Option<Sender<Request>>> = Mutex::new(None);
    let mut guard = SENDER.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(tx) = guard.as_ref() {
        return tx.clone();
    }
    let (tx, rx) = channel::<Request>();
    let started = std::thread::Builder::new()
        .name("termpilot-spawner".into())
        .spawn(move || {
            for (mut cmd, runtime, reply) in rx {
                // The child's reaping belongs to the runtime that asked.
                let _enter = runtime.enter();
                let _ = reply.send(cmd.spawn());
            }
        });
    match started {
        Ok(_) => {
            *guard = Some(tx.clone());
            tx
        }
        // No thread to spare (EAGAIN): the caller gets a clear error, the next call retries.
        Err(e) => {
            let (tx, rx) = channel::<Request>();
            drop(rx);
            tracing::warn!(error = %e, "could not start the spawner thread");
            tx
        }
    }
}

/// Asks the kernel to SIGKILL the calling (forked) child when the thread that forked it ends,
/// and ends the child at once if the server already died before that request took hold.
/// Runs between fork and exec: only async-signal-safe calls.
#[cfg(target_os = "linux")]
pub(crate) fn die_with_parent(parent: libc::pid_t) -> std::io::Result<()> {
    // SAFETY: prctl and getppid are async-signal-safe and touch no memory of ours.
    unsafe {
        if libc::prctl(
            libc::PR_SET_PDEATHSIG,
            libc::SIGKILL as libc::c_ulong,
            0,
            0,
            0,
        ) != 0
        {
            return Err(std::io::Error::last_os_error());
        }
        if libc::getppid() != parent {
            libc::_exit(137);
        }
    }
    Ok(())
}
