//! The session list (live ones, then the ended ones the server remembers, see
//! [`termpilot_core::ended`]): `GET /api/sessions` (JSON) and `/ws/sessions`, a WebSocket that sends
//! the list at once, whenever a session starts or ends, and every [`REFRESH`] (busy/idle
//! and the foreground command change without an event). The user's kept sessions (in the
//! session host, `crate::keep`) follow this server's own, marked `kept: true`. `secretLinks` maps a session waiting at
//! a secret prompt that a call asked a person about to its one-time page ([`super::secret`]).

use std::sync::Arc;
use std::time::Duration;

use axum::extract::State;
use axum::extract::ws::{Message, WebSocket, WebSocketUpgrade};
use axum::http::header;
use axum::response::{IntoResponse, Response};

use super::Web;

/// How often the list is re-sent without an event.
pub const REFRESH: Duration = Duration::from_secs(1);

async fn listing(web: &Web) -> serde_json::Value {
    let mut sessions = serde_json::to_value(web.core.sessions.list()).unwrap_or_default();
    if let Some(all) = sessions.as_array_mut() {
        all.extend(crate::keep::list::host_sessions().await);
    }
    serde_json::json!({
        "sessions": sessions,
        "ended": web.core.sessions.ended.list(),
        "secretLinks": super::secret::open_links(),
        "secretPrompts": super::secret_field::prompts(&web.core),
    })
}

pub async fn json(State(web): State<Arc<Web>>) -> Response {
    (
        [(header::CONTENT_TYPE, "application/json")],
        listing(&web).await.to_string(),
    )
        .into_response()
}

pub async fn socket(State(web): State<Arc<Web>>, upgrade: WebSocketUpgrade) -> Response {
    upgrade.on_upgrade(move |ws| push(ws, web))
}

async fn push(mut ws: WebSocket, web: Arc<Web>) {
    let mut changes = web.core.sessions.changes();
    let mut last = String::new();
    loop {
        let now = listing(&web).await.to_string();
        if now != last {
            if ws.send(Message::Text(now.clone().into())).await.is_err() {
                return;
            }
            last = now;
        }
        tokio::select! {
            changed = changes.changed() => if changed.is_err() { return },
            _ = tokio::time::sleep(REFRESH) => {}
            incoming = ws.recv() => match incoming {
                Some(Ok(Message::Close(_))) | Some(Err(_)) | None => return,
                _ => {}
            },
            _ = web.shutdown.cancelled() => {
                let _ = ws.send(Message::Close(None)).await;
                return;
            }
        }
    }
}
