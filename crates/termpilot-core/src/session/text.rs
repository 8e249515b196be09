//! Rendered text from raw terminal bytes, one line at a time, as a person would read it.
//!
//! [`Cleaner`] is a small streaming renderer for the stream views (`terminal_read` output,
//! waits, history): escape sequences are dropped, `\r` rewrites overwrite the line (so a
//! progress bar ends as its last state), `\b`, tabs and the common line edits (`CSI K`,
//! `CSI G/C/D`) are applied, invalid UTF-8 becomes U+FFFD. It is not an emulator — the
//! screen view uses alacritty_terminal for that — but it is exact for line-oriented output
//! and costs little per byte.
//!
//! [`Style::Plain`] is smart-terminal-mcp's cleaning (`src/ansi.js`), for the preset that
//! stands in for it: a line is kept in stream order and settled at its end — tabs stay tabs,
//! a backspace deletes the character before it, `\r` overwrites from the line's start, `CSI K`
//! cuts the line at the cursor and `CSI 2K` empties it, 8-bit C1 strings (`U+009D … U+009C`)
//! and every other C0/C1 control are removed, trailing spaces are kept.

/// How a line's edits are settled.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub enum Style {
    /// As a terminal shows it (tab stops, a backspace moves the cursor).
    #[default]
    Terminal,
    /// As smart-terminal-mcp's `stripAnsi` leaves it.
    Plain,
}

/// Marks an erase-to-end-of-line in a [`Style::Plain`] line (a non-character).
const ERASE_EOL: char = '\u{fffe}';

/// A streaming bytes → lines renderer.
#[derive(Debug, Default, Clone)]
pub(super) struct Cleaner {
    esc: Esc,
    /// Parameter bytes of the CSI sequence being read.
    csi_params: Vec<u8>,
    line: Vec<char>,
    col: usize,
    utf8: Vec<u8>,
    utf8_need: usize,
    /// The completed line handed to `emit`, reused so lines cost no allocation.
    scratch: String,
    style: Style,
    /// [`Style::Plain`]: the line's characters and edits in stream order.
    raw: Vec<char>,
    /// [`Style::Plain`]: a string just saw `0xC2`, the first byte of an 8-bit ST.
    str_c2: bool,
    /// A line that outgrows [`MAX_LINE_CHARS`] is handed on in pieces instead of cut
    /// ([`Cleaner::whole_lines`]).
    pieces: bool,
    /// Pieces of the current line were handed on already.
    pieced: bool,
    /// Every byte takes the general path ([`Cleaner::whole_ascii_line`] is not used): the
    /// differential test's reference.
    no_fast_lines: bool,
}

#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
enum Esc {
    #[default]
    Ground,
    /// After ESC.
    Escape,
    /// After ESC and an intermediate byte (e.g. `ESC (`): one more byte ends it.
    Intermediate,
    Csi,
    /// OSC, DCS, SOS, PM, APC: a string ended by BEL or ST.
    Str,
    /// ESC seen inside a string: `\` ends it.
    StrEscape,
}

/// Longest line kept; longer lines are cut (a person could not read them either).
const MAX_LINE_CHARS: usize = 64 * 1024;

impl Cleaner {
    pub(super) fn new() -> Self {
        Self::default()
    }

    /// A cleaner settling lines in `style`.
    #[cfg(test)]
    pub(super) fn with_style(style: Style) -> Self {
        Cleaner {
            style,
            ..Self::default()
        }
    }

    /// A [`Cleaner::whole_lines`] cleaner settling lines in `style` ([`Style::Plain`] lines
    /// keep their own cap: they are settled only at their end).
    pub(super) fn whole_lines_with_style(style: Style) -> Self {
        Cleaner {
            style,
            pieces: true,
            ..Self::default()
        }
    }

    /// A cleaner that loses nothing of a long line: once a line holds [`MAX_LINE_CHARS`]
    /// characters and more are appended at its end, what it holds is handed on as a piece
    /// ([`Cleaner::feed_pieces`]) and the line goes on from there. A `\r`, backspace or
    /// cursor move after that acts on the part not yet handed on (a terminal, which wraps
    /// such a line over many rows, would not bring it back either).
    #[cfg(test)]
    pub(super) fn whole_lines() -> Self {
        Cleaner {
            pieces: true,
            ..Self::default()
        }
    }

