//! The last lines of a log, read from its end without loading the whole file.

use std::io::{Read, Seek, SeekFrom};
use std::path::Path;

/// At most this many bytes are read from the end of a log for a tail.
pub(crate) const MAX_TAIL_BYTES: u64 = 256 * 1024;

/// The last `lines` lines of `path` (lossy UTF-8), or an empty string when there is none.
pub(crate) fn last_lines(path: &Path, lines: usize) -> String {
    if lines == 0 {
        return String::new();
    }
    // A job could have swapped its log for a link (when the state dir is in a write root):
    // judged on the file opened, never a deny-read one.
    let Ok(mut file) = crate::sandbox::open_read(path) else {
        return String::new();
    };
    let len = file.metadata().map(|m| m.len()).unwrap_or(0);
    let start = len.saturating_sub(MAX_TAIL_BYTES);
    if file.seek(SeekFrom::Start(start)).is_err() {
        return String::new();
    }
    let mut bytes = Vec::with_capacity((len - start) as usize);
    if file.take(MAX_TAIL_BYTES).read_to_end(&mut bytes).is_err() {
        return String::new();
    }
    let text = String::from_utf8_lossy(&bytes);
    let text = text.strip_suffix('\n').unwrap_or(&text);
    let mut cut = 0;
    for (seen, (i, _)) in text.rmatch_indices('\n').enumerate() {
        if seen + 1 == lines {
            cut = i + 1;
            break;
        }
    }
    text[cut..].to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_the_last_lines() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("log");
        std::fs::write(&path, "a\nb\nc\nd\n").unwrap();
        assert_eq!(last_lines(&path, 2), "c\nd");
        assert_eq!(last_lines(&path, 10), "a\nb\nc\nd");
        assert_eq!(last_lines(&path, 0), "");
        std::fs::write(&path, "no newline").unwrap();
        assert_eq!(last_lines(&path, 1), "no newline");
        assert_eq!(last_lines(&dir.path().join("missing"), 3), "");
    }
}
