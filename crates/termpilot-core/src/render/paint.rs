//! The cell painter: backgrounds first (so glyphs that overhang a neighbour are not cut),
//! then glyphs, underlines and strike-through, then the cursor and the click-preview ring.

use alacritty_terminal::term::cell::Flags;
use alacritty_terminal::vte::ansi::{CursorShape, Rgb};

use super::canvas::Canvas;
use super::fonts::{Metrics, Style};
use super::glyphs::Glyphs;
use super::palette::Palette;
use super::snapshot::Screen;
use super::theme::Theme;

pub(crate) struct Paint<'a> {
    pub screen: &'a Screen,
    pub theme: Theme,
    pub cursor: bool,
    pub ring: Option<(usize, usize)>,
}

impl Paint<'_> {
    pub(super) fn run(&self, m: &Metrics, glyphs: &mut Glyphs) -> Canvas {
        let screen = self.screen;
        let palette = Palette::new(self.theme.colors(), &screen.colors);
        let (cw, ch) = (m.cell_width, m.cell_height);
        let mut canvas = Canvas::new(
            screen.columns as u32 * cw,
            screen.rows as u32 * ch,
            palette.background(),
        );
        let cursor = self.cursor.then_some(screen.cursor).flatten();
        let block = cursor
            .filter(|c| c.2 == CursorShape::Block)
            .map(|c| (c.0, c.1));

        // Pass 1: backgrounds; keep each cell's foreground for pass 2.
        let mut fores = Vec::with_capacity(screen.cells.len());
        for row in 0..screen.rows {
            for col in 0..screen.columns {
                let cell = screen.cell(row, col);
                let (mut fg, mut bg) = palette.cell_colors(cell.fg, cell.bg, cell.flags);
                let under_block = block.is_some_and(|(r, c)| {
                    r == row
                        && (c == col
                            || (c + 1 == col && cell.flags.contains(Flags::WIDE_CHAR_SPACER)))
                });
                if under_block {
                    fg = bg;
                    bg = palette.cursor();
                }
                if bg != palette.background() {
                    canvas.fill(
                        (col as u32 * cw) as i32,
                        (row as u32 * ch) as i32,
                        cw,
                        ch,
                        bg,
                    );
                }
                fores.push(fg);
            }
        }

        // Pass 2: glyphs and lines.
        for row in 0..screen.rows {
            for col in 0..screen.columns {
                let cell = screen.cell(row, col);
                let flags = cell.flags;
                if flags.intersects(
                    Flags::WIDE_CHAR_SPACER | Flags::LEADING_WIDE_CHAR_SPACER | Flags::HIDDEN,
                ) {
                    continue;
                }
                let fg = fores[row * screen.columns + col];
                let cells = if flags.contains(Flags::WIDE_CHAR) {
                    2
                } else {
                    1
                };
                let (x, y) = ((col as u32 * cw) as i32, (row as u32 * ch) as i32);
                let style = Style::new(flags.contains(Flags::BOLD), flags.contains(Flags::ITALIC));
                if cell.c != ' ' && cell.c != '\t' {
                    canvas.draw(x, y, glyphs.get(cell.c, style, cells), fg);
                }
                for &mark in cell.zerowidth().unwrap_or(&[]) {
                    canvas.draw(x, y, glyphs.mark(mark, style, cells), fg);
                }
                let line = cell.underline_color().map_or(fg, |c| palette.get(c));
                decorate(&mut canvas, m, x, y, cells * cw, flags, line, fg);
            }
        }

        if let Some((row, col, shape)) = cursor {
            let (x, y) = ((col as u32 * cw) as i32, (row as u32 * ch) as i32);
            let wide = screen.cell(row, col).flags.contains(Flags::WIDE_CHAR);
            let w = if wide { 2 * cw } else { cw };
            let color = palette.cursor();
            let s = m.stroke;
            match shape {
                CursorShape::Underline => canvas.fill(x, y + (ch - 2 * s) as i32, w, 2 * s, color),
                CursorShape::Beam => canvas.fill(x, y, 2 * s, ch, color),
                CursorShape::HollowBlock => {
                    canvas.fill(x, y, w, s, color);
                    canvas.fill(x, y + (ch - s) as i32, w, s, color);
                    canvas.fill(x, y, s, ch, color);
                    canvas.fill(x + (w - s) as i32, y, s, ch, color);
                }
                CursorShape::Block | CursorShape::Hidden => {}
            }
        }

        if let Some((row, col)) = self.ring {
            let cx = (col as f32 + 0.5) * cw as f32;
            let cy = (row as f32 + 0.5) * ch as f32;
            ring(
                &mut canvas,
                cx,
                cy,
                ch as f32,
                1.5 * m.stroke as f32 + 1.0,
                self.theme.colors().ring,
            );
        }
        canvas
    }
}

/// Underlines (single, double, curly, dotted, dashed) and strike-through.
#[allow(clippy::too_many_arguments)]
fn decorate(
    canvas: &mut Canvas,
    m: &Metrics,
    x: i32,
    y: i32,
    w: u32,
    flags: Flags,
    line: Rgb,
    fg: Rgb,
) {
    let s = m.stroke;
    let u = m.underline.min(m.cell_height - 3 * s) as i32;
    if flags.contains(Flags::UNDERLINE) {
        canvas.fill(x, y + u, w, s, line);
    }
    if flags.contains(Flags::DOUBLE_UNDERLINE) {
        canvas.fill(x, y + u, w, s, line);
        canvas.fill(x, y + u + 2 * s as i32, w, s, line);
    }
    if flags.contains(Flags::DOTTED_UNDERLINE) {
        for px in (0..w as i32).step_by(2 * s as usize) {
            canvas.fill(x + px, y + u, s, s, line);
        }
    }
    if flags.contains(Flags::DASHED_UNDERLINE) {
        let dash = (m.cell_width / 3).max(2) as i32;
        for px in (0..w as i32).step_by(2 * dash as usize) {
            canvas.fill(x + px, y + u, dash.min(w as i32 - px) as u32, s, line);
        }
    }
    if flags.contains(Flags::UNDERCURL) {
        let amp = s as f32;
        for px in 0..w as i32 {
            let phase = (px as f32 + 0.5) / m.cell_width as f32 * std::f32::consts::TAU;
            let cy = y as f32 + u as f32 + amp + amp * phase.sin();
            let top = cy.floor();
            let frac = cy - top;
            canvas.blend(x + px, top as i32, line, ((1.0 - frac) * 255.0) as u8);
            canvas.blend(x + px, top as i32 + 1, line, (frac * 255.0) as u8);
        }
    }
    if flags.contains(Flags::STRIKEOUT) {
        canvas.fill(x, y + m.strikeout as i32, w, s, fg);
    }
}

/// An anti-aliased circle of radius `r` around (`cx`, `cy`).
fn ring(canvas: &mut Canvas, cx: f32, cy: f32, r: f32, thickness: f32, color: Rgb) {
    let reach = (r + thickness).ceil() as i32 + 1;
    let (x0, y0) = (cx as i32 - reach, cy as i32 - reach);
    for y in y0..y0 + 2 * reach {
        for x in x0..x0 + 2 * reach {
            let d = ((x as f32 + 0.5 - cx).hypot(y as f32 + 0.5 - cy) - r).abs();
            let a = (thickness / 2.0 + 0.5 - d).clamp(0.0, 1.0);
            if a > 0.0 {
                canvas.blend(x, y, color, (a * 255.0).round() as u8);
            }
        }
    }
}