    /// Feeds bytes; every completed line is passed to `emit` (trailing spaces trimmed).
    pub(super) fn feed(&mut self, bytes: &[u8], emit: &mut impl FnMut(&str)) {
        self.feed_pieces(bytes, &mut |l, _| emit(l));
    }

    /// Feeds bytes; `emit(text, done)` gets every completed line (`done`, trailing spaces
    /// trimmed) and, from a [`Cleaner::whole_lines`] cleaner, the pieces of a line too long
    /// to hold (`!done`, as they are: the line's rest follows).
    pub(super) fn feed_pieces(&mut self, bytes: &[u8], emit: &mut impl FnMut(&str, bool)) {
        let mut i = 0;
        while i < bytes.len() {
            // The commonest case, a whole line at once: handed on from the bytes as they are.
            if let Some((text, len)) = self.whole_ascii_line(&bytes[i..]) {
                // SAFETY: the line is printable ASCII ([`Cleaner::whole_ascii_line`]), which
                // is UTF-8.
                let line = unsafe { std::str::from_utf8_unchecked(&bytes[i..i + text]) };
                emit(line, true);
                self.pieced = false;
                i += len;
                continue;
            }
            // The common case, taken in runs: printable ASCII appended at the end of the line.
            if self.style == Style::Plain && self.esc == Esc::Ground && self.utf8_need == 0 {
                let run = bytes[i..]
                    .iter()
                    .take_while(|b| (0x20..0x7f).contains(*b))
                    .count();
                if run > 0 {
                    let room = PLAIN_MAX_CHARS.saturating_sub(self.raw.len());
                    self.raw
                        .extend(bytes[i..i + run.min(room)].iter().map(|&b| b as char));
                    i += run;
                    continue;
                }
            }
            if self.esc == Esc::Ground && self.utf8_need == 0 && self.col == self.line.len() {
                let run = bytes[i..]
                    .iter()
                    .take_while(|b| (0x20..0x7f).contains(*b))
                    .count();
                if run > 0 {
                    let take = run.min(MAX_LINE_CHARS.saturating_sub(self.col));
                    self.line
                        .extend(bytes[i..i + take].iter().map(|&b| b as char));
                    self.col += take;
                    if take < run && self.pieces {
                        // Full: hand the line on and go on with the rest of the run.
                        self.hand_on(emit);
                        i += take;
                    } else {
                        i += run;
                    }
                    continue;
                }
            }
            self.byte(bytes[i], emit);
            i += 1;
        }
    }

    /// At the start of a line, in the ground state: whether `bytes` starts with a whole line
    /// of printable ASCII, ended by `\n` or `\r\n` — what `seq`, `ls` or a log print. Such a
    /// line renders as its text with trailing spaces trimmed, exactly as the general path
    /// renders it byte by byte: the characters go in one after another from column 0, a
    /// CR before the newline only moves the cursor back. Returns the text's length (trailing
    /// spaces left out) and the line's length in bytes.
    fn whole_ascii_line(&self, bytes: &[u8]) -> Option<(usize, usize)> {
        if !self.at_line_start() {
            return None;
        }
        let run = bytes
            .iter()
            .position(|b| !(0x20..0x7f).contains(b))
            .unwrap_or(bytes.len());
        if run > MAX_LINE_CHARS {
            return None;
        }
        let len = match &bytes[run..] {
            [b'\n', ..] => run + 1,
            [b'\r', b'\n', ..] => run + 2,
            _ => return None,
        };
        let text = bytes[..run]
            .iter()
            .rposition(|&b| b != b' ')
            .map_or(0, |i| i + 1);
        Some((text, len))
    }

