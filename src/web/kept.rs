//! A kept session on the page: `/ws/session/{id}` for a session the user's session host holds
//! (`crate::keep`), with the same messages as [`super::live`], proxied to the session's attach
//! socket in the host.
//!
//! The socket gives the redraw and then every byte (binary frames to the page); the page's
//! keyboard hold travels as the socket's control frames (`t` take, `l` release, `k` a
//! person's keys: `termpilot_core::session::socket`), so a person who takes control of a kept
//! session holds it in the host, where the agents' calls are refused while they do. What the
//! socket does not say — who holds control, the size, the session's end — comes from the
//! host's list, asked every [`TICK`]. A take while a person holds control elsewhere is
//! refused unless forced, as on a local session.

use std::sync::Arc;
use std::time::Duration;

use axum::extract::ws::{Message, WebSocket};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};
use termpilot_core::session::{
    FRAME_KEYS, FRAME_RELEASE, FRAME_TAKE, find_sockets, socket_dir, socket_frame,
};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::UnixStream;
use tokio::net::unix::OwnedWriteHalf;

use super::Web;

/// How often the host's list is asked (control, size, the end).
const TICK: Duration = Duration::from_secs(1);

/// The page's socket on kept session `id`; 404 when the host holds no such session.
pub async fn socket(
    web: Arc<Web>,
    id: String,
    upgrade: axum::extract::ws::WebSocketUpgrade,
) -> Response {
    let missing = || {
        (
            StatusCode::NOT_FOUND,
            format!("No live session is called `{id}`."),
        )
            .into_response()
    };
    let Some(entry) = crate::keep::list::host_session(&id).await else {
        return missing();
    };
    let Some(stream) = connect(&id).await else {
        return missing();
    };
    upgrade.on_upgrade(move |ws| async move {
        let _ = watch(ws, stream, entry, &web, &id).await;
    })
}

/// The host's attach socket of `id`, connected.
async fn connect(id: &str) -> Option<UnixStream> {
    for (_, path) in find_sockets(&socket_dir(), id) {
        if let Ok(stream) = UnixStream::connect(&path).await {
            return Some(stream);
        }
    }
    None
}

fn text(value: Value) -> Message {
    Message::Text(value.to_string().into())
}

/// Who holds the keyboard, as the page is told.
fn control(entry: &Value, you: bool) -> Value {
    let person = entry["controller"] == "person";
    json!({
        "type": "control",
        "controller": if person { "person" } else { "agent" },
        "you": you && person,
    })
}

/// Moves the session to the page until either side ends. `Err` when the page is gone.
async fn watch(
    mut ws: WebSocket,
    stream: UnixStream,
    mut entry: Value,
    web: &Web,
    id: &str,
) -> Result<(), ()> {
    let hello = json!({
        "type": "hello",
        "id": id,
        "name": entry["name"],
        "cols": entry["cols"],
        "rows": entry["rows"],
        "theme": entry["theme"],
        "controller": if entry["controller"] == "person" { "person" } else { "agent" },
        "you": false,
        "kept": true,
    });
    send(&mut ws, text(hello)).await?;
    let (mut from, mut to) = stream.into_split();
    let mut you = false;
    let mut told = control(&entry, you);
    let mut tick = tokio::time::interval(TICK);
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        tokio::select! {
            read = from.read(&mut buf) => match read {
                Ok(n) if n > 0 => send(&mut ws, Message::Binary(buf[..n].to_vec().into())).await?,
                _ => {
                    // The host closed: the session ended, or this page fell behind.
                    if crate::keep::list::host_session(id).await.is_none() {
                        let _ = ws.send(text(json!({"type": "ended"}))).await;
                        return Ok(());
                    }
                    let Some(again) = connect(id).await else {
                        let _ = ws.send(text(json!({"type": "ended"}))).await;
                        return Ok(());
                    };
                    (from, to) = again.into_split();
                    if you {
                        frame(&mut to, FRAME_TAKE, &[]).await;
                    }
                    send(&mut ws, text(json!({"type": "resync"}))).await?;
                }
            },
            incoming = ws.recv() => match incoming {
                Some(Ok(Message::Text(body))) => {
                    if let Some(reply) = handle(&mut to, &entry, &mut you, body.as_str()).await {
                        send(&mut ws, text(reply)).await?;
                    }
                    if you {
                        // Taken: the page shows it at once, the host's list confirms it.
                        entry["controller"] = json!("person");
                    }
                }
                Some(Ok(Message::Close(_))) | Some(Err(_)) | None => return Ok(()),
                Some(Ok(_)) => {}
            },
            _ = tick.tick() => {
                let Some(now) = crate::keep::list::host_session(id).await else {
                    let _ = ws.send(text(json!({"type": "ended"}))).await;
                    return Ok(());
                };
                if (now["cols"].clone(), now["rows"].clone()) != (entry["cols"].clone(), entry["rows"].clone()) {
                    send(&mut ws, text(json!({"type": "size", "cols": now["cols"], "rows": now["rows"]}))).await?;
                }
                if now["controller"] != "person" {
                    // Released by its lease lapsing or taken from us and given back.
                    you = false;
                }
                entry = now;
            }
            _ = web.shutdown.cancelled() => {
                let _ = ws.send(Message::Close(None)).await;
                return Ok(());
            }
        }
        let now = control(&entry, you);
        if now != told {
            told = now.clone();
            send(&mut ws, text(now)).await?;
        }
    }
}

async fn send(ws: &mut WebSocket, message: Message) -> Result<(), ()> {
    ws.send(message).await.map_err(|_| ())
}

/// One control frame to the host (a write error shows as the socket's end).
async fn frame(to: &mut OwnedWriteHalf, kind: u8, payload: &[u8]) {
    let _ = to.write_all(&socket_frame(kind, payload)).await;
}

/// One message from the page; the answer to send back, if any.
async fn handle(
    to: &mut OwnedWriteHalf,
    entry: &Value,
    you: &mut bool,
    body: &str,
) -> Option<Value> {
    let message: Value = serde_json::from_str(body).ok()?;
    match message["type"].as_str()? {
        "take" => {
            if !*you && entry["controller"] == "person" && message["force"] != true {
                return Some(json!({
                    "type": "refused",
                    "holder": "a person on another page",
                    "canForce": true,
                    "why": "Another page holds control of this kept session; press Take control again to take it from them.",
                }));
            }
            frame(to, FRAME_TAKE, &[]).await;
            *you = true;
        }
        "release" => {
            frame(to, FRAME_RELEASE, &[]).await;
            *you = false;
        }
        "input" => {
            let data = message["data"].as_str()?;
            if !*you {
                return Some(json!({
                    "type": "refused",
                    "why": if entry["controller"] == "person" {
                        "Keys ignored: another page holds control; press Take control to type."
                    } else {
                        "Keys ignored: the agent holds control; press Take control to type."
                    },
                }));
            }
            for chunk in data.as_bytes().chunks(u16::MAX as usize) {
                frame(to, FRAME_KEYS, chunk).await;
            }
        }
        _ => {}
    }
    None
}
