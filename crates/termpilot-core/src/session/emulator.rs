//! The terminal emulator behind a session: alacritty_terminal fed with every byte once.
//!
//! It is the source of truth for what a person sees (screen, scrollback, modes, title). The
//! terminal queries programs send (DA, DSR/CPR, colour and size queries) come back from it
//! as replies, which the session writes to the PTY so those programs never stall.

use std::sync::{Arc, Mutex};

use alacritty_terminal::event::{Event, EventListener, WindowSize};
use alacritty_terminal::grid::Dimensions;
use alacritty_terminal::term::{Config, Term, TermMode};
use alacritty_terminal::vte::ansi::{CursorShape, Processor, Rgb};

use super::dcs_query::{self, DcsQueries};

/// Pixel size of a cell reported to programs that ask (CSI 14 t).
const CELL_WIDTH: u16 = 8;
const CELL_HEIGHT: u16 = 16;

/// A terminal size, as alacritty wants it.
#[derive(Debug, Clone, Copy)]
pub struct Size {
    pub cols: u16,
    pub rows: u16,
}

impl Dimensions for Size {
    fn total_lines(&self) -> usize {
        self.rows as usize
    }
    fn screen_lines(&self) -> usize {
        self.rows as usize
    }
    fn columns(&self) -> usize {
        self.cols as usize
    }
}

/// What the emulator asked of us while processing bytes.
#[derive(Default)]
struct Pending {
    replies: Vec<u8>,
    title: Option<Option<String>>,
    size: Option<Size>,
}

/// Collects the emulator's events; the session drains them after each chunk.
#[derive(Clone, Default)]
pub struct EmulatorEvents {
    pending: Arc<Mutex<Pending>>,
}

impl EventListener for EmulatorEvents {
    fn send_event(&self, event: Event) {
        let mut p = self.pending.lock().unwrap_or_else(|e| e.into_inner());
        match event {
            Event::PtyWrite(s) => p.replies.extend_from_slice(s.as_bytes()),
            Event::Title(t) => p.title = Some(Some(t)),
            Event::ResetTitle => p.title = Some(None),
            Event::ColorRequest(index, format) => {
                let reply = format(default_color(index));
                p.replies.extend_from_slice(reply.as_bytes());
            }
            Event::TextAreaSizeRequest(format) => {
                let size = p.size.unwrap_or(Size { cols: 80, rows: 24 });
                let reply = format(WindowSize {
                    num_lines: size.rows,
                    num_cols: size.cols,
                    cell_width: CELL_WIDTH,
                    cell_height: CELL_HEIGHT,
                });
                p.replies.extend_from_slice(reply.as_bytes());
            }
            _ => {}
        }
    }
}

/// The colour reported for palette `index` (256 = foreground, 257 = background, 258 = cursor)
/// when a program asks (OSC 4/10/11/12): xterm's defaults on a dark background.
fn default_color(index: usize) -> Rgb {
    const BASE: [(u8, u8, u8); 16] = [
        (0x00, 0x00, 0x00),
        (0xcd, 0x00, 0x00),
        (0x00, 0xcd, 0x00),
        (0xcd, 0xcd, 0x00),
        (0x00, 0x00, 0xee),
        (0xcd, 0x00, 0xcd),
        (0x00, 0xcd, 0xcd),
        (0xe5, 0xe5, 0xe5),
        (0x7f, 0x7f, 0x7f),
        (0xff, 0x00, 0x00),
        (0x00, 0xff, 0x00),
        (0xff, 0xff, 0x00),
        (0x5c, 0x5c, 0xff),
        (0xff, 0x00, 0xff),
        (0x00, 0xff, 0xff),
        (0xff, 0xff, 0xff),
    ];
    let (r, g, b) = match index {
        0..=15 => BASE[index],
        16..=231 => {
            let i = index - 16;
            let level = |v: usize| if v == 0 { 0 } else { (55 + v * 40) as u8 };
            (level(i / 36), level((i / 6) % 6), level(i % 6))
        }
        232..=255 => {
            let v = (8 + (index - 232) * 10) as u8;
            (v, v, v)
        }
        257 => (0x1e, 0x1e, 0x1e),
        _ => (0xe5, 0xe5, 0xe5),
    };
    Rgb { r, g, b }
}

