//! Session tools: list (and, with the session core, start/write/read/wait/stop and friends).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use termpilot::sessions::SessionSummary;

use crate::mcp::registry::{Hints, ToolCtx, ToolDef};
use crate::mcp::reply::ToolError;

pub fn tools() -> Vec<ToolDef> {
    vec![ToolDef::new(
        "terminal_list",
        "List terminal sessions",
        "List the open terminal sessions: id, name, shell, cwd, alive, busy, foreground command, idle time and size.",
        Hints::READ_ONLY,
        list,
    )]
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ListParams {
    /// Full metadata (false: id, name, cwd, alive, busy only).
    #[serde(default = "yes")]
    pub verbose: bool,
}

fn yes() -> bool {
    true
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct ListResult {
    pub sessions: Vec<serde_json::Value>,
    pub count: usize,
}

async fn list(ctx: ToolCtx, p: ListParams) -> Result<ListResult, ToolError> {
    let sessions: Vec<serde_json::Value> = ctx
        .core
        .sessions
        .list()
        .into_iter()
        .map(|s| summary_json(&s, p.verbose))
        .collect();
    Ok(ListResult {
        count: sessions.len(),
        sessions,
    })
}

fn summary_json(s: &SessionSummary, verbose: bool) -> serde_json::Value {
    if verbose {
        serde_json::to_value(s).unwrap_or_default()
    } else {
        serde_json::json!({
            "id": s.id, "name": s.name, "cwd": s.cwd, "alive": s.alive, "busy": s.busy,
        })
    }
}
