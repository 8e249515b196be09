//! The emulator's fast path for floods of plain text: the part of a long run of plain text
//! that cannot show in the end is not parsed at all.
//!
//! A *plain* byte is printable ASCII or one of CR, LF, TAB, BS, BEL. Fed to a parser in its
//! ground state, on the main screen with the scroll region the whole screen, such bytes only
//! write cells, move the cursor right, left, to column 0 or down, and scroll the screen up
//! into scrollback; they change no mode, attribute, tab stop or charset. The cursor never
//! moves up, so after at most `rows - 1` line feeds it sits on the bottom line, and from
//! there every line feed scrolls. Once `rows + scrollback` more rows have scrolled, every row
//! that was on the screen or in scrollback before has left both, and what is left (the
//! screen, the scrollback, the cursor) depends only on the bytes after the last carriage
//! return before those line feeds: a CR puts the cursor in column 0 and clears a pending
//! wrap whatever came before.
//!
//! So in a run holding [`keep_lines`] line feeds after some CR, the bytes before
//! that CR can be left out, exactly: [`skippable`] finds them. The run's first printable
//! character is parsed, not skipped: it proves the parser is in its ground state (only a
//! parser in ground prints), and the last printable one is kept too, which alacritty's
//! parser remembers for `CSI b` (repeat). The differential test in `emulator.rs` feeds
//! random streams both ways and compares screen, cursor and scrollback.

/// Whether `b` may be part of a plain run.
fn is_plain(b: u8) -> bool {
    // Printable ASCII, BEL BS TAB LF, CR: written branch-free, so blocks of bytes are
    // checked many at a time.
    (b.wrapping_sub(0x20) < 0x5f) | (b.wrapping_sub(0x07) < 4) | (b == b'\r')
}

/// Bytes checked at once by the scans below.
const BLOCK: usize = 32;

/// Whether every byte of `block` is plain (the compiler checks them side by side).
fn all_plain(block: &[u8]) -> bool {
    block.iter().fold(true, |all, &b| all & is_plain(b))
}

/// How many bytes `bytes` starts with that are plain.
pub(super) fn plain_prefix(bytes: &[u8]) -> usize {
    let mut at = 0;
    for block in bytes.chunks_exact(BLOCK) {
        if !all_plain(block) {
            break;
        }
        at += BLOCK;
    }
    at + bytes[at..]
        .iter()
        .position(|&b| !is_plain(b))
        .unwrap_or(bytes.len() - at)
}

/// Where the plain bytes that end `bytes` start.
pub(super) fn plain_tail(bytes: &[u8]) -> usize {
    let mut end = bytes.len();
    for block in bytes.rchunks_exact(BLOCK) {
        if !all_plain(block) {
            break;
        }
        end -= BLOCK;
    }
    bytes[..end]
        .iter()
        .rposition(|&b| !is_plain(b))
        .map_or(0, |i| i + 1)
}

/// Where the `n`-th line feed counted from the end of `bytes` is (0: the last one). Blocks
/// are counted whole, and only the one holding it is searched.
fn nth_newline_from_end(bytes: &[u8], n: usize) -> Option<usize> {
    // At most 255 bytes a block, so a byte counts its line feeds.
    const COUNT_BLOCK: usize = 128;
    let mut left = n;
    let mut end = bytes.len();
    while end > 0 {
        let start = end.saturating_sub(COUNT_BLOCK);
        let block = &bytes[start..end];
        let count = block
            .iter()
            .fold(0u8, |count, &b| count + u8::from(b == b'\n')) as usize;
        if count > left {
            return memchr::memrchr_iter(b'\n', block)
                .nth(left)
                .map(|i| start + i);
        }
        left -= count;
        end = start;
    }
    None
}

/// Line feeds after the cut that make everything before it invisible, for a screen of
/// `rows` rows over `scrollback` rows of history (with a margin of one).
pub(super) fn keep_lines(rows: usize, scrollback: usize) -> usize {
    2 * rows + scrollback
}

/// A run of plain bytes `start..end` long enough to skip in: parsing may leave out what lies
/// between its first printed character and `cut`, a CR followed by
/// [`keep_lines`] line feeds and a printable character.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Run {
    pub start: usize,
    pub end: usize,
    pub cut: usize,
}