    /// At the start of a line, in the ground state, rendering as a terminal: where a whole
    /// line of printable ASCII renders as its text ([`Cleaner::whole_ascii_line`]).
    pub(super) fn at_line_start(&self) -> bool {
        !self.no_fast_lines
            && self.style == Style::Terminal
            && self.esc == Esc::Ground
            && self.utf8_need == 0
            && self.col == 0
            && self.line.is_empty()
    }

    /// The current incomplete line (its part not handed on yet, from a
    /// [`Cleaner::whole_lines`] cleaner).
    pub(super) fn partial(&self) -> String {
        if self.style == Style::Plain {
            return settle(&self.raw).trim_end().to_string();
        }
        let s: String = self.line.iter().collect();
        s.trim_end().to_string()
    }

    /// Pieces of the current incomplete line were handed on already.
    pub(super) fn pieced(&self) -> bool {
        self.pieced
    }

    /// Hands on the line held so far as a piece: it is full and more is appended.
    fn hand_on(&mut self, emit: &mut impl FnMut(&str, bool)) {
        self.scratch.clear();
        self.scratch.extend(&self.line);
        emit(&self.scratch, false);
        self.line.clear();
        self.col = 0;
        self.pieced = true;
    }

    fn byte(&mut self, b: u8, emit: &mut impl FnMut(&str, bool)) {
        match self.esc {
            Esc::Ground => {}
            Esc::Escape => {
                self.esc = match b {
                    b'[' => {
                        self.csi_params.clear();
                        Esc::Csi
                    }
                    b']' | b'P' | b'X' | b'^' | b'_' => Esc::Str,
                    0x20..=0x2f => Esc::Intermediate,
                    _ => Esc::Ground,
                };
                return;
            }
            Esc::Intermediate => {
                self.esc = Esc::Ground;
                return;
            }
            Esc::Csi => {
                match b {
                    0x20..=0x3f => self.csi_params.push(b),
                    0x40..=0x7e => {
                        self.esc = Esc::Ground;
                        self.csi(b);
                    }
                    0x1b => self.esc = Esc::Escape,
                    _ => {}
                }
                return;
            }
            Esc::Str => {
                match b {
                    0x07 => self.esc = Esc::Ground,
                    0x1b => self.esc = Esc::StrEscape,
                    // U+009C (ST) in UTF-8, ending an 8-bit string.
                    0x9c if self.str_c2 && self.style == Style::Plain => self.esc = Esc::Ground,
                    _ => {}
                }
                self.str_c2 = b == 0xc2;
                return;
            }
            Esc::StrEscape => {
                self.esc = if b == b'\\' { Esc::Ground } else { Esc::Str };
                return;
            }
        }
        if self.utf8_need > 0 {
            if b & 0xc0 == 0x80 {
                self.utf8.push(b);
                if self.utf8.len() == self.utf8_need {
                    let c = std::str::from_utf8(&self.utf8)
                        .ok()
                        .and_then(|s| s.chars().next())
                        .unwrap_or('\u{fffd}');
                    self.utf8.clear();
                    self.utf8_need = 0;
                    self.put(c, emit);
                }
                return;
            }
            self.utf8.clear();
            self.utf8_need = 0;
            self.put('\u{fffd}', emit);
        }
        if self.style == Style::Plain {
            match b {
                0x1b => self.esc = Esc::Escape,
                b'\n' => self.newline(emit),
                0x08 => {
                    self.raw.pop();
                }
                0x00..=0x7f => self.push_raw(b as char),
                0xc2..=0xdf => self.start_utf8(b, 2),
                0xe0..=0xef => self.start_utf8(b, 3),
                0xf0..=0xf4 => self.start_utf8(b, 4),
                _ => self.push_raw('\u{fffd}'),
            }
            return;
        }
        match b {
            0x1b => self.esc = Esc::Escape,
            b'\n' => self.newline(emit),
            b'\r' => self.col = 0,
            0x08 => self.col = self.col.saturating_sub(1),
            b'\t' => {
                let next = (self.col / 8 + 1) * 8;
                while self.line.len() < next {
                    self.line.push(' ');
                }
                self.col = next;
            }
            0x00..=0x1f | 0x7f => {}
            0x20..=0x7e => self.put(b as char, emit),
            0xc2..=0xdf => self.start_utf8(b, 2),
            0xe0..=0xef => self.start_utf8(b, 3),
            0xf0..=0xf4 => self.start_utf8(b, 4),
            _ => self.put('\u{fffd}', emit),
        }
    }

