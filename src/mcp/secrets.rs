//! A person answers secret prompts through URL-mode elicitation (issue 35, protocol
//! 2025-11-25): when a command waits at a prompt with echo off, the waiting call sends the
//! client `elicitation/create` with mode `url` and a one-time page on loopback
//! ([`crate::web::secret`], on the web listener, started on demand on a free port when none
//! runs). The person's answer goes from that page to the terminal; the client and the model
//! never hold it. After it was typed the server sends `notifications/elicitation/complete`.
//!
//! Each request's `_meta` names its prompt; a client that declared the
//! `termpilot/secretRelay` capability (a local termpilot's link to this one,
//! [`crate::mcp::remote::secret_relay`]) re-asks its own person with its own page and
//! answers with the secret itself, which is typed under the same checks.
//!
//! `--ask-person secrets|off` (default `secrets`; a `--compat` preset keeps its seed's
//! behaviour, off, unless the flag is given). A client without URL elicitation is asked
//! nothing: its result says `secretPrompt: true` with a hint.

use std::collections::HashSet;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use rmcp::model::{CustomNotification, ElicitRequestParams, ElicitationAction, ServerNotification};
use rmcp::service::ElicitationMode;
use rmcp::{Peer, RoleServer};
use termpilot_core::Core;
use termpilot_core::session::{AskPerson, Asker, PersonReply, SecretPrompt};
use tokio::sync::oneshot;

use crate::web::secret::Link;

/// The values of `--ask-person`.
pub const MODES: [&str; 2] = ["secrets", "off"];

static ON: OnceLock<bool> = OnceLock::new();

/// Sets `--ask-person` once at start: `flag` as given, else on unless a preset is served.
pub fn configure(flag: Option<&str>, preset: bool) {
    let on = match flag {
        Some(mode) => mode != "off",
        None => !preset,
    };
    let _ = ON.set(on);
}

/// Whether `--ask-person` is on (off: results are as they were before, no secret fields).
pub fn enabled() -> bool {
    *ON.get().unwrap_or(&true)
}

/// The loopback listeners serving the page (`host:port`), and the one started on demand.
struct Listeners {
    authority: Option<String>,
    on_demand: Option<crate::mcp::http::Running>,
}

static LISTENERS: Mutex<Listeners> = Mutex::new(Listeners {
    authority: None,
    on_demand: None,
});
/// One start at a time.
static STARTING: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

fn listeners() -> std::sync::MutexGuard<'static, Listeners> {
    LISTENERS.lock().unwrap_or_else(|e| e.into_inner())
}

/// A listener serves the page at `addr`: a loopback one can carry secret links.
pub fn listening(addr: SocketAddr) {
    if addr.ip().is_loopback() {
        let mut l = listeners();
        if l.authority.is_none() {
            l.authority = Some(addr.to_string());
        }
    }
}

/// The page's address for people, when a loopback listener runs (for hints).
pub fn page_url() -> Option<String> {
    listeners()
        .authority
        .as_ref()
        .map(|a| format!("http://{a}/"))
}

/// A loopback listener's `host:port`, started on a free port when none runs.
async fn ensure_listener(core: &Arc<Core>) -> anyhow::Result<String> {
    let _one = STARTING.lock().await;
    if let Some(a) = listeners().authority.clone() {
        return Ok(a);
    }
    let options = crate::mcp::http::Options {
        addr: "127.0.0.1:0".into(),
        allow_remote: false,
        token: None,
        page_only: true,
    };
    let running = crate::mcp::http::start(options, core.clone(), None).await?;
    let mut l = listeners();
    l.on_demand = Some(running);
    l.authority
        .clone()
        .ok_or_else(|| anyhow::anyhow!("the page's listener did not come up on loopback"))
}

/// Stops the listener started on demand (at the server's end).
pub async fn stop() {
    let running = listeners().on_demand.take();
    if let Some(running) = running {
        running.stop().await;
    }
}

/// The asker for one tool call, when `--ask-person` is on.
pub fn asker(peer: &Peer<RoleServer>, core: &Arc<Core>) -> Option<Asker> {
    enabled().then(|| {
        Asker(Arc::new(Person {
            peer: peer.clone(),
            core: core.clone(),
        }))
    })
}

/// Asks the person behind one client.
struct Person {
    peer: Peer<RoleServer>,
    core: Arc<Core>,
}

impl Person {
    fn url_capable(&self) -> bool {
        let modes: HashSet<ElicitationMode> = self.peer.supported_elicitation_modes();
        modes.contains(&ElicitationMode::Url)
    }

