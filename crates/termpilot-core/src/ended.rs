//! Sessions that ended, remembered until the server ends: for people (the web page lists
//! them and shows their last screen), never for agents (`terminal_list` shows live ones).
//!
//! A record is taken whenever the manager lets a session go (stopped, evicted, idle, its
//! shell exited): id, name, how it ended and when, the final screen as text and the bytes
//! that redraw it ([`crate::session::redraw`]), and the path of the asciicast transcript
//! written at its stop, if any. The record is bounded: the last [`MAX_ENDED`] sessions, and
//! at most [`MAX_BYTES`] of screens and redraws together (oldest dropped first). Each record
//! has its own number (`seq`), since an id may be used again by a later session.

use std::collections::VecDeque;
use std::path::PathBuf;
use std::sync::Mutex;
use std::time::{SystemTime, UNIX_EPOCH};

use serde::Serialize;

use crate::session::{Exit, Session, describe_exit};

/// Most ended sessions remembered.
pub const MAX_ENDED: usize = 50;
/// Most bytes of final screens and redraws kept for all of them together.
pub const MAX_BYTES: usize = 16 * 1024 * 1024;

/// What the page lists about one ended session.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct EndedSummary {
    /// This record's own number (ids may be reused; this never is).
    pub seq: u64,
    pub id: String,
    pub name: Option<String>,
    pub shell: String,
    pub cwd: String,
    pub cols: u16,
    pub rows: u16,
    pub theme: String,
    /// How it ended, e.g. `exit status 3`, `killed by signal 9`, or `stopped`.
    pub exited: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i32>,
    /// Why the server let it go: stopped, evicted, idle, its shell exited.
    pub why: String,
    /// When it ended, milliseconds since the Unix epoch.
    pub ended_ms: u64,
    /// True when an asciicast transcript was written at its stop (it can be replayed).
    pub cast: bool,
}

/// One ended session, with its last screen.
#[derive(Debug, Clone)]
pub struct EndedSession {
    pub summary: EndedSummary,
    /// The final screen as plain text.
    pub screen: String,
    /// Bytes that redraw the final screen and recent scrollback on a terminal of its size.
    pub redraw: Vec<u8>,
    /// The asciicast transcript written when it stopped.
    pub cast_path: Option<PathBuf>,
    pid: i32,
}

impl EndedSession {
    fn bytes(&self) -> usize {
        self.screen.len() + self.redraw.len()
    }
}

/// How it ended, for people: `exit status 3`, `killed` (portable-pty names SIGKILL
/// "Killed"), `killed by Hangup`.
fn how(exit: &Exit) -> String {
    match exit.signal.as_deref() {
        Some(signal) if exit.code.is_none() && signal.eq_ignore_ascii_case("killed") => {
            "killed".into()
        }
        _ => describe_exit(exit),
    }
}

/// The bounded record of ended sessions.
#[derive(Default)]
pub struct Ended {
    inner: Mutex<Inner>,
}

#[derive(Default)]
struct Inner {
    records: VecDeque<EndedSession>,
    bytes: usize,
    next_seq: u64,
}

