//! Answering the calls in flight when the server stops (HTTP): a stop first cancels every
//! running tool call through its own token, so each returns (a cancelled exec says so) and
//! its answer goes out while the transport still stands; [`FLUSH`] later rmcp's sessions and
//! streams are closed. Open `subscriptions/listen` streams end with their final result too.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use tokio::sync::Notify;
use tokio_util::sync::{CancellationToken, DropGuard};

/// How long answers handed to rmcp get to reach their streams before those close.
pub const FLUSH: Duration = Duration::from_millis(250);

/// The calls running now, and the token that asks them to stop. Cheap to clone.
#[derive(Clone, Default)]
pub struct Drain {
    stopping: CancellationToken,
    running: Arc<Running>,
}

#[derive(Default)]
struct Running {
    count: AtomicUsize,
    idle: Notify,
}

/// One call in flight: its cancel token (the request's, or the server stopping); counted
/// until dropped.
pub struct Call {
    pub cancel: CancellationToken,
    running: Arc<Running>,
    _watch: DropGuard,
}

impl Drop for Call {
    fn drop(&mut self) {
        if self.running.count.fetch_sub(1, Ordering::SeqCst) == 1 {
            self.running.idle.notify_waiters();
        }
    }
}

impl Drain {
    /// Starts counting a call whose request is cancelled by `request`.
    pub fn enter(&self, request: &CancellationToken) -> Call {
        self.running.count.fetch_add(1, Ordering::SeqCst);
        let cancel = self.stopping.child_token();
        let (watched, mine) = (request.clone(), cancel.clone());
        // Ends with the call (the guard cancels `cancel`) or passes the request's cancel on.
        tokio::spawn(async move {
            tokio::select! {
                _ = watched.cancelled() => mine.cancel(),
                _ = mine.cancelled() => {}
            }
        });
        Call {
            _watch: cancel.clone().drop_guard(),
            cancel,
            running: self.running.clone(),
        }
    }

    /// How many calls are running now.
    pub fn running(&self) -> usize {
        self.running.count.load(Ordering::SeqCst)
    }

    /// Resolves once the server is stopping.
    pub async fn stopping(&self) {
        self.stopping.cancelled().await
    }

    /// Cancels every call and waits (at most `max`) until all have answered.
    pub async fn stop(&self, max: Duration) {
        self.stopping.cancel();
        let all_answered = async {
            loop {
                let idle = self.running.idle.notified();
                if self.running.count.load(Ordering::SeqCst) == 0 {
                    return;
                }
                idle.await;
            }
        };
        if tokio::time::timeout(max, all_answered).await.is_err() {
            tracing::warn!("calls still running {max:?} after the stop; closing anyway");
        }
        // A handler that returned has handed its answer to rmcp, which writes it to the
        // call's stream from its own task; nothing tells when that is done, so give it a
        // moment before the streams close.
        tokio::time::sleep(FLUSH).await;
    }
}