    fn start_utf8(&mut self, b: u8, len: usize) {
        self.utf8.clear();
        self.utf8.push(b);
        self.utf8_need = len;
    }

    /// [`Style::Plain`]: one character (or edit) of the line, in stream order; the 8-bit
    /// OSC and CSI introducers start their sequences.
    fn push_raw(&mut self, c: char) {
        match c {
            '\u{9d}' => {
                self.str_c2 = false;
                self.esc = Esc::Str;
            }
            '\u{9b}' => {
                self.csi_params.clear();
                self.esc = Esc::Csi;
            }
            _ if self.raw.len() < PLAIN_MAX_CHARS => self.raw.push(c),
            _ => {}
        }
    }

    fn put(&mut self, c: char, emit: &mut impl FnMut(&str, bool)) {
        if self.style == Style::Plain {
            return self.push_raw(c);
        }
        if self.col >= MAX_LINE_CHARS {
            if !(self.pieces && self.col == self.line.len()) {
                return;
            }
            self.hand_on(emit);
        }
        if self.col < self.line.len() {
            self.line[self.col] = c;
        } else {
            while self.line.len() < self.col {
                self.line.push(' ');
            }
            self.line.push(c);
        }
        self.col += 1;
    }

    fn newline(&mut self, emit: &mut impl FnMut(&str, bool)) {
        if self.style == Style::Plain {
            self.scratch = settle(&self.raw);
            self.raw.clear();
            emit(&self.scratch, true);
            return;
        }
        let end = self
            .line
            .iter()
            .rposition(|c| !c.is_whitespace())
            .map_or(0, |i| i + 1);
        self.scratch.clear();
        self.scratch.extend(&self.line[..end]);
        emit(&self.scratch, true);
        self.line.clear();
        self.col = 0;
        self.pieced = false;
    }

    fn csi(&mut self, fin: u8) {
        if self.style == Style::Plain {
            // Only erase-in-line survives stripping (as upstream's `applyEraseInLine`).
            if fin == b'K' {
                match self.csi_params.as_slice() {
                    b"" | b"0" => self.push_raw(ERASE_EOL),
                    b"2" => {
                        self.push_raw('\r');
                        self.push_raw(ERASE_EOL);
                    }
                    _ => {}
                }
            }
            return;
        }
        if self
            .csi_params
            .first()
            .is_some_and(|p| matches!(p, b'?' | b'>' | b'<' | b'='))
        {
            return;
        }
        let n = std::str::from_utf8(&self.csi_params)
            .ok()
            .and_then(|s| s.split(';').next()?.parse::<usize>().ok());
        match fin {
            b'K' => match n.unwrap_or(0) {
                0 => self.line.truncate(self.col),
                1 => {
                    for c in self.line.iter_mut().take(self.col + 1) {
                        *c = ' ';
                    }
                }
                _ => self.line.iter_mut().for_each(|c| *c = ' '),
            },
            b'G' => self.col = n.unwrap_or(1).saturating_sub(1).min(MAX_LINE_CHARS),
            b'C' => self.col = (self.col + n.unwrap_or(1).max(1)).min(MAX_LINE_CHARS),
            b'D' => self.col = self.col.saturating_sub(n.unwrap_or(1).max(1)),
            _ => {}
        }
    }
}

/// Most characters and edits a [`Style::Plain`] line keeps.
const PLAIN_MAX_CHARS: usize = 4 * MAX_LINE_CHARS;

