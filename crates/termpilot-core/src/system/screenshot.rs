//! Desktop screenshots: the whole screen or one window by title, saved as PNG.
//!
//! X11 (`x11.rs`, a pure-Rust client: no system libraries) on Linux and the BSDs; a clear
//! "no display" error without `DISPLAY`, and "not supported" on platforms without a
//! backend yet (Windows, macOS).

use std::path::{Path, PathBuf};
use std::time::SystemTime;

use super::capture::Capture;
use crate::error::{Error, Fault, Result};

/// What to capture.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Target {
    #[default]
    Screen,
    Window,
}

/// A screenshot saved to disk.
#[derive(Debug, Clone)]
pub struct Shot {
    pub path: String,
    pub width: u32,
    pub height: u32,
    pub target: Target,
    /// The title of the window captured.
    pub window_title: Option<String>,
    /// The PNG itself, for the caller to show.
    pub png: Vec<u8>,
}

/// Captures `target` (a window needs `window_title`, a case-insensitive substring) and
/// writes the PNG to `output_path` (absolute, `.png`) or a timestamped temp file.
pub fn capture(
    target: Target,
    window_title: Option<&str>,
    output_path: Option<&Path>,
) -> Result<Shot> {
    let title = match (target, window_title) {
        (Target::Window, None) => {
            return Err(Fault::WindowTitleMissing.into());
        }
        (Target::Window, Some(t)) if t.trim().is_empty() => {
            return Err(Fault::WindowTitleEmpty.into());
        }
        (Target::Window, t) => t,
        (Target::Screen, _) => None,
    };
    let path = match output_path {
        Some(p) => {
            let png = p.extension().is_some_and(|e| e.eq_ignore_ascii_case("png"));
            if !p.is_absolute() || !png {
                return Err(Fault::ScreenshotPath { path: p.into() }.into());
            }
            // Under the sandbox: only where a sandboxed process could write, race-free.
            crate::sandbox::check_write(p)?;
            p.to_path_buf()
        }
        None => default_path()?,
    };
    let pixels = grab(title)?;
    let png = encode_png(&pixels)?;
    let pinned = match output_path {
        Some(_) => crate::sandbox::pin_write(&path, true)?,
        None => None,
    };
    let at = pinned.as_ref().map(|p| p.at());
    if at.is_none()
        && let Some(parent) = path.parent()
    {
        std::fs::create_dir_all(parent).map_err(|source| Fault::ScreenshotWrite {
            context: format!("Cannot create {}", parent.display()),
            source,
        })?;
    }
    save(at.as_deref().unwrap_or(&path), &png, at.is_some()).map_err(|source| {
        Fault::ScreenshotWrite {
            context: format!("Cannot write {}", path.display()),
            source,
        }
    })?;
    Ok(Shot {
        path: path.display().to_string(),
        width: pixels.width,
        height: pixels.height,
        target,
        window_title: pixels.window_title,
        png,
    })
}

/// A timestamped file in `screenshots/` of the per-user private folder (0700, checked before
/// each use: see `host::private`), not a shared temp folder others could read or fill.
fn default_path() -> Result<PathBuf> {
    let stamp = humantime::format_rfc3339_millis(SystemTime::now())
        .to_string()
        .replace([':', '.'], "-");
    let unique = &uuid::Uuid::new_v4().simple().to_string()[..6];
    Ok(crate::host::spill::private_dir("screenshots")?
        .join(format!("screenshot-{stamp}-{unique}.png")))
}

/// Writes `png` to `path`; when `pinned` (a sandboxed write through `/proc/self/fd`), a
/// symlink swapped in at the end is refused rather than followed.
fn save(path: &Path, png: &[u8], pinned: bool) -> std::io::Result<()> {
    use std::io::Write;
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    if pinned {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK);
    }
    #[cfg(not(unix))]
    let _ = pinned;
    let mut file = options.open(path)?;
    if !file.metadata()?.is_file() {
        return Err(std::io::Error::other("it is not a regular file"));
    }
    file.write_all(png)
}

#[cfg(all(unix, not(target_os = "macos")))]
fn grab(title: Option<&str>) -> Result<Capture> {
    super::x11::grab(title)
}

#[cfg(not(all(unix, not(target_os = "macos"))))]
fn grab(_title: Option<&str>) -> Result<Capture> {
    Err(Fault::DesktopScreenshotUnsupported.into())
}

/// RGB pixels to PNG bytes.
pub(crate) fn encode_png(c: &Capture) -> Result<Vec<u8>> {
    let mut out = Vec::new();
    let mut enc = png::Encoder::new(&mut out, c.width, c.height);
    enc.set_color(png::ColorType::Rgb);
    enc.set_depth(png::BitDepth::Eight);
    let fail = |e: png::EncodingError| Error::Other(format!("The PNG could not be encoded ({e})."));
    let mut writer = enc.write_header().map_err(fail)?;
    writer.write_image_data(&c.rgb).map_err(fail)?;
    writer.finish().map_err(fail)?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encodes_a_png() {
        let c = Capture {
            width: 2,
            height: 1,
            rgb: vec![255, 0, 0, 0, 0, 255],
            window_title: None,
        };
        let png = encode_png(&c).unwrap();
        assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
    }

    #[test]
    fn window_needs_a_title_and_paths_are_checked() {
        let e = capture(Target::Window, None, None).unwrap_err();
        assert!(
            matches!(e, Error::Fault(Fault::WindowTitleMissing)),
            "{e:?}"
        );
        let e = capture(Target::Window, Some("  "), None).unwrap_err();
        assert!(matches!(e, Error::Fault(Fault::WindowTitleEmpty)), "{e:?}");
        let e = capture(Target::Screen, None, Some(Path::new("rel.png")))
            .unwrap_err()
            .to_string();
        assert!(e.contains("absolute"), "{e}");
    }
}
