//! A glyph's bitmap, as the renderer paints it: the one type the glyph cache (`glyphs.rs`),
//! the box-drawing code (`boxdraw.rs`) and the canvas share.

/// Pixels relative to a cell's top-left corner.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Sprite {
    pub left: i32,
    pub top: i32,
    pub width: u32,
    pub height: u32,
    pub pixels: Pixels,
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Pixels {
    /// Coverage 0–255, painted in the cell's foreground colour.
    Coverage(Vec<u8>),
    /// Colour with straight alpha (emoji bitmaps).
    Rgba(Vec<[u8; 4]>),
}

impl Sprite {
    pub(super) fn empty() -> Sprite {
        Sprite {
            left: 0,
            top: 0,
            width: 0,
            height: 0,
            pixels: Pixels::Coverage(Vec::new()),
        }
    }
}
