//! `terminal_list` with kept sessions: the local list, then the host's sessions with
//! `kept: true` and when each will end (`endsInSecs`: with no call, no output and no attached
//! person until then), or, when the host is gone, the ids it held with `alive: false` and
//! why. Asking never starts a host.

use std::time::Duration;

use rmcp::model::JsonObject;
use serde_json::Value;

use super::record;
use crate::mcp::ctx::ToolCtx;
use crate::mcp::reply::{Reply, ToolError};

/// How long the host's list may take before it is left out (with a note).
const LIST_BOUND: Duration = Duration::from_secs(5);

/// True when this server's host has left a socket or a record (a cheap look).
pub fn wanted() -> bool {
    super::link::files().is_some_and(|f| f.socket.exists() || f.record.exists())
}

/// Adds the kept sessions to the local `terminal_list` reply.
pub async fn merge(ctx: &ToolCtx, raw: JsonObject, mut reply: Reply) -> Result<Reply, ToolError> {
    if !wanted() {
        return Ok(reply);
    }
    let verbose = raw.get("verbose").and_then(Value::as_bool) == Some(true);
    let mut entries = Vec::new();
    let mut note = None;
    match super::link::current(false).await {
        Ok(Some(link)) => {
            let mut args = raw.clone();
            args.insert("verbose".into(), Value::Bool(true));
            let answer =
                tokio::time::timeout(LIST_BOUND, link.call("terminal_list", args, &ctx.cancel))
                    .await;
            match answer {
                Ok(Ok(result)) => match super::forward::reply_of(result) {
                    Ok(r) => {
                        let idle = link.keep_idle_secs;
                        for entry in r.value["sessions"].as_array().cloned().unwrap_or_default() {
                            entries.push(shape(entry, verbose, idle));
                        }
                    }
                    Err(e) => note = Some(e.message),
                },
                Ok(Err(e)) => note = Some(e.message),
                Err(_) => {
                    note = Some(format!(
                        "the session host did not answer within {} s",
                        LIST_BOUND.as_secs()
                    ))
                }
            }
        }
        Ok(None) => {
            if let Some(files) = super::link::files()
                && let Some(rec) = record::read(&files.record)
                && !record::alive(rec.pid)
            {
                for id in &rec.ids {
                    entries.push(serde_json::json!({
                        "id": id, "kept": true, "alive": false,
                        "ended": format!("its session host (pid {}) is gone: it died or was killed", rec.pid),
                    }));
                }
            }
        }
        Err(e) => note = Some(e.message),
    }
    let Some(list) = reply.value.as_object_mut() else {
        return Ok(reply);
    };
    if let Some(Value::Array(local)) = list.get_mut("sessions") {
        local.extend(entries);
        let count = local.len();
        list.insert("count".into(), count.into());
    }
    if let Some(note) = note {
        list.insert("keptUnreachable".into(), Value::String(note));
    }
    Ok(reply)
}

/// One host entry as this server lists it.
fn shape(entry: Value, verbose: bool, keep_idle: Option<u64>) -> Value {
    let Value::Object(full) = entry else {
        return entry;
    };
    let ends = keep_idle.map(|idle| {
        let idle_ms = full.get("idleMs").and_then(Value::as_u64).unwrap_or(0);
        idle.saturating_sub(idle_ms / 1000)
    });
    let mut obj = if verbose {
        full
    } else {
        let mut brief = serde_json::Map::new();
        for key in ["id", "name", "cwd", "alive", "busy", "controller"] {
            if let Some(v) = full.get(key) {
                brief.insert(key.into(), v.clone());
            }
        }
        brief
    };
    obj.insert("kept".into(), Value::Bool(true));
    if let Some(ends) = ends {
        obj.insert("endsInSecs".into(), ends.into());
    }
    Value::Object(obj)
}

/// How long the web page waits for the host's list before showing the local one alone.
const PAGE_BOUND: Duration = Duration::from_secs(2);

/// The host's sessions as its verbose `terminal_list` gives them, each with `kept: true`
/// (for the web page); empty when no host runs or it does not answer within [`PAGE_BOUND`].
/// Never starts a host.
pub async fn host_sessions() -> Vec<Value> {
    if !wanted() {
        return Vec::new();
    }
    let Ok(Some(link)) = super::link::current(false).await else {
        return Vec::new();
    };
    let mut args = JsonObject::new();
    args.insert("verbose".into(), Value::Bool(true));
    let cancel = tokio_util::sync::CancellationToken::new();
    let Ok(Ok(result)) =
        tokio::time::timeout(PAGE_BOUND, link.call("terminal_list", args, &cancel)).await
    else {
        return Vec::new();
    };
    let Ok(reply) = super::forward::reply_of(result) else {
        return Vec::new();
    };
    let mut sessions = reply.value["sessions"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    for s in &mut sessions {
        if let Value::Object(o) = s {
            o.insert("kept".into(), Value::Bool(true));
        }
    }
    sessions
}

/// Kept session `id` as [`host_sessions`] lists it.
pub async fn host_session(id: &str) -> Option<Value> {
    host_sessions().await.into_iter().find(|s| s["id"] == id)
}
