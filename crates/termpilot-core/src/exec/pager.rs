//! Pages of stdout lines, for `terminal_run_paged`.
//!
//! Pages are taken from the whole stream: from the spill file when the stream outgrew its
//! preview, read line by line so only one page is ever held in memory.

use std::io::BufRead;

use super::capture::Captured;

/// One page of lines and where it sits in the whole.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Page {
    pub lines: Vec<String>,
    /// 0-based page number.
    pub page: usize,
    pub page_size: usize,
    pub total_lines: usize,
    pub has_next: bool,
}

/// Page `page` (0-based) of `page_size` lines from `reader`. A final newline ends the last
/// line rather than starting an empty one; `\r\n` counts as one line end.
pub(crate) fn page_of(mut reader: impl BufRead, page: usize, page_size: usize) -> Page {
    let page_size = page_size.max(1);
    let first = page.saturating_mul(page_size);
    let mut lines = Vec::new();
    let mut total = 0usize;
    let mut buf = Vec::new();
    loop {
        buf.clear();
        match reader.read_until(b'\n', &mut buf) {
            Ok(0) | Err(_) => break,
            Ok(_) => {}
        }
        if total >= first && lines.len() < page_size {
            let mut line: &[u8] = &buf;
            line = line.strip_suffix(b"\n").unwrap_or(line);
            line = line.strip_suffix(b"\r").unwrap_or(line);
            lines.push(String::from_utf8_lossy(line).into_owned());
        }
        total += 1;
    }
    Page {
        lines,
        page,
        page_size,
        total_lines: total,
        has_next: first.saturating_add(page_size) < total,
    }
}

/// A page of a captured stream, read from its spill file when it has one.
pub fn page_captured(stream: &Captured, page: usize, page_size: usize) -> Page {
    if let Some(path) = &stream.full_output_path
        && let Ok(file) = std::fs::File::open(path)
    {
        return page_of(std::io::BufReader::new(file), page, page_size);
    }
    page_of(&stream.preview[..], page, page_size)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(n: usize) -> String {
        (1..=n).map(|i| format!("l{i}\n")).collect()
    }

    #[test]
    fn boundaries() {
        let t = text(250);
        let p = page_of(t.as_bytes(), 0, 100);
        assert_eq!((p.lines.len(), p.total_lines, p.has_next), (100, 250, true));
        assert_eq!(p.lines[0], "l1");
        let p = page_of(t.as_bytes(), 2, 100);
        assert_eq!(
            p.lines,
            (201..=250).map(|i| format!("l{i}")).collect::<Vec<_>>()
        );
        assert!(!p.has_next);
        let p = page_of(t.as_bytes(), 3, 100);
        assert!(p.lines.is_empty() && !p.has_next);
        let exact = text(200);
        let p = page_of(exact.as_bytes(), 1, 100);
        assert_eq!((p.lines.len(), p.has_next), (100, false));
    }

    #[test]
    fn last_line_without_newline_and_crlf() {
        let p = page_of(&b"a\r\nb\nc"[..], 0, 10);
        assert_eq!(p.lines, vec!["a", "b", "c"]);
        assert_eq!(page_of(&b""[..], 0, 10).total_lines, 0);
    }
}
