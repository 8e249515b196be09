//! Capturing one output stream under a byte cap, spilling the whole stream when it outgrows it.
//!
//! The first bytes (up to the cap) stay in memory as the preview; the moment a stream passes
//! its cap, a spill file is created holding everything so far and then everything after, so
//! nothing is lost. Caps are budgets: one per stream, or one shared by stdout and stderr; a
//! head-only cap keeps each stream's first bytes and counts (but drops) the rest.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};
use tokio_util::sync::CancellationToken;

use crate::host::Spills;

/// How many output bytes a run keeps in memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OutputCap {
    /// Each stream keeps up to this many bytes.
    Each(u64),
    /// stdout and stderr together keep up to this many bytes (first come, first kept).
    Total(u64),
    /// Each stream keeps up to this many bytes; the rest is read (so the command is not
    /// blocked or killed by a full pipe) and counted, but kept nowhere: no spill file.
    EachHeadOnly(u64),
    /// stdout and stderr together keep what takes up to this many bytes as text in a JSON
    /// string ([`json_cost`]: `\n` is two bytes, a control character six): the cap on what
    /// an agent receives, escaping included.
    TotalJson(u64),
}

impl OutputCap {
    /// The budgets for stdout and stderr.
    pub(crate) fn budgets(self) -> (Budget, Budget) {
        match self {
            OutputCap::Each(n) => (Budget::new(n), Budget::new(n)),
            OutputCap::Total(n) => {
                let shared = Budget::new(n);
                (shared.clone(), shared)
            }
            OutputCap::EachHeadOnly(n) => (Budget::head_only(n), Budget::head_only(n)),
            OutputCap::TotalJson(n) => {
                let shared = Budget {
                    json: true,
                    ..Budget::new(n)
                };
                (shared.clone(), shared)
            }
        }
    }
}

/// Bytes a stream may still keep in memory; shared between streams when cloned.
#[derive(Debug, Clone)]
pub(crate) struct Budget {
    left: Arc<AtomicU64>,
    /// Past the budget, spill everything to a file (else count the rest and drop it).
    spill: bool,
    /// Bytes are counted as they cost in a JSON string ([`json_cost`]), not one each.
    json: bool,
}

impl Budget {
    fn new(n: u64) -> Self {
        Budget {
            left: Arc::new(AtomicU64::new(n)),
            spill: true,
            json: false,
        }
    }

    fn head_only(n: u64) -> Self {
        Budget {
            spill: false,
            ..Budget::new(n)
        }
    }

    /// Takes what the budget allows of the start of `chunk` and returns how many of its
    /// bytes were granted.
    fn take_of(&self, chunk: &[u8]) -> usize {
        if !self.json {
            return self.take(chunk.len() as u64) as usize;
        }
        let mut left = self.left.load(Ordering::Acquire);
        loop {
            let (bytes, cost) = json_cost(chunk, left);
            match self
                .left
                .compare_exchange(left, left - cost, Ordering::AcqRel, Ordering::Acquire)
            {
                Ok(_) => return bytes,
                Err(now) => left = now,
            }
        }
    }

    /// Takes up to `want` bytes from the budget and returns how many were granted.
    fn take(&self, want: u64) -> u64 {
        let mut granted = 0;
        let _ = self
            .left
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |left| {
                granted = left.min(want);
                Some(left - granted)
            });
        granted
    }
}

/// One captured stream.
#[derive(Debug, Clone, Default)]
pub struct Captured {
    /// The first bytes of the stream, up to its cap.
    pub preview: Vec<u8>,
    /// How many bytes the stream had in all.
    pub total_bytes: u64,
    /// The stream was longer than its preview.
    pub truncated: bool,
    /// The file holding the whole stream, when it was truncated.
    pub full_output_path: Option<PathBuf>,
    /// Bytes the spill file holds (all of `total_bytes` unless capped or a write failed).
    pub spill_bytes: u64,
    /// The spill file reached its cap ([`Spills::cap`]) and the rest of the stream was dropped.
    pub spill_truncated: bool,
    /// Why the spill file is short or missing (e.g. the disk is full).
    pub spill_error: Option<String>,
}

impl Captured {
    /// The preview as text: invalid UTF-8 shown lossily, a character cut by the cap dropped.
    pub fn text(&self) -> String {
        lossy_prefix(&self.preview)
    }

    /// The whole stream as text: the spill file when there is one, else the preview.
    pub fn full_text(&self) -> String {
        match &self.full_output_path {
            Some(path) => std::fs::read(path)
                .map(|b| String::from_utf8_lossy(&b).into_owned())
                .unwrap_or_else(|_| self.text()),
            None => self.text(),
        }
    }
}

