//! Secret prompts on a remote termpilot, answered by the person behind this server's client
//! (issue 35).
//!
//! The remote termpilot detects the prompt (its `/proc`, its terminal) and, as for any
//! client, sends `elicitation/create` (mode `url`) to its client — the link ([`LinkClient`]),
//! which declares URL elicitation and the [`CAPABILITY`] relay. Its URL is a page on the
//! target's loopback, useless here; the request's `_meta` names the remote session, program
//! and prompt. The link re-asks the person behind the local call on that session (the
//! call's `Asker`, registered by `forward::on_session` while the call runs): a local one-time
//! page, the local client's own URL elicitation. What the person types there is the answer
//! to the remote's request: `action: accept` with `content: {"termpilot/secret":
//! "tpsecret:<hex>"}` — the secret channel is the JSON-RPC response on the link's own stdio
//! (the ssh/exec transport, never a tool result). The remote takes content from an accept
//! only from a client that declared [`CAPABILITY`] (any other URL client's accept carries
//! nothing), types it only if its own checks hold (the same program still waits at the
//! same prompt with echo off), and sends `notifications/elicitation/complete` once typed;
//! that notification is how the local page learns it was typed. The hex form keeps the
//! secret recognisable to the log's redaction (`web::secret::redact`) at trace on both sides.
//! A decline or cancel goes back as such; nobody to ask here (no call waiting, a client
//! without URL elicitation) is an error, which the remote reports as "no person was asked".

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rmcp::model::{
    ClientCapabilities, ClientConfig, CustomNotification, ElicitRequestParams, ElicitResult,
    ElicitationAction, ElicitationCapability, MetaObject, RequestMetaObject,
    UrlElicitationCapability,
};
use rmcp::service::{NotificationContext, RequestContext};
use rmcp::{ClientHandler, ErrorData, RoleClient};
use serde_json::{Value, json};
use termpilot_core::session::{Asker, PersonReply, SecretPrompt};
use tokio::sync::oneshot;
use tokio_util::sync::CancellationToken;
use zeroize::Zeroizing;

/// The experimental client capability of a link that relays secrets.
pub const CAPABILITY: &str = "termpilot/secretRelay";
/// The `_meta` key naming the prompt, and the accept's content key carrying the secret.
const PROMPT_KEY: &str = "termpilot/secretPrompt";
const SECRET_KEY: &str = "termpilot/secret";
/// The encoded secret's prefix (what the log's redaction looks for).
pub const PREFIX: &str = "tpsecret:";
/// How long the local page waits for the remote's word that it typed the secret.
const TYPED_WITHIN: Duration = Duration::from_secs(10);

/// A local call on a remote session: its number, its local session id, who it asks, and
/// what ends its asks when the call is over.
type Call = (u64, String, Asker, CancellationToken);

/// What one link knows about the calls waiting on its sessions and the secrets it sent.
pub struct Relay {
    target: String,
    /// Remote session id → the local calls on it (the oldest holds the remote's turn).
    askers: Mutex<HashMap<String, Vec<Call>>>,
    next: AtomicU64,
    /// Elicitation id → where to say it was typed.
    typed: Mutex<HashMap<String, oneshot::Sender<()>>>,
}

impl Relay {
    pub fn new(target: String) -> Arc<Relay> {
        Arc::new(Relay {
            target,
            askers: Mutex::new(HashMap::new()),
            next: AtomicU64::new(0),
            typed: Mutex::new(HashMap::new()),
        })
    }

    /// While the returned guard lives, a secret prompt of remote session `remote` goes to
    /// `asker` (the call on local session `local`).
    pub fn register(self: &Arc<Self>, remote: &str, local: &str, asker: Option<Asker>) -> Waiting {
        let Some(asker) = asker else {
            return Waiting(None);
        };
        let n = self.next.fetch_add(1, Ordering::Relaxed);
        let over = CancellationToken::new();
        lock(&self.askers)
            .entry(remote.to_string())
            .or_default()
            .push((n, local.to_string(), asker, over.clone()));
        Waiting(Some((self.clone(), remote.to_string(), n, over)))
    }

    fn asker_of(&self, remote: &str) -> Option<(String, Asker, CancellationToken)> {
        lock(&self.askers)
            .get(remote)
            .and_then(|calls| calls.first())
            .map(|(_, local, asker, over)| (local.clone(), asker.clone(), over.clone()))
    }
}

/// A call registered with [`Relay::register`]; unregistered when dropped, and a person
/// still being asked for it is asked no longer (the local link ends).
pub struct Waiting(Option<(Arc<Relay>, String, u64, CancellationToken)>);

