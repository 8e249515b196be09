//! The session registry: ids, names, limits and the list of live terminals.
//!
//! Terminal sessions themselves arrive with the session core; until then the registry is
//! real but empty, and `terminal_list` reports exactly that.

use std::sync::Arc;

use serde::Serialize;

use crate::config::Config;

/// What `terminal_list` says about one session.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionSummary {
    pub id: String,
    pub name: Option<String>,
    pub shell: String,
    pub cwd: String,
    pub alive: bool,
    pub busy: bool,
    /// The command in the terminal's foreground, when it is not the shell.
    pub foreground: Option<String>,
    pub idle_ms: u64,
    pub cols: u16,
    pub rows: u16,
}

/// Owns every session of this server.
pub struct SessionManager {
    #[allow(dead_code)]
    config: Arc<Config>,
}

impl SessionManager {
    pub fn new(config: Arc<Config>) -> Self {
        SessionManager { config }
    }

    /// Every live session, oldest first.
    pub fn list(&self) -> Vec<SessionSummary> {
        Vec::new()
    }

    /// The current working directory of session `id` (relative file paths resolve against it).
    pub fn cwd_of(&self, id: &str) -> crate::Result<std::path::PathBuf> {
        Err(crate::Error::UnknownSession(id.to_string()))
    }

    /// Ends every session.
    pub async fn shutdown(&self) {}
}