    async fn ask_url(&self, prompt: &SecretPrompt) -> PersonReply {
        if !self.url_capable() {
            return PersonReply::NotAsked(NO_CAPABILITY.into());
        }
        let authority = match ensure_listener(&self.core).await {
            Ok(a) => a,
            Err(e) => {
                return PersonReply::NotAsked(format!(
                    "the page for the person could not be served ({e:#})"
                ));
            }
        };
        let mut link = match Link::open(&authority, prompt) {
            Ok(link) => link,
            Err(e) => return PersonReply::NotAsked(format!("no link could be made ({e:#})")),
        };
        let id = link.id();
        let params = ElicitRequestParams::UrlElicitationParams {
            // For a relaying client (a local termpilot's link): which prompt this is.
            meta: Some(crate::mcp::remote::secret_relay::meta(prompt)),
            message: format!(
                "{} asks: {}\nOpen this page on this machine to type the answer straight into the terminal (session {}); it never reaches the agent.",
                prompt.program, prompt.prompt, prompt.session
            ),
            url: link.url.clone(),
            elicitation_id: id.clone(),
        };
        let lifetime = link
            .expires
            .saturating_duration_since(tokio::time::Instant::now().into_std());
        let peer = self.peer.clone();
        let mut request = Box::pin(async move {
            peer.create_elicitation_with_timeout(params, Some(lifetime))
                .await
        });
        let expired = tokio::time::sleep_until(link.expires.into());
        tokio::pin!(expired);
        let relays = self.relays();
        let mut accepted = false;
        loop {
            tokio::select! {
                answer = &mut request, if !accepted => match answer {
                    Ok(mut r) => match r.action {
                        ElicitationAction::Decline => return PersonReply::Declined,
                        ElicitationAction::Cancel => return PersonReply::Cancelled,
                        // A relaying client (a local termpilot) answers with the secret
                        // its person typed on its own page.
                        _ if relays => match crate::mcp::remote::secret_relay::secret_of(&mut r) {
                            Some(secret) => return self.typing(id, secret, None, None::<std::future::Ready<()>>),
                            None => accepted = true,
                        },
                        // The person agreed to open the page: wait for what they type there.
                        _ => accepted = true,
                    },
                    Err(e) => {
                        return PersonReply::NotAsked(format!(
                            "the client did not take the request ({e})"
                        ));
                    }
                },
                submitted = &mut link.submitted => {
                    let Ok(submit) = submitted else {
                        return PersonReply::NotAsked("the link ended".into());
                    };
                    let pending = (!accepted).then_some(request);
                    return self.typing(id, submit.secret, Some(submit.reply), pending);
                }
                _ = &mut expired => {
                    return PersonReply::NotAsked(
                        "nobody answered on the page before its link expired".into(),
                    );
                }
            }
        }
    }

    /// Whether the client relays secrets (a local termpilot's link, `secret_relay`): only
    /// then does an accept carry one.
    fn relays(&self) -> bool {
        self.peer.peer_info().is_some_and(|info| {
            info.capabilities
                .experimental
                .as_ref()
                .is_some_and(|e| e.contains_key(crate::mcp::remote::secret_relay::CAPABILITY))
        })
    }

    /// The secret to type; once the call says whether it was typed, the page (if it came
    /// from one) is told and the client gets `notifications/elicitation/complete`.
    fn typing<F>(
        &self,
        id: String,
        secret: zeroize::Zeroizing<Vec<u8>>,
        page: Option<oneshot::Sender<Result<(), String>>>,
        pending: Option<F>,
    ) -> PersonReply
    where
        F: std::future::Future + Send + 'static,
    {
        let (typed, said) = oneshot::channel();
        let peer = self.peer.clone();
        tokio::spawn(async move {
            let result = said.await.unwrap_or_else(|_| {
                Err("The call ended before it could type; nothing was typed.".into())
            });
            let done = result.is_ok();
            if let Some(page) = page {
                let _ = page.send(result);
            }
            if done {
                let note = CustomNotification::new(
                    "notifications/elicitation/complete",
                    Some(serde_json::json!({ "elicitationId": id })),
                );
                let _ = peer
                    .send_notification(ServerNotification::CustomNotification(note))
                    .await;
            }
            // The client's answer to the request, if it is still to come.
            if let Some(pending) = pending {
                let _ = tokio::time::timeout(ANSWER_AFTER, pending).await;
            }
        });
        PersonReply::Secret { secret, typed }
    }
}

/// How long the client's answer is still awaited after the page was submitted.
const ANSWER_AFTER: Duration = Duration::from_secs(30);

const NO_CAPABILITY: &str = "the client does not support URL elicitation";

impl AskPerson for Person {
    fn ask<'a>(
        &'a self,
        prompt: &'a SecretPrompt,
    ) -> std::pin::Pin<Box<dyn std::future::Future<Output = PersonReply> + Send + 'a>> {
        Box::pin(self.ask_url(prompt))
    }
}

/// The result's sentence for what a person did, and the hint that goes with a prompt left
/// waiting.
pub fn said(
    outcome: Option<&termpilot_core::session::PersonOutcome>,
    still_secret: bool,
) -> (Option<String>, Option<String>) {
    use termpilot_core::session::PersonOutcome as O;
    if !enabled() {
        return (None, None);
    }
    let person = outcome.map(|o| match o {
        O::Answered => "A person answered the secret prompt on termpilot's one-time page; what they typed went to the terminal and is not shown here.".to_string(),
        O::Declined => "A person declined to answer the secret prompt; nothing was typed.".to_string(),
        O::Cancelled => "The person dismissed the question; nothing was typed.".to_string(),
        O::PromptGone => "The secret prompt went away before anyone answered; nothing was typed.".to_string(),
        O::NotAsked(why) => format!("No person was asked: {why}."),
    });
    let hint = still_secret.then(|| {
        let page = match page_url() {
            Some(url) => format!("a person can answer it in the password field the web page ({url}) shows on this session (it goes to the terminal only, never to you)"),
            None => "a person can answer it in the password field the web page shows on this session, when the page runs (termpilot --web)".to_string(),
        };
        format!(
            "The command waits at a secret prompt (echo off): do not ask for the secret in the chat; {page}. Or stop it with terminal_send_key Ctrl+C."
        )
    });
    (person, hint)
}