/// A [`Style::Plain`] line settled: `\r` overwrites from the start, [`ERASE_EOL`] cuts at
/// the cursor (upstream `collapseCarriageReturns`), then controls are removed.
fn settle(raw: &[char]) -> String {
    let is_control = |c: &char| {
        matches!(*c, '\u{0}'..='\u{8}' | '\u{b}' | '\u{c}' | '\u{e}'..='\u{1f}' | '\u{7f}'..='\u{9f}')
            || *c == '\r'
            || *c == ERASE_EOL
    };
    if !raw.iter().any(|&c| c == '\r' || c == ERASE_EOL) {
        return raw.iter().filter(|c| !is_control(c)).collect();
    }
    let mut chars: Vec<char> = Vec::with_capacity(raw.len());
    for segment in raw.split(|&c| c == '\r') {
        let mut cursor = 0;
        for &c in segment {
            if c == ERASE_EOL {
                chars.truncate(cursor);
                continue;
            }
            if cursor < chars.len() {
                chars[cursor] = c;
            } else {
                chars.push(c);
            }
            cursor += 1;
        }
    }
    chars.iter().filter(|c| !is_control(c)).collect()
}

/// Renders a whole byte slice: completed lines, then the incomplete last line if any.
pub(super) fn render(bytes: &[u8]) -> Vec<String> {
    let mut cleaner = Cleaner::new();
    let mut lines = Vec::new();
    cleaner.feed(bytes, &mut |l| lines.push(l.to_string()));
    let partial = cleaner.partial();
    if !partial.is_empty() {
        lines.push(partial);
    }
    lines
}

