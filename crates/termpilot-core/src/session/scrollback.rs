//! A session's scrollback, kept compact: the rows that scrolled off the top of the screen, each
//! packed as its text plus the few runs of attributes it has, instead of the emulator's 24-byte
//! cells for every column.
//!
//! A 120-column row of plain text costs its characters and about 50 bytes here, against
//! 2,880 bytes as cells; 5,000 rows are well under a megabyte. A row unpacks back into the
//! exact cells it was packed from ([`PackedRow::unpack`]), so the readers of scrollback (pages of
//! screen text, the redraw for a person attaching) treat it as a row of the grid.
//!
//! The rows are fed by the emulator's capture (`capture.rs`) just before they leave the screen.

use std::collections::VecDeque;
use std::sync::Arc;

use alacritty_terminal::grid::Row;
use alacritty_terminal::index::Column;
use alacritty_terminal::term::cell::{Cell, CellExtra, Flags};
use alacritty_terminal::vte::ansi::Color;

/// The attributes of the cells from `col` up to the next span (cells before the first span have
/// the default attributes).
#[derive(Debug, Clone, Copy, PartialEq)]
struct Span {
    col: u16,
    fg: Color,
    bg: Color,
    flags: Flags,
}

/// One row of scrollback: a character per column up to its last non-blank cell, the attribute
/// changes along it, and the cells that carry extras (combining marks, hyperlinks, underline
/// colours).
#[derive(Debug, Clone)]
pub(super) struct PackedRow {
    text: Box<str>,
    spans: Box<[Span]>,
    extras: Box<[(u16, Arc<CellExtra>)]>,
}

const DEFAULT_FG: Color = Color::Named(alacritty_terminal::vte::ansi::NamedColor::Foreground);
const DEFAULT_BG: Color = Color::Named(alacritty_terminal::vte::ansi::NamedColor::Background);

fn is_default(cell: &Cell) -> bool {
    cell.c == ' '
        && cell.fg == DEFAULT_FG
        && cell.bg == DEFAULT_BG
        && cell.flags.is_empty()
        && cell.extra.is_none()
}

impl PackedRow {
    /// Packs `row`, whose cells past `extent` are known to be default ones; the trailing
    /// default cells are left out.
    pub(super) fn pack(row: &Row<Cell>, extent: usize) -> PackedRow {
        let (cells, rest) = row[..].split_at(extent.min(row.len()));
        debug_assert!(
            rest.iter().all(is_default),
            "a cell past the written extent {extent} is not blank: {row:?}"
        );
        let len = cells
            .iter()
            .rposition(|c| !is_default(c))
            .map_or(0, |i| i + 1);
        let cells = &cells[..len.min(u16::MAX as usize)];
        let mut text = String::with_capacity(cells.len());
        let mut spans = Vec::new();
        let mut extras = Vec::new();
        let (mut fg, mut bg, mut flags) = (DEFAULT_FG, DEFAULT_BG, Flags::empty());
        for (col, cell) in cells.iter().enumerate() {
            text.push(cell.c);
            if cell.fg != fg || cell.bg != bg || cell.flags != flags {
                (fg, bg, flags) = (cell.fg, cell.bg, cell.flags);
                spans.push(Span {
                    col: col as u16,
                    fg,
                    bg,
                    flags,
                });
            }
            if let Some(extra) = &cell.extra {
                extras.push((col as u16, extra.clone()));
            }
        }
        PackedRow {
            text: text.into_boxed_str(),
            spans: spans.into_boxed_slice(),
            extras: extras.into_boxed_slice(),
        }
    }

    /// The row as `columns` cells, exactly as packed (cut or padded with default cells when the
    /// terminal was resized since).
    pub(super) fn unpack(&self, columns: usize) -> Row<Cell> {
        let mut row: Row<Cell> = Row::new(columns.max(1));
        let mut spans = self.spans.iter().peekable();
        let (mut fg, mut bg, mut flags) = (DEFAULT_FG, DEFAULT_BG, Flags::empty());
        for (col, c) in self.text.chars().enumerate().take(columns) {
            while let Some(span) = spans.next_if(|s| s.col as usize <= col) {
                (fg, bg, flags) = (span.fg, span.bg, span.flags);
            }
            let cell = &mut row[Column(col)];
            cell.c = c;
            cell.fg = fg;
            cell.bg = bg;
            cell.flags = flags;
        }
        for (col, extra) in self.extras.iter() {
            if (*col as usize) < columns {
                row[Column(*col as usize)].extra = Some(extra.clone());
            }
        }
        row
    }
}

