//! A copy of what a terminal shows, taken under the terminal's lock so that rendering can
//! happen after the lock is released: the visible cells (the viewport, scrolled or not), the
//! cursor and the program's colour overrides.

use alacritty_terminal::event::EventListener;
use alacritty_terminal::grid::Dimensions;
use alacritty_terminal::term::Term;
use alacritty_terminal::term::cell::Cell;
use alacritty_terminal::term::color::Colors;
use alacritty_terminal::vte::ansi::CursorShape;

/// The visible screen of a terminal at one moment.
#[derive(Clone)]
pub struct Screen {
    pub(crate) columns: usize,
    pub(crate) rows: usize,
    /// Row-major, `rows × columns`.
    pub(crate) cells: Vec<Cell>,
    /// Row, column and shape; `None` when the program hid the cursor.
    pub(crate) cursor: Option<(usize, usize, CursorShape)>,
    pub(crate) colors: Colors,
}

impl Screen {
    /// Copies the viewport of `term`. Cheap (one clone per cell); hold the lock only for this.
    pub fn capture<T: EventListener>(term: &Term<T>) -> Screen {
        let (columns, rows) = (term.columns(), term.screen_lines());
        let content = term.renderable_content();
        let offset = content.display_offset as i32;
        let mut cells = vec![Cell::default(); columns * rows];
        for indexed in content.display_iter {
            let row = indexed.point.line.0 + offset;
            let col = indexed.point.column.0;
            if row >= 0 && (row as usize) < rows && col < columns {
                cells[row as usize * columns + col] = indexed.cell.clone();
            }
        }
        let point = content.cursor.point;
        let row = point.line.0 + offset;
        let cursor = (content.cursor.shape != CursorShape::Hidden
            && row >= 0
            && (row as usize) < rows
            && point.column.0 < columns)
            .then_some((row as usize, point.column.0, content.cursor.shape));
        Screen {
            columns,
            rows,
            cells,
            cursor,
            colors: *content.colors,
        }
    }

    pub fn columns(&self) -> usize {
        self.columns
    }

    pub fn rows(&self) -> usize {
        self.rows
    }

    pub(crate) fn cell(&self, row: usize, col: usize) -> &Cell {
        &self.cells[row * self.columns + col]
    }
}