/// Keeps the first and last lines when there are more than `max`, with one line saying how
/// many were left out. Returns the lines and how many were cut.
pub(super) fn head_tail(lines: Vec<String>, max: usize, hint: &str) -> (Vec<String>, usize) {
    if lines.len() <= max || max == 0 {
        return (lines, 0);
    }
    let head = max / 2;
    let tail = max - head;
    let cut = lines.len() - max;
    let mut out = Vec::with_capacity(max + 1);
    out.extend_from_slice(&lines[..head]);
    out.push(format!("… {cut} lines omitted{hint} …"));
    out.extend_from_slice(&lines[lines.len() - tail..]);
    (out, cut)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strips_colours_and_titles() {
        assert_eq!(render(b"\x1b[31mred\x1b[0m plain\r\n"), vec!["red plain"]);
        assert_eq!(render(b"\x1b]0;title\x07ok\n"), vec!["ok"]);
        assert_eq!(render(b"\x1b]133;A\x1b\\$ ls\n"), vec!["$ ls"]);
        assert_eq!(render(b"\x1b(Bx\n"), vec!["x"]);
        assert_eq!(render(b"\x1b[?2004hy\n"), vec!["y"]);
    }

    #[test]
    fn carriage_return_rewrites_leave_the_last_state() {
        assert_eq!(render(b"10%\r50%\r100%\n"), vec!["100%"]);
        assert_eq!(render(b"abcdef\rxy\n"), vec!["xycdef"]);
        assert_eq!(render(b"long line\r\x1b[Kshort\n"), vec!["short"]);
    }

    #[test]
    fn backspace_tab_and_cursor_moves() {
        assert_eq!(render(b"ab\x08c\n"), vec!["ac"]);
        assert_eq!(render(b"a\tb\n"), vec!["a       b"]);
        assert_eq!(render(b"abc\x1b[2Dx\n"), vec!["axc"]);
        assert_eq!(render(b"abc\x1b[1Gz\n"), vec!["zbc"]);
    }

    fn plain(bytes: &[u8]) -> String {
        let mut c = Cleaner::with_style(Style::Plain);
        let mut lines = Vec::new();
        c.feed(bytes, &mut |l| lines.push(l.to_string()));
        lines.push(c.partial());
        lines.join("\n")
    }

    #[test]
    fn plain_style_cleans_as_smart_terminal() {
        assert_eq!(plain(b"col1\tcol2"), "col1\tcol2");
        assert_eq!(plain(b"abcd\x08\x08\x08"), "a");
        assert_eq!(plain(b"abc\x08\x08xy"), "axy");
        assert_eq!(plain(b"old content\x1b[2Knew"), "new");
        assert_eq!(plain(b"foobar\rfoo\x1b[K"), "foo");
        assert_eq!(plain(b"hello world\x1b[K done"), "hello world done");
        assert_eq!(plain("\u{9d}0;My Title\u{9c}content".as_bytes()), "content");
        assert_eq!(plain(b"a\x01b\x02c\x7fd"), "abcd");
        assert_eq!(plain(b"ABCDE\r\r\rXY"), "XYCDE");
        assert_eq!(plain(b"line1\r\nline2"), "line1\nline2");
    }

    #[test]
    fn utf8_across_chunks_and_invalid_bytes() {
        let mut c = Cleaner::new();
        let mut lines = Vec::new();
        let bytes = "日本\n".as_bytes();
        c.feed(&bytes[..2], &mut |l| lines.push(l.to_string()));
        c.feed(&bytes[2..], &mut |l| lines.push(l.to_string()));
        assert_eq!(lines, vec!["日本"]);
        assert_eq!(render(b"a\xffb\n"), vec!["a\u{fffd}b"]);
    }

    #[test]
    fn escape_split_across_chunks() {
        let mut c = Cleaner::new();
        let mut lines = Vec::new();
        c.feed(b"x\x1b[3", &mut |l| lines.push(l.to_string()));
        c.feed(b"1my\n", &mut |l| lines.push(l.to_string()));
        assert_eq!(lines, vec!["xy"]);
    }

    #[test]
    fn a_whole_lines_cleaner_hands_on_a_long_line_in_pieces_and_loses_nothing() {
        let mut long = "é".repeat(MAX_LINE_CHARS - 1);
        long.push_str(&"x".repeat(2 * MAX_LINE_CHARS + 17));
        long.push_str("end  ");
        let mut c = Cleaner::whole_lines();
        let mut got = Vec::new();
        for chunk in format!("{long}\r\nshort\n").as_bytes().chunks(5000) {
            c.feed_pieces(chunk, &mut |l, done| got.push((l.to_string(), done)));
        }
        let (pieces, done): (Vec<_>, Vec<_>) = got.into_iter().unzip();
        assert_eq!(done, [false, false, false, true, true]);
        assert_eq!(
            pieces[..4].concat(),
            long.trim_end(),
            "every character, in order"
        );
        assert_eq!(pieces[4], "short");
        // The plain cleaner still cuts at the cap.
        let plain = render(format!("{long}\n").as_bytes());
        assert_eq!(plain[0].chars().count(), MAX_LINE_CHARS);
    }

    /// A small deterministic generator for the differential test.
    struct Rng(u64);

    impl Rng {
        fn below(&mut self, n: usize) -> usize {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            (self.0 % n as u64) as usize
        }
    }

    /// Lines, whole and broken, among everything else a cleaner meets.
    fn random_stream(rng: &mut Rng) -> Vec<u8> {
        const PIECES: &[&[u8]] = &[
            b"\r\n",
            b"\r\n",
            b"\n",
            b"\r",
            b"\t",
            b"\x08",
            b" ",
            b"   ",
            b"\x1b[31m",
            b"\x1b[K",
            b"\x1b[1K",
            b"\x1b[2D",
            b"\x1b[5G",
            b"\x1b]0;a\nb\x07",
            b"\x1b(B",
            b"\x1b",
            "é".as_bytes(),
            b"\xff",
            b"\xc3",
            b"\x01",
            b"\x7f",
        ];
        let mut out = Vec::new();
        for _ in 0..rng.below(400) {
            match rng.below(4) {
                0 | 1 => {
                    for _ in 0..rng.below(12) {
                        out.push(b"0123456789 abcxyz~"[rng.below(18)]);
                    }
                }
                2 if rng.below(50) == 0 => {
                    out.extend(std::iter::repeat_n(b'x', MAX_LINE_CHARS + rng.below(3) - 1))
                }
                _ => out.extend_from_slice(PIECES[rng.below(PIECES.len())]),
            }
        }
        out
    }

    /// `stream` cut into chunks of 1 to 300 bytes, as reads might hand it on.
    fn random_chunks<'a>(rng: &mut Rng, stream: &'a [u8]) -> Vec<&'a [u8]> {
        let mut chunks = Vec::new();
        let mut at = 0;
        while at < stream.len() {
            let end = (at + 1 + rng.below(300)).min(stream.len());
            chunks.push(&stream[at..end]);
            at = end;
        }
        chunks
    }

    #[test]
    fn whole_ascii_lines_render_as_the_general_path_renders_them() {
        for seed in 1..=400u64 {
            let mut rng = Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15));
            let stream = random_stream(&mut rng);
            let chunks = random_chunks(&mut rng, &stream);
            for make in [Cleaner::new, Cleaner::whole_lines] {
                let run = |fast: bool| {
                    let mut c = make();
                    c.no_fast_lines = !fast;
                    let mut got = Vec::new();
                    for chunk in &chunks {
                        c.feed_pieces(chunk, &mut |l, done| got.push((l.to_string(), done)));
                    }
                    (got, c.partial(), c.pieced())
                };
                let (fast, slow) = (run(true), run(false));
                assert_eq!(
                    fast,
                    slow,
                    "seed {seed}: {:?}",
                    String::from_utf8_lossy(&stream)
                );
            }
        }
    }

    /// The line history keeps whole lines of printable ASCII straight from the bytes
    /// ([`LineHistory::keep_plain_lines`]): it keeps what the general path keeps.
    #[test]
    fn the_history_keeps_what_the_general_path_keeps() {
        for seed in 1..=400u64 {
            let mut rng = Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15));
            let stream = random_stream(&mut rng);
            let chunks = random_chunks(&mut rng, &stream);
            let run = |fast: bool| {
                let mut h = LineHistory::default();
                h.cleaner.no_fast_lines = !fast;
                for chunk in &chunks {
                    h.feed(chunk);
                }
                (h.lines(), h.total)
            };
            assert_eq!(
                run(true),
                run(false),
                "seed {seed}: {:?}",
                String::from_utf8_lossy(&stream)
            );
        }
    }

    #[test]
    fn head_tail_keeps_both_ends() {
        let lines: Vec<String> = (1..=10).map(|i| i.to_string()).collect();
        let (out, cut) = head_tail(lines, 4, "");
        assert_eq!(cut, 6);
        assert_eq!(out, vec!["1", "2", "… 6 lines omitted …", "9", "10"]);
    }
}

