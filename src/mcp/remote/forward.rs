//! Forwarding: the calls that go to a remote termpilot, and how their results come back.
//!
//! Every tool's handler asks [`wants`] first (a cheap look at the raw arguments). A call is
//! forwarded when it names a `host` reached the termpilot way, or a `sessionId` mapped to a
//! remote session ([`super::ids`]). The arguments go as they are (without `host`, with the
//! remote session id); the remote server validates them as it would its own. The result
//! comes back as it was (exit codes, cwd, `waitingForInput`, screenshots), with session ids
//! turned into local ones, plus `host` and `via: "termpilot"`.
//!
//! Which tools go where is each tool's own [`Forward`], declared in its `ToolDef`: a target
//! without termpilot is reached the plain way by the tools that have one
//! ([`Forward::has_plain_way`]: their own handler runs); the others are refused with a
//! sentence saying what the tool needs there.

use rmcp::model::{CallToolResult, JsonObject};
use serde_json::Value;
use termpilot_core::remote::Target;

use super::ids::{self, Mapped};
use super::link::Link;
use super::links::{Way, links};
use super::{VIA_TERMPILOT, route};
use crate::mcp::ctx::{BoxFuture, Forward, ToolCtx};
use crate::mcp::reply::{Reply, ToolError, text_of};

/// True when the call may leave this machine: [`crate::mcp::registry::ToolDef::call`] then
/// goes through [`call`].
pub fn wants(forward: Forward, raw: &JsonObject) -> bool {
    if forward == Forward::Never {
        return false;
    }
    if crate::keep::forward::wants(forward, raw) {
        return true;
    }
    if forward.takes_host() && raw.contains_key("host") {
        return true;
    }
    if ids::is_empty() {
        return false;
    }
    forward == Forward::Merge || mapped_session(raw).is_some()
}

fn mapped_session(raw: &JsonObject) -> Option<Mapped> {
    raw.get("sessionId")
        .and_then(Value::as_str)
        .and_then(ids::get)
}

/// Runs a call [`wants`] picked for tool `name` of kind `forward`: forwarded, or the local
/// handler `local` when it stays here.
/// `checked` is the local parser's verdict on the arguments: a tool with a plain way is
/// refused before anything runs, whichever way its target turns out to be reached.
pub async fn call(
    name: &'static str,
    forward: Forward,
    ctx: ToolCtx,
    raw: JsonObject,
    checked: Result<(), ToolError>,
    local: impl FnOnce(ToolCtx, JsonObject) -> BoxFuture,
) -> Result<Reply, ToolError> {
    if let Some(kept) = crate::keep::forward::call(name, forward, &ctx, &raw).await {
        return kept;
    }
    if let Some(mapped) = mapped_session(&raw) {
        return on_session(name, &ctx, raw, mapped).await;
    }
    if forward == Forward::Merge {
        let reply = local(ctx.clone(), raw.clone()).await?;
        let reply = if ids::is_empty() {
            reply
        } else {
            super::forward_list::merge(&ctx, raw.clone(), reply).await?
        };
        return crate::keep::list::merge(&ctx, raw, reply).await;
    }
    let host = match raw.get("host") {
        Some(Value::String(h)) => h.clone(),
        // A fleet, or a malformed host: the local handler's parser says what is wrong.
        _ if forward.has_plain_way() => return local(ctx, raw).await,
        _ => {
            return Err(ToolError::new(format!(
                "{name}: host must be a string such as user@box, an ssh alias, ssh://user@box:2222, docker://NAME, podman://NAME or k8s://NAMESPACE/POD."
            )));
        }
    };
    if forward.has_plain_way() {
        checked?;
        // What the plain form refuses or handles itself (fleets, local checks) stays local.
        if ["hosts", "concurrency", "successFile", "successFilePattern"]
            .iter()
            .any(|k| raw.contains_key(*k))
        {
            return local(ctx, raw).await;
        }
        check_env_names(&raw)?;
    }
    let target = route(&host)?;
    let way = links().way(&ctx, &target).await;
    let link = match way {
        Ok(Way::Termpilot(link)) => link,
        // An unreachable target: the same sentence the plain way would give.
        Err(e) => return Err(e),
        Ok(Way::Plain) if forward.has_plain_way() => return local(ctx, raw).await,
        Ok(Way::Plain) => {
            return Err(ToolError::new(format!(
                "{name} with host needs termpilot on the target, and `{target}` has none on PATH; install termpilot there, or pass its path there with --remote-bin (TERMPILOT_REMOTE_BIN)."
            )));
        }
    };
    let mut args = raw;
    args.remove("host");
    if forward == Forward::Start {
        return start(&ctx, &link, args).await;
    }
    let result = link.call(name, args, &ctx.cancel).await?;
    reply_of(&link, result)
}

/// `terminal_start` on a link: the remote session gets a local id.
async fn start(ctx: &ToolCtx, link: &Link, args: JsonObject) -> Result<Reply, ToolError> {
    let result = link
        .call("terminal_start", args.clone(), &ctx.cancel)
        .await?;
    let remote = result
        .structured_content
        .as_ref()
        .and_then(|v| v.get("sessionId"))
        .and_then(Value::as_str)
        .map(str::to_string);
    if let Some(remote) = remote
        && result.is_error != Some(true)
    {
        ids::insert(
            &ctx.core.sessions,
            &link.target,
            link.generation,
            &remote,
            args,
        );
    }
    let mut reply = reply_of(link, result)?;
    // The attach socket is on the target, not here.
    if let Some(obj) = reply.value.as_object_mut() {
        obj.insert("attach".into(), Value::Null);
    }
    Ok(reply)
}

