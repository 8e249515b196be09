//! The pixel buffer a screenshot is painted on: opaque RGB, with rectangle fills, coverage
//! blending (glyphs, lines) and colour sprites (emoji), all clipped to the image.

use alacritty_terminal::vte::ansi::Rgb;

use super::sprite::{Pixels, Sprite};

pub(crate) struct Canvas {
    pub width: u32,
    pub height: u32,
    pub pixels: Vec<[u8; 3]>,
}

impl Canvas {
    pub(super) fn new(width: u32, height: u32, background: Rgb) -> Canvas {
        Canvas {
            width,
            height,
            pixels: vec![
                [background.r, background.g, background.b];
                width as usize * height as usize
            ],
        }
    }

    #[cfg(test)]
    pub(crate) fn get(&self, x: u32, y: u32) -> [u8; 3] {
        self.pixels[(y * self.width + x) as usize]
    }

    /// Fills a rectangle (clipped to the image).
    pub(super) fn fill(&mut self, x: i32, y: i32, w: u32, h: u32, color: Rgb) {
        let Some((x0, y0, x1, y1)) = self.clip(x, y, w, h) else {
            return;
        };
        let rgb = [color.r, color.g, color.b];
        for row in y0..y1 {
            let start = (row * self.width) as usize;
            self.pixels[start + x0 as usize..start + x1 as usize].fill(rgb);
        }
    }

    /// Blends `color` over one pixel with coverage `alpha` (0–255).
    pub(super) fn blend(&mut self, x: i32, y: i32, color: Rgb, alpha: u8) {
        if x < 0 || y < 0 || x as u32 >= self.width || y as u32 >= self.height || alpha == 0 {
            return;
        }
        let p = &mut self.pixels[(y as u32 * self.width + x as u32) as usize];
        *p = over(*p, [color.r, color.g, color.b], alpha);
    }

    /// Draws a sprite whose origin is at (`x`, `y`): coverage sprites in `color`, colour
    /// sprites as they are.
    pub(super) fn draw(&mut self, x: i32, y: i32, sprite: &Sprite, color: Rgb) {
        let sx = x + sprite.left;
        let sy = y + sprite.top;
        let Some((x0, y0, x1, y1)) = self.clip(sx, sy, sprite.width, sprite.height) else {
            return;
        };
        let fg = [color.r, color.g, color.b];
        for row in y0..y1 {
            let src_row = (row as i32 - sy) as usize * sprite.width as usize;
            let dst_row = (row * self.width) as usize;
            for col in x0..x1 {
                let src = src_row + (col as i32 - sx) as usize;
                let dst = &mut self.pixels[dst_row + col as usize];
                match &sprite.pixels {
                    Pixels::Coverage(c) => {
                        let a = c[src];
                        if a == 255 {
                            *dst = fg;
                        } else if a != 0 {
                            *dst = over(*dst, fg, a);
                        }
                    }
                    Pixels::Rgba(c) => {
                        let [r, g, b, a] = c[src];
                        if a != 0 {
                            *dst = over(*dst, [r, g, b], a);
                        }
                    }
                }
            }
        }
    }

    /// The part of a rectangle inside the image, as `x0, y0, x1, y1` (exclusive ends).
    fn clip(&self, x: i32, y: i32, w: u32, h: u32) -> Option<(u32, u32, u32, u32)> {
        let x0 = x.max(0) as i64;
        let y0 = y.max(0) as i64;
        let x1 = (x as i64 + w as i64).min(self.width as i64);
        let y1 = (y as i64 + h as i64).min(self.height as i64);
        (x0 < x1 && y0 < y1).then_some((x0 as u32, y0 as u32, x1 as u32, y1 as u32))
    }
}

/// `src` over `dst` with coverage `a` (0–255).
#[inline]
fn over(dst: [u8; 3], src: [u8; 3], a: u8) -> [u8; 3] {
    let a = a as u32;
    let mix = |d: u8, s: u8| ((s as u32 * a + d as u32 * (255 - a) + 127) / 255) as u8;
    [
        mix(dst[0], src[0]),
        mix(dst[1], src[1]),
        mix(dst[2], src[2]),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    const BLACK: Rgb = Rgb { r: 0, g: 0, b: 0 };
    const WHITE: Rgb = Rgb {
        r: 255,
        g: 255,
        b: 255,
    };

    #[test]
    fn fills_clip_and_blend() {
        let mut c = Canvas::new(4, 3, BLACK);
        c.fill(-2, 1, 4, 10, WHITE);
        assert_eq!(c.get(0, 0), [0, 0, 0]);
        assert_eq!(c.get(1, 2), [255, 255, 255]);
        assert_eq!(c.get(2, 2), [0, 0, 0]);
        c.blend(3, 0, WHITE, 128);
        assert_eq!(c.get(3, 0), [128, 128, 128]);
        c.blend(9, 9, WHITE, 255); // outside: ignored
    }

    #[test]
    fn sprites_are_offset_and_clipped() {
        let mut c = Canvas::new(3, 3, BLACK);
        let s = Sprite {
            left: -1,
            top: 1,
            width: 2,
            height: 2,
            pixels: Pixels::Coverage(vec![255, 255, 0, 255]),
        };
        c.draw(1, 0, &s, WHITE);
        assert_eq!(c.get(0, 1), [255, 255, 255]);
        assert_eq!(c.get(1, 1), [255, 255, 255]);
        assert_eq!(c.get(0, 2), [0, 0, 0]);
        assert_eq!(c.get(1, 2), [255, 255, 255]);
    }
}
