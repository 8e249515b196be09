//! The one shared handle that owns all server state.
//!
//! Sessions, jobs and locks live here, in one value the process owns and every MCP handler
//! instance borrows through an `Arc`. rmcp may build a handler per request (Streamable HTTP,
//! the stateless 2026-07-28 revision); state never lives in the handler itself, so it is
//! never lost or duplicated.

use std::sync::Arc;

use crate::config::Config;
use crate::host::Spills;
use crate::jobs::Jobs;
use crate::locks::Locks;
use crate::session_manager::SessionManager;

/// All of termpilot's state.
pub struct Core {
    pub config: Arc<Config>,
    pub sessions: Arc<SessionManager>,
    /// Detached jobs on disk under the state dir (they outlive the server).
    pub jobs: Jobs,
    /// Named inter-agent locks under the state dir.
    pub locks: Locks,
    /// This server's spill files (see [`crate::host::spill`]): passed to whatever writes one.
    pub spills: Arc<Spills>,
}

impl Core {
    pub fn new(config: Config) -> Arc<Self> {
        let config = Arc::new(config);
        let spills = Arc::new(Spills::new(config.max_spill_bytes));
        let sessions = Arc::new(SessionManager::new(config.clone(), spills.clone()));
        spawn_idle_sweep(&sessions);
        Arc::new(Core {
            sessions,
            jobs: Jobs::new(&config.state_dir, config.cwd.clone()),
            locks: Locks::new(&config.state_dir),
            spills,
            config,
        })
    }

    /// Ends everything the server started that must not outlive it (sessions, not jobs).
    pub async fn shutdown(&self) {
        self.sessions.shutdown().await;
        crate::sandbox::cleanup();
        self.spills.remove_mine();
    }
}

/// Ends idle sessions now and then, for as long as the manager exists. Needs a tokio runtime;
/// without one (unit tests of the core) there is no sweep.
fn spawn_idle_sweep(sessions: &Arc<SessionManager>) {
    let Ok(runtime) = tokio::runtime::Handle::try_current() else {
        return;
    };
    let weak = Arc::downgrade(sessions);
    let interval = sessions.sweep_interval();
    runtime.spawn(async move {
        loop {
            tokio::time::sleep(interval).await;
            let Some(sessions) = weak.upgrade() else {
                return;
            };
            sessions.sweep_idle().await;
        }
    });
}
