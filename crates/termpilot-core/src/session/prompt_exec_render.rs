//! Rendering one `terminal_exec`'s output as the agent gets it: the first and last lines in
//! memory, every line in a spill file once there are more than fit — and, while the command
//! runs, ahead of its end ([`Ahead`]), so that little is left to do once the end is known.

use std::path::PathBuf;

use super::prompt_exec_capture::ExecCapture;
use super::text;
use crate::error::Result;
use crate::exec::spill;

/// A command's output as the agent gets it.
pub struct Rendered {
    pub lines: Vec<String>,
    /// Lines left out of the middle.
    pub omitted: usize,
    /// Lines cut at [`MAX_LINE_BYTES`] (whole in `full_output_path`).
    pub cut_lines: usize,
    /// Every line, when some were left out.
    pub full_output_path: Option<PathBuf>,
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
    spill: Option<(std::io::BufWriter<std::fs::File>, PathBuf)>,
}

/// Longest line kept whole in a result; a longer one is cut there (a 3 MB line of `yes`
/// output does not fill the agent's context) and kept in the spill file (up to the 64 Ki
/// characters the renderer keeps of any line).
pub const MAX_LINE_BYTES: usize = 4096;

impl HeadTail {
    fn new(max_lines: usize, style: text::Style) -> Self {
        HeadTail {
            style,
            head_max: max_lines / 2,
            tail_max: max_lines - max_lines / 2,
            head: Vec::new(),
            tail: std::collections::VecDeque::new(),
            total: 0,
            cut: 0,
            spill: None,
        }
    }

    /// From now on every line goes to a spill file too, the lines so far first.
    fn start_spill(&mut self) -> Result<()> {
        use std::io::Write;
        if self.spill.is_some() {
            return Ok(());
        }
        let (file, path) = spill::create("exec")?;
        let mut w = std::io::BufWriter::new(file);
        for l in self.head.iter().chain(self.tail.iter()) {
            let _ = writeln!(w, "{l}");
        }
        self.spill = Some((w, path));
        Ok(())
    }

    fn take(&mut self, line: &str) -> Result<()> {
        use std::io::Write;
        self.total += 1;
        if self.total == self.head_max + self.tail_max + 1 || line.len() > MAX_LINE_BYTES {
            // From now on the output is cut: everything so far goes to the file first.
            self.start_spill()?;
        }
        if let Some((w, _)) = self.spill.as_mut() {
            let _ = w
                .write_all(line.as_bytes())
                .and_then(|()| w.write_all(b"\n"));
        }
        let short = cut(line);
        if short.is_some() {
            self.cut += 1;
        }
        let kept = short.as_deref().unwrap_or(line);
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
        Ok(())
    }

    fn finish(self) -> Rendered {
        use std::io::Write;
        let mut lines = self.head;
        let mut omitted = 0;
        let full_output_path = self.spill.map(|(mut w, path)| {
            let _ = w.flush();
            omitted = self.total - lines.len() - self.tail.len();
            if omitted > 0 && self.style == text::Style::Plain {
                // smart-terminal-mcp's marker, a blank line either side.
                lines.push(format!("\n... {omitted} lines omitted ...\n"));
            } else if omitted > 0 {
                lines.push(format!(
                    "… {omitted} lines omitted (all {} lines are in {}) …",
                    self.total,
                    path.display()
                ));
            }
            path
        });
        lines.extend(self.tail);
        Rendered {
            lines,
            omitted,
            cut_lines: self.cut,
            full_output_path,
        }
    }
}

/// `line` cut at [`MAX_LINE_BYTES`] (on a character boundary) with a note of what is left
/// out, or `None` when it is short enough.
fn cut(line: &str) -> Option<String> {
    if line.len() <= MAX_LINE_BYTES {
        return None;
    }
    let mut at = MAX_LINE_BYTES;
    while !line.is_char_boundary(at) {
        at -= 1;
    }
    Some(format!(
        "{}… ({} more bytes of this line are in the full output file)",
        &line[..at],
        line.len() - at
    ))
}

/// Renders the captured bytes `from..to` a chunk at a time, keeping only the first and last
/// lines in memory (`max_lines` in all) and every line in a spill file once there are more:
/// memory stays bounded however much a command prints. `drop_last` is a final unterminated
/// line to leave out (the shell's next prompt).
pub fn render_bounded(
    capture: &mut ExecCapture,
    from: u64,
    to: u64,
    max_lines: usize,
    style: text::Style,
    drop_last: Option<&str>,
) -> Result<Rendered> {
    Ahead::new(from, max_lines, style).finish(capture, to, drop_last)
}

/// Bytes of the newest output the renderer ahead leaves for the end: the command's `D` mark
/// (and what follows it, which is not output) is always in this last stretch.
pub const KEEP_BACK: u64 = 64 * 1024;
/// Bytes rendered ahead per step: one step never holds a worker long, and what is left for
/// the end is at most this plus [`KEEP_BACK`].
const AHEAD_CHUNK: u64 = 128 * 1024;

/// The output of a running command rendered as it comes, from its `C` mark on.
pub struct Ahead {
    /// Where the output starts (just after `C`).
    pub from: u64,
    /// Rendered up to here.
    pub at: u64,
    kept: HeadTail,
    cleaner: text::Cleaner,
    failed: Option<crate::error::Error>,
}

impl Ahead {
    pub fn new(from: u64, max_lines: usize, style: text::Style) -> Self {
        Ahead {
            from,
            at: from,
            kept: HeadTail::new(max_lines, style),
            cleaner: text::Cleaner::with_style(style),
            failed: None,
        }
    }

    /// How far the next step may go: up to `limit`, one chunk at most, and only once a
    /// whole chunk is waiting (fewer, larger steps: less time under the session's lock).
    pub fn next_stop(&self, limit: u64) -> Option<u64> {
        (limit >= self.at + AHEAD_CHUNK).then_some(self.at + AHEAD_CHUNK)
    }

    /// Renders `bytes`, the captured output from `self.at` on.
    pub fn feed(&mut self, bytes: &[u8]) {
        let (kept, failed) = (&mut self.kept, &mut self.failed);
        self.cleaner.feed(bytes, &mut |l| {
            if let Err(e) = kept.take(l) {
                failed.get_or_insert(e);
            }
        });
        self.at += bytes.len() as u64;
    }

    /// Renders the rest up to `to` and finishes, as [`render_bounded`] would have.
    pub fn finish(
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
        if !partial.is_empty() && drop_last != Some(partial.as_str()) {
            self.kept.take(&partial)?;
        }
        if let Some(e) = self.failed {
            return Err(e);
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
        let mut capture = ExecCapture::new(10);
        capture.push(text.as_bytes());
        let to = 10 + text.len() as u64;
        let whole = render_bounded(&mut capture, 10, to, 20, text::Style::Terminal, None).unwrap();
        let mut ahead = Ahead::new(10, 20, text::Style::Terminal);
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
