//! X11 capture through x11rb (a pure-Rust client): the root window's image, or the part of
//! it covered by one viewable window found by title.

use x11rb::connection::Connection;
use x11rb::protocol::xproto::{
    Atom, AtomEnum, ConnectionExt, ImageFormat, ImageOrder, MapState, Window,
};

use super::capture::Capture;
use crate::error::{Error, Result};

/// How deep below the root a window is looked for (top-level windows and their frames).
const MAX_DEPTH: usize = 4;

fn x_err(what: &str, e: impl std::fmt::Display) -> Error {
    Error::Other(format!(
        "The X server failed to {what} ({e}); check the display is still running."
    ))
}

pub(super) fn grab(title: Option<&str>) -> Result<Capture> {
    let display = std::env::var("DISPLAY").unwrap_or_default();
    if display.is_empty() {
        return Err(Error::Other(
            "No display: DISPLAY is not set, so there is no desktop to capture; run termpilot inside an X11 session (or Xvfb) with DISPLAY set."
                .into(),
        ));
    }
    let (conn, screen_num) = x11rb::connect(Some(&display)).map_err(|e| {
        Error::Other(format!(
            "No display: cannot connect to X display `{display}` ({e}); check DISPLAY and that the X server is running."
        ))
    })?;
    let screen = &conn.setup().roots[screen_num];
    let (sw, sh) = (screen.width_in_pixels, screen.height_in_pixels);
    let (x, y, w, h, found_title) = match title {
        None => (0i16, 0i16, sw, sh, None),
        Some(wanted) => {
            let (win, full) = find_window(&conn, screen.root, wanted)?.ok_or_else(|| {
                Error::InvalidInput(format!(
                    "No matching window: no visible window's title contains `{wanted}`; check the title, or capture the screen."
                ))
            })?;
            let geo = conn
                .get_geometry(win)
                .map_err(|e| x_err("read the window's size", e))?
                .reply()
                .map_err(|e| x_err("read the window's size", e))?;
            let at = conn
                .translate_coordinates(win, screen.root, 0, 0)
                .map_err(|e| x_err("locate the window", e))?
                .reply()
                .map_err(|e| x_err("locate the window", e))?;
            // Clip to the screen: GetImage on the root fails outside it.
            let x0 = (at.dst_x as i32).clamp(0, sw as i32);
            let y0 = (at.dst_y as i32).clamp(0, sh as i32);
            let x1 = (at.dst_x as i32 + geo.width as i32).clamp(0, sw as i32);
            let y1 = (at.dst_y as i32 + geo.height as i32).clamp(0, sh as i32);
            if x1 <= x0 || y1 <= y0 {
                return Err(Error::InvalidInput(format!(
                    "Window `{full}` is entirely off screen; move it on screen, or capture the screen."
                )));
            }
            (
                x0 as i16,
                y0 as i16,
                (x1 - x0) as u16,
                (y1 - y0) as u16,
                Some(full),
            )
        }
    };
    let image = conn
        .get_image(ImageFormat::Z_PIXMAP, screen.root, x, y, w, h, !0)
        .map_err(|e| x_err("send the image", e))?
        .reply()
        .map_err(|e| x_err("send the image", e))?;
    let setup = conn.setup();
    let format = setup
        .pixmap_formats
        .iter()
        .find(|f| f.depth == image.depth)
        .ok_or_else(|| x_err("describe its pixel format", "no format for the depth"))?;
    let visual = screen
        .allowed_depths
        .iter()
        .flat_map(|d| d.visuals.iter())
        .find(|v| v.visual_id == image.visual)
        .ok_or_else(|| x_err("describe its visual", "unknown visual"))?;
    let bpp = format.bits_per_pixel as usize;
    if bpp != 24 && bpp != 32 {
        return Err(Error::Other(format!(
            "The display uses {bpp} bits per pixel; only 24- and 32-bit true-colour displays can be captured."
        )));
    }
    let pad = format.scanline_pad as usize;
    let stride = (w as usize * bpp).div_ceil(pad) * pad / 8;
    let lsb = setup.image_byte_order == ImageOrder::LSB_FIRST;
    let channel = |pixel: u32, mask: u32| -> u8 {
        if mask == 0 {
            return 0;
        }
        let v = (pixel & mask) >> mask.trailing_zeros();
        let bits = (mask >> mask.trailing_zeros()).count_ones();
        if bits >= 8 {
            (v >> (bits - 8)) as u8
        } else {
            ((v * 255) / ((1 << bits) - 1)) as u8
        }
    };
    let bytes = bpp / 8;
    let mut rgb = Vec::with_capacity(w as usize * h as usize * 3);
    for row in 0..h as usize {
        let line = image
            .data
            .get(row * stride..row * stride + w as usize * bytes)
            .ok_or_else(|| x_err("send the whole image", "short image"))?;
        for px in line.chunks_exact(bytes) {
            let mut p = 0u32;
            for (i, b) in px.iter().enumerate() {
                let shift = if lsb { i } else { bytes - 1 - i } * 8;
                p |= (*b as u32) << shift;
            }
            rgb.push(channel(p, visual.red_mask));
            rgb.push(channel(p, visual.green_mask));
            rgb.push(channel(p, visual.blue_mask));
        }
    }
    Ok(Capture {
        width: w as u32,
        height: h as u32,
        rgb,
        window_title: found_title,
    })
}

