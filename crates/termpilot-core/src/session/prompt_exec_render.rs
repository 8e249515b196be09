//! Rendering one `terminal_exec`'s output as the agent gets it: the first and last lines in
//! memory, every line in a spill file once there are more than fit — and, while the command
//! runs, ahead of its end ([`Ahead`]), so that little is left to do once the end is known.

use std::path::PathBuf;

use super::prompt_exec_capture::ExecCapture;
use super::text;
use crate::error::Result;
use crate::host::spill;

/// A command's output as the agent gets it.
pub(super) struct Rendered {
    pub lines: Vec<String>,
    /// Lines left out of the middle.
    pub omitted: usize,
    /// Lines cut at [`MAX_LINE_BYTES`] (whole in `full_output_path`).
    pub cut_lines: usize,
    /// Every line, when some were left out or cut (never a file that lacks some).
    pub full_output_path: Option<PathBuf>,
    /// Why there is no `full_output_path` although lines were left out or cut: what failed,
    /// where (a full disk, an unwritable folder).
    pub spill_error: Option<String>,
}

/// The first and last lines of a stream, and — once there are more than fit — every line in
/// a spill file.
struct HeadTail {
    head_max: usize,
    tail_max: usize,
    style: text::Style,
    head: Vec<String>,
    tail: std::collections::VecDeque<String>,
    total: usize,
    /// Lines kept cut at [`MAX_LINE_BYTES`] (whole in the spill file).
    cut: usize,
    spill: Option<Spill>,
    /// Why the spill file could not be made or written: it is gone, and nothing more is
    /// written.
    spill_error: Option<String>,
    /// The line being received in pieces ([`text::Cleaner::whole_lines`]): its first
    /// [`MAX_LINE_BYTES`] and how many bytes it has so far.
    open: Option<(String, usize)>,
    /// Who owns the spill file ([`spill::Owner`]): removed when it ends.
    owner: spill::Owner,
}

/// The spill file being written.
struct Spill {
    writer: std::io::BufWriter<std::fs::File>,
    path: PathBuf,
    /// Bytes handed to the writer.
    bytes: u64,
}

/// Longest line kept whole in a result; a longer one is cut there (a 3 MB line of `yes`
/// output does not fill the agent's context) and kept whole in the spill file.
pub(super) const MAX_LINE_BYTES: usize = 4096;

impl HeadTail {
    fn new(max_lines: usize, style: text::Style, owner: spill::Owner) -> Self {
        HeadTail {
            style,
            head_max: max_lines / 2,
            tail_max: max_lines - max_lines / 2,
            head: Vec::new(),
            tail: std::collections::VecDeque::new(),
            total: 0,
            cut: 0,
            spill: None,
            spill_error: None,
            open: None,
            owner,
        }
    }

    /// From now on every line goes to a spill file too, the lines so far first. A failure
    /// is kept in `spill_error` (the reply still gets its lines).
    fn start_spill(&mut self) {
        if self.spill.is_some() || self.spill_error.is_some() {
            return;
        }
        match self.owner.create("exec") {
            Ok((file, path)) => {
                self.spill = Some(Spill {
                    writer: std::io::BufWriter::new(file),
                    path,
                    bytes: 0,
                });
                let lines: Vec<String> =
                    self.head.iter().chain(self.tail.iter()).cloned().collect();
                for l in lines {
                    self.write(l.as_bytes(), true);
                }
            }
            Err(e) => {
                tracing::warn!(error = %e, "no spill file for an exec's output");
                self.spill_error = Some(format!("{e}"));
            }
        }
    }

    /// Writes to the spill file, if there is one; a failure removes it and says why.
    fn write(&mut self, bytes: &[u8], newline: bool) {
        use std::io::Write;
        let Some(spill) = self.spill.as_mut() else {
            return;
        };
        let written = spill.writer.write_all(bytes).and_then(|()| {
            if newline {
                spill.writer.write_all(b"\n")
            } else {
                Ok(())
            }
        });
        match written {
            Ok(()) => spill.bytes += (bytes.len() + usize::from(newline)) as u64,
            Err(e) => self.spill_failed(&e),
        }
    }

