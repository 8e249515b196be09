//! Box drawing (U+2500–U+257F), block elements (U+2580–U+259F) and Braille (U+2800–U+28FF)
//! drawn in code, as terminals do: every cell uses the same line positions, so lines join
//! across cells with no gap, whatever the font would have drawn.

use super::fonts::Metrics;
use super::sprite::{Pixels, Sprite};

/// Arms of U+2500–U+257F as `URDL` weights (0 none, 1 light, 2 heavy, 3 double); `.` marks
/// the characters drawn otherwise (dashes, arcs, diagonals).
const ARMS: [&str; 128] = [
    "0101", "0202", "1010", "2020", "....", "....", "....", "....", // 2500
    "....", "....", "....", "....", "0110", "0210", "0120", "0220", // 2508
    "0011", "0012", "0021", "0022", "1100", "1200", "2100", "2200", // 2510
    "1001", "1002", "2001", "2002", "1110", "1210", "2110", "1120", // 2518
    "2120", "2210", "1220", "2220", "1011", "1012", "2011", "1021", // 2520
    "2021", "2012", "1022", "2022", "0111", "0112", "0211", "0212", // 2528
    "0121", "0122", "0221", "0222", "1101", "1102", "1201", "1202", // 2530
    "2101", "2102", "2201", "2202", "1111", "1112", "1211", "1212", // 2538
    "2111", "1121", "2121", "2112", "2211", "1122", "1221", "2212", // 2540
    "1222", "2122", "2221", "2222", "....", "....", "....", "....", // 2548
    "0303", "3030", "0310", "0130", "0330", "0013", "0031", "0033", // 2550
    "1300", "3100", "3300", "1003", "3001", "3003", "1310", "3130", // 2558
    "3330", "1013", "3031", "3033", "0313", "0131", "0333", "1303", // 2560
    "3101", "3303", "1313", "3131", "3333", "....", "....", "....", // 2568
    "....", "....", "....", "....", "0001", "1000", "0100", "0010", // 2570
    "0002", "2000", "0200", "0020", "0201", "1020", "0102", "2010", // 2578
];

/// The sprite for `c` when it is drawn in code.
pub(crate) fn sprite(c: char, m: &Metrics) -> Option<Sprite> {
    let cp = c as u32;
    let mut g = Grid::new(m);
    match cp {
        0x2500..=0x257F => {
            let arms = ARMS[(cp - 0x2500) as usize].as_bytes();
            if arms[0] == b'.' {
                special(&mut g, cp);
            } else {
                let w = |i: usize| arms[i] - b'0';
                g.lines([w(0), w(1), w(2), w(3)]);
            }
        }
        0x2580..=0x259F => g.block(cp),
        0x2800..=0x28FF => g.braille((cp - 0x2800) as u8),
        _ => return None,
    }
    Some(Sprite {
        left: 0,
        top: 0,
        width: g.w as u32,
        height: g.h as u32,
        pixels: Pixels::Coverage(g.cov),
    })
}

/// A cell-sized coverage map and the line geometry shared by all cells.
struct Grid {
    w: i32,
    h: i32,
    cov: Vec<u8>,
    light: i32,
    heavy: i32,
    /// Distance of each line of a double line from the centre line.
    gap: i32,
}

impl Grid {
    fn new(m: &Metrics) -> Grid {
        let light = m.stroke as i32;
        Grid {
            w: m.cell_width as i32,
            h: m.cell_height as i32,
            cov: vec![0; (m.cell_width * m.cell_height) as usize],
            light,
            heavy: light * 2 + 1,
            gap: light + 1,
        }
    }

    fn rect(&mut self, x0: i32, y0: i32, x1: i32, y1: i32, alpha: u8) {
        for y in y0.max(0)..y1.min(self.h) {
            for x in x0.max(0)..x1.min(self.w) {
                let p = &mut self.cov[(y * self.w + x) as usize];
                *p = (*p).max(alpha);
            }
        }
    }

    /// Coverage from a distance function (pixel centre → distance to the stroke's centre).
    fn stroke(&mut self, dist: impl Fn(f32, f32) -> f32) {
        let half = self.light as f32 / 2.0;
        for y in 0..self.h {
            for x in 0..self.w {
                let d = dist(x as f32 + 0.5, y as f32 + 0.5);
                let a = (half + 0.5 - d).clamp(0.0, 1.0);
                let p = &mut self.cov[(y * self.w + x) as usize];
                *p = (*p).max((a * 255.0).round() as u8);
            }
        }
    }

