//! Key names and combos to the bytes a terminal sends for them.
//!
//! Accepts smart-terminal's names (`ctrl+c`, `up`, `pageup`, `f5`) and terminal-use's
//! (`Ctrl+C`, `ArrowUp`, `Shift+Tab`, `Alt+Enter`), case-insensitively. Encodings are
//! xterm's; arrow, Home and End keys follow application cursor mode when the program set it.

use crate::error::{Error, Result};

/// The names a key may have, for error messages.
pub(super) const KEY_NAMES: &str = "Enter, Tab, Escape, Space, Backspace, Delete, Insert, Home, End, \
PageUp, PageDown, Up, Down, Left, Right (or ArrowUp…), F1–F12, a single character, \
with modifiers Ctrl+, Alt+, Shift+ (e.g. Ctrl+C, Shift+Tab, Alt+Enter)";

#[derive(Debug, Default, Clone, Copy)]
struct Mods {
    ctrl: bool,
    alt: bool,
    shift: bool,
}

impl Mods {
    fn any(self) -> bool {
        self.ctrl || self.alt || self.shift
    }
    /// xterm's modifier parameter: 1 + shift + 2·alt + 4·ctrl.
    fn param(self) -> u8 {
        1 + self.shift as u8 + 2 * self.alt as u8 + 4 * self.ctrl as u8
    }
}