impl Drop for Waiting {
    fn drop(&mut self) {
        if let Some((relay, remote, n, over)) = self.0.take() {
            over.cancel();
            let mut askers = lock(&relay.askers);
            if let Some(calls) = askers.get_mut(&remote) {
                calls.retain(|(m, _, _, _)| *m != n);
                if calls.is_empty() {
                    askers.remove(&remote);
                }
            }
        }
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// The link's MCP client: declares URL elicitation and the relay, and relays.
pub struct LinkClient {
    pub relay: Arc<Relay>,
}

impl ClientHandler for LinkClient {
    fn get_info(&self) -> ClientConfig {
        let mut elicitation = ElicitationCapability::new();
        elicitation.url = Some(UrlElicitationCapability::default());
        let mut capabilities = ClientCapabilities::default();
        capabilities.elicitation = Some(elicitation);
        capabilities.experimental = Some([(CAPABILITY.to_string(), Default::default())].into());
        let mut info = ClientConfig::default();
        info.capabilities = capabilities;
        info
    }

    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        let ElicitRequestParams::UrlElicitationParams {
            meta,
            elicitation_id,
            ..
        } = request
        else {
            return Err(nobody("the local termpilot relays secret prompts only"));
        };
        // rmcp moves a request's `_meta` into its context.
        let asked = meta
            .as_ref()
            .and_then(|m| m.0.0.get(PROMPT_KEY))
            .or_else(|| context.meta.0.0.get(PROMPT_KEY))
            .cloned();
        let asked = asked.as_ref();
        let field = |k: &str| asked.and_then(|a| a.get(k)).and_then(Value::as_str);
        let (Some(remote), Some(program), Some(prompt)) =
            (field("session"), field("program"), field("prompt"))
        else {
            return Err(nobody("the request does not name its secret prompt"));
        };
        let Some((local, asker, over)) = self.relay.asker_of(remote) else {
            return Err(nobody(
                "no call of the local termpilot's client waits on this session",
            ));
        };
        let here = SecretPrompt {
            session: local,
            program: program.to_string(),
            prompt: prompt.to_string(),
            group: 0,
        };
        let reply = tokio::select! {
            reply = asker.0.ask(&here) => reply,
            _ = context.ct.cancelled() => return Ok(ElicitResult::new(ElicitationAction::Cancel)),
            _ = over.cancelled() => return Ok(ElicitResult::new(ElicitationAction::Cancel)),
        };
        match reply {
            PersonReply::Secret { secret, typed } => {
                let (done, said) = oneshot::channel();
                lock(&self.relay.typed).insert(elicitation_id.clone(), done);
                let relay = self.relay.clone();
                tokio::spawn(async move {
                    let result = match tokio::time::timeout(TYPED_WITHIN, said).await {
                        Ok(Ok(())) => Ok(()),
                        _ => Err(format!(
                            "termpilot on `{}` did not type it (the prompt went away or changed there); nothing more will be typed from this link.",
                            relay.target
                        )),
                    };
                    lock(&relay.typed).remove(&elicitation_id);
                    let _ = typed.send(result);
                });
                let mut result = ElicitResult::new(ElicitationAction::Accept);
                result.content = Some(json!({ SECRET_KEY: encode(&secret) }));
                Ok(result)
            }
            PersonReply::Declined => Ok(ElicitResult::new(ElicitationAction::Decline)),
            PersonReply::Cancelled => Ok(ElicitResult::new(ElicitationAction::Cancel)),
            PersonReply::NotAsked(why) => Err(nobody(&why)),
        }
    }

    async fn on_custom_notification(
        &self,
        notification: CustomNotification,
        _context: NotificationContext<RoleClient>,
    ) {
        if notification.method != "notifications/elicitation/complete" {
            return;
        }
        let id = notification
            .params
            .as_ref()
            .and_then(|p| p.get("elicitationId"))
            .and_then(Value::as_str);
        if let Some(done) = id.and_then(|id| lock(&self.relay.typed).remove(id)) {
            let _ = done.send(());
        }
    }
}

fn nobody(why: &str) -> ErrorData {
    ErrorData::internal_error(why.to_string(), None)
}

/// The `_meta` of a secret prompt's request (the remote side): which session, program and
/// prompt, for a relaying client.
pub fn meta(prompt: &SecretPrompt) -> RequestMetaObject {
    let mut meta = serde_json::Map::new();
    meta.insert(
        PROMPT_KEY.into(),
        json!({"session": prompt.session, "program": prompt.program, "prompt": prompt.prompt}),
    );
    RequestMetaObject(MetaObject(meta))
}

/// The secret in an accept from a relaying client (the remote side), its copy in the result
/// zeroed; `None` for any other answer.
pub fn secret_of(result: &mut ElicitResult) -> Option<Zeroizing<Vec<u8>>> {
    let value = result.content.as_mut()?.get_mut(SECRET_KEY)?;
    let Value::String(encoded) = value else {
        return None;
    };
    let secret = decode(encoded);
    zeroize::Zeroize::zeroize(encoded);
    secret
}

/// `tpsecret:` and the bytes as lowercase hex.
fn encode(secret: &[u8]) -> String {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(PREFIX.len() + secret.len() * 2);
    out.push_str(PREFIX);
    for b in secret {
        out.push(HEX[usize::from(b >> 4)] as char);
        out.push(HEX[usize::from(b & 15)] as char);
    }
    out
}

fn decode(encoded: &str) -> Option<Zeroizing<Vec<u8>>> {
    let hex = encoded.strip_prefix(PREFIX)?.as_bytes();
    if hex.len() % 2 != 0 {
        return None;
    }
    let nibble = |c: u8| (c as char).to_digit(16).map(|d| d as u8);
    let mut out = Zeroizing::new(Vec::with_capacity(hex.len() / 2));
    for pair in hex.chunks(2) {
        out.push(nibble(pair[0])? << 4 | nibble(pair[1])?);
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_secret_survives_the_round_trip() {
        let secret = "pä55 wörd!".as_bytes();
        let encoded = encode(secret);
        assert!(encoded.starts_with(PREFIX));
        assert_eq!(decode(&encoded).unwrap().as_slice(), secret);
        assert!(decode("tpsecret:abc").is_none());
        assert!(decode("abcd").is_none());
    }
}
