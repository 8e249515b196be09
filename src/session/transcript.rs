//! Transcripts written when a session stops: plain text, or asciicast v2 (`.cast`) that
//! `asciinema play` replays.

use std::io::Write;
use std::path::Path;
use std::time::{SystemTime, UNIX_EPOCH};

use super::terminal::Session;
use super::text;
use crate::error::{Error, Result};

/// Which format a path asks for.
pub fn is_cast(path: &Path) -> bool {
    path.extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("cast"))
}

/// Writes the session's kept output to `path`; returns the bytes written.
pub fn write(session: &Session, path: &Path) -> Result<u64> {
    if !path.is_absolute() {
        return Err(Error::InvalidInput(format!(
            "transcriptPath `{}` is relative; pass an absolute path.",
            path.display()
        )));
    }
    if path.is_dir() {
        return Err(Error::InvalidInput(format!(
            "transcriptPath `{}` is a folder; pass a file path.",
            path.display()
        )));
    }
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).map_err(|e| {
            Error::io(
                format!("Could not create {}", parent.display()),
                "pass a writable path",
                e,
            )
        })?;
    }
    let body = if is_cast(path) {
        asciicast(session)
    } else {
        let (_, bytes) = session.state().log.since(0);
        let mut text = text::render(&bytes).join("\n");
        text.push('\n');
        text.into_bytes()
    };
    let mut file = std::fs::File::create(path).map_err(|e| {
        Error::io(
            format!("Could not write {}", path.display()),
            "pass a writable path",
            e,
        )
    })?;
    file.write_all(&body).map_err(|e| {
        Error::io(
            format!("Could not write {}", path.display()),
            "check the disk",
            e,
        )
    })?;
    Ok(body.len() as u64)
}

/// asciicast v2: a header line, then one `[seconds, "o", text]` event per output chunk.
fn asciicast(session: &Session) -> Vec<u8> {
    let chunks = session.state().log.timed_chunks();
    let started = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default()
        .saturating_sub(session.started.elapsed());
    let header = serde_json::json!({
        "version": 2,
        "width": session.shape.size.cols,
        "height": session.shape.size.rows,
        "timestamp": started.as_secs(),
        "env": {"TERM": "xterm-256color", "SHELL": session.shape.shell.program.display().to_string()},
    });
    let mut out = header.to_string().into_bytes();
    out.push(b'\n');
    // A chunk may end inside a UTF-8 character: carry the tail to the next event.
    let mut carry: Vec<u8> = Vec::new();
    for (at, bytes) in chunks {
        carry.extend_from_slice(&bytes);
        let valid = match std::str::from_utf8(&carry) {
            Ok(_) => carry.len(),
            Err(e) if e.error_len().is_none() => e.valid_up_to(),
            Err(_) => carry.len(),
        };
        let text = String::from_utf8_lossy(&carry[..valid]).into_owned();
        carry.drain(..valid);
        if text.is_empty() {
            continue;
        }
        let event = serde_json::json!([at.as_secs_f64(), "o", text]);
        out.extend_from_slice(event.to_string().as_bytes());
        out.push(b'\n');
    }
    out
}
