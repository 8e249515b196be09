//! The parser's view of the terminal: every call goes to alacritty's `Term`, and just before
//! a call pushes rows off the top of the main screen, those rows are packed into the session's
//! [`Scrollback`].
//!
//! Why: alacritty keeps scrollback as cells (24 bytes a column) and, once a terminal has
//! scrolled at all, allocates a thousand rows of them at once. The emulator is therefore given
//! no scrollback of its own (`scrolling_history: 0`) and the rows are kept packed instead.
//!
//! Rows reach scrollback in exactly these ways, all of which are handled here, each by the same
//! rule alacritty uses, so that [`Scrollback`] holds what alacritty's own history would (the
//! differential test in `emulator.rs` holds the two side by side):
//! - a line feed (LF, VT, FF, IND, NEL, a wrap while printing) on the last line of a scroll
//!   region that starts at the top;
//! - `CSI n S` (scroll up) with such a region, and `CSI n M` (delete lines) on the top line;
//! - `CSI 2 J` (erase the screen), which scrolls the screen's non-blank lines into history;
//! - and they are dropped by `CSI 3 J` (erase saved lines) and `ESC c` (reset).
//!
//! Alongside, the capture keeps each screen line's written extent ([`Extents`]) so that a row
//! is packed by looking at its written columns only.
//!
//! The alternate screen never scrolls into history. The scroll region is mirrored here
//! ([`Region`]), since alacritty keeps it private. Not reproduced: the re-wrapping of
//! scrollback when the terminal's width changes (rows stay as they were printed), and the wrap
//! mark of a row pushed by a wrap inside a one-line region at the very top.

use alacritty_terminal::grid::Dimensions;
use alacritty_terminal::index::Line;
use alacritty_terminal::term::{Term, TermMode};
use alacritty_terminal::vte::ansi::cursor_icon::CursorIcon;
use alacritty_terminal::vte::ansi::{
    Attr, CharsetIndex, ClearMode, CursorShape, CursorStyle, Handler, Hyperlink, KeyboardModes,
    KeyboardModesApplyBehavior, LineClearMode, Mode, ModifyOtherKeys, NamedPrivateMode,
    PrivateMode, Rgb, ScpCharPath, ScpUpdateMode, StandardCharset, TabulationClearMode,
};
use unicode_width::UnicodeWidthChar;

use super::emulator::EmulatorEvents;
use super::extents::Extents;
use super::scrollback::Scrollback;

/// The scroll region as alacritty holds it: lines `start..end` of the screen.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Region {
    start: i32,
    end: i32,
}

impl Region {
    /// The whole screen of `lines` lines.
    pub(super) fn full(lines: usize) -> Region {
        Region {
            start: 0,
            end: lines as i32,
        }
    }
}

/// The term, the mirrored region, the lines' extents and the scrollback, borrowed for one
/// `advance`.
pub(super) struct Capture<'a> {
    pub term: &'a mut Term<EmulatorEvents>,
    pub region: &'a mut Region,
    pub extents: &'a mut Extents,
    pub scrollback: &'a mut Scrollback,
    /// Set when a character is printed: the parser was in its ground state.
    pub printed: bool,
}

