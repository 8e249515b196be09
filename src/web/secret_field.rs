//! The web page's password field (issue 35): a session waiting at a secret prompt shows
//! its program and prompt above the terminal with a password field, whether or not a call
//! asked anyone. `secretPrompts` in the session list ([`prompts`]) says which sessions wait;
//! `POST /api/secret/<session>` (the login cookie and the page's own Origin, as the page's
//! other endpoints) carries `program`, `prompt` and the secret, one per line.
//!
//! The same path as the one-time page ([`super::secret`]): when a call asked a person about
//! this very prompt, the secret answers that call's open link (its result says a person
//! answered, the elicitation is completed); otherwise the core types the secret and Enter as
//! a person's keys (no call's turn), only if the same program still waits at the same prompt
//! with echo off. The body lives in a
//! zeroed-on-drop buffer and is never logged or answered back.

use std::sync::Arc;

use axum::body::Body;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::Response;
use serde_json::{Map, Value, json};
use termpilot_core::Core;
use zeroize::Zeroizing;

use super::Web;
use super::secret::{MAX_SECRET, answer_open_link, check_secret, read_body, refuse, typed_answer};

/// The sessions waiting at a secret prompt now: id → `{program, prompt}`.
pub fn prompts(core: &Core) -> Map<String, Value> {
    let mut waiting = Map::new();
    for status in core.sessions.list() {
        let Some(session) = core.sessions.peek(&status.id) else {
            continue;
        };
        if let Some(p) = session.secret_prompt() {
            waiting.insert(
                status.id.clone(),
                json!({"program": p.program, "prompt": p.prompt}),
            );
        }
    }
    waiting
}

/// `POST /api/secret/<session>`: `program\nprompt\nsecret`.
pub async fn submit(State(web): State<Arc<Web>>, Path(id): Path<String>, body: Body) -> Response {
    // Room for the program and the prompt besides the secret.
    let body = match read_body(body, MAX_SECRET + 1024).await {
        Ok(body) => body,
        Err(why) => return refuse(StatusCode::BAD_REQUEST, why),
    };
    let Some((program, prompt, secret)) = split(&body) else {
        return refuse(
            StatusCode::BAD_REQUEST,
            "The request needs the program, the prompt and the answer, one per line; reload the page and try again. Nothing was typed.",
        );
    };
    drop(body);
    if let Err(why) = check_secret(&secret) {
        return refuse(StatusCode::BAD_REQUEST, why);
    }
    let Some(session) = web.core.sessions.peek(&id) else {
        return refuse(
            StatusCode::NOT_FOUND,
            "No such session: it ended or never ran here. Nothing was typed.",
        );
    };
    let now = session.secret_prompt();
    let Some(now) = now.filter(|p| p.program == program && p.prompt == prompt) else {
        return refuse(StatusCode::CONFLICT, &not_waiting(&program, &prompt));
    };
    // A call asked a person about this prompt: answer its link, so the call goes on.
    let secret = match answer_open_link(&now.session, &program, &prompt, secret).await {
        Ok(answered) => return answered,
        Err(secret) => secret,
    };
    match session.answer_secret(&now, secret) {
        Ok(()) => typed_answer(),
        Err(why) => refuse(StatusCode::CONFLICT, &why),
    }
}

/// The body's three lines: the program and the prompt as text, the secret as bytes.
fn split(body: &[u8]) -> Option<(String, String, Zeroizing<Vec<u8>>)> {
    let first = body.iter().position(|&b| b == b'\n')?;
    let rest = &body[first + 1..];
    let second = rest.iter().position(|&b| b == b'\n')?;
    let program = std::str::from_utf8(&body[..first]).ok()?.to_string();
    let prompt = std::str::from_utf8(&rest[..second]).ok()?.to_string();
    Some((program, prompt, Zeroizing::new(rest[second + 1..].to_vec())))
}

fn not_waiting(program: &str, prompt: &str) -> String {
    format!(
        "{program} no longer waits at \"{prompt}\" with echo off (the prompt went away or changed); nothing was typed."
    )
}
