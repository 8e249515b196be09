//! How far along each line of the main screen anything may have been written: an upper bound
//! on the columns that are not default cells, so that packing a row into scrollback
//! ([`super::scrollback::PackedRow::pack`]) looks at those columns only, not at the blank
//! rest of every line that scrolls off.
//!
//! Why: for output like `seq`'s, almost every cell of a scrolled-off row is blank, and finding
//! the last written one by scanning the row was the largest single cost of reading output.
//! alacritty keeps the same figure (`Row::occ`) but does not show it.
//!
//! The bound is kept by the emulator's capture (`capture.rs`), which sees every call: a printed
//! character widens its line to the cursor, a line feed at the bottom of the scroll region
//! shifts the lines up and brings in a fresh one, and every call whose effect on the cells is
//! not followed here simply marks the lines it may touch as written all the way across. Too
//! wide a bound costs a longer scan; too narrow one would lose text, so every doubt widens.

use std::ops::Range;

/// The written extent of each screen line, in columns.
#[derive(Debug, Clone)]
pub(super) struct Extents {
    columns: u16,
    lines: Vec<u16>,
}

impl Extents {
    /// A blank screen: nothing written yet.
    pub(super) fn blank(lines: usize, columns: usize) -> Extents {
        Extents {
            columns: columns.min(u16::MAX as usize) as u16,
            lines: vec![0; lines],
        }
    }

    /// A screen whose cells are not known: every line written all the way across.
    pub(super) fn unknown(lines: usize, columns: usize) -> Extents {
        let mut extents = Extents::blank(lines, columns);
        extents.all_written();
        extents
    }

    /// The columns of `line` that may hold something other than default cells (all of them
    /// for a line outside the screen).
    pub(super) fn of(&self, line: usize) -> usize {
        self.lines
            .get(line)
            .map_or(self.columns, |&extent| extent)
            .into()
    }

    /// `line` may now hold something in its first `columns` columns.
    #[inline]
    pub(super) fn widen(&mut self, line: usize, columns: usize) {
        let columns = columns.min(self.columns as usize) as u16;
        if let Some(extent) = self.lines.get_mut(line) {
            *extent = (*extent).max(columns);
        }
    }

    /// `line` may now hold something anywhere.
    pub(super) fn line_written(&mut self, line: usize) {
        self.widen(line, self.columns as usize);
    }

    /// Every line may now hold something anywhere.
    pub(super) fn all_written(&mut self) {
        self.lines.fill(self.columns);
    }

    /// The lines of `region` moved up by `count` (as the grid scrolls them), the lines that
    /// come in at its bottom blank, or written across when `fresh_blank` is false (the cursor's
    /// background is not the default one, and new lines are filled with it).
    pub(super) fn scroll_up(&mut self, region: Range<usize>, count: usize, fresh_blank: bool) {
        let end = region.end.min(self.lines.len());
        let start = region.start.min(end);
        let lines = &mut self.lines[start..end];
        let count = count.min(lines.len());
        lines.rotate_left(count);
        let fresh = if fresh_blank { 0 } else { self.columns };
        let len = lines.len();
        lines[len - count..].fill(fresh);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_widen_and_scroll_up_within_their_region() {
        let mut e = Extents::blank(4, 10);
        e.widen(0, 3);
        e.widen(1, 12);
        e.widen(2, 5);
        e.widen(2, 2);
        assert_eq!((0..4).map(|l| e.of(l)).collect::<Vec<_>>(), [3, 10, 5, 0]);
        e.scroll_up(1..3, 1, true);
        assert_eq!((0..4).map(|l| e.of(l)).collect::<Vec<_>>(), [3, 5, 0, 0]);
        e.scroll_up(0..4, 9, false);
        assert_eq!((0..4).map(|l| e.of(l)).collect::<Vec<_>>(), [10; 4]);
        assert_eq!(e.of(7), 10, "outside the screen: everything");
        let mut u = Extents::unknown(2, 5);
        u.scroll_up(0..2, 1, true);
        assert_eq!((u.of(0), u.of(1)), (5, 0));
    }
}
