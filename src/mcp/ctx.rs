//! What every tool handler and the forwarding layer share, below both the registry and the
//! tools: a call's context ([`ToolCtx`]), a handler's future ([`BoxFuture`]) and where a
//! tool's calls may go ([`Forward`]). The registry (`mcp::registry`) dispatches through
//! `mcp::remote::forward`, which needs these and nothing of the registry itself.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use rmcp::model::JsonObject;
use termpilot_core::Core;
use termpilot_core::Progress;
use tokio_util::sync::CancellationToken;

use super::reply::{Reply, ToolError};

/// What a handler gets besides its arguments.
#[derive(Clone)]
pub struct ToolCtx {
    pub core: Arc<Core>,
    /// Fired when the client cancels the request (or goes away).
    pub cancel: CancellationToken,
    pub progress: Arc<dyn Progress>,
    /// Who answers a secret prompt in the agent's place (`--ask-person`, `mcp::secrets`).
    pub person: Option<termpilot_core::session::Asker>,
}

pub type BoxFuture = Pin<Box<dyn Future<Output = Result<Reply, ToolError>> + Send>>;

/// Where a tool's calls may go besides this machine: a property of the tool, declared in its
/// `ToolDef` and applied in one place, `ToolDef::call` (see `mcp::remote::forward`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Forward {
    /// Runs here only (a preset's reshaped tool: it forwards through the native tool it
    /// calls).
    Never,
    /// A call on a session that lives on a remote termpilot goes there; nothing else.
    Sessions,
    /// Also with `host`: to a remote termpilot only (jobs, files, Python, processes).
    Termpilot,
    /// Also with `host`: to a remote termpilot, else the tool's own plain-terminal way (its
    /// local handler).
    Plain,
    /// [`Forward::Plain`], and the session it starts on a remote termpilot gets a local id.
    Start,
    /// The local answer merged with every linked termpilot's (the session list).
    Merge,
}

impl Forward {
    /// The tool takes a `host` (it must have that parameter).
    pub fn takes_host(self) -> bool {
        matches!(self, Forward::Termpilot | Forward::Plain | Forward::Start)
    }

    /// The tool has a plain-terminal way of its own for a target without termpilot.
    pub fn has_plain_way(self) -> bool {
        matches!(self, Forward::Plain | Forward::Start)
    }
}

/// Added to a forwarded call's own `timeout` before its link is given up on for that call.
const FORWARD_MARGIN: Duration = Duration::from_secs(15);
/// The bound of a forwarded call that names no `timeout`.
const FORWARD_DEFAULT: Duration = Duration::from_secs(120);

/// How long a call forwarded with `args` may take on the other side (a remote termpilot, the
/// session host): its own `timeout` (under any preset's name) plus a margin, else a default.
pub fn forward_bound(args: &JsonObject) -> Duration {
    ["timeout", "timeoutMs", "timeout_ms"]
        .iter()
        .find_map(|k| args.get(*k).and_then(|t| t.as_u64()))
        .map(|ms| Duration::from_millis(ms) + FORWARD_MARGIN)
        .unwrap_or(FORWARD_DEFAULT)
}