    fn thickness(&self, weight: u8) -> i32 {
        if weight == 2 { self.heavy } else { self.light }
    }

    /// Start of a centred line of thickness `t` on an axis of `size` pixels.
    fn centre(size: i32, t: i32) -> i32 {
        (size - t) / 2
    }

    /// Lines from the middle of the cell to the edges named by `arms` (`URDL`).
    fn lines(&mut self, arms: [u8; 4]) {
        let [u, r, d, l] = arms;
        for (weight, from_start) in [(u, true), (d, false)] {
            if weight != 0 {
                self.arm(true, weight, from_start, [l, r]);
            }
        }
        for (weight, from_start) in [(l, true), (r, false)] {
            if weight != 0 {
                self.arm(false, weight, from_start, [u, d]);
            }
        }
    }

    /// One arm: a vertical one (U from the top edge, D from the bottom) or a horizontal one
    /// (L, R), meeting the perpendicular arms `perp` (L and R, or U and D).
    fn arm(&mut self, vertical: bool, weight: u8, from_start: bool, perp: [u8; 2]) {
        let (along, across) = if vertical {
            (self.h, self.w)
        } else {
            (self.w, self.h)
        };
        let (l, gap) = (self.light, self.gap);
        // The lines of a perpendicular arm, as ranges on this arm's axis.
        let band = |p: u8| -> [(i32, i32); 2] {
            if p == 3 {
                let a = Self::centre(along, l);
                [(a - gap, a - gap + l), (a + gap, a + gap + l)]
            } else {
                let t = self.thickness(p);
                let a = Self::centre(along, t);
                [(a, a + t), (a, a + t)]
            }
        };
        // How far the arm goes: through every perpendicular line, or to the nearest one.
        let through = |ps: &[u8]| -> i32 {
            let lines = ps.iter().filter(|&&p| p != 0).flat_map(|&p| band(p));
            if from_start {
                lines.map(|r| r.1).max().unwrap_or(0)
            } else {
                lines.map(|r| r.0).min().unwrap_or(along)
            }
        };
        let near = |p: u8| -> i32 {
            let b = band(p);
            if from_start { b[0].1 } else { b[1].0 }
        };
        let has_perp = perp.iter().any(|&p| p != 0);
        let mut strokes: Vec<(i32, i32, i32)> = Vec::with_capacity(2); // (across start, thickness, reach)
        if weight == 3 {
            let a = Self::centre(across, l);
            for (side, offset) in [(0usize, -gap), (1, gap)] {
                let reach = if !has_perp {
                    let c = Self::centre(along, l);
                    if from_start { c + l } else { c }
                } else if perp[side] != 0 {
                    near(perp[side])
                } else {
                    through(&perp[1 - side..2 - side])
                };
                strokes.push((a + offset, l, reach));
            }
        } else {
            let t = self.thickness(weight);
            let reach = if !has_perp {
                let c = Self::centre(along, t);
                if from_start { c + t } else { c }
            } else if perp.iter().all(|&p| p != 0) && perp.contains(&3) {
                // A single line meeting a continuous double line stops at its near line.
                let b = band(3);
                if from_start { b[0].1 } else { b[1].0 }
            } else {
                through(&perp)
            };
            strokes.push((Self::centre(across, t), t, reach));
        }
        for (x, t, reach) in strokes {
            let (a0, a1) = if from_start {
                (0, reach)
            } else {
                (reach, along)
            };
            if vertical {
                self.rect(x, a0, x + t, a1, 255);
            } else {
                self.rect(a0, x, a1, x + t, 255);
            }
        }
    }

