//! The four colour themes of a screenshot (seed 001): `dark` (the default), `light`,
//! `solarized-dark` and `solarized-light`. A theme is the default foreground and background,
//! the cursor, the 16 ANSI colours and the colour of the click-preview ring; the rest of the
//! 256-colour palette is the same for every theme (see `palette.rs`).

use std::fmt;
use std::str::FromStr;

use alacritty_terminal::vte::ansi::Rgb;

use crate::error::{Error, Result};

/// A colour theme for screenshots, named as `Display` and [`Theme::parse`] spell it
/// (`"solarized-dark"`); the JSON form is the face's (`mcp::wire::screen::Theme`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Theme {
    #[default]
    Dark,
    Light,
    SolarizedDark,
    SolarizedLight,
}

/// The colours a theme defines.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ThemeColors {
    pub foreground: Rgb,
    pub background: Rgb,
    pub cursor: Rgb,
    pub ansi: [Rgb; 16],
    /// The ring drawn around the target cell of a click preview.
    pub ring: Rgb,
}

impl Theme {
    /// Every theme, in the order they are documented.
    pub const ALL: [Theme; 4] = [
        Theme::Dark,
        Theme::Light,
        Theme::SolarizedDark,
        Theme::SolarizedLight,
    ];

    /// The names accepted by [`Theme::parse`], in the same order as [`Theme::ALL`].
    pub const NAMES: [&'static str; 4] = ["dark", "light", "solarized-dark", "solarized-light"];

    /// Reads a theme name (`dark`, `light`, `solarized-dark`, `solarized-light`; case and `_`
    /// versus `-` do not matter).
    pub fn parse(name: &str) -> Result<Theme> {
        let wanted = name.trim().to_ascii_lowercase().replace('_', "-");
        Theme::ALL
            .into_iter()
            .find(|t| t.name() == wanted)
            .ok_or_else(|| {
                Error::InvalidInput(format!(
                    "Unknown theme `{name}`. Use one of: {}.",
                    Theme::NAMES.join(", ")
                ))
            })
    }

    /// The theme's name as [`Theme::parse`] reads it.
    pub fn name(self) -> &'static str {
        Theme::NAMES[self as usize]
    }

    pub(crate) fn colors(self) -> &'static ThemeColors {
        match self {
            Theme::Dark => &DARK,
            Theme::Light => &LIGHT,
            Theme::SolarizedDark => &SOLARIZED_DARK,
            Theme::SolarizedLight => &SOLARIZED_LIGHT,
        }
    }
}

impl FromStr for Theme {
    type Err = Error;
    fn from_str(s: &str) -> Result<Theme> {
        Theme::parse(s)
    }
}

impl fmt::Display for Theme {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

const fn hex(v: u32) -> Rgb {
    Rgb {
        r: (v >> 16) as u8,
        g: (v >> 8) as u8,
        b: v as u8,
    }
}

const fn ansi(v: [u32; 16]) -> [Rgb; 16] {
    let mut out = [hex(0); 16];
    let mut i = 0;
    while i < 16 {
        out[i] = hex(v[i]);
        i += 1;
    }
    out
}

/// The colours of VS Code's Dark+ terminal.
const DARK: ThemeColors = ThemeColors {
    foreground: hex(0xcccccc),
    background: hex(0x1e1e1e),
    cursor: hex(0xaeafad),
    ansi: ansi([
        0x000000, 0xcd3131, 0x0dbc79, 0xe5e510, 0x2472c8, 0xbc3fbc, 0x11a8cd, 0xe5e5e5, 0x666666,
        0xf14c4c, 0x23d18b, 0xf5f543, 0x3b8eea, 0xd670d6, 0x29b8db, 0xffffff,
    ]),
    ring: hex(0xff00ff),
};

/// The colours of VS Code's Light+ terminal.
const LIGHT: ThemeColors = ThemeColors {
    foreground: hex(0x333333),
    background: hex(0xffffff),
    cursor: hex(0x000000),
    ansi: ansi([
        0x000000, 0xcd3131, 0x00bc00, 0x949800, 0x0451a5, 0xbc05bc, 0x0598bc, 0x555555, 0x666666,
        0xcd3131, 0x14ce14, 0xb5ba00, 0x0451a5, 0xbc05bc, 0x0598bc, 0xa5a5a5,
    ]),
    ring: hex(0xe0007a),
};

/// Ethan Schoonover's Solarized accents, as terminals map them.
const SOLARIZED_ANSI: [Rgb; 16] = ansi([
    0x073642, 0xdc322f, 0x859900, 0xb58900, 0x268bd2, 0xd33682, 0x2aa198, 0xeee8d5, 0x002b36,
    0xcb4b16, 0x586e75, 0x657b83, 0x839496, 0x6c71c4, 0x93a1a1, 0xfdf6e3,
]);

const SOLARIZED_DARK: ThemeColors = ThemeColors {
    foreground: hex(0x839496),
    background: hex(0x002b36),
    cursor: hex(0x93a1a1),
    ansi: SOLARIZED_ANSI,
    ring: hex(0xff00ff),
};

const SOLARIZED_LIGHT: ThemeColors = ThemeColors {
    foreground: hex(0x657b83),
    background: hex(0xfdf6e3),
    cursor: hex(0x586e75),
    ansi: SOLARIZED_ANSI,
    ring: hex(0xe0007a),
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_every_name_and_round_trips() {
        for (theme, name) in Theme::ALL.into_iter().zip(Theme::NAMES) {
            assert_eq!(Theme::parse(name).unwrap(), theme);
            assert_eq!(theme.name(), name);
        }
        assert_eq!(
            Theme::parse(" Solarized_Dark ").unwrap(),
            Theme::SolarizedDark
        );
    }

    #[test]
    fn unknown_name_lists_the_four() {
        let e = Theme::parse("monokai").unwrap_err().to_string();
        assert!(e.contains("`monokai`"), "{e}");
        for name in Theme::NAMES {
            assert!(e.contains(name), "{e}");
        }
    }
}
