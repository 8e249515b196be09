//! The screen as text, the way terminal-use reads it: rows (soft-wrapped lines joined), a
//! cursor marker, and the highlighted runs a menu uses to show its selection.

use alacritty_terminal::grid::Dimensions;
use alacritty_terminal::index::{Column, Line};
use alacritty_terminal::term::TermMode;
use alacritty_terminal::term::cell::Flags;
use alacritty_terminal::vte::ansi::{Color, NamedColor};

use super::emulator::Emulator;

/// The cursor marker inserted into the text.
pub(super) const CURSOR_MARK: char = '▌';
/// Above this share of highlighted cells, the list is replaced by a pointer to screenshots.
const HIGHLIGHT_SHARE_LIMIT: f64 = 0.4;
/// Most highlighted runs listed.
const MAX_HIGHLIGHTS: usize = 50;

/// How to read the screen.
#[derive(Debug, Clone, Copy)]
pub struct ScreenOptions {
    /// 0 = the current screen; 1 = the screenful before it in scrollback; …
    pub page: usize,
    pub join_wrapped: bool,
    pub cursor: bool,
    pub highlights: bool,
}

impl ScreenOptions {
    /// The current screen as `view:"screen"` reads it: wrapped lines joined, the cursor
    /// marked, highlights listed.
    pub const CURRENT: ScreenOptions = ScreenOptions {
        page: 0,
        join_wrapped: true,
        cursor: true,
        highlights: true,
    };
}

/// Where the cursor is (1-based) and what it covers.
#[derive(Debug, Clone)]
pub struct CursorInfo {
    pub row: usize,
    pub col: usize,
    /// The character under the cursor, when there is one.
    pub char: Option<String>,
    pub visible: bool,
}

/// A run of reverse-video or background-coloured cells (1-based row and columns).
#[derive(Debug, Clone)]
pub struct Highlight {
    pub row: usize,
    pub start_col: usize,
    pub end_col: usize,
    pub text: String,
}

/// Why no highlights are listed though they were asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NoHighlights {
    /// Most of the screen is coloured, so a list would be most of the screen: an image
    /// of it says more.
    MostlyColoured,
}

/// One page of the screen as text (the JSON form is the face's, `mcp::wire::screen`).
#[derive(Debug, Clone)]
pub struct ScreenText {
    pub text: String,
    pub cursor: CursorInfo,
    pub highlights: Vec<Highlight>,
    /// Why highlights were asked for and none are listed (the face words it).
    pub highlights_hint: Option<NoHighlights>,
    pub title: Option<String>,
    pub alt_screen: bool,
    pub cols: usize,
    pub rows: usize,
    pub page: usize,
    /// Pages of scrollback above the current screen.
    pub pages_back: usize,
}

/// Calls `each` with the column and the text of every character of one grid line (wide
/// characters' spacer cells skipped), written into one string it clears between cells;
/// returns whether the line wraps into the next.
fn each_char(emu: &Emulator, line: Line, mut each: impl FnMut(usize, &str)) -> bool {
    let cols = emu.term().grid().columns();
    let row = emu.line(line.0);
    let mut s = String::new();
    for c in 0..cols {
        let cell = &row[Column(c)];
        if cell
            .flags
            .intersects(Flags::WIDE_CHAR_SPACER | Flags::LEADING_WIDE_CHAR_SPACER)
        {
            continue;
        }
        s.clear();
        s.push(visible(cell.c));
        if let Some(extra) = cell.zerowidth() {
            s.extend(extra);
        }
        each(c, &s);
    }
    row[Column(cols - 1)].flags.contains(Flags::WRAPLINE)
}

/// The characters of one grid line, with each character's column.
fn line_chars(emu: &Emulator, line: Line) -> (Vec<(usize, String)>, bool) {
    let mut out = Vec::with_capacity(emu.term().grid().columns());
    let wrapped = each_char(emu, line, |c, s| out.push((c, s.to_string())));
    (out, wrapped)
}

/// The text of one grid line: [`line_chars`]'s characters joined, built in one string
/// (not one per cell: a line of 120 cells was 120 allocations on every call's prompt).
fn line_text(emu: &Emulator, line: Line) -> String {
    let mut out = String::with_capacity(emu.term().grid().columns());
    each_char(emu, line, |_, s| out.push_str(s));
    out
}

