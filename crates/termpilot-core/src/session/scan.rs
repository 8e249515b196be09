//! Reading the output stream line by line, as waits and watches do: rendered lines, the
//! echo of typed input left out, and for a matching line the output position just after it,
//! so the next wait from there sees the lines that followed in the same chunk.

use super::echo::for_each_unmasked;
use super::terminal::Session;
use super::text::Cleaner;

/// A cursor over a session's output.
pub(super) struct LineScan {
    /// Where the next scan starts.
    pub pos: u64,
    cleaner: Cleaner,
}

impl LineScan {
    pub(super) fn new(pos: u64) -> Self {
        LineScan {
            pos,
            cleaner: Cleaner::new(),
        }
    }

    /// Reads the output that arrived since the last call. `on_line` sees each completed line
    /// and returns true to stop there; the result is then the position just after that line.
    pub(super) fn next(
        &mut self,
        session: &Session,
        mut on_line: impl FnMut(&str) -> bool,
    ) -> Option<u64> {
        let (from, bytes, masks) = {
            let s = session.output_state();
            let (from, bytes) = s.output.since(self.pos);
            let masks = s.input.echo_between(from, from + bytes.len() as u64);
            (from, bytes, masks)
        };
        let mut start = 0;
        while start < bytes.len() {
            let end = memchr::memchr(b'\n', &bytes[start..]).map_or(bytes.len(), |i| start + i + 1);
            let mut hit = false;
            let cleaner = &mut self.cleaner;
            for_each_unmasked(&bytes[start..end], from + start as u64, &masks, |piece| {
                cleaner.feed(piece, &mut |line| hit = hit || on_line(line));
            });
            start = end;
            if hit {
                self.pos = from + end as u64;
                return Some(self.pos);
            }
        }
        self.pos = from + bytes.len() as u64;
        None
    }

    /// The line being printed, not yet ended by a newline (a prompt such as `Password: `).
    pub(super) fn partial(&self) -> String {
        self.cleaner.partial()
    }
}