/// The longest start of `bytes` whose text costs at most `room` bytes in a JSON string, as
/// `(bytes, cost)`. The cost is serde_json's escaping: `"`, `\\` and the named controls
/// (`\n`, `\r`, `\t`, backspace, form feed) two bytes, other controls six (`\u00XX`), any
/// other character its UTF-8 length; a byte that is not valid UTF-8 (shown as U+FFFD) is
/// counted three, so the cost is never below what the text takes, even when a character is
/// split between two reads.
pub(crate) fn json_cost(bytes: &[u8], room: u64) -> (usize, u64) {
    let (mut taken, mut used) = (0usize, 0u64);
    for chunk in bytes.utf8_chunks() {
        for c in chunk.valid().chars() {
            let cost = match c {
                '"' | '\\' | '\n' | '\r' | '\t' | '\u{8}' | '\u{c}' => 2,
                c if (c as u32) < 0x20 => 6,
                c => c.len_utf8() as u64,
            };
            if used + cost > room {
                return (taken, used);
            }
            used += cost;
            taken += c.len_utf8();
        }
        for _ in chunk.invalid() {
            if used + 3 > room {
                return (taken, used);
            }
            used += 3;
            taken += 1;
        }
    }
    (taken, used)
}

/// `bytes` as text, without a replacement character for a multi-byte character cut at the end.
pub(crate) fn lossy_prefix(bytes: &[u8]) -> String {
    let cut = match std::str::from_utf8(bytes) {
        Ok(s) => return s.to_string(),
        Err(e) if e.error_len().is_none() => e.valid_up_to(),
        Err(_) => bytes.len(),
    };
    // Only the tail is an incomplete character; anything invalid before it stays lossy.
    String::from_utf8_lossy(&bytes[..cut]).into_owned()
}

/// Reads `reader` to its end (or until `stop` fires), keeping what `budget` allows. Past the
/// budget, the whole stream goes to a spill file of `spills`, up to [`Spills::cap`] bytes; after that (or
/// after a write error) the rest is read and counted but dropped, and the result says so.
pub(crate) async fn capture<R: AsyncRead + Unpin>(
    mut reader: R,
    budget: Budget,
    label: &'static str,
    spills: Arc<Spills>,
    stop: CancellationToken,
) -> Captured {
    let mut out = Captured::default();
    let mut spill: Option<tokio::fs::File> = None;
    let cap = spills.cap();
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        let n = tokio::select! {
            r = reader.read(&mut buf) => match r { Ok(0) | Err(_) => break, Ok(n) => n },
            _ = stop.cancelled() => break,
        };
        let chunk = &buf[..n];
        out.total_bytes += n as u64;
        if let Some(file) = spill.as_mut() {
            spill_write(file, chunk, cap, label, &mut out).await;
            if out.spill_error.is_some() || out.spill_truncated {
                spill = None;
                drain_counting(&mut reader, &mut out, &mut buf, &stop).await;
                break;
            }
            continue;
        }
        let keep = budget.take_of(chunk);
        out.preview.extend_from_slice(&chunk[..keep]);
        if keep < n {
            out.truncated = true;
            if !budget.spill {
                drain_counting(&mut reader, &mut out, &mut buf, &stop).await;
                return out;
            }
            match spills.create(label) {
                Ok((file, path)) => {
                    let mut file = tokio::fs::File::from_std(file);
                    out.full_output_path = Some(path);
                    let preview = std::mem::take(&mut out.preview);
                    spill_write(&mut file, &preview, cap, label, &mut out).await;
                    out.preview = preview;
                    if out.spill_error.is_none() && !out.spill_truncated {
                        spill_write(&mut file, &chunk[keep..], cap, label, &mut out).await;
                    }
                    if out.spill_error.is_some() || out.spill_truncated {
                        drain_counting(&mut reader, &mut out, &mut buf, &stop).await;
                        break;
                    }
                    spill = Some(file);
                }
                Err(e) => {
                    tracing::warn!(label, error = %e, "no spill file; the rest is dropped");
                    out.spill_error = Some(e.to_string());
                    // Keep counting bytes without storing them.
                    drain_counting(&mut reader, &mut out, &mut buf, &stop).await;
                    return out;
                }
            }
        }
    }
    if let Some(mut file) = spill
        && let Err(e) = async {
            file.flush().await?;
            file.sync_all().await
        }
        .await
    {
        spill_failed(label, &e, &mut out);
    }
    out
}

/// Writes what fits under `cap` of `chunk` to the spill file; marks the result when the cap
/// is reached or the write fails (logged once: the caller stops writing after either).
async fn spill_write(
    file: &mut tokio::fs::File,
    chunk: &[u8],
    cap: u64,
    label: &'static str,
    out: &mut Captured,
) {
    let room = cap.saturating_sub(out.spill_bytes) as usize;
    let part = &chunk[..chunk.len().min(room)];
    if let Err(e) = file.write_all(part).await {
        spill_failed(label, &e, out);
        return;
    }
    out.spill_bytes += part.len() as u64;
    if part.len() < chunk.len() {
        out.spill_truncated = true;
        tracing::warn!(
            label,
            cap,
            "spill file reached its cap; the rest of the stream is dropped"
        );
        let _ = file.flush().await;
    }
}