    /// The spill file could not be written: it is removed (a short file is not the full
    /// output) and the reply says what failed, where.
    fn spill_failed(&mut self, e: &std::io::Error) {
        let Some(spill) = self.spill.take() else {
            return;
        };
        let Spill {
            writer,
            path,
            bytes,
        } = spill;
        // Whatever the buffer still holds is dropped with it.
        let (file, _) = writer.into_parts();
        drop(file);
        let _ = std::fs::remove_file(&path);
        tracing::warn!(error = %e, path = %path.display(), "writing an exec's full output failed");
        self.spill_error = Some(format!(
            "Writing the full output to {} failed after about {bytes} bytes ({e}); the file was removed, so only the lines shown here are kept. Free space in {} and run the command again.",
            path.display(),
            path.parent()
                .map(|p| p.display().to_string())
                .unwrap_or_default()
        ));
    }

    /// Takes one line, or (`done` false) a piece of a line too long to hold, whose rest
    /// follows.
    fn take(&mut self, piece: &str, done: bool) {
        let long = self.open.is_some() || !done || piece.len() > MAX_LINE_BYTES;
        if long || self.total + 1 == self.head_max + self.tail_max + 1 {
            // From now on the output is cut: everything so far goes to the file first.
            self.start_spill();
        }
        self.write(piece.as_bytes(), done);
        if !done || self.open.is_some() {
            let (start, bytes) = self.open.get_or_insert_with(Default::default);
            if start.len() <= MAX_LINE_BYTES {
                let mut end = (MAX_LINE_BYTES + 1 - start.len()).min(piece.len());
                while !piece.is_char_boundary(end) {
                    end -= 1;
                }
                start.push_str(&piece[..end]);
            }
            *bytes += piece.len();
            if !done {
                return;
            }
        }
        self.total += 1;
        let short = match self.open.take() {
            Some((start, bytes)) => Some(cut(&start, bytes)),
            None => (piece.len() > MAX_LINE_BYTES).then(|| cut(piece, piece.len())),
        };
        if short.is_some() {
            self.cut += 1;
        }
        let kept = short.as_deref().unwrap_or(piece);
        if self.head.len() < self.head_max {
            self.head.push(kept.to_string());
        } else if self.tail_max > 0 {
            // The line that falls out of the tail lends its buffer: no allocation per line.
            let mut slot = if self.tail.len() == self.tail_max {
                self.tail.pop_front().unwrap_or_default()
            } else {
                String::new()
            };
            slot.clear();
            slot.push_str(kept);
            self.tail.push_back(slot);
        }
    }

    fn finish(mut self) -> Rendered {
        use std::io::Write;
        // A flush, not a sync: a full file system refuses the write itself (the reservation is
        // made at write time), and syncing the whole output on every exec cost ~15 ms after
        // `seq 1 3000000` (cargo bench -- exec).
        if let Some(spill) = self.spill.as_mut()
            && let Err(e) = spill.writer.flush()
        {
            self.spill_failed(&e);
        }
        let mut lines = self.head;
        let omitted = self.total - lines.len() - self.tail.len();
        let full_output_path = self.spill.map(|spill| spill.path);
        if omitted > 0 && self.style == text::Style::Plain {
            // smart-terminal-mcp's marker, a blank line either side.
            lines.push(format!("\n... {omitted} lines omitted ...\n"));
        } else if omitted > 0 {
            lines.push(match &full_output_path {
                Some(path) => format!(
                    "… {omitted} lines omitted (all {} lines are in {}) …",
                    self.total,
                    path.display()
                ),
                None => format!(
                    "… {omitted} lines omitted (of {}; no full output file: see spillError) …",
                    self.total
                ),
            });
        }
        lines.extend(self.tail);
        Rendered {
            lines,
            omitted,
            cut_lines: self.cut,
            full_output_path,
            spill_error: self.spill_error,
        }
    }
}

/// A line of `bytes` bytes that starts with `start` (at least [`MAX_LINE_BYTES`] of it),
/// cut at [`MAX_LINE_BYTES`] (on a character boundary) with a note of what is left out.
fn cut(start: &str, bytes: usize) -> String {
    let mut at = MAX_LINE_BYTES.min(start.len());
    while !start.is_char_boundary(at) {
        at -= 1;
    }
    format!(
        "{}… ({} more bytes of this line are in the full output file)",
        &start[..at],
        bytes - at
    )
}

/// Renders the captured bytes `from..to` a chunk at a time, keeping only the first and last
/// lines in memory (`max_lines` in all) and every line in a spill file once there are more:
/// memory stays bounded however much a command prints. `drop_last` is a final unterminated
/// line to leave out (the shell's next prompt). The spill file is `owner`'s
/// ([`spill::Owner`]).
pub(super) fn render_bounded(
    capture: &mut ExecCapture,
    from: u64,
    to: u64,
    max_lines: usize,
    style: text::Style,
    drop_last: Option<&str>,
    owner: spill::Owner,
) -> Result<Rendered> {
    Ahead::new(from, max_lines, style, owner).finish(capture, to, drop_last)
}