/// The rows above the screen, oldest first, at most `limit` of them.
#[derive(Debug)]
pub(super) struct Scrollback {
    rows: VecDeque<PackedRow>,
    limit: usize,
}

impl Scrollback {
    pub(super) fn new(limit: usize) -> Scrollback {
        Scrollback {
            rows: VecDeque::new(),
            limit,
        }
    }

    /// Keeps `row` (default cells past `extent`) as the newest line of scrollback, dropping
    /// the oldest past the limit.
    pub(super) fn push(&mut self, row: &Row<Cell>, extent: usize) {
        if self.limit == 0 {
            return;
        }
        if self.rows.len() >= self.limit {
            self.rows.pop_front();
        }
        self.rows.push_back(PackedRow::pack(row, extent));
    }

    pub(super) fn len(&self) -> usize {
        self.rows.len()
    }

    /// The most rows kept.
    pub(super) fn limit(&self) -> usize {
        self.limit
    }

    /// Takes the leading wide-char spacer off the last of `columns` cells of the newest row,
    /// as alacritty does when the wide character it led to is overwritten.
    pub(super) fn drop_leading_spacer(&mut self, columns: usize) {
        let Some(newest) = self.rows.back_mut() else {
            return;
        };
        let mut row = newest.unpack(columns);
        let Some(last) = row[..].last_mut() else {
            return;
        };
        if last.flags.contains(Flags::LEADING_WIDE_CHAR_SPACER) {
            last.flags.remove(Flags::LEADING_WIDE_CHAR_SPACER);
            *newest = PackedRow::pack(&row, columns);
        }
    }

    pub(super) fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// The row `back` lines above the screen (1 = the newest), if kept.
    pub(super) fn get(&self, back: usize) -> Option<&PackedRow> {
        let len = self.rows.len();
        (1..=len).contains(&back).then(|| &self.rows[len - back])
    }

    pub(super) fn clear(&mut self) {
        self.rows = VecDeque::new();
    }
}

#[cfg(test)]
mod tests {
    use alacritty_terminal::term::cell::Flags;
    use alacritty_terminal::vte::ansi::NamedColor;

    use super::*;

    fn row_of(text: &str, columns: usize) -> Row<Cell> {
        let mut row: Row<Cell> = Row::new(columns);
        for (i, c) in text.chars().enumerate() {
            row[Column(i)].c = c;
        }
        row
    }

    #[test]
    fn a_plain_row_packs_to_its_text_and_back() {
        let row = row_of("hello world", 20);
        let packed = PackedRow::pack(&row, row.len());
        assert_eq!(&*packed.text, "hello world");
        assert!(packed.spans.is_empty() && packed.extras.is_empty());
        assert_eq!(packed.unpack(20)[..], row[..]);
    }

    #[test]
    fn attributes_and_extras_come_back_cell_for_cell() {
        let mut row = row_of("ab 漢 x", 12);
        row[Column(0)].fg = Color::Named(NamedColor::Red);
        row[Column(1)].flags = Flags::BOLD | Flags::INVERSE;
        row[Column(3)].flags = Flags::WIDE_CHAR;
        row[Column(4)].flags = Flags::WIDE_CHAR_SPACER;
        row[Column(4)].c = ' ';
        row[Column(9)].bg = Color::Indexed(42);
        row[Column(11)].flags = Flags::WRAPLINE;
        row[Column(6)].push_zerowidth('\u{301}');
        let packed = PackedRow::pack(&row, row.len());
        assert_eq!(packed.unpack(12)[..], row[..]);
        // A narrower terminal gets the row cut; a wider one, padding.
        assert_eq!(packed.unpack(4)[..], row[..][..4]);
        let wide = packed.unpack(15);
        assert_eq!(wide[..][..12], row[..]);
        assert!(wide[..][12..].iter().all(is_default));
    }

    #[test]
    fn the_store_keeps_the_newest_rows_up_to_its_limit() {
        let mut store = Scrollback::new(3);
        for i in 0..5 {
            store.push(&row_of(&i.to_string(), 4), 4);
        }
        assert_eq!(store.len(), 3);
        assert_eq!(&*store.get(1).unwrap().text, "4");
        assert_eq!(&*store.get(3).unwrap().text, "2");
        assert!(store.get(4).is_none() && store.get(0).is_none());
    }
}