fn spill_failed(label: &'static str, e: &std::io::Error, out: &mut Captured) {
    tracing::warn!(label, error = %e, "writing the spill file failed; the rest is dropped");
    out.spill_error = Some(format!(
        "writing the spill file failed after {} bytes ({e}); it holds only the start of the stream",
        out.spill_bytes
    ));
}

async fn drain_counting<R: AsyncRead + Unpin>(
    reader: &mut R,
    out: &mut Captured,
    buf: &mut [u8],
    stop: &CancellationToken,
) {
    loop {
        tokio::select! {
            r = reader.read(buf) => match r { Ok(0) | Err(_) => return, Ok(n) => out.total_bytes += n as u64 },
            _ = stop.cancelled() => return,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// [`super::capture`] with spill files of a fresh [`Spills`].
    async fn capture<R: AsyncRead + Unpin>(
        reader: R,
        budget: Budget,
        label: &'static str,
        stop: CancellationToken,
    ) -> Captured {
        let spills = Arc::new(Spills::new(crate::config::DEFAULT_MAX_SPILL_BYTES));
        super::capture(reader, budget, label, spills, stop).await
    }

    #[test]
    fn shared_budget_is_split_first_come() {
        let (a, b) = OutputCap::Total(10).budgets();
        assert_eq!(a.take(7), 7);
        assert_eq!(b.take(7), 3);
        assert_eq!(a.take(1), 0);
        let (a, b) = OutputCap::Each(4).budgets();
        assert_eq!((a.take(9), b.take(9)), (4, 4));
    }

    #[test]
    fn a_json_budget_counts_what_the_text_takes_escaped() {
        let (a, b) = OutputCap::TotalJson(10).budgets();
        assert_eq!(a.take_of(b"y\ny\n"), 4, "six bytes escaped: four left");
        assert_eq!(b.take_of(b"\x01"), 0, "a control takes six");
        assert_eq!(b.take_of(b"z\""), 2, "three bytes: one left");
        assert_eq!(a.take_of(b"\n"), 0, "a line feed takes two");
        assert_eq!(a.take_of(b"qq"), 1);
        for text in ["plain", "y\n\"q\"\t\\", "\u{1}\u{1f}€😀", "a\u{7f}b"] {
            let escaped = serde_json::to_string(text).unwrap().len() as u64 - 2;
            assert_eq!(json_cost(text.as_bytes(), u64::MAX), (text.len(), escaped));
        }
        // Invalid bytes, and a character split between reads, cost at least their U+FFFD.
        let euro = "€".as_bytes();
        assert_eq!(json_cost(&[b'a', 0xff], 100), (2, 4));
        assert_eq!(json_cost(&euro[..2], 100), (2, 6));
        assert_eq!(json_cost(&euro[2..], 100), (1, 3));
    }

    #[test]
    fn lossy_prefix_drops_a_cut_character_only() {
        let euro = "€".as_bytes();
        assert_eq!(lossy_prefix(&[b'a', euro[0], euro[1]]), "a");
        assert_eq!(lossy_prefix(&[b'a', 0xff, b'b']), "a\u{fffd}b");
        assert_eq!(lossy_prefix("a€".as_bytes()), "a€");
    }

    #[tokio::test]
    async fn a_long_stream_keeps_a_preview_and_spills_everything() {
        let data: Vec<u8> = (0..200_000u32).map(|i| (i % 251) as u8).collect();
        let (budget, _) = OutputCap::Each(1000).budgets();
        let got = capture(&data[..], budget, "test", CancellationToken::new()).await;
        assert!(got.truncated);
        assert_eq!(got.preview, data[..1000]);
        assert_eq!(got.total_bytes, data.len() as u64);
        let path = got.full_output_path.expect("spill path");
        assert_eq!(std::fs::read(&path).unwrap(), data);
        std::fs::remove_file(path).unwrap();
    }

    #[tokio::test]
    async fn head_only_keeps_the_head_counts_the_rest_and_writes_no_file() {
        let data = vec![b'x'; 300_000];
        let (budget, _) = OutputCap::EachHeadOnly(1000).budgets();
        let got = capture(&data[..], budget, "test", CancellationToken::new()).await;
        assert!(got.truncated);
        assert_eq!(got.preview.len(), 1000);
        assert_eq!(got.total_bytes, 300_000);
        assert!(got.full_output_path.is_none());
    }

    #[tokio::test]
    async fn a_short_stream_is_not_spilled() {
        let (budget, _) = OutputCap::Each(1000).budgets();
        let got = capture(&b"hello"[..], budget, "test", CancellationToken::new()).await;
        assert!(!got.truncated && got.full_output_path.is_none());
        assert_eq!(got.text(), "hello");
    }
}
