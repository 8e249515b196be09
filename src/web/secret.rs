//! The one-time page where a person answers a secret prompt (issue 35): `GET /secret/<token>`
//! shows the program, its prompt and a password field; `POST /secret/<token>` hands what was
//! typed to the call waiting on that prompt (the core's secret prompts, [`termpilot_core::session::SecretPrompt`]), which types
//! it only if the same program still waits at the same prompt with echo off.
//!
//! A link is 256 random bits, works once, and only on the loopback listener it was made for:
//! the `Host` must be that listener's and a submit must carry its `Origin`. It ends when its
//! ask ends (the prompt went away, the call ended, the person declined) or after [`ttl`]
//! (10 minutes; `TERMPILOT_SECRET_LINK_TTL_MS`, for tests). A used link keeps saying so.
//! What was typed is read into a zeroed-on-drop buffer, never logged, never answered back.

use std::collections::HashMap;
use std::sync::{LazyLock, Mutex};
use std::time::{Duration, Instant};

use axum::body::Body;
use axum::extract::Path;
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use termpilot_core::session::SecretPrompt;
use tokio::sync::oneshot;
use zeroize::{Zeroize, Zeroizing};

/// How long a link lives at most.
pub const TTL: Duration = Duration::from_secs(600);
/// Hidden: a shorter lifetime, in milliseconds (the tests' expired link).
pub const TTL_ENV: &str = "TERMPILOT_SECRET_LINK_TTL_MS";
/// The most links remembered (open, used or ended); the oldest ended ones go first.
const MAX_LINKS: usize = 256;
/// The most bytes a submit may carry.
pub(super) const MAX_SECRET: usize = 4096;
/// How long a submit waits for the terminal's answer.
const TYPED_WITHIN: Duration = Duration::from_secs(10);

/// The lifetime of a new link.
pub fn ttl() -> Duration {
    std::env::var(TTL_ENV)
        .ok()
        .and_then(|v| v.parse::<u64>().ok())
        .map_or(TTL, Duration::from_millis)
        .min(TTL)
}

/// What a submit hands to the waiting call.
pub struct Submit {
    pub secret: Zeroizing<Vec<u8>>,
    /// Whether it was typed (`Err`: a sentence why not).
    pub reply: oneshot::Sender<Result<(), String>>,
}

enum State {
    Open(oneshot::Sender<Submit>),
    Used,
    Ended(&'static str),
}

struct Entry {
    authority: String,
    program: String,
    prompt: String,
    session: String,
    made: Instant,
    expires: Instant,
    state: State,
}

static LINKS: LazyLock<Mutex<HashMap<String, Entry>>> = LazyLock::new(Default::default);

fn links() -> std::sync::MutexGuard<'static, HashMap<String, Entry>> {
    LINKS.lock().unwrap_or_else(|e| e.into_inner())
}

/// An open link; ended when dropped (its ask is over).
pub struct Link {
    token: String,
    /// The id the elicitation carries: random too, and no part of the token.
    id: String,
    pub url: String,
    pub expires: Instant,
    pub submitted: oneshot::Receiver<Submit>,
}

impl Link {
    /// A new link on the loopback listener at `authority` (`127.0.0.1:port`) for `prompt`.
    pub fn open(authority: &str, prompt: &SecretPrompt) -> anyhow::Result<Link> {
        let token = super::token::random_hex(32)?;
        let id = format!("secret-{}", super::token::random_hex(8)?);
        let (tx, rx) = oneshot::channel();
        let now = Instant::now();
        let expires = now + ttl();
        let mut links = links();
        if links.len() >= MAX_LINKS {
            let oldest = links
                .iter()
                .filter(|(_, e)| !matches!(e.state, State::Open(_)))
                .min_by_key(|(_, e)| e.made)
                .map(|(k, _)| k.clone());
            if let Some(k) = oldest {
                links.remove(&k);
            }
        }
        links.insert(
            token.clone(),
            Entry {
                authority: authority.to_string(),
                program: prompt.program.clone(),
                prompt: prompt.prompt.clone(),
                session: prompt.session.clone(),
                made: now,
                expires,
                state: State::Open(tx),
            },
        );
        Ok(Link {
            url: format!("http://{authority}/secret/{token}"),
            id,
            token,
            expires,
            submitted: rx,
        })
    }

    /// The id the elicitation carries.
    pub fn id(&self) -> String {
        self.id.clone()
    }
}