impl Ended {
    fn inner(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Remembers `session` as it is now (call it once its processes are gone or going).
    pub fn record(&self, session: &Session, why: &str) {
        self.remember(session, why, None);
    }

    /// [`Ended::record`], saying how it ended in `exited` (a stop that killed a live shell
    /// is `stopped`, not the signal it took).
    pub fn record_as(&self, session: &Session, why: &str, exited: &str) {
        self.remember(session, why, Some(exited));
    }

    fn remember(&self, session: &Session, why: &str, exited: Option<&str>) {
        let look = session.last_look();
        let (text, bytes, cwd, exit) = (look.text, look.redraw, look.cwd, look.exit);
        let (cols, rows) = (look.size.cols, look.size.rows);
        let ended_ms = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap_or_default()
            .as_millis() as u64;
        self.push(EndedSession {
            summary: EndedSummary {
                seq: 0,
                id: session.id.clone(),
                name: session.shape.name.clone(),
                shell: session.shape.shell.program.display().to_string(),
                cwd,
                cols,
                rows,
                theme: session.shape.theme.clone(),
                exited: match exited {
                    Some(exited) => exited.to_string(),
                    None => exit.as_ref().map(how).unwrap_or_else(|| "stopped".into()),
                },
                exit_code: exit.and_then(|e| e.code),
                why: why.to_string(),
                ended_ms,
                cast: false,
            },
            screen: text,
            redraw: bytes,
            cast_path: None,
            pid: session.pid,
        });
    }

    /// Numbers `record` and keeps it, dropping the oldest past the bounds.
    fn push(&self, mut record: EndedSession) {
        let mut inner = self.inner();
        inner.next_seq += 1;
        record.summary.seq = inner.next_seq;
        inner.bytes += record.bytes();
        inner.records.push_back(record);
        while inner.records.len() > MAX_ENDED
            || (inner.bytes > MAX_BYTES && inner.records.len() > 1)
        {
            if let Some(old) = inner.records.pop_front() {
                inner.bytes -= old.bytes();
            }
        }
    }

    /// Notes the asciicast transcript written when `session` stopped.
    pub fn note_cast(&self, session: &Session, path: PathBuf) {
        let mut inner = self.inner();
        if let Some(r) = inner
            .records
            .iter_mut()
            .rev()
            .find(|r| r.summary.id == session.id && r.pid == session.pid)
        {
            r.summary.cast = true;
            r.cast_path = Some(path);
        }
    }

    /// Every remembered ended session, oldest first.
    pub fn list(&self) -> Vec<EndedSummary> {
        self.inner()
            .records
            .iter()
            .map(|r| r.summary.clone())
            .collect()
    }

    /// The record numbered `seq`, if it is still remembered.
    pub fn get(&self, seq: u64) -> Option<EndedSession> {
        self.inner()
            .records
            .iter()
            .find(|r| r.summary.seq == seq)
            .cloned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(id: &str, screen_bytes: usize) -> EndedSession {
        EndedSession {
            summary: EndedSummary {
                seq: 0,
                id: id.into(),
                name: None,
                shell: "/bin/sh".into(),
                cwd: "/".into(),
                cols: 80,
                rows: 24,
                theme: "dark".into(),
                exited: "exit status 0".into(),
                exit_code: Some(0),
                why: "it was stopped".into(),
                ended_ms: 0,
                cast: false,
            },
            screen: "x".repeat(screen_bytes),
            redraw: Vec::new(),
            cast_path: None,
            pid: 1,
        }
    }

    #[test]
    fn the_last_fifty_are_kept_each_with_its_own_number() {
        let ended = Ended::default();
        for i in 0..MAX_ENDED + 5 {
            ended.push(record(&format!("s{i}"), 10));
        }
        let list = ended.list();
        assert_eq!(list.len(), MAX_ENDED);
        assert_eq!(list[0].id, "s5", "the oldest went first");
        assert_eq!(list[0].seq, 6);
        assert!(ended.get(1).is_none());
        assert_eq!(ended.get(6).unwrap().summary.id, "s5");
        // The same id again is another record.
        ended.push(record("s9", 10));
        assert_eq!(ended.list().iter().filter(|s| s.id == "s9").count(), 2);
    }

    #[test]
    fn screens_are_bounded_in_bytes_but_the_newest_stays() {
        let ended = Ended::default();
        ended.push(record("a", MAX_BYTES / 2));
        ended.push(record("b", MAX_BYTES / 2));
        ended.push(record("c", MAX_BYTES / 2));
        let ids: Vec<String> = ended.list().into_iter().map(|s| s.id).collect();
        assert_eq!(ids, ["b", "c"]);
        ended.push(record("huge", MAX_BYTES * 2));
        let ids: Vec<String> = ended.list().into_iter().map(|s| s.id).collect();
        assert_eq!(ids, ["huge"]);
    }
}
