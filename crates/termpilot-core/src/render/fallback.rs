//! Fonts found on the system for characters the embedded faces lack (CJK, Hangul, emoji, …).
//!
//! The standard font folders are listed once, lazily, the first time a character is missing;
//! each file is memory-mapped and parsed only when it is probed, and the answer for each
//! character (which font, or none) is remembered. Fonts known to cover many characters
//! (Noto CJK and emoji, PingFang, Microsoft YaHei, …) are probed first. Nothing here fails:
//! an unreadable folder or font is skipped, and "no font" makes the caller draw a placeholder.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{LazyLock, Mutex};

use ab_glyph::{Font, FontRef};

/// At most this many font files are considered, and folders this deep.
const MAX_FILES: usize = 5000;
const MAX_DEPTH: usize = 6;

/// Substrings of file names (lower case, without `-`, `_` and spaces) probed first, best first.
const PREFERRED: &[&str] = &[
    "notocoloremoji",
    "applecoloremoji",
    "seguiemj",
    "notosanscjk",
    "notoserifcjk",
    "sourcehansans",
    "pingfang",
    "hiragino",
    "msyh",
    "yugoth",
    "malgun",
    "applesdgothic",
    "wqy",
    "droidsansfallback",
    "notosans",
    "dejavusans",
    "symbola",
    "unifont",
];

/// A font on disk: not yet opened, opened, or unusable.
enum Slot {
    Unopened(PathBuf),
    Open(Box<FontRef<'static>>),
    Unusable,
}

struct Catalog {
    slots: Vec<Slot>,
    by_char: HashMap<char, Option<usize>>,
}

static CATALOG: LazyLock<Mutex<Catalog>> = LazyLock::new(|| {
    let mut files = Vec::new();
    for dir in font_dirs() {
        walk(&dir, 0, &mut files);
    }
    files.sort_by_key(|p| (rank(p), p.clone()));
    files.dedup();
    tracing::debug!(fonts = files.len(), "listed system fonts for fallback");
    Mutex::new(Catalog {
        slots: files.into_iter().map(Slot::Unopened).collect(),
        by_char: HashMap::new(),
    })
});

/// A system font that has a glyph for `c`, if there is one.
pub(super) fn find(c: char) -> Option<FontRef<'static>> {
    let mut catalog = CATALOG.lock().unwrap_or_else(|e| e.into_inner());
    let catalog = &mut *catalog;
    if let Some(found) = catalog.by_char.get(&c) {
        return found.map(|i| match &catalog.slots[i] {
            Slot::Open(font) => (**font).clone(),
            _ => unreachable!("a remembered font is open"),
        });
    }
    let mut found = None;
    for (i, slot) in catalog.slots.iter_mut().enumerate() {
        if let Slot::Unopened(path) = slot {
            *slot = open(path).map_or(Slot::Unusable, |f| Slot::Open(Box::new(f)));
        }
        if let Slot::Open(font) = slot
            && font.glyph_id(c).0 != 0
        {
            found = Some((i, (**font).clone()));
            break;
        }
    }
    catalog.by_char.insert(c, found.as_ref().map(|(i, _)| *i));
    found.map(|(_, font)| font)
}

/// Maps a font file for the rest of the process (font files are replaced, not rewritten, by
/// package managers, so the mapping stays valid) and parses its first face.
fn open(path: &Path) -> Option<FontRef<'static>> {
    let file = std::fs::File::open(path).ok()?;
    // SAFETY: the mapping is read-only and kept for the life of the process; see above.
    let map = unsafe { memmap2::Mmap::map(&file) }.ok()?;
    let data: &'static [u8] = Box::leak(Box::new(map));
    match FontRef::try_from_slice_and_index(data, 0) {
        Ok(font) => Some(font),
        Err(_) => {
            tracing::debug!(path = %path.display(), "skipped a font that does not parse");
            None
        }
    }
}

fn rank(path: &Path) -> usize {
    let name: String = path
        .file_name()
        .map(|n| n.to_string_lossy().to_lowercase())
        .unwrap_or_default()
        .chars()
        .filter(|c| !matches!(c, '-' | '_' | ' '))
        .collect();
    PREFERRED
        .iter()
        .position(|p| name.contains(p))
        .unwrap_or(PREFERRED.len())
}

fn walk(dir: &Path, depth: usize, out: &mut Vec<PathBuf>) {
    if depth > MAX_DEPTH || out.len() >= MAX_FILES {
        return;
    }
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        if kind.is_dir() || (kind.is_symlink() && path.is_dir()) {
            walk(&path, depth + 1, out);
        } else if is_font(&path) && out.len() < MAX_FILES {
            out.push(path);
        }
    }
}

fn is_font(path: &Path) -> bool {
    path.extension().and_then(|e| e.to_str()).is_some_and(|e| {
        matches!(
            e.to_ascii_lowercase().as_str(),
            "ttf" | "otf" | "ttc" | "otc"
        )
    })
}

/// The folders where the operating system and the user keep fonts.
fn font_dirs() -> Vec<PathBuf> {
    let home = std::env::var_os("HOME").map(PathBuf::from);
    let mut dirs = Vec::new();
    if cfg!(target_os = "macos") {
        dirs.extend(["/System/Library/Fonts", "/Library/Fonts"].map(PathBuf::from));
        dirs.extend(home.iter().map(|h| h.join("Library/Fonts")));
    } else if cfg!(windows) {
        let windir = std::env::var_os("WINDIR").unwrap_or_else(|| "C:\\Windows".into());
        dirs.push(PathBuf::from(windir).join("Fonts"));
        if let Some(local) = std::env::var_os("LOCALAPPDATA") {
            dirs.push(PathBuf::from(local).join("Microsoft\\Windows\\Fonts"));
        }
    } else {
        let data_home = std::env::var_os("XDG_DATA_HOME")
            .map(PathBuf::from)
            .or_else(|| home.as_ref().map(|h| h.join(".local/share")));
        dirs.extend(data_home.map(|d| d.join("fonts")));
        dirs.extend(home.iter().map(|h| h.join(".fonts")));
        let data_dirs = std::env::var("XDG_DATA_DIRS")
            .ok()
            .filter(|v| !v.is_empty())
            .unwrap_or_else(|| "/usr/local/share:/usr/share".into());
        dirs.extend(data_dirs.split(':').map(|d| Path::new(d).join("fonts")));
    }
    dirs
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn preferred_fonts_sort_first() {
        let cjk = Path::new("/usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc");
        let other = Path::new("/usr/share/fonts/truetype/foo/Foo.ttf");
        assert!(rank(cjk) < rank(other));
        assert!(is_font(cjk) && !is_font(Path::new("/x/fonts.dir")));
    }

    #[test]
    fn a_character_no_font_has_is_none_and_remembered() {
        // Plane 16 private use: no font ships a glyph there.
        assert!(find('\u{10FFFD}').is_none());
        assert!(find('\u{10FFFD}').is_none());
    }
}
