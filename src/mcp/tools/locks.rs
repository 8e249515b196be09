//! Lock tools: lock_acquire and lock_release, named mutexes shared by every agent.

use std::time::Duration;

use schemars::JsonSchema;
use serde::Deserialize;
use termpilot_core::locks::{MAX_NAME_LEN, MAX_WAIT_MS};

use crate::mcp::registry::{Hints, ToolCtx, ToolDef};
use crate::mcp::reply::ToolError;
use crate::mcp::wire::locks::{Acquired, Released};

pub fn tools() -> Vec<ToolDef> {
    vec![
        ToolDef::new(
            "lock_acquire",
            "Acquire a named lock",
            "Take an inter-agent named lock, waiting up to waitMs for its holder; returns a token for lock_release. Locks of dead owners are recovered.",
            Hints::ADDITIVE,
            acquire,
        ),
        ToolDef::new(
            "lock_release",
            "Release a named lock",
            "Release a lock with the token lock_acquire returned; a wrong token or a free lock is an error and changes nothing.",
            Hints::ADDITIVE,
            release,
        ),
    ]
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AcquireParams {
    /// Letters, digits, `_`, `.`, `-`; at most 64.
    #[schemars(length(min = 1, max = MAX_NAME_LEN))]
    pub name: String,
    /// How long to wait for a held lock.
    #[serde(default)]
    #[schemars(range(max = MAX_WAIT_MS))]
    pub wait_ms: u64,
    /// Shown to others who find the lock held.
    pub note: Option<String>,
}

async fn acquire(ctx: ToolCtx, p: AcquireParams) -> Result<Acquired, ToolError> {
    Ok(ctx
        .core
        .locks
        .acquire(
            &p.name,
            Duration::from_millis(p.wait_ms),
            p.note,
            &ctx.cancel,
        )
        .await?
        .into())
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ReleaseParams {
    #[schemars(length(min = 1, max = MAX_NAME_LEN))]
    pub name: String,
    pub token: String,
}

async fn release(ctx: ToolCtx, p: ReleaseParams) -> Result<Released, ToolError> {
    Ok(ctx.core.locks.release(&p.name, &p.token)?.into())
}