/// What a cell shows: an empty cell and the tab alacritty keeps in the cell a tab jumped
/// from (for copying) are both blank on screen.
fn visible(c: char) -> char {
    match c {
        '\0' | '\t' => ' ',
        c => c,
    }
}

/// The visible rows as plain text (no marker, not joined, trailing spaces trimmed).
pub(super) fn plain_rows(emu: &Emulator) -> Vec<String> {
    let rows = emu.term().grid().screen_lines();
    (0..rows)
        .map(|r| {
            let mut s = line_text(emu, Line(r as i32));
            s.truncate(s.trim_end().len());
            s
        })
        .collect()
}

/// The screen row the cursor is on, as plain text: a waiting program's prompt.
pub(super) fn cursor_line(emu: &Emulator) -> String {
    // That row alone: every `terminal_exec` asks, and the whole screen cost a quarter of the
    // server's time with fifty sessions driven at once over HTTP (issue 32 item 4).
    let row = emu.term().grid().cursor.point.line.0.max(0) as usize;
    if row >= emu.term().grid().screen_lines() {
        return String::new();
    }
    let mut text = line_text(emu, Line(row as i32));
    text.truncate(text.trim_end().len());
    text
}

/// The screen as [`read`] gives it while a program holds the alternate screen, else `None`.
pub(super) fn alternate(emu: &Emulator) -> Option<ScreenText> {
    emu.mode()
        .contains(alacritty_terminal::term::TermMode::ALT_SCREEN)
        .then(|| read(emu, ScreenOptions::CURRENT))
}

/// The visible screen as one string (rows joined by newlines, trailing blank rows dropped).
pub(super) fn plain_text(emu: &Emulator) -> String {
    let mut rows = plain_rows(emu);
    while rows.last().is_some_and(|r| r.is_empty()) {
        rows.pop();
    }
    rows.join("\n")
}

/// The visible screen as patterns see it: like [`plain_text`], but the cursor's row keeps
/// its trailing spaces up to the cursor, so a prompt such as `>>> ` matches `>>> $`.
pub(super) fn match_text(emu: &Emulator) -> String {
    let mut rows = plain_rows(emu);
    let point = emu.term().grid().cursor.point;
    if let Ok(r) = usize::try_from(point.line.0)
        && let Some(row) = rows.get_mut(r)
    {
        let width = row.chars().count();
        if point.column.0 > width {
            row.extend(std::iter::repeat_n(' ', point.column.0 - width));
        }
    }
    while rows.last().is_some_and(|r| r.is_empty()) {
        rows.pop();
    }
    rows.join("\n")
}

/// Reads one page of the screen.
pub(super) fn read(emu: &Emulator, opts: ScreenOptions) -> ScreenText {
    let grid = emu.term().grid();
    let rows = grid.screen_lines();
    let cols = grid.columns();
    let history = emu.history_size();
    let pages_back = history.div_ceil(rows.max(1));
    let page = opts.page.min(pages_back);
    let top = -((page * rows) as i32);
    let first = top.max(-(history as i32));
    let last = top + rows as i32 - 1;
    let mode = emu.mode();
    let point = grid.cursor.point;
    let cursor_visible = mode.contains(TermMode::SHOW_CURSOR);

    let mut text = String::new();
    let mut cursor_char = None;
    let mut pending_break = false;
    for line in first..=last {
        let (chars, wrapped) = line_chars(emu, Line(line));
        let mut row_text = String::new();
        let cursor_here = page == 0 && line == point.line.0 && opts.cursor && cursor_visible;
        let mut marked = false;
        for (col, s) in &chars {
            if cursor_here && !marked && *col >= point.column.0 {
                if *col == point.column.0 && s != " " {
                    cursor_char = Some(s.clone());
                }
                row_text.push(CURSOR_MARK);
                marked = true;
            }
            row_text.push_str(s);
        }
        let mut row_text = if wrapped && opts.join_wrapped {
            row_text
        } else {
            row_text.trim_end().to_string()
        };
        if cursor_here && !marked {
            row_text.push(CURSOR_MARK);
        }
        if cursor_here && row_text.ends_with(' ') {
            row_text = row_text.trim_end().to_string();
        }
        if pending_break {
            text.push('\n');
        }
        text.push_str(&row_text);
        pending_break = !(wrapped && opts.join_wrapped);
    }
    // Trailing empty rows say nothing.
    let trimmed_len = text.trim_end_matches('\n').len();
    text.truncate(trimmed_len);

    let (highlights, highlights_hint) = if opts.highlights {
        highlights(emu, first, last, page)
    } else {
        (Vec::new(), None)
    };
    ScreenText {
        text,
        cursor: CursorInfo {
            row: point.line.0.max(0) as usize + 1,
            col: point.column.0 + 1,
            char: cursor_char,
            visible: cursor_visible,
        },
        highlights,
        highlights_hint,
        title: emu.title().map(String::from),
        alt_screen: mode.contains(TermMode::ALT_SCREEN),
        cols,
        rows,
        page,
        pages_back,
    }
}