impl Capture<'_> {
    fn on_main_screen(&self) -> bool {
        !self.term.mode().contains(TermMode::ALT_SCREEN)
    }

    /// Keeps the top `count` lines of the screen, oldest first.
    fn keep_top(&mut self, count: usize) {
        keep_top(self.term, self.scrollback, Some(self.extents), count);
    }

    /// `scroll_up_relative(origin, lines)` as alacritty does it: history grows only when the
    /// scrolled part starts at the top; the lines from `origin` to the region's end move up.
    fn scroll_up_from(&mut self, origin: i32, lines: usize) {
        if !self.on_main_screen() {
            return;
        }
        let span = (self.region.end - self.region.start).max(0) as usize;
        let lines = lines.min(span);
        if origin == 0 {
            self.keep_top(lines);
        }
        let fresh_blank = self.cursor_background_is_default();
        let (start, end) = (origin.max(0) as usize, self.region.end.max(0) as usize);
        self.extents.scroll_up(start..end, lines, fresh_blank);
    }

    /// A line feed's effect on history and extents, just before the term takes it: at the
    /// bottom of the scroll region the region scrolls up one line.
    fn feed(&mut self) {
        if self.term.grid().cursor.point.line.0 + 1 == self.region.end {
            self.scroll_up_from(self.region.start, 1);
        }
    }

    /// A wrap to the next line, just before the term does it: the line left gets its wrap
    /// mark (in its last cell), then the line feeds.
    fn wrap(&mut self) {
        self.extents.line_written(self.cursor_line());
        self.feed();
    }

    fn cursor_line(&self) -> usize {
        self.term.grid().cursor.point.line.0.max(0) as usize
    }

    /// Whether cells cleared now come out as default cells (they take the cursor's
    /// background).
    fn cursor_background_is_default(&self) -> bool {
        self.term.grid().cursor.template.bg
            == alacritty_terminal::vte::ansi::Color::Named(
                alacritty_terminal::vte::ansi::NamedColor::Background,
            )
    }

    /// alacritty's `write_at_cursor`: a character written over a wide one in the first two
    /// columns takes the leading spacer off the line above, which, for the top line, is the
    /// newest row of history. Called when `c` is printed without a wrap.
    fn overwrites_a_wrapped_wide_char(&mut self, c: char) {
        use alacritty_terminal::index::Column;
        use alacritty_terminal::term::cell::Flags;
        let cursor = self.term.grid().cursor.point;
        if cursor.line.0 != 0 || cursor.column.0 > 1 || self.scrollback.is_empty() {
            return;
        }
        if !self.on_main_screen() {
            return;
        }
        let columns = self.term.grid().columns();
        let width = c.width().unwrap_or(0);
        let at = cursor.column.0;
        // In insert mode the cells written are the ones shifted in from the end first.
        let shifted = self.term.mode().contains(TermMode::INSERT) && at + width < columns;
        let row = &self.term.grid()[Line(0)];
        let wide = (at..(at + width).min(2).min(columns)).any(|col| {
            let from = if shifted {
                columns - width + (col - at)
            } else {
                col
            };
            row[Column(from)]
                .flags
                .intersects(Flags::WIDE_CHAR | Flags::WIDE_CHAR_SPACER)
        });
        if wide {
            self.scrollback.drop_leading_spacer(columns);
        }
    }

    /// After a call that wrote the cursor's line up to the cursor.
    fn written_to_cursor(&mut self) {
        let cursor = self.term.grid().cursor.point;
        self.extents
            .widen(cursor.line.0.max(0) as usize, cursor.column.0 + 1);
    }

    /// After a call that cleared cells of the cursor's line to the cursor's background (or
    /// moved cells left within it).
    fn cleared_on_cursor_line(&mut self) {
        if !self.cursor_background_is_default() {
            self.extents.line_written(self.cursor_line());
        }
    }

    /// What `CSI 2 J` pushes: every line down to the last one that is not blank (alacritty's
    /// `clear_viewport`, as it behaves with history kept).
    fn erase_screen(&mut self) {
        use alacritty_terminal::grid::GridCell;
        let grid = self.term.grid();
        let lines = grid.screen_lines();
        let last = (0..lines)
            .rev()
            .find(|&l| grid[Line(l as i32)][..].iter().any(|c| !c.is_empty()));
        let count = match last {
            Some(l) => l + 1,
            // A blank screen with history above it scrolls nothing; one without, one line.
            None => usize::from(self.scrollback.is_empty()),
        };
        self.keep_top(count);
    }
}

/// Calls that neither write cells nor move rows go straight to the term.
macro_rules! forward {
    ($( fn $name:ident(&mut self $(, $arg:ident : $ty:ty)*); )*) => {
        $(
            #[inline]
            fn $name(&mut self $(, $arg: $ty)*) {
                self.term.$name($($arg),*)
            }
        )*
    };
}

/// Calls that change cells in ways not followed here go to the term, and every line counts
/// as written across.
macro_rules! forward_written {
    ($( fn $name:ident(&mut self $(, $arg:ident : $ty:ty)*); )*) => {
        $(
            fn $name(&mut self $(, $arg: $ty)*) {
                self.extents.all_written();
                self.term.$name($($arg),*)
            }
        )*
    };
}