/// Bytes of the newest output the renderer ahead leaves for the end: the command's `D` mark
/// (and what follows it, which is not output) is always in this last stretch.
pub(super) const KEEP_BACK: u64 = 64 * 1024;
/// Bytes rendered ahead per step: one step never holds a worker long, and what is left for
/// the end is at most this plus [`KEEP_BACK`].
const AHEAD_CHUNK: u64 = 128 * 1024;

/// The output of a running command rendered as it comes, from its `C` mark on.
pub(super) struct Ahead {
    /// Where the output starts (just after `C`).
    pub from: u64,
    /// Rendered up to here.
    pub at: u64,
    kept: HeadTail,
    cleaner: text::Cleaner,
}

impl Ahead {
    /// `owner` owns the spill file, if one is needed ([`spill::Owner`]).
    pub(super) fn new(
        from: u64,
        max_lines: usize,
        style: text::Style,
        owner: spill::Owner,
    ) -> Self {
        Ahead {
            from,
            at: from,
            kept: HeadTail::new(max_lines, style, owner),
            cleaner: text::Cleaner::whole_lines_with_style(style),
        }
    }

    /// How far the next step may go: up to `limit`, one chunk at most, and only once a
    /// whole chunk is waiting (fewer, larger steps: less time under the session's lock).
    pub(super) fn next_stop(&self, limit: u64) -> Option<u64> {
        (limit >= self.at + AHEAD_CHUNK).then_some(self.at + AHEAD_CHUNK)
    }

    /// Renders `bytes`, the captured output from `self.at` on.
    pub(super) fn feed(&mut self, bytes: &[u8]) {
        let kept = &mut self.kept;
        self.cleaner
            .feed_pieces(bytes, &mut |l, done| kept.take(l, done));
        self.at += bytes.len() as u64;
    }

    /// Renders the rest up to `to` and finishes, as [`render_bounded`] would have.
    pub(super) fn finish(
        mut self,
        capture: &mut ExecCapture,
        to: u64,
        drop_last: Option<&str>,
    ) -> Result<Rendered> {
        while self.at < to {
            let end = (self.at + AHEAD_CHUNK).min(to);
            let bytes = capture.range(self.at, end);
            if bytes.is_empty() {
                break;
            }
            self.feed(&bytes);
        }
        let partial = self.cleaner.partial();
        if self.cleaner.pieced() || (!partial.is_empty() && drop_last != Some(partial.as_str())) {
            self.kept.take(&partial, true);
        }
        Ok(self.kept.finish())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rendering_ahead_in_pieces_gives_what_rendering_at_the_end_gives() {
        let text: String = (1..=5000).map(|n| format!("line {n}\r\n")).collect();
        let spills =
            std::sync::Arc::new(spill::Spills::new(crate::config::DEFAULT_MAX_SPILL_BYTES));
        let owner = spill::Owner::new(spills.clone(), "test".into());
        let mut capture = ExecCapture::new(10, spills);
        capture.push(text.as_bytes());
        let to = 10 + text.len() as u64;
        let whole = render_bounded(
            &mut capture,
            10,
            to,
            20,
            text::Style::Terminal,
            None,
            owner.clone(),
        )
        .unwrap();
        let mut ahead = Ahead::new(10, 20, text::Style::Terminal, owner);
        for cut in [7u64, 4096, 9000, 30001] {
            let bytes = capture.range(ahead.at, 10 + cut);
            ahead.feed(&bytes);
        }
        let pieces = ahead.finish(&mut capture, to, None).unwrap();
        assert_eq!(whole.lines.len(), pieces.lines.len());
        assert_eq!(whole.lines[..10], pieces.lines[..10]);
        assert_eq!(whole.lines[11..], pieces.lines[11..]);
        assert_eq!(whole.omitted, pieces.omitted);
        let read =
            |r: &Rendered| std::fs::read_to_string(r.full_output_path.as_ref().unwrap()).unwrap();
        assert_eq!(read(&whole), read(&pieces));
        // This test is not a server, which removes its spills when it exits: remove them here.
        for r in [&whole, &pieces] {
            std::fs::remove_file(r.full_output_path.as_ref().unwrap()).unwrap();
        }
    }
}