fn is_highlighted(flags: Flags, bg: Color) -> bool {
    let coloured_bg = !matches!(bg, Color::Named(NamedColor::Background));
    flags.contains(Flags::INVERSE) != coloured_bg
}

fn highlights(
    emu: &Emulator,
    first: i32,
    last: i32,
    page: usize,
) -> (Vec<Highlight>, Option<NoHighlights>) {
    let grid = emu.term().grid();
    let cols = grid.columns();
    let mut runs = Vec::new();
    let mut lit_cells = 0usize;
    let mut total_cells = 0usize;
    for (i, line) in (first..=last).enumerate() {
        let row = emu.line(line);
        let mut run: Option<(usize, String)> = None;
        for c in 0..=cols {
            let lit = c < cols && {
                let cell = &row[Column(c)];
                is_highlighted(cell.flags, cell.bg)
            };
            total_cells += (c < cols) as usize;
            if lit {
                lit_cells += 1;
                let cell = &row[Column(c)];
                let entry = run.get_or_insert((c, String::new()));
                if !cell.flags.contains(Flags::WIDE_CHAR_SPACER) {
                    entry.1.push(visible(cell.c));
                }
            } else if let Some((start, text)) = run.take() {
                let row_no = if page == 0 { line as usize + 1 } else { i + 1 };
                runs.push(Highlight {
                    row: row_no,
                    start_col: start + 1,
                    end_col: c,
                    text: text.trim().to_string(),
                });
            }
        }
    }
    if total_cells > 0 && lit_cells as f64 / total_cells as f64 > HIGHLIGHT_SHARE_LIMIT {
        return (Vec::new(), Some(NoHighlights::MostlyColoured));
    }
    runs.truncate(MAX_HIGHLIGHTS);
    (runs, None)
}

#[cfg(test)]
mod tests {
    use super::super::emulator::Size;
    use super::*;

    fn emu(bytes: &[u8]) -> Emulator {
        let mut e = Emulator::new(Size { cols: 10, rows: 4 }, 100);
        e.feed(bytes);
        e
    }

    const OPTS: ScreenOptions = ScreenOptions::CURRENT;

    #[test]
    fn cursor_marker_and_wrapped_lines() {
        let e = emu(b"0123456789abc");
        let s = read(&e, OPTS);
        assert_eq!(s.text, "0123456789abc▌");
        assert_eq!((s.cursor.row, s.cursor.col), (2, 4));
        let s = read(
            &e,
            ScreenOptions {
                join_wrapped: false,
                cursor: false,
                ..OPTS
            },
        );
        assert_eq!(s.text, "0123456789\nabc");
    }

    #[test]
    fn cursor_on_a_character_is_reported() {
        let e = emu(b"hello\x1b[1;2H");
        let s = read(&e, OPTS);
        assert_eq!(s.text, "h▌ello");
        assert_eq!(s.cursor.char.as_deref(), Some("e"));
    }

    #[test]
    fn reverse_video_runs_are_listed() {
        let e = emu(b"a \x1b[7mMenu\x1b[0m b\r\n");
        let s = read(&e, OPTS);
        assert_eq!(s.highlights.len(), 1);
        let h = &s.highlights[0];
        assert_eq!(
            (h.row, h.start_col, h.end_col, h.text.as_str()),
            (1, 3, 6, "Menu")
        );
    }

    #[test]
    fn wide_characters_take_one_char_in_text() {
        let e = emu("日本x".as_bytes());
        assert_eq!(plain_rows(&e)[0], "日本x");
    }

    #[test]
    fn pages_walk_back_through_scrollback() {
        let e = emu(b"1\r\n2\r\n3\r\n4\r\n5\r\n6\r\n7\r\n8");
        let s = read(
            &e,
            ScreenOptions {
                page: 1,
                cursor: false,
                ..OPTS
            },
        );
        assert_eq!(s.text, "1\n2\n3\n4");
        assert_eq!(s.pages_back, 1);
    }
}
