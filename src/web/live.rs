//! One session on the page, over `/ws/session/{id}`.
//!
//! Server → page: a `hello` text message (size, theme, who types), then binary frames of
//! terminal bytes — first the attach redraw (`Session::view`), then every byte the program
//! writes. Text messages say what changed: `control` (who holds the keyboard, and whether it
//! is this page), `size`, `resync` (this page fell behind: reset, a fresh redraw follows),
//! `refused` (keys sent without control), `ended`.
//!
//! Page → server, as JSON text: `{"type":"take"}`, `{"type":"release"}`,
//! `{"type":"input","data":"…"}`. Keys count only while this page holds control; closing
//! the page releases it. A `take` while another page holds control is refused with who holds
//! it (`refused`, `canForce: true`); `{"type":"take","force":true}` takes it anyway.
//! A kept session (held by the session host) is proxied the same way by [`super::kept`].

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

use axum::extract::ws::{Message, WebSocket, WebSocketUpgrade};
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use termpilot_core::session::Controller;
use termpilot_core::session::Session;
use tokio::sync::mpsc;

use super::Web;

/// How often the page is told about changes that have no event (control lapsing, resizes).
const TICK: Duration = Duration::from_millis(500);
/// Most bytes sent in one frame when output floods (chunks queued meanwhile are joined).
const MAX_FRAME: usize = 256 * 1024;

/// Each page's own id (a control holder).
static NEXT_VIEWER: AtomicU64 = AtomicU64::new(1);
/// The open pages, by id: how a holder is named to another page.
static PAGES: Mutex<BTreeMap<u64, String>> = Mutex::new(BTreeMap::new());

fn pages() -> std::sync::MutexGuard<'static, BTreeMap<u64, String>> {
    PAGES.lock().unwrap_or_else(|e| e.into_inner())
}

/// `page #3 (opened at 14:02:11 UTC)`.
fn describe_page(id: u64) -> String {
    let secs = SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or_default()
        % 86_400;
    format!(
        "page #{id} (opened at {:02}:{:02}:{:02} UTC)",
        secs / 3600,
        secs / 60 % 60,
        secs % 60
    )
}

pub async fn socket(
    State(web): State<Arc<Web>>,
    Path(id): Path<String>,
    upgrade: WebSocketUpgrade,
) -> Response {
    let Some(session) = web.core.sessions.peek(&id) else {
        if crate::keep::settings::is_kept_id(&id) {
            return super::kept::socket(web, id, upgrade).await;
        }
        return (
            StatusCode::NOT_FOUND,
            format!("No live session is called `{id}`."),
        )
            .into_response();
    };
    upgrade.on_upgrade(move |ws| async move {
        let me = NEXT_VIEWER.fetch_add(1, Ordering::Relaxed);
        pages().insert(me, describe_page(me));
        watch(ws, &session, &web, me).await;
        session.release_control(me);
        pages().remove(&me);
    })
}

fn text(value: serde_json::Value) -> Message {
    Message::Text(value.to_string().into())
}

fn control_message(session: &Session, me: u64) -> serde_json::Value {
    serde_json::json!({
        "type": "control",
        "controller": session.controller().as_str(),
        "you": session.holds_control(me),
    })
}

/// Joins the session and moves its output to the page until either side ends.
fn join(session: &Arc<Session>) -> (Vec<u8>, mpsc::Receiver<Vec<u8>>, impl Sized) {
    let viewer = session.view();
    let (tx, rx) = mpsc::channel::<Vec<u8>>(64);
    let output = viewer.output;
    // The session's queue is a std channel; one small thread moves it onto tokio's. It ends
    // when the session drops this viewer (end, too slow) or the membership is dropped.
    let _ = std::thread::Builder::new()
        .name(format!("web-{}", session.id()))
        .stack_size(64 * 1024)
        .spawn(move || {
            for chunk in output {
                if tx.blocking_send(chunk).is_err() {
                    break;
                }
            }
        });
    (viewer.redraw, rx, viewer.membership)
}

