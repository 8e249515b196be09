//! The emulator's state as bytes that redraw it on another terminal: what a person attaching
//! to a session sees first (recent scrollback, then the screen with its colours, modes and
//! cursor), before the live output takes over.
//!
//! What is not reproduced: a scroll region the program set (programs that use one redraw it
//! on their next full refresh; press Ctrl+L), and the main screen hidden behind an alternate
//! screen.

use std::fmt::Write as _;

use alacritty_terminal::grid::{Dimensions, Row};
use alacritty_terminal::index::{Column, Line};
use alacritty_terminal::term::TermMode;
use alacritty_terminal::term::cell::{Cell, Flags};
use alacritty_terminal::vte::ansi::{Color, NamedColor};

use super::emulator::Emulator;

/// The most scrollback lines sent on attach.
pub(super) const RECENT_SCROLLBACK: usize = 500;

/// Bytes that show `emu`'s recent scrollback, then redraw its screen at the top left of a
/// terminal at least as large, with the cursor, input modes and title restored.
pub(super) fn redraw(emu: &Emulator) -> Vec<u8> {
    let term = emu.term();
    let grid = term.grid();
    let (rows, cols) = (grid.screen_lines(), grid.columns());
    let mode = emu.mode();
    let mut out = String::from("\x1b[0m");
    if !mode.contains(TermMode::ALT_SCREEN) {
        let history = emu.history_size().min(RECENT_SCROLLBACK);
        for back in (1..=history).rev() {
            row_sgr(&emu.line(-(back as i32)), cols, &mut out);
            out.push_str("\x1b[0m\r\n");
        }
        // Push that scrollback out of view, so the screen below starts on a clean page.
        out.push_str(&"\r\n".repeat(rows));
    } else {
        out.push_str("\x1b[?1049h");
    }
    out.push_str("\x1b[H\x1b[2J");
    for r in 0..rows {
        let _ = write!(out, "\x1b[{};1H", r + 1);
        row_sgr(&grid[Line(r as i32)], cols, &mut out);
        out.push_str("\x1b[0m");
    }
    for (flag, number) in [
        (TermMode::APP_CURSOR, 1),
        (TermMode::BRACKETED_PASTE, 2004),
        (TermMode::MOUSE_REPORT_CLICK, 1000),
        (TermMode::MOUSE_DRAG, 1002),
        (TermMode::MOUSE_MOTION, 1003),
        (TermMode::SGR_MOUSE, 1006),
    ] {
        if mode.contains(flag) {
            let _ = write!(out, "\x1b[?{number}h");
        }
    }
    if let Some(title) = emu.title() {
        let clean: String = title.chars().filter(|c| !c.is_control()).collect();
        let _ = write!(out, "\x1b]2;{clean}\x07");
    }
    let cursor = grid.cursor.point;
    let _ = write!(
        out,
        "\x1b[{};{}H\x1b[?25{}",
        cursor.line.0.max(0) + 1,
        cursor.column.0 + 1,
        if mode.contains(TermMode::SHOW_CURSOR) {
            'h'
        } else {
            'l'
        }
    );
    out.into_bytes()
}

/// Appends one grid row as text with SGR changes (trailing blank cells left out).
fn row_sgr(row: &Row<Cell>, cols: usize, out: &mut String) {
    let blank = |c: &Cell| {
        (c.c == ' ' || c.c == '\0')
            && c.bg == Color::Named(NamedColor::Background)
            && !c.flags.intersects(Flags::INVERSE | Flags::UNDERLINE)
    };
    let end = (0..cols)
        .rev()
        .find(|&c| !blank(&row[Column(c)]))
        .map_or(0, |c| c + 1);
    let mut current = String::new();
    for c in 0..end {
        let cell = &row[Column(c)];
        if cell.flags.contains(Flags::WIDE_CHAR_SPACER) {
            continue;
        }
        let sgr = sgr_of(cell);
        if sgr != current {
            let _ = write!(out, "\x1b[0{sgr}m");
            current = sgr;
        }
        out.push(if cell.c == '\0' { ' ' } else { cell.c });
        if let Some(extra) = cell.zerowidth() {
            out.extend(extra);
        }
    }
}

