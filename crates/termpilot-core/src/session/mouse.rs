//! Mouse input: a left click or wheel turns at a cell, encoded in the protocol the program
//! enabled, and what a wheel means where no program listens to the mouse.
//!
//! Encodings are xterm's: SGR (mode 1006, `CSI < b ; x ; y M/m`, any size), UTF-8 (1005,
//! coordinates as UTF-8 characters, up to 2015) and the legacy one (`CSI M` and three bytes,
//! up to column/row 223). Reporting itself is on when the program set mode 1000, 1002 or 1003.
//! A wheel where nothing reports the mouse becomes arrow keys on the alternate screen (as
//! real terminals do for `less` or `man`) and is refused at a shell prompt, where it would
//! only type escape codes. Cells are 1-based here, as agents give them.

use alacritty_terminal::term::TermMode;

use super::keys;
use crate::error::{Error, Fault, Result};

/// The most wheel steps one scroll may send.
pub const MAX_SCROLL: usize = 100;

/// Which way the wheel turns.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    Up,
    Down,
}

/// The mouse encoding a program asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Encoding {
    Sgr,
    Utf8,
    Legacy,
}

impl Encoding {
    pub fn name(self) -> &'static str {
        match self {
            Encoding::Sgr => "sgr",
            Encoding::Utf8 => "utf8",
            Encoding::Legacy => "x10",
        }
    }
}

/// The encoding in force, or `None` when the program does not report the mouse.
pub(super) fn encoding(mode: TermMode) -> Option<Encoding> {
    if !mode.intersects(TermMode::MOUSE_MODE) {
        return None;
    }
    Some(if mode.contains(TermMode::SGR_MOUSE) {
        Encoding::Sgr
    } else if mode.contains(TermMode::UTF8_MOUSE) {
        Encoding::Utf8
    } else {
        Encoding::Legacy
    })
}

/// One report: button code `b` at 1-based (`row`, `col`); `release` only matters for SGR.
fn report(enc: Encoding, b: u32, row: usize, col: usize, release: bool) -> Result<Vec<u8>> {
    match enc {
        Encoding::Sgr => {
            let end = if release { 'm' } else { 'M' };
            Ok(format!("\x1b[<{b};{col};{row}{end}").into_bytes())
        }
        Encoding::Legacy | Encoding::Utf8 => {
            // Legacy releases carry button 3, not the button released.
            let b = if release { 3 } else { b };
            let limit = if enc == Encoding::Legacy { 223 } else { 2015 };
            if row > limit || col > limit {
                return Err(Error::InvalidInput(format!(
                    "The program uses the {} mouse encoding, which cannot reach row {row}, column {col} (at most {limit}); click nearer the top left or resize the terminal smaller.",
                    enc.name()
                )));
            }
            let mut out = b"\x1b[M".to_vec();
            for v in [b as usize + 32, col + 32, row + 32] {
                if enc == Encoding::Legacy {
                    out.push(v as u8);
                } else {
                    let c = char::from_u32(v as u32).unwrap_or(' ');
                    out.extend_from_slice(c.encode_utf8(&mut [0; 4]).as_bytes());
                }
            }
            Ok(out)
        }
    }
}

/// The bytes of a left click (press and release) at 1-based (`row`, `col`), or an error
/// when the program does not report the mouse.
pub(super) fn click(mode: TermMode, row: usize, col: usize) -> Result<Vec<u8>> {
    let Some(enc) = encoding(mode) else {
        return Err(Fault::NoMouse.into());
    };
    let mut out = report(enc, 0, row, col, false)?;
    out.extend(report(enc, 0, row, col, true)?);
    Ok(out)
}

/// What a scroll sends, and how.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Scroll {
    pub bytes: Vec<u8>,
    /// `wheel` (mouse reports) or `keys` (arrow keys to an alternate-screen program).
    pub via: &'static str,
}