/// The rendered line history of a session: the last [`HISTORY_LINES`] lines it printed.
///
/// Kept packed: the lines' text one after another in one buffer, and each line's length. A
/// `String` per line cost its 24-byte header, the allocator's 32-byte minimum and the
/// deque's slack — about 900 KB for 10,000 short lines, where the text itself is 70 KB.
#[derive(Debug, Default)]
pub struct LineHistory {
    cleaner: Cleaner,
    /// The kept lines' text, oldest first, from `start` on (before it: lines dropped, not yet
    /// compacted away).
    text: String,
    start: usize,
    /// The byte length of each kept line, oldest first.
    lens: std::collections::VecDeque<u32>,
    /// Lines ever completed (the oldest kept is `total - lens.len()`).
    total: u64,
}

/// How many rendered lines a session keeps.
pub(super) const HISTORY_LINES: usize = 10_000;

/// Dropped text is compacted away once it is at least this long and outweighs the kept text.
const COMPACT_AFTER: usize = 16 * 1024;

impl LineHistory {
    pub fn feed(&mut self, mut bytes: &[u8]) {
        while !bytes.is_empty() {
            // Whole lines of printable ASCII, what `seq`, `ls` or a log print, are kept
            // straight from the bytes ([`Cleaner::whole_ascii_line`]'s rule, without the
            // cleaner's work per line).
            if self.cleaner.at_line_start() {
                let taken = self.keep_plain_lines(bytes);
                bytes = &bytes[taken..];
            }
            // The next line (or what is left) the general way.
            let end = memchr::memchr(b'\n', bytes).map_or(bytes.len(), |i| i + 1);
            let Self {
                cleaner,
                text,
                start,
                lens,
                total,
            } = self;
            cleaner.feed(&bytes[..end], &mut |l| keep(text, start, lens, total, l));
            bytes = &bytes[end..];
        }
    }

