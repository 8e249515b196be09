//! Glyph sprites and their cache: one sprite per (character, style, width in cells), made
//! once per process and reused by every screenshot.
//!
//! Where a sprite comes from, first match wins: box drawing, blocks and Braille drawn in code
//! (`boxdraw.rs`); the embedded face for the style; the regular face; DejaVu Sans Mono; a
//! system font (`fallback.rs`), scaled to fit the cell(s), in colour for bitmap emoji fonts;
//! else a placeholder box the size of the cell(s), so a missing glyph is visible, never an error.

use std::collections::HashMap;
use std::sync::{LazyLock, Mutex, MutexGuard};

use ab_glyph::{Font, FontRef, GlyphId, GlyphImageFormat, point};

use super::boxdraw;
use super::fallback;
use super::fonts::{Metrics, Style, embedded, metrics};
pub(crate) use super::sprite::{Pixels, Sprite};

/// Sprites kept at most; the cache starts over beyond this (a screen holds far fewer).
const MAX_SPRITES: usize = 8192;

/// Coverage is kept in this many steps (fewer colours: smaller, palette-friendly PNGs).
const COVERAGE_STEPS: f32 = 15.0;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
struct Key {
    c: char,
    style: Style,
    cells: u8,
}

/// The process-wide sprite cache.
pub(crate) struct Glyphs {
    sprites: HashMap<Key, Sprite>,
}

static CACHE: LazyLock<Mutex<Glyphs>> = LazyLock::new(|| {
    Mutex::new(Glyphs {
        sprites: HashMap::new(),
    })
});

/// Locks the cache for the length of one screenshot.
pub(crate) fn cache() -> MutexGuard<'static, Glyphs> {
    CACHE.lock().unwrap_or_else(|e| e.into_inner())
}

impl Glyphs {
    /// The sprite for `c` drawn `cells` cells wide (1, or 2 for wide characters).
    pub(super) fn get(&mut self, c: char, style: Style, cells: u32) -> &Sprite {
        self.lookup(c, style, cells.clamp(1, 2) as u8)
    }

    /// The sprite for a combining mark over a base character `cells` wide: like [`get`], but
    /// a mark no font has is left out rather than boxed (it rides on a visible base).
    ///
    /// [`get`]: Glyphs::get
    pub(super) fn mark(&mut self, c: char, style: Style, cells: u32) -> &Sprite {
        self.lookup(c, style, MARK | cells.clamp(1, 2) as u8)
    }

    fn lookup(&mut self, c: char, style: Style, cells: u8) -> &Sprite {
        let key = Key { c, style, cells };
        if self.sprites.len() >= MAX_SPRITES && !self.sprites.contains_key(&key) {
            self.sprites.clear();
        }
        self.sprites.entry(key).or_insert_with(|| {
            let sprite = make(c, style, (cells & !MARK) as u32, metrics());
            match sprite {
                Some(sprite) => sprite,
                None if cells & MARK != 0 => Sprite::empty(),
                None => placeholder(metrics(), (cells & !MARK) as u32),
            }
        })
    }
}

/// Flag in `Key::cells` for combining marks.
const MARK: u8 = 0x80;

/// Characters that are never drawn: joiners, variation selectors, tags, soft hyphen.
fn invisible(c: char) -> bool {
    matches!(c as u32,
        0x00AD | 0x034F | 0x200B..=0x200F | 0x2060..=0x2064 | 0xFE00..=0xFE0F | 0xFEFF
            | 0xE0000..=0xE007F | 0xE0100..=0xE01EF)
}

/// Private use: a system font's glyph there means nothing (Nerd Font icons stay boxes).
fn private_use(c: char) -> bool {
    matches!(c as u32, 0xE000..=0xF8FF | 0xF0000..=0x10FFFF)
}

/// The sprite for `c`, or `None` when no font has it.
fn make(c: char, style: Style, cells: u32, m: &Metrics) -> Option<Sprite> {
    if invisible(c) {
        return Some(Sprite::empty());
    }
    if let Some(sprite) = boxdraw::sprite(c, m) {
        return Some(sprite);
    }
    let fonts = embedded();
    let (face, embolden) = fonts.face(style);
    for font in [face, &fonts.regular, &fonts.symbols] {
        let id = font.glyph_id(c);
        if id.0 != 0 {
            let bold = embolden && std::ptr::eq(font, face);
            return Some(outlined(font, id, m, cells, bold, false).unwrap_or_else(Sprite::empty));
        }
    }
    if private_use(c) {
        return None;
    }
    let font = fallback::find(c)?;
    let id = font.glyph_id(c);
    let sprite =
        outlined(&font, id, m, cells, embolden, true).or_else(|| bitmap(&font, id, m, cells));
    match sprite {
        // A font with absurd metrics is treated as not having the glyph.
        Some(s) if s.width > 4 * m.cell_width * cells || s.height > 4 * m.cell_height => None,
        Some(s) => Some(s),
        None => Some(Sprite::empty()),
    }
}

