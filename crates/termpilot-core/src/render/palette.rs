//! Colour resolution: the full palette of one screenshot (the theme's 16 colours, the 6×6×6
//! cube, the grey ramp, default foreground/background/cursor, the dim variants) with the
//! program's OSC 4/10/11/12 overrides on top, and the rules that turn a cell's colours and
//! attributes (bold brightens 0–7, dim, inverse, hidden) into the two colours painted.

use alacritty_terminal::term::cell::Flags;
use alacritty_terminal::term::color::{COUNT, Colors};
use alacritty_terminal::vte::ansi::{Color, NamedColor, Rgb};

use super::theme::ThemeColors;

/// How much a dim colour moves towards the background (0 = not at all, 1 = invisible).
const DIM_TOWARDS_BACKGROUND: f32 = 0.4;

/// The 269 colours alacritty indexes, resolved for one theme and one terminal.
pub(crate) struct Palette {
    colors: [Rgb; COUNT],
}

impl Palette {
    /// The theme's colours with the terminal's overrides (`term.colors()`) applied.
    pub(super) fn new(theme: &ThemeColors, overrides: &Colors) -> Palette {
        let mut colors = [theme.background; COUNT];
        colors[..16].copy_from_slice(&theme.ansi);
        for (i, slot) in colors.iter_mut().enumerate().take(256).skip(16) {
            *slot = xterm_256(i as u8);
        }
        colors[NamedColor::Foreground as usize] = theme.foreground;
        colors[NamedColor::Background as usize] = theme.background;
        colors[NamedColor::Cursor as usize] = theme.cursor;
        for (i, slot) in colors.iter_mut().enumerate() {
            if let Some(rgb) = overrides[i] {
                *slot = rgb;
            }
        }
        // Derived colours follow the overridden bases unless they were set themselves.
        let background = colors[NamedColor::Background as usize];
        for i in 0..8 {
            let dim = NamedColor::DimBlack as usize + i;
            if overrides[dim].is_none() {
                colors[dim] = mix(colors[i], background, DIM_TOWARDS_BACKGROUND);
            }
        }
        let fg = colors[NamedColor::Foreground as usize];
        if overrides[NamedColor::BrightForeground as usize].is_none() {
            colors[NamedColor::BrightForeground as usize] = fg;
        }
        if overrides[NamedColor::DimForeground as usize].is_none() {
            colors[NamedColor::DimForeground as usize] =
                mix(fg, background, DIM_TOWARDS_BACKGROUND);
        }
        Palette { colors }
    }

    pub(super) fn background(&self) -> Rgb {
        self.colors[NamedColor::Background as usize]
    }

    pub(super) fn cursor(&self) -> Rgb {
        self.colors[NamedColor::Cursor as usize]
    }

    /// A colour as the cell stores it.
    pub(super) fn get(&self, color: Color) -> Rgb {
        match color {
            Color::Spec(rgb) => rgb,
            Color::Named(n) => self.colors[n as usize],
            Color::Indexed(i) => self.colors[i as usize],
        }
    }

    /// The foreground of a cell, with bold-as-bright and dim applied (as alacritty does).
    fn foreground(&self, color: Color, flags: Flags) -> Rgb {
        let bold = flags.contains(Flags::BOLD);
        let dim = flags.contains(Flags::DIM);
        match color {
            Color::Named(n) if dim => self.colors[n.to_dim() as usize],
            Color::Named(n) if bold => self.colors[n.to_bright() as usize],
            Color::Indexed(i @ 0..=7) if dim => {
                self.colors[NamedColor::DimBlack as usize + i as usize]
            }
            Color::Indexed(i @ 0..=7) if bold => self.colors[i as usize + 8],
            other if dim => mix(self.get(other), self.background(), DIM_TOWARDS_BACKGROUND),
            other => self.get(other),
        }
    }