/// The bytes of `amount` wheel steps at 1-based (`row`, `col`): wheel reports when the
/// program listens to the mouse, arrow keys on the alternate screen, else an error.
pub(super) fn scroll(
    mode: TermMode,
    row: usize,
    col: usize,
    direction: Direction,
    amount: usize,
) -> Result<Scroll> {
    let amount = amount.clamp(1, MAX_SCROLL);
    if let Some(enc) = encoding(mode) {
        let b = if direction == Direction::Up { 64 } else { 65 };
        let one = report(enc, b, row, col, false)?;
        return Ok(Scroll {
            bytes: one.repeat(amount),
            via: "wheel",
        });
    }
    if mode.contains(TermMode::ALT_SCREEN) {
        let key = if direction == Direction::Up {
            "Up"
        } else {
            "Down"
        };
        let one = keys::encode(key, mode.contains(TermMode::APP_CURSOR))?;
        return Ok(Scroll {
            bytes: one.repeat(amount),
            via: "keys",
        });
    }
    Err(Fault::NothingScrolls.into())
}

#[cfg(test)]
mod tests {
    use super::*;

    const SGR: TermMode = TermMode::MOUSE_REPORT_CLICK.union(TermMode::SGR_MOUSE);

    #[test]
    fn sgr_click_is_press_then_release() {
        assert_eq!(click(SGR, 3, 7).unwrap(), b"\x1b[<0;7;3M\x1b[<0;7;3m");
        let drag = TermMode::MOUSE_DRAG | TermMode::SGR_MOUSE;
        assert_eq!(
            click(drag, 300, 900).unwrap(),
            b"\x1b[<0;900;300M\x1b[<0;900;300m"
        );
    }

    #[test]
    fn legacy_click_adds_32_and_releases_with_button_3() {
        let bytes = click(TermMode::MOUSE_REPORT_CLICK, 1, 1).unwrap();
        assert_eq!(bytes, b"\x1b[M !!\x1b[M#!!");
        let e = click(TermMode::MOUSE_REPORT_CLICK, 1, 224).unwrap_err();
        assert!(e.to_string().contains("at most 223"), "{e}");
    }

    #[test]
    fn utf8_coordinates_beyond_95_are_two_bytes() {
        let mode = TermMode::MOUSE_REPORT_CLICK | TermMode::UTF8_MOUSE;
        let bytes = click(mode, 2, 200).unwrap();
        let mut want = b"\x1b[M ".to_vec();
        want.extend("\u{e8}".as_bytes()); // 200 + 32 = 232
        want.push(b'"');
        assert_eq!(&bytes[..want.len()], &want[..]);
    }

    #[test]
    fn no_mouse_reporting_refuses_a_click() {
        let e = click(TermMode::SHOW_CURSOR, 1, 1).unwrap_err().to_string();
        assert!(e.contains("has not enabled mouse reporting"), "{e}");
    }

    #[test]
    fn wheel_reports_keys_or_refusal() {
        let s = scroll(SGR, 5, 10, Direction::Down, 2).unwrap();
        assert_eq!(s.via, "wheel");
        assert_eq!(s.bytes, b"\x1b[<65;10;5M\x1b[<65;10;5M");
        let up = scroll(TermMode::MOUSE_REPORT_CLICK, 1, 1, Direction::Up, 1).unwrap();
        assert_eq!(up.bytes, b"\x1b[M`!!");
        let alt = scroll(TermMode::ALT_SCREEN, 1, 1, Direction::Down, 3).unwrap();
        assert_eq!(
            (alt.via, alt.bytes),
            ("keys", b"\x1b[B\x1b[B\x1b[B".to_vec())
        );
        let app = scroll(
            TermMode::ALT_SCREEN | TermMode::APP_CURSOR,
            1,
            1,
            Direction::Up,
            1,
        );
        assert_eq!(app.unwrap().bytes, b"\x1bOA");
        let e = scroll(TermMode::SHOW_CURSOR, 1, 1, Direction::Up, 1).unwrap_err();
        assert!(matches!(e, Error::Fault(Fault::NothingScrolls)), "{e}");
    }
}
