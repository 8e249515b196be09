//! The embedded faces and the cell geometry derived from them.
//!
//! JetBrains Mono (regular, bold, italic; Apache-2.0, see `assets/fonts/`) draws text;
//! DejaVu Sans Mono backs it up for the symbols JetBrains Mono lacks. Bold italic is the
//! italic face emboldened in code. Characters neither face has go to `fallback.rs`.

use std::sync::OnceLock;

use ab_glyph::{Font, FontRef, PxScale};

/// Width of one cell in pixels; everything else follows from the font at this size.
pub(crate) const CELL_WIDTH: u32 = 9;

pub static JETBRAINS_REGULAR: &[u8] =
    include_bytes!("../../../../assets/fonts/JetBrainsMono-Regular.ttf");
pub static JETBRAINS_BOLD: &[u8] =
    include_bytes!("../../../../assets/fonts/JetBrainsMono-Bold.ttf");
static JETBRAINS_ITALIC: &[u8] =
    include_bytes!("../../../../assets/fonts/JetBrainsMono-Italic.ttf");
static DEJAVU_MONO: &[u8] = include_bytes!("../../../../assets/fonts/DejaVuSansMono.ttf");

/// Which face a cell asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Style {
    Regular,
    Bold,
    Italic,
    BoldItalic,
}

impl Style {
    pub(crate) fn new(bold: bool, italic: bool) -> Style {
        match (bold, italic) {
            (false, false) => Style::Regular,
            (true, false) => Style::Bold,
            (false, true) => Style::Italic,
            (true, true) => Style::BoldItalic,
        }
    }
}

/// The embedded faces, parsed once.
pub(crate) struct Embedded {
    pub regular: FontRef<'static>,
    pub bold: FontRef<'static>,
    pub italic: FontRef<'static>,
    /// DejaVu Sans Mono: symbols, arrows, maths and scripts JetBrains Mono lacks.
    pub symbols: FontRef<'static>,
}

impl Embedded {
    /// The face for a style, and whether it must be emboldened in code.
    pub(crate) fn face(&self, style: Style) -> (&FontRef<'static>, bool) {
        match style {
            Style::Regular => (&self.regular, false),
            Style::Bold => (&self.bold, false),
            Style::Italic => (&self.italic, false),
            Style::BoldItalic => (&self.italic, true),
        }
    }
}

pub(crate) fn embedded() -> &'static Embedded {
    static FONTS: OnceLock<Embedded> = OnceLock::new();
    FONTS.get_or_init(|| {
        let parse = |data: &'static [u8]| {
            FontRef::try_from_slice(data).expect("the embedded fonts under assets/fonts parse")
        };
        Embedded {
            regular: parse(JETBRAINS_REGULAR),
            bold: parse(JETBRAINS_BOLD),
            italic: parse(JETBRAINS_ITALIC),
            symbols: parse(DEJAVU_MONO),
        }
    })
}

/// The geometry of a cell, shared by every face.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Metrics {
    pub cell_width: u32,
    pub cell_height: u32,
    /// Size of the em square in pixels.
    pub em: f32,
    /// Distance from the top of a cell to the baseline, in pixels.
    pub baseline: f32,
    /// Thickness of underlines, strike-through and light box-drawing lines.
    pub stroke: u32,
    /// Top row of the underline, from the top of the cell.
    pub underline: u32,
    /// Top row of the strike-through line.
    pub strikeout: u32,
}

impl Metrics {
    /// The scale at which `font` draws an em as large as the main face's.
    pub(crate) fn scale_for(&self, font: &impl Font) -> PxScale {
        let upem = font.units_per_em().unwrap_or(1000.0);
        PxScale::from(self.em * font.height_unscaled() / upem)
    }
}

pub(crate) fn metrics() -> &'static Metrics {
    static METRICS: OnceLock<Metrics> = OnceLock::new();
    METRICS.get_or_init(|| {
        let font = &embedded().regular;
        let upem = font.units_per_em().unwrap_or(1000.0);
        let advance = font.h_advance_unscaled(font.glyph_id('M')) / upem;
        let em = CELL_WIDTH as f32 / advance;
        let ascent = font.ascent_unscaled() / upem * em;
        let descent = -font.descent_unscaled() / upem * em;
        let line = ascent + descent + font.line_gap_unscaled() / upem * em;
        let cell_height = line.ceil() as u32;
        let baseline = (ascent + (cell_height as f32 - line) / 2.0).round();
        let stroke = (CELL_WIDTH as f32 / 9.0).round().max(1.0) as u32;
        let underline = ((baseline + descent * 0.45).round() as u32).min(cell_height - stroke);
        let strikeout = (baseline - em * 0.27).round() as u32;
        Metrics {
            cell_width: CELL_WIDTH,
            cell_height,
            em,
            baseline,
            stroke,
            underline,
            strikeout,
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cell_geometry_is_sane() {
        let m = metrics();
        assert_eq!(m.cell_width, CELL_WIDTH);
        assert!((18..=22).contains(&m.cell_height), "{m:?}");
        assert!(
            m.baseline > m.strikeout as f32 && m.underline < m.cell_height,
            "{m:?}"
        );
    }

    #[test]
    fn faces_cover_latin_and_the_backup_covers_more() {
        let f = embedded();
        for face in [&f.regular, &f.bold, &f.italic] {
            assert_ne!(face.glyph_id('g').0, 0);
        }
        // An arrow JetBrains Mono lacks but DejaVu Sans Mono has.
        let c = '⇶';
        assert_eq!(f.regular.glyph_id(c).0, 0);
        assert_ne!(f.symbols.glyph_id(c).0, 0);
    }
}
