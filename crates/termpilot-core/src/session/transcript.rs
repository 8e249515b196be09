//! Transcripts written when a session stops: plain text, or asciicast v2 (`.cast`) that
//! `asciinema play` replays.
//!
//! The path is checked before the session is stopped ([`check_path`]); the file is created
//! exclusively and never through a symlink ([`save`]). A write that fails after the stop
//! leaves the text in a spill file, and the caller says so.

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

/// Checks, before anything is stopped, that `path` can take a transcript: absolute, in an
/// existing folder (none is created), and new — or, with `overwrite`, an existing regular
/// file. A symlink is refused either way.
pub fn check_path(path: &Path, overwrite: bool) -> Result<()> {
    if !path.is_absolute() {
        return Err(Error::InvalidInput(format!(
            "transcriptPath `{}` is relative; pass an absolute path; nothing was stopped.",
            path.display()
        )));
    }
    // Under the sandbox only where a sandboxed process could write (the write is pinned too).
    crate::sandbox::check_write(path)
        .map_err(|e| Error::InvalidInput(format!("transcriptPath: {e} Nothing was stopped.")))?;
    let parent = path.parent().unwrap_or(Path::new("/"));
    if !parent.is_dir() {
        return Err(Error::InvalidInput(format!(
            "transcriptPath `{}` is in `{}`, which is not an existing folder; create it first (folders are not created for you); nothing was stopped.",
            path.display(),
            parent.display()
        )));
    }
    match std::fs::symlink_metadata(path) {
        Err(_) => Ok(()),
        Ok(m) if m.file_type().is_symlink() => Err(Error::InvalidInput(format!(
            "transcriptPath `{}` is a symlink, which is never written through; pass another path; nothing was stopped.",
            path.display()
        ))),
        Ok(m) if m.is_dir() => Err(Error::InvalidInput(format!(
            "transcriptPath `{}` is a folder; pass a file path; nothing was stopped.",
            path.display()
        ))),
        Ok(m) if !m.is_file() => Err(Error::InvalidInput(format!(
            "transcriptPath `{}` exists and is not a regular file; pass another path; nothing was stopped.",
            path.display()
        ))),
        Ok(_) if !overwrite => Err(Error::InvalidInput(format!(
            "transcriptPath `{}` already exists; pass overwrite true to replace it, or another path; nothing was stopped.",
            path.display()
        ))),
        Ok(_) => Ok(()),
    }
}

/// The session's kept output as a transcript for `path` (asciicast for `.cast`, else text).
pub fn render(session: &Session, path: &Path) -> Vec<u8> {
    if is_cast(path) {
        asciicast(session)
    } else {
        let (_, bytes) = session.output_since_position(0);
        let mut text = text::render(&bytes).join("\n");
        text.push('\n');
        text.into_bytes()
    }
}

/// Writes `body` to `path`: created exclusively (`O_EXCL|O_NOFOLLOW`), or with `overwrite`
/// an existing regular file truncated (`O_NOFOLLOW`: a symlink is still refused). A write
/// that fails (a full disk) removes the short file.
pub fn save(path: &Path, body: &[u8], overwrite: bool) -> std::io::Result<()> {
    let mut options = std::fs::OpenOptions::new();
    options.write(true);
    if overwrite {
        options.create(true).truncate(true);
    } else {
        options.create_new(true);
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options
            .mode(0o600)
            .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK);
    }
    // Under the sandbox the folder is held open from the check to the write (see
    // `sandbox::pin`), so a link swapped in meanwhile cannot lead out of the write roots.
    let pinned = crate::sandbox::pin_write(path, false)
        .map_err(|e| std::io::Error::new(std::io::ErrorKind::PermissionDenied, e.to_string()))?;
    let at = pinned.as_ref().map(|p| p.at());
    let mut file = options.open(at.as_deref().unwrap_or(path))?;
    if !file.metadata()?.is_file() {
        return Err(std::io::Error::other("it is not a regular file"));
    }
    let written = file.write_all(body).and_then(|()| file.sync_all());
    if written.is_err() {
        // A short transcript is not the transcript: the caller keeps it elsewhere.
        let _ = std::fs::remove_file(path);
    }
    written
}

/// asciicast v2: a header line, then one `[seconds, "o", text]` event per output chunk.
pub fn asciicast(session: &Session) -> Vec<u8> {
    let chunks = session.timed_output();
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
