//! Echo masking: what the agent just typed must not satisfy its own pattern wait.
//!
//! When input is written, its printable characters are remembered. As output arrives, the
//! bytes that echo those characters in order are marked as masked (escape sequences, `\r`,
//! and the stray spaces and backspaces line editors add at a wrap are skipped); the first
//! character that differs ends the expectation. Pattern waits on the stream skip masked
//! bytes, so waiting for `done` after typing `echo done` matches the output, not the echo.

use std::collections::VecDeque;

/// Most masked ranges remembered; older ones are forgotten.
const MAX_RANGES: usize = 4096;
/// Most characters of input awaiting their echo.
const MAX_EXPECTED: usize = 64 * 1024;

#[derive(Debug, Default)]
pub struct EchoMask {
    expected: VecDeque<char>,
    ranges: VecDeque<(u64, u64)>,
    esc: EscSkip,
    utf8: Vec<u8>,
    utf8_start: u64,
}

#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
enum EscSkip {
    #[default]
    None,
    Esc,
    Csi,
    Str,
    StrEsc,
}

impl EchoMask {
    /// Remembers written input; its echo will be masked.
    pub fn expect(&mut self, input: &str) {
        for c in input.chars() {
            match c {
                '\r' | '\n' => self.expected.push_back('\n'),
                c if c.is_control() => break,
                c => self.expected.push_back(c),
            }
            if self.expected.len() >= MAX_EXPECTED {
                break;
            }
        }
    }

    /// Forgets pending input (e.g. after Ctrl+C, whose echo is not the input).
    pub fn clear_expected(&mut self) {
        self.expected.clear();
    }

    /// Scans a chunk of output that starts at absolute position `start`.
    pub fn observe(&mut self, bytes: &[u8], start: u64) {
        if self.expected.is_empty() && self.esc == EscSkip::None && self.utf8.is_empty() {
            return;
        }
        for (i, &b) in bytes.iter().enumerate() {
            let pos = start + i as u64;
            match self.esc {
                EscSkip::Esc => {
                    self.esc = match b {
                        b'[' => EscSkip::Csi,
                        b']' | b'P' | b'_' | b'^' | b'X' => EscSkip::Str,
                        _ => EscSkip::None,
                    };
                    continue;
                }
                EscSkip::Csi => {
                    if (0x40..=0x7e).contains(&b) {
                        self.esc = EscSkip::None;
                    }
                    continue;
                }
                EscSkip::Str => {
                    if b == 0x07 {
                        self.esc = EscSkip::None;
                    } else if b == 0x1b {
                        self.esc = EscSkip::StrEsc;
                    }
                    continue;
                }
                EscSkip::StrEsc => {
                    self.esc = if b == b'\\' {
                        EscSkip::None
                    } else {
                        EscSkip::Str
                    };
                    continue;
                }
                EscSkip::None => {}
            }
            if self.expected.is_empty() {
                if b == 0x1b {
                    self.esc = EscSkip::Esc;
                }
                continue;
            }
            if !self.utf8.is_empty() || b >= 0x80 {
                if self.utf8.is_empty() {
                    self.utf8_start = pos;
                }
                self.utf8.push(b);
                match std::str::from_utf8(&self.utf8) {
                    Ok(s) => {
                        let c = s.chars().next().unwrap_or('\u{fffd}');
                        self.utf8.clear();
                        self.char(c, self.utf8_start, pos + 1);
                    }
                    Err(e) if e.error_len().is_some() || self.utf8.len() >= 4 => {
                        self.utf8.clear();
                        self.expected.clear();
                    }
                    Err(_) => {}
                }
                continue;
            }
            match b {
                0x1b => self.esc = EscSkip::Esc,
                b'\r' | 0x08 | 0x07 => {}
                b'\n' => self.char('\n', pos, pos + 1),
                _ => self.char(b as char, pos, pos + 1),
            }
        }
    }

    fn char(&mut self, c: char, from: u64, to: u64) {
        match self.expected.front() {
            Some(&e) if e == c => {
                self.expected.pop_front();
                if c != '\n' {
                    self.mask(from, to);
                }
            }
            // Line editors pad with spaces at a wrap; that is not a divergence.
            Some(_) if c == ' ' => {}
            Some(_) => self.expected.clear(),
            None => {}
        }
    }

    fn mask(&mut self, from: u64, to: u64) {
        if let Some(last) = self.ranges.back_mut()
            && last.1 == from
        {
            last.1 = to;
            return;
        }
        self.ranges.push_back((from, to));
        if self.ranges.len() > MAX_RANGES {
            self.ranges.pop_front();
        }
    }

    /// The masked ranges that overlap `start..end`, oldest first.
    pub fn ranges_between(&self, start: u64, end: u64) -> Vec<(u64, u64)> {
        self.ranges
            .iter()
            .filter(|(a, b)| *b > start && *a < end)
            .copied()
            .collect()
    }

    /// Removes masked bytes from a slice of output that starts at `start`.
    #[cfg(test)]
    fn unmasked(&self, bytes: &[u8], start: u64) -> Vec<u8> {
        let mut out = Vec::with_capacity(bytes.len());
        let ranges = self.ranges_between(start, start + bytes.len() as u64);
        for_each_unmasked(bytes, start, &ranges, |piece| out.extend_from_slice(piece));
        out
    }
}

/// Calls `f` with each run of `bytes` (starting at position `start`) outside `ranges`.
pub(super) fn for_each_unmasked(
    bytes: &[u8],
    start: u64,
    ranges: &[(u64, u64)],
    mut f: impl FnMut(&[u8]),
) {
    let end = start + bytes.len() as u64;
    let mut cursor = start;
    for &(a, b) in ranges.iter().filter(|(a, b)| *b > start && *a < end) {
        let a = a.max(start);
        if a > cursor {
            f(&bytes[(cursor - start) as usize..(a - start) as usize]);
        }
        cursor = cursor.max(b.min(end));
    }
    if cursor < end {
        f(&bytes[(cursor - start) as usize..]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_echo_of_typed_input_is_masked_but_the_output_is_not() {
        let mut m = EchoMask::default();
        m.expect("echo done\r");
        let out = b"echo done\r\ndone\r\n$ ";
        m.observe(out, 100);
        assert_eq!(m.unmasked(out, 100), b"\r\ndone\r\n$ ");
    }

    #[test]
    fn echo_split_across_chunks_and_wrapped_with_escapes() {
        let mut m = EchoMask::default();
        m.expect("echo hi\r");
        m.observe(b"\x1b[?2004lecho", 0);
        m.observe(b" h\x1b[Ki\r\n", 12);
        let all = b"\x1b[?2004lecho h\x1b[Ki\r\n";
        assert_eq!(m.unmasked(all, 0), b"\x1b[?2004l\x1b[K\r\n");
    }

    #[test]
    fn divergence_stops_masking() {
        let mut m = EchoMask::default();
        m.expect("abc");
        let out = b"axbc";
        m.observe(out, 0);
        assert_eq!(m.unmasked(out, 0), b"xbc");
    }

    #[test]
    fn multibyte_echo() {
        let mut m = EchoMask::default();
        m.expect("日本\r");
        let out = "日本\r\n日本\r\n".as_bytes();
        m.observe(out, 0);
        assert_eq!(m.unmasked(out, 0), "\r\n日本\r\n".as_bytes());
    }
}
