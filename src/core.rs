//! The one shared handle that owns all server state.
//!
//! Sessions, jobs and locks live here, in one value the process owns and every MCP handler
//! instance borrows through an `Arc`. rmcp may build a handler per request (Streamable HTTP,
//! the stateless 2026-07-28 revision); state never lives in the handler itself, so it is
//! never lost or duplicated.

use std::sync::Arc;

use crate::config::Config;
use crate::sessions::SessionManager;

/// All of termpilot's state.
pub struct Core {
    pub config: Arc<Config>,
    pub sessions: SessionManager,
}

impl Core {
    pub fn new(config: Config) -> Arc<Self> {
        let config = Arc::new(config);
        Arc::new(Core {
            sessions: SessionManager::new(config.clone()),
            config,
        })
    }

    /// Ends everything the server started that must not outlive it (sessions, not jobs).
    pub async fn shutdown(&self) {
        self.sessions.shutdown().await;
    }
}