/// Rasterises an outline at the cell's size, centred in `cells` cells; `fit` shrinks glyphs
/// of other fonts that would overflow the cells.
fn outlined(
    font: &FontRef<'static>,
    id: GlyphId,
    m: &Metrics,
    cells: u32,
    embolden: bool,
    fit: bool,
) -> Option<Sprite> {
    let span = (m.cell_width * cells) as f32;
    let mut scale = m.scale_for(font);
    let mut advance = font.h_advance_unscaled(id) * scale.x / font.height_unscaled();
    if fit && advance > span {
        let shrink = span / advance;
        scale.x *= shrink;
        scale.y *= shrink;
        advance = span;
    }
    let x = ((span - advance) / 2.0).max(0.0);
    let glyph = id.with_scale_and_position(scale, point(x, m.baseline));
    let outline = font.outline_glyph(glyph)?;
    let bounds = outline.px_bounds();
    let (width, height) = (bounds.width() as u32, bounds.height() as u32);
    let mut coverage = vec![0u8; (width * height) as usize];
    outline.draw(|x, y, c| {
        if x < width && y < height {
            coverage[(y * width + x) as usize] = quantize(c);
        }
    });
    let mut sprite = Sprite {
        left: bounds.min.x as i32,
        top: bounds.min.y as i32,
        width,
        height,
        pixels: Pixels::Coverage(coverage),
    };
    if embolden {
        sprite = emboldened(sprite);
    }
    Some(sprite)
}

fn quantize(c: f32) -> u8 {
    ((c.clamp(0.0, 1.0) * COVERAGE_STEPS).round() * (255.0 / COVERAGE_STEPS)) as u8
}

/// Synthetic bold: every stroke one pixel wider.
fn emboldened(sprite: Sprite) -> Sprite {
    let Pixels::Coverage(src) = &sprite.pixels else {
        return sprite;
    };
    let (w, h) = (sprite.width as usize, sprite.height as usize);
    let mut out = vec![0u8; (w + 1) * h];
    for y in 0..h {
        for x in 0..=w {
            let here = if x < w { src[y * w + x] } else { 0 };
            let left = if x > 0 { src[y * w + x - 1] } else { 0 };
            out[y * (w + 1) + x] = here.max(left);
        }
    }
    Sprite {
        width: sprite.width + 1,
        pixels: Pixels::Coverage(out),
        ..sprite
    }
}

/// A colour bitmap (emoji fonts: CBDT, sbix), scaled to fit the cells.
fn bitmap(font: &FontRef<'static>, id: GlyphId, m: &Metrics, cells: u32) -> Option<Sprite> {
    let image = font.glyph_raster_image2(id, u16::MAX)?;
    if !matches!(image.format, GlyphImageFormat::Png) {
        return None;
    }
    let (w, h, rgba) = decode_png(image.data)?;
    let span = m.cell_width * cells;
    let fit = (span as f32 / w as f32).min(m.cell_height as f32 / h as f32);
    let (tw, th) = (
        ((w as f32 * fit).round() as u32).max(1),
        ((h as f32 * fit).round() as u32).max(1),
    );
    Some(Sprite {
        left: ((span - tw) / 2) as i32,
        top: ((m.cell_height - th) / 2) as i32,
        width: tw,
        height: th,
        pixels: Pixels::Rgba(downscale(&rgba, w, h, tw, th)),
    })
}

fn decode_png(data: &[u8]) -> Option<(u32, u32, Vec<[u8; 4]>)> {
    let mut decoder = png::Decoder::new(std::io::Cursor::new(data));
    decoder.set_transformations(png::Transformations::normalize_to_color8());
    let mut reader = decoder.read_info().ok()?;
    let mut buf = vec![0; reader.output_buffer_size()?];
    let info = reader.next_frame(&mut buf).ok()?;
    let buf = &buf[..info.buffer_size()];
    let pixels: Vec<[u8; 4]> = match info.color_type {
        png::ColorType::Rgba => buf
            .chunks_exact(4)
            .map(|p| [p[0], p[1], p[2], p[3]])
            .collect(),
        png::ColorType::Rgb => buf
            .chunks_exact(3)
            .map(|p| [p[0], p[1], p[2], 255])
            .collect(),
        png::ColorType::GrayscaleAlpha => buf
            .chunks_exact(2)
            .map(|p| [p[0], p[0], p[0], p[1]])
            .collect(),
        png::ColorType::Grayscale => buf.iter().map(|&v| [v, v, v, 255]).collect(),
        png::ColorType::Indexed => return None,
    };
    Some((info.width, info.height, pixels))
}