    /// The (foreground, background) painted for a cell, after inverse and hidden.
    pub(super) fn cell_colors(&self, fg: Color, bg: Color, flags: Flags) -> (Rgb, Rgb) {
        let mut fore = self.foreground(fg, flags);
        let mut back = self.get(bg);
        if flags.contains(Flags::INVERSE) {
            std::mem::swap(&mut fore, &mut back);
        }
        if flags.contains(Flags::HIDDEN) {
            fore = back;
        }
        (fore, back)
    }
}

/// Colours 16–255 of xterm's palette: a 6×6×6 cube, then 24 greys.
fn xterm_256(i: u8) -> Rgb {
    const LEVELS: [u8; 6] = [0, 95, 135, 175, 215, 255];
    if i >= 232 {
        let v = 8 + 10 * (i - 232);
        return Rgb { r: v, g: v, b: v };
    }
    let i = (i - 16) as usize;
    Rgb {
        r: LEVELS[i / 36],
        g: LEVELS[(i / 6) % 6],
        b: LEVELS[i % 6],
    }
}

/// `a` moved towards `b` by `t` (0..=1).
pub(crate) fn mix(a: Rgb, b: Rgb, t: f32) -> Rgb {
    let m = |x: u8, y: u8| (x as f32 + (y as f32 - x as f32) * t).round() as u8;
    Rgb {
        r: m(a.r, b.r),
        g: m(a.g, b.g),
        b: m(a.b, b.b),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::render::Theme;

    fn palette() -> Palette {
        Palette::new(Theme::Dark.colors(), &Colors::default())
    }

    #[test]
    fn cube_and_greys_match_xterm() {
        assert_eq!(xterm_256(16), Rgb { r: 0, g: 0, b: 0 });
        assert_eq!(xterm_256(196), Rgb { r: 255, g: 0, b: 0 });
        assert_eq!(
            xterm_256(231),
            Rgb {
                r: 255,
                g: 255,
                b: 255
            }
        );
        assert_eq!(xterm_256(232), Rgb { r: 8, g: 8, b: 8 });
        assert_eq!(
            xterm_256(255),
            Rgb {
                r: 238,
                g: 238,
                b: 238
            }
        );
    }

    #[test]
    fn bold_brightens_the_first_eight_only() {
        let p = palette();
        let red = Color::Named(NamedColor::Red);
        let bg = Color::Named(NamedColor::Background);
        assert_eq!(
            p.cell_colors(red, bg, Flags::BOLD).0,
            p.get(Color::Indexed(9))
        );
        assert_eq!(
            p.cell_colors(Color::Indexed(1), bg, Flags::BOLD).0,
            p.get(Color::Indexed(9))
        );
        assert_eq!(
            p.cell_colors(Color::Indexed(100), bg, Flags::BOLD).0,
            xterm_256(100)
        );
    }

    #[test]
    fn inverse_swaps_and_hidden_hides() {
        let p = palette();
        let (fg, bg) = (
            Color::Named(NamedColor::Foreground),
            Color::Named(NamedColor::Background),
        );
        let (f, b) = p.cell_colors(fg, bg, Flags::INVERSE);
        assert_eq!((f, b), (p.get(bg), p.get(fg)));
        let (f, b) = p.cell_colors(fg, bg, Flags::HIDDEN);
        assert_eq!(f, b);
    }

    #[test]
    fn dim_moves_towards_the_background() {
        let p = palette();
        let white = Color::Spec(Rgb {
            r: 250,
            g: 250,
            b: 250,
        });
        let (f, _) = p.cell_colors(white, Color::Named(NamedColor::Background), Flags::DIM);
        assert!(f.r < 250 && f.r > p.background().r);
    }

    #[test]
    fn osc_overrides_win() {
        let mut colors = Colors::default();
        colors[NamedColor::Background] = Some(Rgb { r: 1, g: 2, b: 3 });
        colors[5] = Some(Rgb { r: 9, g: 9, b: 9 });
        let p = Palette::new(Theme::Light.colors(), &colors);
        assert_eq!(p.background(), Rgb { r: 1, g: 2, b: 3 });
        assert_eq!(p.get(Color::Indexed(5)), Rgb { r: 9, g: 9, b: 9 });
    }
}