/// The SGR parameters (each with a leading `;`) that give a cell its look.
fn sgr_of(cell: &Cell) -> String {
    let mut s = String::new();
    for (flag, code) in [
        (Flags::BOLD, "1"),
        (Flags::DIM, "2"),
        (Flags::ITALIC, "3"),
        (Flags::UNDERLINE, "4"),
        (Flags::INVERSE, "7"),
        (Flags::HIDDEN, "8"),
        (Flags::STRIKEOUT, "9"),
    ] {
        if cell.flags.contains(flag) {
            s.push(';');
            s.push_str(code);
        }
    }
    color(cell.fg, 30, &mut s);
    color(cell.bg, 40, &mut s);
    s
}

/// Appends a colour as SGR; `base` is 30 (foreground) or 40 (background).
fn color(c: Color, base: u8, s: &mut String) {
    match c {
        Color::Named(n) => {
            let i = n as usize;
            if i < 8 {
                let _ = write!(s, ";{}", base as usize + i);
            } else if i < 16 {
                let _ = write!(s, ";{}", base as usize + 60 + i - 8);
            }
            // Foreground, Background and the dim variants keep the default.
        }
        Color::Indexed(i) => {
            let _ = write!(s, ";{};5;{i}", base + 8);
        }
        Color::Spec(rgb) => {
            let _ = write!(s, ";{};2;{};{};{}", base + 8, rgb.r, rgb.g, rgb.b);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::session::emulator::Size;

    fn emu(bytes: &[u8]) -> Emulator {
        let mut e = Emulator::new(Size { cols: 20, rows: 3 }, 100);
        e.feed(bytes);
        e
    }

    /// Redrawing on a fresh emulator of the same size gives the same screen.
    fn round_trip(source: &Emulator) -> Emulator {
        let mut copy = Emulator::new(Size { cols: 20, rows: 3 }, 100);
        copy.feed(&redraw(source));
        copy
    }

    #[test]
    fn the_screen_and_its_colours_come_back() {
        let src = emu(b"one\r\ntwo\r\nthree\r\nfour \x1b[1;31mred\x1b[0m \x1b[48;5;33mbg\x1b[0m");
        let copy = round_trip(&src);
        use crate::session::screen::plain_text;
        assert_eq!(plain_text(&copy), plain_text(&src));
        let cell = &copy.term().grid()[Line(2)][Column(5)];
        assert_eq!(cell.c, 'r');
        assert_eq!(cell.fg, Color::Named(NamedColor::Red));
        assert!(cell.flags.contains(Flags::BOLD));
        assert_eq!(
            copy.term().grid()[Line(2)][Column(9)].bg,
            Color::Indexed(33)
        );
        assert_eq!(
            copy.term().grid().cursor.point,
            src.term().grid().cursor.point
        );
        let text = String::from_utf8(redraw(&src)).unwrap();
        assert!(
            text.contains("one\x1b[0m\r\n"),
            "scrollback first: {text:?}"
        );
    }

    #[test]
    fn modes_and_alternate_screen_are_restored() {
        let src = emu(b"\x1b[?1049h\x1b[?1h\x1b[?1000h\x1b[?1006h\x1b[?25lfull screen");
        let copy = round_trip(&src);
        let mode = copy.mode();
        assert!(mode.contains(TermMode::ALT_SCREEN | TermMode::APP_CURSOR | TermMode::SGR_MOUSE));
        assert!(mode.contains(TermMode::MOUSE_REPORT_CLICK));
        assert!(!mode.contains(TermMode::SHOW_CURSOR));
        assert!(crate::session::screen::plain_text(&copy).starts_with("full screen"));
    }
}
