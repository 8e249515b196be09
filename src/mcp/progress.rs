//! `notifications/progress` for long waits, when the client sent a progress token.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use rmcp::model::{ProgressNotificationParam, ProgressToken};
use rmcp::{Peer, RoleServer};
use termpilot_core::{NoProgress, Progress};

/// Sends progress notifications to one client for one request.
struct PeerProgress {
    peer: Peer<RoleServer>,
    token: ProgressToken,
    step: AtomicU64,
}

impl Progress for PeerProgress {
    fn report(&self, elapsed: Duration, message: &str) {
        let step = self.step.fetch_add(1, Ordering::Relaxed) + 1;
        let mut text = format!("{:.1}s elapsed", elapsed.as_secs_f64());
        if !message.is_empty() {
            text.push_str(": ");
            text.push_str(message);
        }
        let param =
            ProgressNotificationParam::new(self.token.clone(), step as f64).with_message(text);
        let peer = self.peer.clone();
        // Best effort: a client that went away must not stall the wait.
        tokio::spawn(async move {
            let _ = peer.notify_progress(param).await;
        });
    }
}

/// The progress listener for a request: real when the client asked for progress.
pub fn for_request(peer: &Peer<RoleServer>, token: Option<ProgressToken>) -> Arc<dyn Progress> {
    match token {
        Some(token) => Arc::new(PeerProgress {
            peer: peer.clone(),
            token,
            step: AtomicU64::new(0),
        }),
        None => Arc::new(NoProgress),
    }
}