/// Area-averaging downscale (alpha-weighted), enough for emoji strikes to a cell.
fn downscale(src: &[[u8; 4]], w: u32, h: u32, tw: u32, th: u32) -> Vec<[u8; 4]> {
    let mut out = Vec::with_capacity((tw * th) as usize);
    for ty in 0..th {
        let (y0, y1) = (ty * h / th, ((ty + 1) * h / th).max(ty * h / th + 1).min(h));
        for tx in 0..tw {
            let (x0, x1) = (tx * w / tw, ((tx + 1) * w / tw).max(tx * w / tw + 1).min(w));
            let mut acc = [0u64; 4];
            for y in y0..y1 {
                for x in x0..x1 {
                    let [r, g, b, a] = src[(y * w + x) as usize];
                    let a64 = a as u64;
                    acc[0] += r as u64 * a64;
                    acc[1] += g as u64 * a64;
                    acc[2] += b as u64 * a64;
                    acc[3] += a64;
                }
            }
            let n = ((y1 - y0) * (x1 - x0)) as u64;
            out.push(match acc[3] {
                0 => [0, 0, 0, 0],
                a => [
                    (acc[0] / a) as u8,
                    (acc[1] / a) as u8,
                    (acc[2] / a) as u8,
                    (a / n) as u8,
                ],
            });
        }
    }
    out
}

/// A hollow box inside the cell(s): "this character has no glyph here".
fn placeholder(m: &Metrics, cells: u32) -> Sprite {
    let (w, h) = (m.cell_width * cells - 2, m.cell_height - 4);
    let mut coverage = vec![0u8; (w * h) as usize];
    for y in 0..h {
        for x in 0..w {
            if x == 0 || y == 0 || x == w - 1 || y == h - 1 {
                coverage[(y * w + x) as usize] = 255;
            }
        }
    }
    Sprite {
        left: 1,
        top: 2,
        width: w,
        height: h,
        pixels: Pixels::Coverage(coverage),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn latin_glyphs_sit_inside_their_cell() {
        let m = metrics();
        let mut cache = cache();
        let s = cache.get('H', Style::Regular, 1).clone();
        assert!(s.width > 2 && s.height > 5, "{s:?}");
        assert!(s.left >= 0 && s.left + s.width as i32 <= m.cell_width as i32 + 1);
        assert!(s.top >= 0 && s.top + s.height as i32 <= m.baseline as i32 + 1);
        assert_eq!(cache.get(' ', Style::Regular, 1).width, 0);
    }

    #[test]
    fn bold_italic_is_emboldened_italic() {
        let mut cache = cache();
        let italic = cache.get('l', Style::Italic, 1).clone();
        let both = cache.get('l', Style::BoldItalic, 1).clone();
        assert_eq!(both.width, italic.width + 1);
    }

    #[test]
    fn missing_glyphs_become_a_box() {
        let m = metrics();
        let s = cache().get('\u{10FFFD}', Style::Regular, 1).clone();
        assert_eq!(s, placeholder(m, 1));
        let wide = placeholder(m, 2);
        assert_eq!(wide.width, 2 * m.cell_width - 2);
    }

    #[test]
    fn invisible_and_unknown_marks_draw_nothing() {
        let mut cache = cache();
        assert_eq!(cache.get('\u{FE0F}', Style::Regular, 1).width, 0);
        assert_eq!(cache.get('\u{200D}', Style::Regular, 2).width, 0);
        assert_eq!(cache.mark('\u{10FFFD}', Style::Regular, 1).width, 0);
        assert!(
            cache.mark('\u{301}', Style::Regular, 1).width > 0,
            "a real accent is drawn"
        );
    }

    #[test]
    fn downscale_averages() {
        let src = vec![
            [255, 0, 0, 255],
            [0, 0, 255, 255],
            [255, 0, 0, 255],
            [0, 0, 255, 255],
        ];
        let out = downscale(&src, 2, 2, 1, 1);
        assert_eq!(out, vec![[127, 0, 127, 255]]);
    }
}
