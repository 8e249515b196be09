//! Screenshots: the emulator's screen rendered to PNG.
//!
//! [`screenshot`] takes a locked `alacritty_terminal::Term`, or [`Screen::capture`] copies the
//! screen under the lock and [`render`] draws it afterwards, so the terminal is held only for
//! the copy. The cell grid is painted with the embedded JetBrains Mono (DejaVu Sans Mono for
//! symbols, system fonts for CJK and emoji, a placeholder box when nothing has the glyph),
//! box drawing and blocks in code, one of four themes, and every SGR attribute alacritty
//! tracks. A click preview adds a ring around one cell.
//!
//! Layout: `theme` and `palette` (colours), `fonts` and `fallback` (faces), `glyphs` (sprite
//! cache), `boxdraw` (lines drawn in code), `snapshot` (the copy), `canvas` and `paint`
//! (pixels), `encode` (PNG). This module knows nothing of sessions or of MCP.

mod boxdraw;
mod canvas;
mod encode;
mod fallback;
pub(crate) mod fonts;
mod glyphs;
mod paint;
mod palette;
mod snapshot;
mod sprite;
#[cfg(test)]
mod tests;
mod theme;

use alacritty_terminal::event::EventListener;
use alacritty_terminal::term::Term;

use crate::error::{Error, Result};

pub use fonts::{JETBRAINS_BOLD, JETBRAINS_REGULAR};
pub use snapshot::Screen;
pub use theme::Theme;

/// Images larger than this many pixels are refused (a 1000×500 terminal would need 90 MP).
pub const MAX_PIXELS: u64 = 16 * 1024 * 1024;

/// How to draw a screenshot.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RenderOptions {
    pub theme: Theme,
    /// A cell to circle, 0-based (row, column): the target of a click preview.
    pub ring: Option<(usize, usize)>,
    /// Draw the cursor (when the program has not hidden it).
    pub show_cursor: bool,
}

impl Default for RenderOptions {
    fn default() -> Self {
        RenderOptions {
            theme: Theme::Dark,
            ring: None,
            show_cursor: true,
        }
    }
}

/// A rendered screenshot.
#[derive(Debug, Clone)]
pub struct Png {
    /// The PNG file.
    pub bytes: Vec<u8>,
    /// Image size in pixels: `columns × cell_width` by `rows × cell_height`.
    pub width: u32,
    pub height: u32,
    pub cell_width: u32,
    pub cell_height: u32,
    pub columns: u32,
    pub rows: u32,
}

/// Renders what `term` shows. Holds no lock of its own on the terminal: the caller's guard
/// must live for the call; use [`Screen::capture`] + [`render`] to release it sooner.
pub fn screenshot<T: EventListener>(term: &Term<T>, opts: &RenderOptions) -> Result<Png> {
    render(&Screen::capture(term), opts)
}

/// Renders a captured screen.
pub fn render(screen: &Screen, opts: &RenderOptions) -> Result<Png> {
    let m = fonts::metrics();
    let (columns, rows) = (screen.columns(), screen.rows());
    let (width, height) = (
        columns as u64 * m.cell_width as u64,
        rows as u64 * m.cell_height as u64,
    );
    if width * height > MAX_PIXELS {
        return Err(Error::Limit(format!(
            "The screen is {columns}×{rows} cells, too large to render ({width}×{height} pixels, \
             at most {} megapixels); resize the terminal smaller and try again.",
            MAX_PIXELS / (1024 * 1024)
        )));
    }
    if let Some((row, col)) = opts.ring
        && (row >= rows || col >= columns)
    {
        return Err(Error::InvalidInput(format!(
            "The cell at row {}, column {} is outside the screen; rows go from 1 to {rows} and \
             columns from 1 to {columns}.",
            row + 1,
            col + 1
        )));
    }
    let canvas = paint::Paint {
        screen,
        theme: opts.theme,
        cursor: opts.show_cursor,
        ring: opts.ring,
    }
    .run(m, &mut glyphs::cache());
    Ok(Png {
        bytes: encode::png(&canvas)?,
        width: canvas.width,
        height: canvas.height,
        cell_width: m.cell_width,
        cell_height: m.cell_height,
        columns: columns as u32,
        rows: rows as u32,
    })
}

/// The size of one cell in pixels (width, height), the same for every screenshot.
pub fn cell_size() -> (u32, u32) {
    let m = fonts::metrics();
    (m.cell_width, m.cell_height)
}