/// The first run from `from` on in `bytes` with `keep` line feeds after a CR.
pub(super) fn next_run(bytes: &[u8], from: usize, keep: usize) -> Option<Run> {
    let mut at = from;
    while bytes.len() - at > keep {
        let start = at + bytes[at..].iter().position(|&b| is_plain(b))?;
        let end = start + plain_prefix(&bytes[start..]);
        at = end;
        if end - start <= keep {
            continue;
        }
        if let Some(cut) = cut(&bytes[start..end], keep) {
            return Some(Run {
                start,
                end,
                cut: start + cut,
            });
        }
    }
    None
}

/// In `run`, all plain bytes, the CR followed by `keep` line feeds and by a printable
/// character, if there is one: the part before it cannot show.
pub(super) fn cut(run: &[u8], keep: usize) -> Option<usize> {
    // The `keep`-th line feed from the run's end, then the last CR before it.
    let nth = nth_newline_from_end(run, keep.checked_sub(1)?)?;
    let cut = memchr::memrchr(b'\r', &run[..nth])?;
    // The part kept must print something (the character `CSI b` repeats).
    first_printable(&run[cut..])?;
    Some(cut)
}

/// Where the first printable byte of `bytes` is.
pub(super) fn first_printable(bytes: &[u8]) -> Option<usize> {
    bytes.iter().position(|b| (0x20..=0x7e).contains(b))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_run_is_cut_at_the_cr_before_its_last_lines() {
        let text: String = (0..100).map(|i| format!("line {i}\r\n")).collect();
        let bytes = [b"\x1b[31m".as_slice(), text.as_bytes(), b"\x1b[0m"].concat();
        let run = next_run(&bytes, 0, 10).unwrap();
        // The run starts after ESC (the parser, not this scan, knows `[31m` is no text).
        assert_eq!((run.start, run.end), (1, bytes.len() - 4));
        // Ten line feeds after the cut: the cut is the CR ending line 90.
        assert_eq!(&bytes[run.cut..run.cut + 10], b"\r\nline 91\r");
        let kept = &bytes[run.cut..];
        assert_eq!(kept.iter().filter(|&&b| b == b'\n').count(), 10);
    }

    #[test]
    fn the_block_scans_agree_with_byte_by_byte_ones() {
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let mut below = |n: u64| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x % n
        };
        let plain = |b: u8| matches!(b, 0x20..=0x7e | b'\r' | b'\n' | b'\t' | 0x08 | 0x07);
        for b in 0..=255u8 {
            assert_eq!(is_plain(b), plain(b), "{b:#x}");
        }
        for _ in 0..2000 {
            let len = below(700) as usize;
            // Mostly plain text and line feeds, now and then anything.
            let bytes: Vec<u8> = (0..len)
                .map(|_| match below(40) {
                    0 => below(256) as u8,
                    1..=6 => b'\n',
                    _ => b'0' + below(10) as u8,
                })
                .collect();
            let prefix = bytes.iter().position(|&b| !plain(b)).unwrap_or(len);
            assert_eq!(plain_prefix(&bytes), prefix);
            let tail = bytes.iter().rposition(|&b| !plain(b)).map_or(0, |i| i + 1);
            assert_eq!(plain_tail(&bytes), tail);
            for n in [0, 1, below(20) as usize, below(200) as usize] {
                let nth = memchr::memrchr_iter(b'\n', &bytes).nth(n);
                assert_eq!(nth_newline_from_end(&bytes, n), nth, "{n}");
            }
        }
    }

    #[test]
    fn short_runs_and_runs_without_cr_or_print_are_not_cut() {
        let lines: String = (0..19).map(|i| format!("{i}\r\n")).collect();
        assert_eq!(next_run(lines.as_bytes(), 0, 20), None, "too few lines");
        let no_cr = "x\n".repeat(50);
        assert_eq!(next_run(no_cr.as_bytes(), 0, 10), None, "no CR to cut at");
        let blank_tail = format!("{}{}", "x\r\n".repeat(50), "\r\n".repeat(20));
        assert_eq!(
            next_run(blank_tail.as_bytes(), 0, 10),
            None,
            "nothing printed after the cut"
        );
        // Broken into short runs by escapes.
        let broken = "x\r\n\x1b[m".repeat(50);
        assert_eq!(next_run(broken.as_bytes(), 0, 10), None);
        // The second of two runs.
        let two = format!("{}\x1b[m{}", "a\r\n".repeat(5), "b\r\n".repeat(50));
        let run = next_run(two.as_bytes(), 0, 10).unwrap();
        assert_eq!(run.start, 16, "just after the ESC");
        assert_eq!(next_run(two.as_bytes(), run.end, 10), None);
    }
}