impl Drop for Link {
    fn drop(&mut self) {
        if let Some(e) = links().get_mut(&self.token)
            && matches!(e.state, State::Open(_))
        {
            e.state = State::Ended(if Instant::now() >= e.expires {
                "it expired"
            } else {
                "the question is over (the prompt went away, the call ended or the person declined)"
            });
        }
    }
}

/// `text` with every one-time link's token replaced by `[redacted]` (the wire log at trace
/// shows each `elicitation/create` whole: its URL must not be usable from the log).
/// So is a secret relayed to a remote termpilot (`tpsecret:<hex>`, `mcp::remote::secret_relay`).
pub fn redact(text: &str) -> std::borrow::Cow<'_, str> {
    let mut text = std::borrow::Cow::Borrowed(text);
    // A link's token is 64 hex digits (shorter runs are other paths: `/api/secret/<id>`).
    for (mark, least) in [
        ("/secret/", 32),
        (crate::mcp::remote::secret_relay::PREFIX, 1),
    ] {
        if text.contains(mark) {
            text = std::borrow::Cow::Owned(redact_after(&text, mark, least));
        }
    }
    text
}

/// `text` with the hex digits after each `mark` (at least `least` of them) replaced by
/// `[redacted]`.
fn redact_after(text: &str, mark: &str, least: usize) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find(mark) {
        let (before, after) = rest.split_at(at + mark.len());
        out.push_str(before);
        let token = after.bytes().take_while(u8::is_ascii_hexdigit).count();
        if token >= least {
            out.push_str("[redacted]");
            rest = &after[token..];
        } else {
            rest = after;
        }
    }
    out.push_str(rest);
    out
}

/// The open links by session (for the web page's list: a session waiting at a secret prompt
/// that a call asked a person about shows its link).
pub fn open_links() -> HashMap<String, String> {
    let now = Instant::now();
    links()
        .iter()
        .filter(|(_, e)| matches!(e.state, State::Open(_)) && now < e.expires)
        .map(|(token, e)| {
            (
                e.session.clone(),
                format!("http://{}/secret/{token}", e.authority),
            )
        })
        .collect()
}

/// `GET /secret/<token>`: the page, or a sentence why not.
pub async fn page(Path(token): Path<String>, headers: HeaderMap) -> Response {
    let (program, prompt, session) = {
        let mut links = links();
        let Some(e) = links.get_mut(&token) else {
            return refuse(StatusCode::NOT_FOUND, UNKNOWN);
        };
        if !host_is(&headers, &e.authority) {
            return refuse(StatusCode::FORBIDDEN, WRONG_PLACE);
        }
        if let Err(why) = usable(e) {
            return refuse(StatusCode::GONE, &why);
        }
        (e.program.clone(), e.prompt.clone(), e.session.clone())
    };
    let html = PAGE
        .replace("{PROGRAM}", &escape(&program))
        .replace("{PROMPT}", &escape(&prompt))
        .replace("{SESSION}", &escape(&session));
    (
        [
            (header::CONTENT_TYPE, "text/html; charset=utf-8"),
            (header::CACHE_CONTROL, "no-store"),
            (header::REFERRER_POLICY, "no-referrer"),
            (header::X_FRAME_OPTIONS, "DENY"),
            (
                header::CONTENT_SECURITY_POLICY,
                "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; connect-src 'self'; frame-ancestors 'none'",
            ),
        ],
        html,
    )
        .into_response()
}

/// `POST /secret/<token>`: the secret (the whole body) to the waiting call, once.
pub async fn submit(Path(token): Path<String>, headers: HeaderMap, body: Body) -> Response {
    let secret = match read_secret(body).await {
        Ok(secret) => secret,
        Err(why) => return refuse(StatusCode::BAD_REQUEST, why),
    };
    let sender = {
        let mut links = links();
        let Some(e) = links.get_mut(&token) else {
            return refuse(StatusCode::NOT_FOUND, UNKNOWN);
        };
        let origin = headers.get(header::ORIGIN).and_then(|o| o.to_str().ok());
        if !host_is(&headers, &e.authority) || origin != Some(&format!("http://{}", e.authority)) {
            return refuse(StatusCode::FORBIDDEN, WRONG_PLACE);
        }
        if let Err(why) = usable(e) {
            return refuse(StatusCode::GONE, &why);
        }
        match std::mem::replace(&mut e.state, State::Used) {
            State::Open(sender) => sender,
            _ => return refuse(StatusCode::GONE, USED),
        }
    };
    hand_over(sender, secret).await
}