    /// Keeps the whole lines of printable ASCII at the start of `bytes`
    /// ([`Cleaner::whole_ascii_line`]), as the cleaner renders them; how many bytes they
    /// took.
    fn keep_plain_lines(&mut self, bytes: &[u8]) -> usize {
        let mut at = 0;
        while let Some((shown, len)) = self.cleaner.whole_ascii_line(&bytes[at..]) {
            // SAFETY: the line is printable ASCII, which is UTF-8.
            let shown = unsafe { std::str::from_utf8_unchecked(&bytes[at..at + shown]) };
            keep(
                &mut self.text,
                &mut self.start,
                &mut self.lens,
                &mut self.total,
                shown,
            );
            at += len;
        }
        at
    }

    /// The kept lines, oldest first.
    fn kept(&self) -> impl Iterator<Item = &str> + '_ {
        let mut at = self.start;
        self.lens.iter().map(move |&n| {
            let line = &self.text[at..at + n as usize];
            at += n as usize;
            line
        })
    }

    /// Kept lines plus the incomplete last line, oldest first.
    pub fn lines(&self) -> Vec<String> {
        let mut out: Vec<String> = Vec::with_capacity(self.lens.len() + 1);
        out.extend(self.kept().map(String::from));
        let partial = self.cleaner.partial();
        if !partial.is_empty() {
            out.push(partial);
        }
        out
    }

    /// The newest line (the incomplete one if any), for progress reports.
    pub fn last_line(&self) -> String {
        let partial = self.cleaner.partial();
        if !partial.is_empty() {
            return partial;
        }
        match self.lens.back() {
            Some(&n) => self.text[self.text.len() - n as usize..].to_string(),
            None => String::new(),
        }
    }

    pub fn clear(&mut self) {
        self.text = String::new();
        self.start = 0;
        self.lens = std::collections::VecDeque::new();
    }
}

/// Keeps line `l` at the end of a [`LineHistory`]'s packed text, dropping the oldest line
/// beyond [`HISTORY_LINES`].
fn keep(
    text: &mut String,
    start: &mut usize,
    lens: &mut std::collections::VecDeque<u32>,
    total: &mut u64,
    l: &str,
) {
    if lens.len() >= HISTORY_LINES
        && let Some(oldest) = lens.pop_front()
    {
        *start += oldest as usize;
    }
    // A line is at most a few hundred KB (the cleaner hands longer ones on in pieces); the
    // cut below is a guard, never reached.
    let mut n = l.len().min(u32::MAX as usize);
    while !l.is_char_boundary(n) {
        n -= 1;
    }
    if *start >= COMPACT_AFTER && *start > text.len() - *start {
        text.drain(..*start);
        *start = 0;
    }
    text.push_str(&l[..n]);
    lens.push_back(n as u32);
    *total += 1;
}

#[cfg(test)]
mod history_tests {
    use super::*;

    #[test]
    fn the_history_keeps_the_last_lines_in_order_across_compactions() {
        let mut h = LineHistory::default();
        let n = HISTORY_LINES + 25_000;
        for i in 0..n {
            h.feed(format!("line {i} é\r\n").as_bytes());
        }
        h.feed(b"partial");
        let lines = h.lines();
        assert_eq!(lines.len(), HISTORY_LINES + 1);
        assert_eq!(lines[0], format!("line {} é", n - HISTORY_LINES));
        assert_eq!(lines[HISTORY_LINES - 1], format!("line {} é", n - 1));
        assert_eq!(lines[HISTORY_LINES], "partial");
        assert_eq!(h.last_line(), "partial");
        h.feed(b"\r\n\r\n");
        assert_eq!(h.last_line(), "");
        assert_eq!(h.lines().len(), HISTORY_LINES);
        // The dropped text was compacted away: what is held is about what is kept.
        assert!(h.text.len() - h.start < 2 * 14 * HISTORY_LINES);
        assert!(h.start <= h.text.len() - h.start || h.start < COMPACT_AFTER);
        h.clear();
        assert!(h.lines().is_empty());
        h.feed(b"after\r\n");
        assert_eq!(h.lines(), vec!["after"]);
    }
}