/// The bytes for `key`; `app_cursor` is the terminal's application cursor-key mode.
pub(super) fn encode(key: &str, app_cursor: bool) -> Result<Vec<u8>> {
    let unknown = || {
        Error::InvalidInput(format!(
            "`{key}` is not a key name; use one of: {KEY_NAMES}."
        ))
    };
    let trimmed = key.trim();
    if trimmed.is_empty() {
        return Err(unknown());
    }
    // Split on '+' but keep a trailing '+' as the key itself (`Ctrl++`).
    let mut parts: Vec<&str> = trimmed.split('+').collect();
    if trimmed.ends_with('+') && parts.len() >= 2 {
        parts.truncate(parts.len() - 2);
        parts.push("+");
    }
    let (base, mods_part) = parts.split_last().ok_or_else(unknown)?;
    let mut mods = Mods::default();
    for m in mods_part {
        match m.trim().to_ascii_lowercase().as_str() {
            "ctrl" | "control" | "c" => mods.ctrl = true,
            "alt" | "meta" | "option" | "opt" | "m" => mods.alt = true,
            "shift" | "s" => mods.shift = true,
            _ => return Err(unknown()),
        }
    }
    let name = base.trim().to_ascii_lowercase();
    let csi_tilde = |n: u8| -> Vec<u8> {
        if mods.any() {
            format!("\x1b[{n};{}~", mods.param()).into_bytes()
        } else {
            format!("\x1b[{n}~").into_bytes()
        }
    };
    let cursor = |c: char| -> Vec<u8> {
        if mods.any() {
            format!("\x1b[1;{}{c}", mods.param()).into_bytes()
        } else if app_cursor {
            format!("\x1bO{c}").into_bytes()
        } else {
            format!("\x1b[{c}").into_bytes()
        }
    };
    let alt = |bytes: Vec<u8>| -> Vec<u8> {
        if mods.alt {
            let mut v = vec![0x1b];
            v.extend(bytes);
            v
        } else {
            bytes
        }
    };
    let bytes = match name.as_str() {
        "enter" | "return" | "cr" => alt(b"\r".to_vec()),
        "tab" => {
            if mods.shift {
                b"\x1b[Z".to_vec()
            } else {
                alt(b"\t".to_vec())
            }
        }
        "escape" | "esc" => alt(b"\x1b".to_vec()),
        "space" => {
            if mods.ctrl {
                vec![0]
            } else {
                alt(b" ".to_vec())
            }
        }
        "backspace" | "bs" => {
            if mods.ctrl {
                vec![0x08]
            } else {
                alt(vec![0x7f])
            }
        }
        "delete" | "del" => csi_tilde(3),
        "insert" | "ins" => csi_tilde(2),
        "pageup" | "pgup" | "page_up" => csi_tilde(5),
        "pagedown" | "pgdn" | "page_down" => csi_tilde(6),
        "up" | "arrowup" => cursor('A'),
        "down" | "arrowdown" => cursor('B'),
        "right" | "arrowright" => cursor('C'),
        "left" | "arrowleft" => cursor('D'),
        "home" => cursor('H'),
        "end" => cursor('F'),
        f if f.starts_with('f') && f.len() > 1 && f[1..].chars().all(|c| c.is_ascii_digit()) => {
            let n: u8 = f[1..].parse().map_err(|_| unknown())?;
            match n {
                1..=4 => {
                    let c = (b'P' + n - 1) as char;
                    if mods.any() {
                        format!("\x1b[1;{}{c}", mods.param()).into_bytes()
                    } else {
                        format!("\x1bO{c}").into_bytes()
                    }
                }
                5 => csi_tilde(15),
                6..=10 => csi_tilde(11 + n),
                11 | 12 => csi_tilde(12 + n),
                _ => return Err(unknown()),
            }
        }
        _ => {
            let mut chars = base.chars();
            let (Some(c), None) = (chars.next(), chars.next()) else {
                return Err(unknown());
            };
            // With a modifier, a letter's case is Shift's to say, as on a keyboard: Alt+B is
            // ESC b, Alt+Shift+B is ESC B. A bare letter is sent as written.
            let c = if mods.shift {
                c.to_ascii_uppercase()
            } else if mods.alt && c.is_ascii_alphabetic() {
                c.to_ascii_lowercase()
            } else {
                c
            };
            let mut bytes = if mods.ctrl {
                match c.to_ascii_lowercase() {
                    l @ 'a'..='z' => vec![l as u8 & 0x1f],
                    '@' | '2' => vec![0],
                    '[' | '3' => vec![0x1b],
                    '\\' | '4' => vec![0x1c],
                    ']' | '5' => vec![0x1d],
                    '^' | '6' => vec![0x1e],
                    '_' | '7' | '-' => vec![0x1f],
                    '?' | '8' => vec![0x7f],
                    _ => return Err(unknown()),
                }
            } else {
                c.to_string().into_bytes()
            };
            if mods.alt {
                bytes.insert(0, 0x1b);
            }
            bytes
        }
    };
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn k(s: &str) -> Vec<u8> {
        encode(s, false).unwrap()
    }

    #[test]
    fn seed_names() {
        assert_eq!(k("ctrl+c"), vec![3]);
        assert_eq!(k("ctrl+d"), vec![4]);
        assert_eq!(k("ctrl+w"), vec![0x17]);
        assert_eq!(k("tab"), b"\t");
        assert_eq!(k("enter"), b"\r");
        assert_eq!(k("escape"), b"\x1b");
        assert_eq!(k("up"), b"\x1b[A");
        assert_eq!(k("pageup"), b"\x1b[5~");
        assert_eq!(k("backspace"), vec![0x7f]);
        assert_eq!(k("delete"), b"\x1b[3~");
        assert_eq!(k("f1"), b"\x1bOP");
        assert_eq!(k("f5"), b"\x1b[15~");
        assert_eq!(k("f12"), b"\x1b[24~");
    }

    #[test]
    fn terminal_use_combos() {
        assert_eq!(k("Ctrl+C"), vec![3]);
        assert_eq!(k("ArrowUp"), b"\x1b[A");
        assert_eq!(k("Shift+Tab"), b"\x1b[Z");
        assert_eq!(k("Alt+Enter"), b"\x1b\r");
        assert_eq!(k("Ctrl+ArrowLeft"), b"\x1b[1;5D");
        assert_eq!(k("Shift+F5"), b"\x1b[15;2~");
        assert_eq!(k("Alt+x"), b"\x1bx");
        assert_eq!(k("Ctrl+]"), vec![0x1d]);
        // keys.test.ts: "Alt+B → ESC b", "Alt+Shift+B → ESC B".
        assert_eq!(k("Alt+B"), b"\x1bb");
        assert_eq!(k("Alt+Shift+B"), b"\x1bB");
        // keys.test.ts: "full A..Z roundtrip".
        for (i, letter) in ('A'..='Z').enumerate() {
            assert_eq!(
                k(&format!("Ctrl+{letter}")),
                vec![i as u8 + 1],
                "Ctrl+{letter}"
            );
        }
    }

    #[test]
    fn application_cursor_mode() {
        assert_eq!(encode("Up", true).unwrap(), b"\x1bOA");
        assert_eq!(encode("Home", true).unwrap(), b"\x1bOH");
        assert_eq!(encode("Ctrl+Up", true).unwrap(), b"\x1b[1;5A");
    }

    #[test]
    fn unknown_names_are_refused_with_the_list() {
        for bad in ["", "Hyper+A", "F13", "Banana", "Ctrl+é"] {
            let e = encode(bad, false).unwrap_err().to_string();
            assert!(
                e.contains("is not a key name") && e.contains("Shift+Tab"),
                "{bad}: {e}"
            );
        }
    }
}