    fn block(&mut self, cp: u32) {
        let (w, h) = (self.w, self.h);
        let eighth_h = |k: i32| (h * k + 4) / 8;
        let eighth_w = |k: i32| (w * k + 4) / 8;
        let (mx, my) = (w / 2, h / 2);
        match cp {
            0x2580 => self.rect(0, 0, w, my, 255),
            0x2581..=0x2588 => {
                let k = (cp - 0x2580) as i32;
                self.rect(0, h - eighth_h(k), w, h, 255);
            }
            0x2589..=0x258F => {
                let k = (0x2590 - cp) as i32;
                self.rect(0, 0, eighth_w(k), h, 255);
            }
            0x2590 => self.rect(mx, 0, w, h, 255),
            0x2591..=0x2593 => {
                let alpha = [64, 128, 191][(cp - 0x2591) as usize];
                self.rect(0, 0, w, h, alpha);
            }
            0x2594 => self.rect(0, 0, w, eighth_h(1), 255),
            0x2595 => self.rect(w - eighth_w(1), 0, w, h, 255),
            _ => {
                // Quadrants: upper-left, upper-right, lower-left, lower-right.
                let quads: [bool; 4] = match cp {
                    0x2596 => [false, false, true, false],
                    0x2597 => [false, false, false, true],
                    0x2598 => [true, false, false, false],
                    0x2599 => [true, false, true, true],
                    0x259A => [true, false, false, true],
                    0x259B => [true, true, true, false],
                    0x259C => [true, true, false, true],
                    0x259D => [false, true, false, false],
                    0x259E => [false, true, true, false],
                    _ => [false, true, true, true],
                };
                let rects = [
                    (0, 0, mx, my),
                    (mx, 0, w, my),
                    (0, my, mx, h),
                    (mx, my, w, h),
                ];
                for (on, (x0, y0, x1, y1)) in quads.into_iter().zip(rects) {
                    if on {
                        self.rect(x0, y0, x1, y1, 255);
                    }
                }
            }
        }
    }

    fn braille(&mut self, dots: u8) {
        // Bit order of U+2800: 1 4 / 2 5 / 3 6 / 7 8 (columns, rows).
        const POS: [(i32, i32); 8] = [
            (0, 0),
            (0, 1),
            (0, 2),
            (1, 0),
            (1, 1),
            (1, 2),
            (0, 3),
            (1, 3),
        ];
        let size = (self.w / 4).max(1);
        for (bit, (col, row)) in POS.iter().enumerate() {
            if dots & (1 << bit) != 0 {
                let cx = self.w * (2 * col + 1) / 4;
                let cy = self.h * (2 * row + 1) / 8;
                let (x0, y0) = (cx - size / 2, cy - size / 2);
                self.rect(x0, y0, x0 + size, y0 + size, 255);
            }
        }
    }
}

/// Dashed lines, rounded corners and diagonals.
fn special(g: &mut Grid, cp: u32) {
    let (w, h) = (g.w, g.h);
    match cp {
        0x2504..=0x250B | 0x254C..=0x254F => {
            let (dashes, heavy, vertical) = match cp {
                0x2504..=0x250B => {
                    let i = cp - 0x2504;
                    (if i < 4 { 3 } else { 4 }, i % 2 == 1, (i / 2) % 2 == 1)
                }
                _ => {
                    let i = cp - 0x254C;
                    (2, i % 2 == 1, i >= 2)
                }
            };
            let t = if heavy { g.heavy } else { g.light };
            let (along, across) = if vertical { (h, w) } else { (w, h) };
            let x = Grid::centre(across, t);
            let gap = (along / (dashes * 4)).max(1);
            for i in 0..dashes {
                let a0 = along * i / dashes + gap / 2;
                let a1 = along * (i + 1) / dashes - (gap - gap / 2);
                if vertical {
                    g.rect(x, a0, x + t, a1, 255);
                } else {
                    g.rect(a0, x, a1, x + t, 255);
                }
            }
        }
        0x256D..=0x2570 => {
            // Horizontal arm towards +x or -x, vertical arm towards +y or -y.
            let (hx, vy) = match cp {
                0x256D => (1.0, 1.0),
                0x256E => (-1.0, 1.0),
                0x256F => (-1.0, -1.0),
                _ => (1.0, -1.0),
            };
            let l = g.light;
            let xc = Grid::centre(w, l) as f32 + l as f32 / 2.0;
            let yc = Grid::centre(h, l) as f32 + l as f32 / 2.0;
            let r = (w as f32 / 2.0).min(h as f32 / 2.0);
            let (cx, cy) = (xc + hx * r, yc + vy * r);
            let (w, h) = (w as f32, h as f32);
            let vertical_end = if vy > 0.0 { h } else { 0.0 };
            let horizontal_end = if hx > 0.0 { w } else { 0.0 };
            g.stroke(|px, py| {
                let arc = if (px - cx) * hx <= 0.0 && (py - cy) * vy <= 0.0 {
                    ((px - cx).hypot(py - cy) - r).abs()
                } else {
                    f32::MAX
                };
                let v = segment(px, py, (xc, cy), (xc, vertical_end));
                let hz = segment(px, py, (cx, yc), (horizontal_end, yc));
                arc.min(v).min(hz)
            });
        }
        _ => {
            let (w, h) = (w as f32, h as f32);
            let rising = matches!(cp, 0x2571 | 0x2573);
            let falling = matches!(cp, 0x2572 | 0x2573);
            g.stroke(|px, py| {
                let a = if rising {
                    segment(px, py, (w, 0.0), (0.0, h))
                } else {
                    f32::MAX
                };
                let b = if falling {
                    segment(px, py, (0.0, 0.0), (w, h))
                } else {
                    f32::MAX
                };
                a.min(b)
            });
        }
    }
}

