//! Local ids of sessions that live on a remote termpilot.
//!
//! A session started through a link gets an id of this server's namespace (claimed from the
//! session registry, so no local session takes it), mapped to (target, link generation,
//! the remote id) and the `terminal_start` arguments it was started with — what a restart
//! of the same shape needs after the link dropped (the reserved-id rule).

use std::collections::HashMap;
use std::sync::{LazyLock, Mutex};

use rmcp::model::JsonObject;
use termpilot_core::SessionManager;
use termpilot_core::remote::Target;

/// One session on a remote termpilot.
#[derive(Clone, Debug)]
pub struct Mapped {
    pub local: String,
    pub target: Target,
    /// The link it was started on.
    pub generation: u64,
    pub remote: String,
    /// The `terminal_start` arguments (without `host`).
    pub start: JsonObject,
}

static MAP: LazyLock<Mutex<HashMap<String, Mapped>>> = LazyLock::new(Default::default);

fn map() -> std::sync::MutexGuard<'static, HashMap<String, Mapped>> {
    MAP.lock().unwrap_or_else(|e| e.into_inner())
}

/// True when no remote session is mapped (the common case: nothing to look up).
pub fn is_empty() -> bool {
    map().is_empty()
}

/// Maps a session just started on `target` to a new local id, and returns that id.
pub fn insert(
    sessions: &SessionManager,
    target: &Target,
    generation: u64,
    remote: &str,
    start: JsonObject,
) -> String {
    let local = sessions.claim_foreign_id();
    map().insert(
        local.clone(),
        Mapped {
            local: local.clone(),
            target: target.clone(),
            generation,
            remote: remote.to_string(),
            start,
        },
    );
    local
}

/// The remote session behind a local id.
pub fn get(local: &str) -> Option<Mapped> {
    map().get(local).cloned()
}

/// Points a local id at a new remote session (the same shape restarted on a new link).
pub fn rebind(local: &str, generation: u64, remote: &str) {
    if let Some(m) = map().get_mut(local) {
        m.generation = generation;
        m.remote = remote.to_string();
    }
}

/// Forgets a local id and gives it back to the registry.
pub fn remove(sessions: &SessionManager, local: &str) {
    if map().remove(local).is_some() {
        sessions.release_foreign_id(local);
    }
}

/// The local id of a remote session of link `generation`.
pub fn local_of(generation: u64, remote: &str) -> Option<String> {
    map()
        .values()
        .find(|m| m.generation == generation && m.remote == remote)
        .map(|m| m.local.clone())
}

/// Every mapped session.
pub fn all() -> Vec<Mapped> {
    let mut all: Vec<Mapped> = map().values().cloned().collect();
    all.sort_by(|a, b| a.local.cmp(&b.local));
    all
}
