//! Which calls go to the session host, and how their results come back.
//!
//! Hooked into the one place every tool call passes ([`crate::mcp::remote::forward`], which
//! the tool's [`Forward`] declaration drives): a call naming a kept session id (`k-…`) goes
//! to the host as it is, under the same id; a start with `keep` goes there too
//! ([`super::start`]); `terminal_list` merges the host's list ([`super::list`]). The
//! host validates the arguments as it would its own. A server whose host is gone says
//! which kept sessions ended with it (from the host's record).

use rmcp::model::{CallToolResult, JsonObject};
use serde_json::Value;

use super::record;
use crate::mcp::ctx::{Forward, ToolCtx};
use crate::mcp::reply::text_of;
use crate::mcp::reply::{Reply, ToolError};

/// True when the call goes to the host (or merges its answer).
pub fn wants(forward: Forward, raw: &JsonObject) -> bool {
    if forward == Forward::Never || super::settings::settings().is_host {
        return false;
    }
    match forward {
        Forward::Start => super::start::wanted(raw) || kept_name(raw),
        Forward::Merge => super::list::wanted(),
        _ => kept_session(raw).is_some(),
    }
}

/// A local start named like a kept session (calls by that name would go to the host).
fn kept_name(raw: &JsonObject) -> bool {
    raw.get("name")
        .and_then(Value::as_str)
        .is_some_and(super::settings::is_kept_id)
}

/// The kept session a call names.
pub fn kept_session(raw: &JsonObject) -> Option<&str> {
    raw.get("sessionId")
        .and_then(Value::as_str)
        .filter(|id| super::settings::is_kept_id(id))
}

/// Runs a call [`wants`] picked, unless it is the list (merged by the caller): `None` then.
pub async fn call(
    name: &str,
    forward: Forward,
    ctx: &ToolCtx,
    raw: &JsonObject,
) -> Option<Result<Reply, ToolError>> {
    if forward == Forward::Merge || super::settings::settings().is_host {
        return None;
    }
    if forward == Forward::Start && super::start::wanted(raw) {
        return Some(super::start::call(ctx, raw.clone()).await);
    }
    if forward == Forward::Start && kept_name(raw) {
        return Some(Err(ToolError::new(format!(
            "terminal_start: names starting with `{}` are the ids of kept sessions; pick another name.",
            super::settings::PREFIX
        ))));
    }
    let id = kept_session(raw)?.to_string();
    Some(on_session(name, ctx, raw.clone(), &id).await)
}

async fn on_session(
    name: &str,
    ctx: &ToolCtx,
    args: JsonObject,
    id: &str,
) -> Result<Reply, ToolError> {
    let Some(link) = super::link::current(false).await? else {
        return Err(no_host(id));
    };
    let result = match link.call(name, args, &ctx.cancel).await {
        Ok(result) => result,
        Err(_) if link.is_ended() => {
            return Err(ToolError::new(format!(
                "Session {id} has ended: the session host ended during `{name}` (it died or was killed) and the kept sessions it held ended with it; start a new one with terminal_start and keep: true."
            )));
        }
        Err(e) => return Err(e),
    };
    if result.is_error == Some(true) {
        // A session of a host that died, asked of its successor.
        if let Some(files) = super::link::files()
            && let Some(rec) = record::read(&files.record)
            && rec.ended.iter().any(|e| e == id)
        {
            return Err(ToolError::new(format!(
                "Session {id} has ended: an earlier session host died (or was killed) and the kept sessions it held ended with it; start a new one with terminal_start and keep: true."
            )));
        }
    }
    reply_of(result)
}

/// The error for a kept session when no host runs.
fn no_host(id: &str) -> ToolError {
    if let Some(files) = super::link::files()
        && let Some(rec) = record::read(&files.record)
        && !record::alive(rec.pid)
        && (rec.ids.iter().any(|i| i == id) || rec.ended.iter().any(|i| i == id))
    {
        return ToolError::new(format!(
            "Session {id} has ended: {}; start a new one with terminal_start and keep: true.",
            record::ended_sentence(&rec.ids, rec.pid)
        ));
    }
    ToolError::new(format!(
        "No kept session `{id}`: no session host is running (kept sessions end when stopped, after --keep-idle, or with their host); terminal_list shows the sessions there are, terminal_start with keep: true starts one."
    ))
}

/// A host's result as this server's reply; a tool error stays one.
pub fn reply_of(result: CallToolResult) -> Result<Reply, ToolError> {
    if result.is_error == Some(true) {
        return Err(ToolError::new(text_of(&result)));
    }
    Ok(crate::mcp::reply::forwarded(&result))
}
