//! Ended sessions and transcripts for the page, behind the login cookie like every route:
//!
//! - `GET /api/ended/{seq}/screen`: the bytes that redraw an ended session's last screen
//!   (and recent scrollback), for a terminal widget of its size ([`termpilot_core::ended`]).
//! - `GET /api/ended/{seq}/cast`: the asciicast v2 transcript written when it stopped
//!   (`terminal_stop` with a `.cast` `transcriptPath`), read back from that file: never
//!   through a symlink, a regular file of at most [`MAX_CAST`], that starts with an asciicast
//!   v2 header.
//! - `GET /api/sessions/{id}/cast`: a live session's output so far as asciicast v2 (what
//!   `terminal_stop` would write now: the kept output with its timing).

use std::io::{BufRead, Read};
use std::path::Path as FsPath;
use std::sync::Arc;

use axum::extract::{Path, State};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};

use super::Web;

/// The largest transcript file served.
pub const MAX_CAST: u64 = 64 * 1024 * 1024;

const CAST_TYPE: &str = "application/x-asciicast";

fn not_found(what: String) -> Response {
    (StatusCode::NOT_FOUND, what).into_response()
}

fn bytes(content_type: &'static str, body: Vec<u8>) -> Response {
    (
        [
            (header::CONTENT_TYPE, content_type),
            (header::CACHE_CONTROL, "no-store"),
        ],
        body,
    )
        .into_response()
}

pub async fn screen(State(web): State<Arc<Web>>, Path(seq): Path<u64>) -> Response {
    match web.core.sessions.ended.get(seq) {
        Some(ended) => bytes("application/octet-stream", ended.redraw),
        None => not_found(format!(
            "No ended session numbered {seq} is remembered (the last {} are).",
            termpilot_core::MAX_ENDED
        )),
    }
}

pub async fn cast(State(web): State<Arc<Web>>, Path(seq): Path<u64>) -> Response {
    let Some(ended) = web.core.sessions.ended.get(seq) else {
        return not_found(format!("No ended session numbered {seq} is remembered."));
    };
    let Some(path) = ended.cast_path else {
        return not_found(format!(
            "Session {} left no .cast transcript (terminal_stop with a .cast transcriptPath writes one).",
            ended.summary.id
        ));
    };
    let read = tokio::task::spawn_blocking(move || read_cast(&path)).await;
    match read {
        Ok(Ok(body)) => bytes(CAST_TYPE, body),
        Ok(Err(why)) => not_found(why),
        Err(e) => (StatusCode::INTERNAL_SERVER_ERROR, e.to_string()).into_response(),
    }
}

pub async fn live_cast(State(web): State<Arc<Web>>, Path(id): Path<String>) -> Response {
    let Some(session) = web.core.sessions.peek(&id) else {
        return not_found(format!("No live session is called `{id}`."));
    };
    let body =
        tokio::task::spawn_blocking(move || termpilot_core::session::asciicast(&session)).await;
    match body {
        Ok(body) => bytes(CAST_TYPE, body),
        Err(e) => (StatusCode::INTERNAL_SERVER_ERROR, e.to_string()).into_response(),
    }
}

/// The transcript at `path`, checked to still be one (the file may have changed since).
fn read_cast(path: &FsPath) -> Result<Vec<u8>, String> {
    let gone = |why: &str| format!("The transcript `{}` {why}.", path.display());
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK);
    }
    let file = options
        .open(path)
        .map_err(|e| gone(&format!("cannot be read ({e})")))?;
    let meta = file.metadata().map_err(|e| gone(&e.to_string()))?;
    if !meta.is_file() {
        return Err(gone("is no longer a regular file"));
    }
    if meta.len() > MAX_CAST {
        return Err(gone(&format!("is larger than {MAX_CAST} bytes")));
    }
    let mut reader = std::io::BufReader::new(file);
    let mut first = String::new();
    reader
        .read_line(&mut first)
        .map_err(|e| gone(&e.to_string()))?;
    let header: serde_json::Value = serde_json::from_str(&first)
        .map_err(|_| gone("no longer starts with an asciicast header"))?;
    if header["version"] != 2 {
        return Err(gone("is not asciicast v2"));
    }
    let mut body = first.into_bytes();
    reader
        .take(MAX_CAST)
        .read_to_end(&mut body)
        .map_err(|e| gone(&e.to_string()))?;
    Ok(body)
}