/// Hands `secret` to the call waiting on an open link of session `session` whose program and
/// prompt are these (the web page's password field, `super::secret_field`), using the link
/// up; `None` when no such link is open.
pub(super) async fn answer_open_link(
    session: &str,
    program: &str,
    prompt: &str,
    secret: Zeroizing<Vec<u8>>,
) -> Result<Response, Zeroizing<Vec<u8>>> {
    let sender = {
        let now = Instant::now();
        let mut links = links();
        let open = links.values_mut().find(|e| {
            e.session == session
                && e.program == program
                && e.prompt == prompt
                && matches!(e.state, State::Open(_))
                && now < e.expires
        });
        match open.map(|e| std::mem::replace(&mut e.state, State::Used)) {
            Some(State::Open(sender)) => sender,
            _ => return Err(secret),
        }
    };
    Ok(hand_over(sender, secret).await)
}

/// Gives `secret` to the waiting call and answers with whether it was typed.
async fn hand_over(sender: oneshot::Sender<Submit>, secret: Zeroizing<Vec<u8>>) -> Response {
    let (reply, typed) = oneshot::channel();
    if sender.send(Submit { secret, reply }).is_err() {
        return refuse(
            StatusCode::GONE,
            "The question is over (the prompt went away or the call ended); nothing was typed.",
        );
    }
    match tokio::time::timeout(TYPED_WITHIN, typed).await {
        Ok(Ok(Ok(()))) => typed_answer(),
        Ok(Ok(Err(why))) => refuse(StatusCode::CONFLICT, &why),
        _ => refuse(
            StatusCode::GONE,
            "The terminal did not take it in time; nothing more will be typed from this link.",
        ),
    }
}

/// The answer to a secret that was typed.
pub(super) fn typed_answer() -> Response {
    (
        StatusCode::OK,
        [(header::CACHE_CONTROL, "no-store")],
        "Typed into the terminal, followed by Enter.",
    )
        .into_response()
}

/// Whether the link may still be used: open and not expired.
fn usable(e: &mut Entry) -> Result<(), String> {
    match e.state {
        State::Used => Err(USED.to_string()),
        State::Ended(why) => Err(format!("This link has ended: {why}; nothing was typed.")),
        State::Open(_) if Instant::now() >= e.expires => {
            e.state = State::Ended("it expired");
            Err("This link has expired; nothing was typed. Ask the agent to run the command again for a new link.".into())
        }
        State::Open(_) => Ok(()),
    }
}

/// The body as the secret: at most [`MAX_SECRET`] bytes of UTF-8 on one line; every buffer
/// it passed through that we own is zeroed.
async fn read_secret(body: Body) -> Result<Zeroizing<Vec<u8>>, &'static str> {
    let secret = read_body(body, MAX_SECRET).await?;
    check_secret(&secret)?;
    Ok(secret)
}

/// The whole body, at most `max` bytes, into a zeroed-on-drop buffer; every chunk we own
/// is zeroed once copied.
pub(super) async fn read_body(body: Body, max: usize) -> Result<Zeroizing<Vec<u8>>, &'static str> {
    use futures_core::Stream;
    let mut stream = body.into_data_stream();
    let mut secret = Zeroizing::new(Vec::new());
    while let Some(chunk) =
        std::future::poll_fn(|cx| std::pin::Pin::new(&mut stream).poll_next(cx)).await
    {
        let Ok(chunk) = chunk else {
            return Err("The request body could not be read; submit the page again.");
        };
        if secret.len() + chunk.len() > max {
            return Err("That is longer than 4096 bytes; nothing was typed.");
        }
        secret.extend_from_slice(&chunk);
        if let Ok(mut owned) = chunk.try_into_mut() {
            owned.as_mut().zeroize();
        }
    }
    Ok(secret)
}

/// A secret is UTF-8 on one line, without NUL.
pub(super) fn check_secret(secret: &[u8]) -> Result<(), &'static str> {
    if std::str::from_utf8(secret).is_err() {
        return Err("That is not UTF-8 text; nothing was typed.");
    }
    if secret.iter().any(|&b| b == b'\r' || b == b'\n' || b == 0) {
        return Err(
            "A line break or NUL would end the answer early; type it without one. Nothing was typed.",
        );
    }
    Ok(())
}

