//! `terminal_list` with sessions on remote termpilots: the local list, then each live
//! link's sessions under their local ids (with `host` and `via`), then the sessions whose
//! link dropped (`alive: false`, and why). Each link answers on its own bounded call, all
//! at once, so a slow host delays the list by at most its own bound.

use std::time::Duration;

use rmcp::model::JsonObject;
use serde_json::Value;

use super::forward::decorate;
use super::ids;
use super::links::links;
use crate::mcp::ctx::ToolCtx;
use crate::mcp::reply::text_of;
use crate::mcp::reply::{Reply, ToolError};

/// How long one link's list may take before it is left out (with a note).
const LIST_BOUND: Duration = Duration::from_secs(5);

/// Adds the remote sessions to the local `terminal_list` reply.
pub async fn merge(ctx: &ToolCtx, raw: JsonObject, mut reply: Reply) -> Result<Reply, ToolError> {
    let live = links().live();
    let asked: Vec<_> = live
        .iter()
        .map(|link| {
            let (link, raw, cancel) = (link.clone(), raw.clone(), ctx.cancel.clone());
            tokio::spawn(async move {
                let r = tokio::time::timeout(LIST_BOUND, link.call("terminal_list", raw, &cancel))
                    .await;
                (link, r)
            })
        })
        .collect();
    let mut entries: Vec<Value> = Vec::new();
    let mut notes: Vec<String> = Vec::new();
    for handle in asked {
        let Ok((link, answer)) = handle.await else {
            continue;
        };
        let result = match answer {
            Ok(Ok(r)) if r.is_error != Some(true) => r,
            Ok(Ok(r)) => {
                notes.push(format!("{}: {}", link.target, text_of(&r)));
                continue;
            }
            Ok(Err(e)) => {
                notes.push(format!("{}: {}", link.target, e.message));
                continue;
            }
            Err(_) => {
                notes.push(format!(
                    "{}: no answer within {} s",
                    link.target,
                    LIST_BOUND.as_secs()
                ));
                continue;
            }
        };
        let sessions = result
            .structured_content
            .as_ref()
            .and_then(|v| v.get("sessions"))
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        for mut entry in sessions {
            let Some(obj) = entry.as_object_mut() else {
                continue;
            };
            let key = if obj.contains_key("id") {
                "id"
            } else {
                "sessionId"
            };
            let Some(local) = obj
                .get(key)
                .and_then(Value::as_str)
                .and_then(|remote| ids::local_of(link.generation, remote))
            else {
                continue;
            };
            obj.insert(key.into(), Value::String(local));
            decorate(obj, &link.target);
            entries.push(entry);
        }
    }
    for m in ids::all() {
        let on_live = live
            .iter()
            .any(|l| l.target == m.target && l.generation == m.generation);
        if !on_live {
            let mut obj = serde_json::Map::new();
            obj.insert("id".into(), Value::String(m.local.clone()));
            obj.insert("alive".into(), Value::Bool(false));
            obj.insert(
                "ended".into(),
                Value::String("the link to termpilot there dropped".into()),
            );
            decorate(&mut obj, &m.target);
            entries.push(Value::Object(obj));
        }
    }
    let Some(list) = reply.value.as_object_mut() else {
        return Ok(reply);
    };
    if let Some(Value::Array(local)) = list.get_mut("sessions") {
        local.extend(entries);
        let count = local.len();
        list.insert("count".into(), count.into());
    }
    if !notes.is_empty() {
        list.insert("unreachable".into(), notes.into());
    }
    Ok(reply)
}