impl Handler for Capture<'_> {
    forward! {
        fn set_title(&mut self, title: Option<String>);
        fn set_cursor_style(&mut self, style: Option<CursorStyle>);
        fn set_cursor_shape(&mut self, shape: CursorShape);
        fn goto(&mut self, line: i32, col: usize);
        fn goto_line(&mut self, line: i32);
        fn goto_col(&mut self, col: usize);
        fn move_up(&mut self, count: usize);
        fn move_down(&mut self, count: usize);
        fn identify_terminal(&mut self, intermediate: Option<char>);
        fn device_status(&mut self, arg: usize);
        fn move_forward(&mut self, col: usize);
        fn move_backward(&mut self, col: usize);
        fn move_down_and_cr(&mut self, row: usize);
        fn move_up_and_cr(&mut self, row: usize);
        fn backspace(&mut self);
        fn carriage_return(&mut self);
        fn bell(&mut self);
        fn substitute(&mut self);
        fn set_horizontal_tabstop(&mut self);
        fn move_backward_tabs(&mut self, count: u16);
        fn move_forward_tabs(&mut self, count: u16);
        fn save_cursor_position(&mut self);
        fn restore_cursor_position(&mut self);
        fn clear_tabs(&mut self, mode: TabulationClearMode);
        fn set_tabs(&mut self, interval: u16);
        fn terminal_attribute(&mut self, attr: Attr);
        fn set_mode(&mut self, mode: Mode);
        fn unset_mode(&mut self, mode: Mode);
        fn report_mode(&mut self, mode: Mode);
        fn report_private_mode(&mut self, mode: PrivateMode);
        fn set_keypad_application_mode(&mut self);
        fn unset_keypad_application_mode(&mut self);
        fn set_active_charset(&mut self, index: CharsetIndex);
        fn configure_charset(&mut self, index: CharsetIndex, charset: StandardCharset);
        fn set_color(&mut self, index: usize, rgb: Rgb);
        fn dynamic_color_sequence(&mut self, prefix: String, index: usize, terminator: &str);
        fn reset_color(&mut self, index: usize);
        fn clipboard_store(&mut self, clipboard: u8, data: &[u8]);
        fn clipboard_load(&mut self, clipboard: u8, terminator: &str);
        fn push_title(&mut self);
        fn pop_title(&mut self);
        fn text_area_size_pixels(&mut self);
        fn text_area_size_chars(&mut self);
        fn set_hyperlink(&mut self, link: Option<Hyperlink>);
        fn set_mouse_cursor_icon(&mut self, icon: CursorIcon);
        fn report_keyboard_mode(&mut self);
        fn push_keyboard_mode(&mut self, mode: KeyboardModes);
        fn pop_keyboard_modes(&mut self, to_pop: u16);
        fn set_keyboard_mode(&mut self, mode: KeyboardModes, behavior: KeyboardModesApplyBehavior);
        fn set_modify_other_keys(&mut self, mode: ModifyOtherKeys);
        fn report_modify_other_keys(&mut self);
        fn set_scp(&mut self, char_path: ScpCharPath, update_mode: ScpUpdateMode);
    }

    forward_written! {
        fn scroll_down(&mut self, count: usize);
        fn insert_blank_lines(&mut self, count: usize);
        fn reverse_index(&mut self);
        fn decaln(&mut self);
    }

    #[inline]
    fn input(&mut self, c: char) {
        // A printable character wraps first when the cursor waits at the margin, or when a wide
        // one does not fit (alacritty's `input` and `wrapline`).
        let cursor = &self.term.grid().cursor;
        let near_margin =
            cursor.input_needs_wrap || cursor.point.column.0 + 1 >= self.term.grid().columns();
        let wraps = near_margin
            && self.term.mode().contains(TermMode::LINE_WRAP)
            && match c.width() {
                Some(0) | None => false,
                Some(1) => cursor.input_needs_wrap,
                Some(_) => true,
            };
        if wraps {
            self.wrap();
        } else {
            self.overwrites_a_wrapped_wide_char(c);
        }
        self.term.input(c);
        self.printed = true;
        if self.term.mode().contains(TermMode::INSERT) {
            // The cells after the cursor moved right.
            self.extents.line_written(self.cursor_line());
        } else {
            self.written_to_cursor();
        }
    }

    #[inline]
    fn linefeed(&mut self) {
        self.feed();
        self.term.linefeed();
    }

    #[inline]
    fn newline(&mut self) {
        self.feed();
        self.term.newline();
    }

    fn put_tab(&mut self, count: u16) {
        // A tab at the margin is a wrap (alacritty's `put_tab`); else it marks the cells it
        // passes, up to where it stops.
        if self.term.grid().cursor.input_needs_wrap
            && self.term.mode().contains(TermMode::LINE_WRAP)
        {
            self.wrap();
        }
        self.term.put_tab(count);
        self.written_to_cursor();
    }

    fn insert_blank(&mut self, count: usize) {
        self.term.insert_blank(count);
        self.extents.line_written(self.cursor_line());
    }

    fn erase_chars(&mut self, count: usize) {
        self.term.erase_chars(count);
        self.cleared_on_cursor_line();
    }

    fn delete_chars(&mut self, count: usize) {
        self.term.delete_chars(count);
        self.cleared_on_cursor_line();
    }

    fn clear_line(&mut self, mode: LineClearMode) {
        self.term.clear_line(mode);
        self.cleared_on_cursor_line();
    }

    fn scroll_up(&mut self, count: usize) {
        self.scroll_up_from(self.region.start, count);
        self.term.scroll_up(count);
    }

    fn delete_lines(&mut self, count: usize) {
        let origin = self.term.grid().cursor.point.line.0;
        let lines = count.min(
            self.term
                .screen_lines()
                .saturating_sub(origin.max(0) as usize),
        );
        if lines > 0 && (self.region.start..self.region.end).contains(&origin) {
            self.scroll_up_from(origin, lines);
        }
        self.term.delete_lines(count);
        self.extents.all_written();
    }

    fn clear_screen(&mut self, mode: ClearMode) {
        if self.on_main_screen() {
            match mode {
                ClearMode::All => self.erase_screen(),
                ClearMode::Saved => self.scrollback.clear(),
                _ => {}
            }
        }
        self.term.clear_screen(mode);
        self.extents.all_written();
    }

    fn reset_state(&mut self) {
        self.scrollback.clear();
        *self.region = Region::full(self.term.screen_lines());
        self.term.reset_state();
        self.extents.all_written();
    }

    fn set_scrolling_region(&mut self, top: usize, bottom: Option<usize>) {
        // Term's rule, line for line: the bottom defaults to the last line, an empty region
        // is ignored, both ends are clamped to the screen.
        let lines = self.term.screen_lines() as i32;
        let last = bottom.unwrap_or(lines as usize);
        if top < last {
            self.region.start = (top as i32 - 1).min(lines);
            self.region.end = (last as i32).min(lines);
        }
        self.term.set_scrolling_region(top, bottom);
    }

    fn set_private_mode(&mut self, mode: PrivateMode) {
        self.column_mode(mode);
        self.term.set_private_mode(mode);
        // The screens may have been swapped or cleared.
        self.extents.all_written();
    }

    fn unset_private_mode(&mut self, mode: PrivateMode) {
        self.column_mode(mode);
        self.term.unset_private_mode(mode);
        self.extents.all_written();
    }
}