/// The emulator and its parser.
pub struct Emulator {
    term: Term<EmulatorEvents>,
    parser: Processor,
    listener: EmulatorEvents,
    title: Option<String>,
    queries: DcsQueries,
}

impl Emulator {
    pub fn new(size: Size, scrollback: usize) -> Self {
        let listener = EmulatorEvents::default();
        listener.pending.lock().unwrap().size = Some(size);
        let config = Config {
            scrolling_history: scrollback,
            ..Config::default()
        };
        Emulator {
            term: Term::new(config, &size, listener.clone()),
            parser: Processor::new(),
            listener,
            title: None,
            queries: DcsQueries::default(),
        }
    }

    /// Processes output; returns the replies to write back to the PTY (often empty).
    pub fn feed(&mut self, bytes: &[u8]) -> Vec<u8> {
        // DECRQSS answers go in their place among alacritty's own (see `dcs_query`).
        let mut start = 0;
        for query in self.queries.scan(bytes) {
            self.parser
                .advance(&mut self.term, &bytes[start..query.end]);
            let answer = dcs_query::answer(&query.request, self.decscusr());
            self.listener
                .pending
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .replies
                .extend_from_slice(&answer);
            start = query.end;
        }
        self.parser.advance(&mut self.term, &bytes[start..]);
        let mut p = self
            .listener
            .pending
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        if let Some(title) = p.title.take() {
            self.title = title.map(cut_title);
        }
        std::mem::take(&mut p.replies)
    }

    /// The cursor style as DECSCUSR numbers it.
    fn decscusr(&self) -> u8 {
        let style = self.term.cursor_style();
        let steady = u8::from(!style.blinking);
        match style.shape {
            CursorShape::Underline => 3 + steady,
            CursorShape::Beam => 5 + steady,
            _ => 1 + steady,
        }
    }

    pub fn term(&self) -> &Term<EmulatorEvents> {
        &self.term
    }

    pub fn title(&self) -> Option<&str> {
        self.title.as_deref()
    }

    pub fn mode(&self) -> TermMode {
        *self.term.mode()
    }

    pub fn resize(&mut self, size: Size) {
        self.listener.pending.lock().unwrap().size = Some(size);
        self.term.resize(size);
    }

    /// Clears the screen and the scrollback (the program is not told).
    pub fn clear(&mut self) {
        self.parser.advance(&mut self.term, b"\x1b[H\x1b[2J\x1b[3J");
        self.term.grid_mut().clear_history();
    }
}

/// Most characters of a window title kept: a program may set one of megabytes.
pub const MAX_TITLE_CHARS: usize = 256;

/// A title cut to [`MAX_TITLE_CHARS`], marked with `…` when it was longer.
fn cut_title(title: String) -> String {
    match title.char_indices().nth(MAX_TITLE_CHARS) {
        Some((at, _)) => format!("{}…", &title[..at]),
        None => title,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_cursor_position_and_device_attribute_queries() {
        let mut emu = Emulator::new(Size { cols: 20, rows: 5 }, 100);
        let replies = emu.feed(b"ab\x1b[6n");
        assert_eq!(replies, b"\x1b[1;3R");
        let replies = emu.feed(b"\x1b[c");
        assert!(replies.starts_with(b"\x1b[?"), "{replies:?}");
        // DECRQSS, in its place among the other answers (vim's start-up queries).
        let replies = emu.feed(b"\x1b[6n\x1bP$q q\x1b\\\x1b[6n");
        assert_eq!(replies, b"\x1b[1;3R\x1bP1$r2 q\x1b\\\x1b[1;3R");
        let replies = emu.feed(b"\x1b[5 q\x1bP$q q\x1b\\");
        assert_eq!(replies, b"\x1bP1$r5 q\x1b\\");
    }

    #[test]
    fn tracks_title_and_modes() {
        let mut emu = Emulator::new(Size { cols: 20, rows: 5 }, 100);
        emu.feed(b"\x1b]0;hello\x07\x1b[?1h\x1b[?2004h");
        assert_eq!(emu.title(), Some("hello"));
        assert!(emu.mode().contains(TermMode::APP_CURSOR));
        assert!(emu.mode().contains(TermMode::BRACKETED_PASTE));
    }
}