fn atom(conn: &impl Connection, name: &str) -> Option<Atom> {
    Some(
        conn.intern_atom(true, name.as_bytes())
            .ok()?
            .reply()
            .ok()?
            .atom,
    )
    .filter(|a| *a != 0)
}

/// A window's title: `_NET_WM_NAME` (UTF-8), else `WM_NAME`.
fn title_of(
    conn: &impl Connection,
    win: Window,
    net_wm_name: Option<Atom>,
    utf8: Option<Atom>,
) -> Option<String> {
    if let (Some(name), Some(utf8)) = (net_wm_name, utf8)
        && let Ok(cookie) = conn.get_property(false, win, name, utf8, 0, 1024)
        && let Ok(reply) = cookie.reply()
        && !reply.value.is_empty()
    {
        return Some(String::from_utf8_lossy(&reply.value).into_owned());
    }
    let reply = conn
        .get_property(false, win, AtomEnum::WM_NAME, AtomEnum::ANY, 0, 1024)
        .ok()?
        .reply()
        .ok()?;
    (!reply.value.is_empty()).then(|| String::from_utf8_lossy(&reply.value).into_owned())
}

/// The first viewable window (breadth-first from the root) whose title contains `wanted`,
/// ignoring case.
fn find_window(
    conn: &impl Connection,
    root: Window,
    wanted: &str,
) -> Result<Option<(Window, String)>> {
    let wanted = wanted.to_lowercase();
    let net_wm_name = atom(conn, "_NET_WM_NAME");
    let utf8 = atom(conn, "UTF8_STRING");
    let mut level = vec![root];
    for _ in 0..MAX_DEPTH {
        let mut next = Vec::new();
        for parent in level {
            let Ok(tree) = conn
                .query_tree(parent)
                .map_err(|e| x_err("list windows", e))?
                .reply()
            else {
                continue;
            };
            // Topmost first: the last child is on top.
            for &win in tree.children.iter().rev() {
                let viewable = conn
                    .get_window_attributes(win)
                    .ok()
                    .and_then(|c| c.reply().ok())
                    .is_some_and(|a| a.map_state == MapState::VIEWABLE);
                if !viewable {
                    continue;
                }
                if let Some(t) = title_of(conn, win, net_wm_name, utf8)
                    && t.to_lowercase().contains(&wanted)
                {
                    return Ok(Some((win, t)));
                }
                next.push(win);
            }
        }
        level = next;
    }
    Ok(None)
}
