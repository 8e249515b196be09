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
use super::scrollback::Scrollback;

/// The scroll region as alacritty holds it: lines `start..end` of the screen.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Region {
    start: i32,
    end: i32,
}

impl Region {
    /// The whole screen of `lines` lines.
    pub fn full(lines: usize) -> Region {
        Region {
            start: 0,
            end: lines as i32,
        }
    }
}

/// The term, the mirrored region and the scrollback, borrowed for one `advance`.
pub struct Capture<'a> {
    pub term: &'a mut Term<EmulatorEvents>,
    pub region: &'a mut Region,
    pub scrollback: &'a mut Scrollback,
}

impl Capture<'_> {
    fn on_main_screen(&self) -> bool {
        !self.term.mode().contains(TermMode::ALT_SCREEN)
    }

    /// Whether a line feed now scrolls the top line into history.
    fn feed_scrolls_out(&self) -> bool {
        self.region.start == 0
            && self.term.grid().cursor.point.line.0 + 1 == self.region.end
            && self.on_main_screen()
    }

    /// Keeps the top `count` lines of the screen, oldest first.
    fn keep_top(&mut self, count: usize) {
        keep_top(self.term, self.scrollback, count);
    }

    /// `scroll_up_relative(origin, lines)` as alacritty does it: history grows only when the
    /// scrolled part starts at the top.
    fn scroll_up_from(&mut self, origin: i32, lines: usize) {
        if origin == 0 && self.on_main_screen() {
            let span = (self.region.end - self.region.start).max(0) as usize;
            self.keep_top(lines.min(span));
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

/// Calls that never move rows into history go straight to the term.
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

impl Handler for Capture<'_> {
    forward! {
        fn set_title(&mut self, title: Option<String>);
        fn set_cursor_style(&mut self, style: Option<CursorStyle>);
        fn set_cursor_shape(&mut self, shape: CursorShape);
        fn goto(&mut self, line: i32, col: usize);
        fn goto_line(&mut self, line: i32);
        fn goto_col(&mut self, col: usize);
        fn insert_blank(&mut self, count: usize);
        fn move_up(&mut self, count: usize);
        fn move_down(&mut self, count: usize);
        fn identify_terminal(&mut self, intermediate: Option<char>);
        fn device_status(&mut self, arg: usize);
        fn move_forward(&mut self, col: usize);
        fn move_backward(&mut self, col: usize);
        fn move_down_and_cr(&mut self, row: usize);
        fn move_up_and_cr(&mut self, row: usize);
        fn put_tab(&mut self, count: u16);
        fn backspace(&mut self);
        fn carriage_return(&mut self);
        fn bell(&mut self);
        fn substitute(&mut self);
        fn set_horizontal_tabstop(&mut self);
        fn scroll_down(&mut self, count: usize);
        fn insert_blank_lines(&mut self, count: usize);
        fn erase_chars(&mut self, count: usize);
        fn delete_chars(&mut self, count: usize);
        fn move_backward_tabs(&mut self, count: u16);
        fn move_forward_tabs(&mut self, count: u16);
        fn save_cursor_position(&mut self);
        fn restore_cursor_position(&mut self);
        fn clear_line(&mut self, mode: LineClearMode);
        fn clear_tabs(&mut self, mode: TabulationClearMode);
        fn set_tabs(&mut self, interval: u16);
        fn reverse_index(&mut self);
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
        fn decaln(&mut self);
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

    #[inline]
    fn input(&mut self, c: char) {
        // A printable character wraps first when the cursor waits at the margin, or when a wide
        // one does not fit (alacritty's `input` and `wrapline`).
        let cursor = &self.term.grid().cursor;
        let near_margin =
            cursor.input_needs_wrap || cursor.point.column.0 + 1 >= self.term.grid().columns();
        if near_margin && self.term.mode().contains(TermMode::LINE_WRAP) && self.feed_scrolls_out()
        {
            let wraps = match c.width() {
                Some(0) | None => false,
                Some(1) => cursor.input_needs_wrap,
                Some(_) => true,
            };
            if wraps {
                self.keep_top(1);
            }
        }
        self.term.input(c);
    }

    #[inline]
    fn linefeed(&mut self) {
        if self.feed_scrolls_out() {
            self.keep_top(1);
        }
        self.term.linefeed();
    }

    #[inline]
    fn newline(&mut self) {
        if self.feed_scrolls_out() {
            self.keep_top(1);
        }
        self.term.newline();
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
    }

    fn reset_state(&mut self) {
        self.scrollback.clear();
        *self.region = Region::full(self.term.screen_lines());
        self.term.reset_state();
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
    }

    fn unset_private_mode(&mut self, mode: PrivateMode) {
        self.column_mode(mode);
        self.term.unset_private_mode(mode);
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
pub fn keep_before_resize(term: &Term<EmulatorEvents>, scrollback: &mut Scrollback, lines: usize) {
    if term.mode().contains(TermMode::ALT_SCREEN) {
        return;
    }
    let push = (term.grid().cursor.point.line.0.max(0) as usize + 1).saturating_sub(lines);
    keep_top(term, scrollback, push);
}

/// Packs the top `count` lines of `term`'s screen into `scrollback`, oldest first.
fn keep_top(term: &Term<EmulatorEvents>, scrollback: &mut Scrollback, count: usize) {
    let grid = term.grid();
    for line in 0..count.min(grid.screen_lines()) {
        scrollback.push(&grid[Line(line as i32)]);
    }
}