impl Capture<'_> {
    /// DECCOLM resets the scroll region (and clears the screen without scrolling it).
    fn column_mode(&mut self, mode: PrivateMode) {
        if mode == PrivateMode::Named(NamedPrivateMode::ColumnMode) {
            *self.region = Region::full(self.term.screen_lines());
        }
    }
}

/// The top rows a resize to `lines` lines pushes into history: alacritty scrolls the screen
/// up just enough to keep the cursor on it.
pub(super) fn keep_before_resize(
    term: &Term<EmulatorEvents>,
    scrollback: &mut Scrollback,
    lines: usize,
) {
    if term.mode().contains(TermMode::ALT_SCREEN) {
        return;
    }
    let push = (term.grid().cursor.point.line.0.max(0) as usize + 1).saturating_sub(lines);
    keep_top(term, scrollback, None, push);
}

/// Packs the top `count` lines of `term`'s screen into `scrollback`, oldest first, each
/// looked at up to its written extent (all of it without `extents`).
fn keep_top(
    term: &Term<EmulatorEvents>,
    scrollback: &mut Scrollback,
    extents: Option<&Extents>,
    count: usize,
) {
    let grid = term.grid();
    for line in 0..count.min(grid.screen_lines()) {
        let extent = extents.map_or(grid.columns(), |e| e.of(line));
        scrollback.push(&grid[Line(line as i32)], extent);
    }
}