fn host_is(headers: &HeaderMap, authority: &str) -> bool {
    headers
        .get(header::HOST)
        .and_then(|h| h.to_str().ok())
        .is_some_and(|h| h.eq_ignore_ascii_case(authority))
}

pub(super) fn refuse(status: StatusCode, why: &str) -> Response {
    (
        status,
        [
            (header::CONTENT_TYPE, "text/plain; charset=utf-8"),
            (header::CACHE_CONTROL, "no-store"),
        ],
        why.to_string(),
    )
        .into_response()
}

fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

const UNKNOWN: &str =
    "No such link: it was never made here, or it is long gone; nothing was typed.";
const USED: &str = "This link was already used: it works once. Nothing more was typed; ask the agent for a new one if needed.";
const WRONG_PLACE: &str = "This link works only on the loopback address it was made for, from its own page; open the URL exactly as given.";

/// The page: the program, its prompt, one password field.
const PAGE: &str = r#"<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>termpilot: {PROGRAM} asks for a secret</title>
<style>
body{font-family:system-ui,sans-serif;background:#1e1f22;color:#e6e6e6;display:flex;justify-content:center;padding:3em 1em;margin:0}
main{max-width:34em;width:100%;background:#2b2d31;border-radius:10px;padding:1.6em 2em;box-shadow:0 4px 24px #0006}
h1{font-size:1.2em;margin:0 0 .8em}
code{background:#111;padding:.15em .4em;border-radius:4px;font-family:"JetBrains Mono",monospace}
label{display:block;margin:1.2em 0 .4em}
input{width:100%;box-sizing:border-box;font-size:1.1em;padding:.5em;border-radius:6px;border:1px solid #555;background:#111;color:#eee}
button{margin-top:1em;font-size:1em;padding:.5em 1.2em;border-radius:6px;border:0;background:#3b82f6;color:#fff;cursor:pointer}
button:disabled{background:#555}
.note{color:#aaa;font-size:.9em}
#result{margin-top:1em;min-height:1.4em}
</style></head>
<body><main>
<h1><code>{PROGRAM}</code> asks for a secret</h1>
<p>In termpilot session <code>{SESSION}</code>, the terminal shows <code id="prompt">{PROMPT}</code> with echo off.</p>
<form id="form" autocomplete="off">
<label for="secret">Your answer</label>
<input type="password" id="secret" name="secret" autocomplete="off" autofocus>
<button type="submit" id="send">Type it into the terminal</button>
</form>
<p id="result" role="status"></p>
<p class="note">What you type goes from this page to the terminal, followed by Enter, and only if the program still waits at this prompt. The agent and its client never see it. This link works once.</p>
</main>
<script>
const form = document.getElementById('form');
const field = document.getElementById('secret');
const result = document.getElementById('result');
form.addEventListener('submit', async (event) => {
  event.preventDefault();
  document.getElementById('send').disabled = true;
  let text;
  try {
    const answer = await fetch(location.pathname, {method: 'POST', body: field.value, headers: {'Content-Type': 'text/plain;charset=utf-8'}});
    text = await answer.text();
    result.dataset.status = String(answer.status);
  } catch (e) {
    text = 'The server could not be reached: ' + e;
    result.dataset.status = '0';
  }
  field.value = '';
  result.textContent = text;
  result.dataset.done = '1';
});
</script>
</body></html>
"#;

#[cfg(test)]
mod tests {
    use super::redact;

    #[test]
    fn tokens_are_redacted_from_logged_lines() {
        let token = "0a1b2c3dEF".repeat(4);
        let line = format!(
            r#"{{"url":"http://127.0.0.1:4242/secret/{token}","x":"/secret/ /api/secret/cafe-x"}}"#
        );
        assert_eq!(
            redact(&line),
            r#"{"url":"http://127.0.0.1:4242/secret/[redacted]","x":"/secret/ /api/secret/cafe-x"}"#
        );
        assert_eq!(
            redact(r#"content: {"termpilot/secret": "tpsecret:7a71"}"#),
            r#"content: {"termpilot/secret": "tpsecret:[redacted]"}"#
        );
        assert!(matches!(
            redact("nothing here"),
            std::borrow::Cow::Borrowed(_)
        ));
    }
}
