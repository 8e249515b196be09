//! Pixels taken from the display, as a grabber (`x11.rs`) hands them to the screenshot
//! writer (`screenshot.rs`).

/// Pixels captured from the display: RGB, row-major, 3 bytes a pixel.
pub(crate) struct Capture {
    pub width: u32,
    pub height: u32,
    pub rgb: Vec<u8>,
    /// The matched window's full title (window captures).
    pub window_title: Option<String>,
}