/// Distance from a point to a segment.
fn segment(px: f32, py: f32, a: (f32, f32), b: (f32, f32)) -> f32 {
    let (dx, dy) = (b.0 - a.0, b.1 - a.1);
    let len2 = dx * dx + dy * dy;
    let t = if len2 == 0.0 {
        0.0
    } else {
        (((px - a.0) * dx + (py - a.1) * dy) / len2).clamp(0.0, 1.0)
    };
    (px - (a.0 + t * dx)).hypot(py - (a.1 + t * dy))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::render::fonts::metrics;

    fn cov(c: char) -> (Vec<u8>, i32, i32) {
        let m = metrics();
        let s = sprite(c, m).unwrap();
        let Pixels::Coverage(c) = s.pixels else {
            panic!()
        };
        (c, s.width as i32, s.height as i32)
    }

    fn at(c: &(Vec<u8>, i32, i32), x: i32, y: i32) -> u8 {
        c.0[(y * c.1 + x) as usize]
    }

    #[test]
    fn horizontal_lines_touch_both_edges_on_the_same_row() {
        for ch in ['─', '━', '═', '┼', '╬', '┬', '╤'] {
            let g = cov(ch);
            let rows_left: Vec<i32> = (0..g.2).filter(|&y| at(&g, 0, y) == 255).collect();
            let rows_right: Vec<i32> = (0..g.2).filter(|&y| at(&g, g.1 - 1, y) == 255).collect();
            assert!(!rows_left.is_empty(), "{ch}");
            assert_eq!(rows_left, rows_right, "{ch}");
        }
        // Light, heavy and double horizontals share the centre row, so they join.
        let light = cov('─');
        let mid = (0..light.2).find(|&y| at(&light, 0, y) == 255).unwrap();
        assert_eq!(at(&cov('━'), 0, mid), 255);
        assert_eq!(at(&cov('┌'), light.1 - 1, mid), 255);
    }

    #[test]
    fn vertical_lines_touch_top_and_bottom() {
        for ch in ['│', '┃', '║', '┼', '├', '╟'] {
            let g = cov(ch);
            let top: Vec<i32> = (0..g.1).filter(|&x| at(&g, x, 0) == 255).collect();
            let bottom: Vec<i32> = (0..g.1).filter(|&x| at(&g, x, g.2 - 1) == 255).collect();
            assert!(!top.is_empty(), "{ch}");
            assert_eq!(top, bottom, "{ch}");
        }
    }

    #[test]
    fn corners_reach_only_their_edges() {
        let g = cov('┌');
        assert_eq!(
            at(&g, 0, g.2 / 2 - 1).max(at(&g, 0, g.2 / 2)),
            0,
            "no left arm"
        );
        assert!((0..g.1).any(|x| at(&g, x, g.2 - 1) == 255), "down arm");
        assert!((0..g.1).all(|x| at(&g, x, 0) == 0), "no up arm");
        let arc = cov('╭');
        assert!((0..arc.1).any(|x| at(&arc, x, arc.2 - 1) > 200));
        assert!((0..arc.2).any(|y| at(&arc, arc.1 - 1, y) > 200));
        assert!((0..arc.1).all(|x| at(&arc, x, 0) == 0));
    }

    #[test]
    fn blocks_fill_what_they_say() {
        let full = cov('█');
        assert!(full.0.iter().all(|&a| a == 255));
        let lower = cov('▄');
        assert_eq!(at(&lower, 0, 0), 0);
        assert_eq!(at(&lower, 0, lower.2 - 1), 255);
        let quad = cov('▚');
        assert_eq!(at(&quad, 0, 0), 255);
        assert_eq!(at(&quad, quad.1 - 1, 0), 0);
        assert_eq!(at(&quad, quad.1 - 1, quad.2 - 1), 255);
        assert!(cov('⣿').0.iter().filter(|&&a| a == 255).count() >= 8);
        assert!(cov('\u{2800}').0.iter().all(|&a| a == 0));
        assert!(sprite('a', metrics()).is_none());
    }
}