/// A call on a session that lives on a remote termpilot.
async fn on_session(
    name: &str,
    ctx: &ToolCtx,
    mut args: JsonObject,
    mapped: Mapped,
) -> Result<Reply, ToolError> {
    let current = links()
        .live()
        .into_iter()
        .find(|l| l.target == mapped.target && l.generation == mapped.generation);
    let Some(link) = current else {
        return ended(name, ctx, mapped).await;
    };
    args.insert("sessionId".into(), Value::String(mapped.remote.clone()));
    // A secret prompt met there goes to the person behind this call (`secret_relay`).
    let _asks = link
        .relay
        .register(&mapped.remote, &mapped.local, ctx.person.clone());
    let result = link.call(name, args, &ctx.cancel).await?;
    if name == "terminal_stop" && result.is_error != Some(true) {
        ids::remove(&ctx.core.sessions, &mapped.local);
    }
    reply_of(&link, result)
}

/// The link a session was on has dropped: the session ended. Like a reserved id, the call
/// is told so and a session of the same shape starts under the same id on a new link
/// (`terminal_stop` just forgets it).
async fn ended(name: &str, ctx: &ToolCtx, mapped: Mapped) -> Result<Reply, ToolError> {
    let id = &mapped.local;
    let target = &mapped.target;
    if name == "terminal_stop" {
        ids::remove(&ctx.core.sessions, id);
        return Err(ToolError::new(format!(
            "Session {id} had already ended: the link to termpilot on `{target}` dropped; there is nothing to stop."
        )));
    }
    let fresh = match links().way(ctx, target).await {
        Ok(Way::Termpilot(link)) => link,
        Ok(Way::Plain) => {
            ids::remove(&ctx.core.sessions, id);
            return Err(ToolError::new(format!(
                "Session {id} had ended: the link to termpilot on `{target}` dropped, and termpilot is no longer found there; start a new session with terminal_start."
            )));
        }
        Err(e) => {
            return Err(ToolError::new(format!(
                "Session {id} had ended: the link to termpilot on `{target}` dropped, and it could not be restarted ({}); a later call on this id tries again.",
                e.message.trim_end_matches('.')
            )));
        }
    };
    let result = fresh
        .call("terminal_start", mapped.start.clone(), &ctx.cancel)
        .await?;
    let remote = result
        .structured_content
        .as_ref()
        .and_then(|v| v.get("sessionId"))
        .and_then(Value::as_str);
    match remote {
        Some(remote) if result.is_error != Some(true) => {
            ids::rebind(id, fresh.generation, remote);
            Err(ToolError::new(format!(
                "Session {id} had ended (the link to termpilot on `{target}` dropped); a fresh shell of the same shape now runs under the same id, and this call did nothing: send it again."
            )))
        }
        _ => {
            ids::remove(&ctx.core.sessions, id);
            Err(ToolError::new(format!(
                "Session {id} had ended (the link to termpilot on `{target}` dropped), and a new one could not be started there ({}); start one with terminal_start.",
                text_of(&result).trim_end_matches('.')
            )))
        }
    }
}

/// `env` names must be shell variable names on a remote target, whichever the way (the
/// plain way exports them in a shell script).
fn check_env_names(raw: &JsonObject) -> Result<(), ToolError> {
    let Some(Value::Object(env)) = raw.get("env") else {
        return Ok(());
    };
    let env: Vec<(String, String)> = env.keys().map(|k| (k.clone(), String::new())).collect();
    Ok(termpilot_core::session::RemoteShell::check_env(&env)?)
}

/// A remote result as a local one: session ids made local, `host` and `via` added, images
/// kept; a remote tool error stays an error (its ids made local too).
pub fn reply_of(link: &Link, result: CallToolResult) -> Result<Reply, ToolError> {
    if result.is_error == Some(true) {
        let mut message = text_of(&result);
        for m in ids::all() {
            if m.generation == link.generation && message.contains(&m.remote) {
                message = message.replace(&m.remote, &m.local);
            }
        }
        return Err(ToolError::new(message));
    }
    let mut reply = crate::mcp::reply::forwarded(&result);
    localize(&mut reply.value, link.generation);
    if let Some(obj) = reply.value.as_object_mut() {
        decorate(obj, &link.target);
    }
    Ok(reply)
}

/// `host` and `via: "termpilot"` on a result object.
pub fn decorate(obj: &mut serde_json::Map<String, Value>, target: &Target) {
    obj.insert("host".into(), Value::String(target.to_string()));
    obj.insert("via".into(), Value::String(VIA_TERMPILOT.into()));
}

/// Replaces remote session ids (`sessionId` anywhere) with their local ids.
fn localize(value: &mut Value, generation: u64) {
    match value {
        Value::Object(obj) => {
            for (key, v) in obj.iter_mut() {
                if key == "sessionId"
                    && let Some(remote) = v.as_str()
                    && let Some(local) = ids::local_of(generation, remote)
                {
                    *v = Value::String(local);
                } else {
                    localize(v, generation);
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|v| localize(v, generation)),
        _ => {}
    }
}
