//! The lock tools' results as JSON (`termpilot_core::locks` in, camelCase out).

use schemars::JsonSchema;
use serde::Serialize;
use termpilot_core::locks as core;

/// A stale lock that was recovered on the way to acquiring it.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Recovered {
    /// The dead owner's pid.
    pub pid: i32,
    pub note: Option<String>,
    pub acquired_at: String,
}

/// A lock now held by the caller.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Acquired {
    pub name: String,
    /// Pass this to lock_release.
    pub token: String,
    pub acquired_at: String,
    pub waited_ms: u64,
    /// Present when a lock left by a dead owner was recovered.
    pub recovered: Option<Recovered>,
}

impl From<core::Acquired> for Acquired {
    fn from(a: core::Acquired) -> Self {
        Acquired {
            name: a.name,
            token: a.token,
            acquired_at: a.acquired_at,
            waited_ms: a.waited_ms,
            recovered: a.recovered.map(|r| Recovered {
                pid: r.pid,
                note: r.note,
                acquired_at: r.acquired_at,
            }),
        }
    }
}

/// A lock released.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Released {
    pub name: String,
    pub released: bool,
    pub held_ms: u64,
}

impl From<core::Released> for Released {
    fn from(r: core::Released) -> Self {
        Released {
            name: r.name,
            released: r.released,
            held_ms: r.held_ms,
        }
    }
}