async fn watch(mut ws: WebSocket, session: &Arc<Session>, web: &Web, me: u64) {
    let (mut rows, mut cols) = session.screen_size();
    let hello = serde_json::json!({
        "type": "hello",
        "id": session.id(),
        "name": session.shape().name,
        "cols": cols,
        "rows": rows,
        "theme": session.shape().theme,
        "controller": session.controller().as_str(),
        "you": false,
    });
    if ws.send(text(hello)).await.is_err() {
        return;
    }
    let (redraw, mut output, mut membership) = join(session);
    if ws.send(Message::Binary(redraw.into())).await.is_err() {
        return;
    }
    let mut control = control_message(session, me);
    let mut tick = tokio::time::interval(TICK);
    loop {
        tokio::select! {
            chunk = output.recv() => match chunk {
                Some(mut bytes) => {
                    while bytes.len() < MAX_FRAME {
                        match output.try_recv() {
                            Ok(more) => bytes.extend_from_slice(&more),
                            Err(_) => break,
                        }
                    }
                    if ws.send(Message::Binary(bytes.into())).await.is_err() {
                        return;
                    }
                }
                None => {
                    let ended = session.ending();
                    if ended {
                        let _ = ws.send(text(serde_json::json!({"type": "ended"}))).await;
                        return;
                    }
                    // Dropped as too slow: start again from a fresh redraw.
                    drop(membership);
                    let (redraw, rx, again) = join(session);
                    (output, membership) = (rx, again);
                    if ws.send(text(serde_json::json!({"type": "resync"}))).await.is_err()
                        || ws.send(Message::Binary(redraw.into())).await.is_err()
                    {
                        return;
                    }
                }
            },
            incoming = ws.recv() => match incoming {
                Some(Ok(Message::Text(body))) => {
                    if let Some(reply) = handle(session, me, body.as_str())
                        && ws.send(text(reply)).await.is_err()
                    {
                        return;
                    }
                }
                Some(Ok(Message::Close(_))) | Some(Err(_)) | None => return,
                Some(Ok(_)) => {}
            },
            _ = tick.tick() => {
                let (r, c) = session.screen_size();
                if (r, c) != (rows, cols) {
                    (rows, cols) = (r, c);
                    let size = serde_json::json!({"type": "size", "cols": cols, "rows": rows});
                    if ws.send(text(size)).await.is_err() {
                        return;
                    }
                }
            }
            _ = web.shutdown.cancelled() => {
                let _ = ws.send(Message::Close(None)).await;
                return;
            }
        }
        let now = control_message(session, me);
        if now != control {
            control = now.clone();
            if ws.send(text(now)).await.is_err() {
                return;
            }
        }
    }
}

/// One message from the page; the answer to send back, if any.
fn handle(session: &Session, me: u64, body: &str) -> Option<serde_json::Value> {
    let message: serde_json::Value = serde_json::from_str(body).ok()?;
    match message["type"].as_str()? {
        "take" if message["force"] == true => session.take_control(me),
        "take" => {
            if let Err((holder, idle)) = session.try_take_control(me) {
                let who = pages()
                    .get(&holder)
                    .cloned()
                    .unwrap_or_else(|| format!("page #{holder}"));
                return Some(serde_json::json!({
                    "type": "refused",
                    "holder": who,
                    "canForce": true,
                    "why": format!(
                        "Another page holds control: {who}, its last key {} s ago; press Take control again to take it from them.",
                        idle.as_secs()
                    ),
                }));
            }
        }
        "release" => session.release_control(me),
        "input" => {
            let data = message["data"].as_str()?;
            if !session.person_keys(me, data.as_bytes().to_vec()) {
                let who = match session.controller() {
                    Controller::Person => "another page holds control",
                    Controller::Agent => "the agent holds control",
                };
                return Some(serde_json::json!({
                    "type": "refused",
                    "why": format!("Keys ignored: {who}; press Take control to type."),
                }));
            }
        }
        _ => {}
    }
    None
}
