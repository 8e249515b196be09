//! Pixel checks: escape sequences go into a real `Term`, the PNG comes out, is decoded and
//! inspected cell by cell.

use alacritty_terminal::event::VoidListener;
use alacritty_terminal::grid::Dimensions;
use alacritty_terminal::term::{Config, Term};
use alacritty_terminal::vte::ansi::{Processor, Rgb};

use super::*;

struct Size(usize, usize);

impl Dimensions for Size {
    fn total_lines(&self) -> usize {
        self.1
    }
    fn screen_lines(&self) -> usize {
        self.1
    }
    fn columns(&self) -> usize {
        self.0
    }
}

fn term(cols: usize, rows: usize, bytes: &str) -> Term<VoidListener> {
    let mut term = Term::new(Config::default(), &Size(cols, rows), VoidListener);
    let mut parser: Processor = Processor::new();
    parser.advance(&mut term, bytes.as_bytes());
    term
}

struct Image {
    width: u32,
    height: u32,
    pixels: Vec<[u8; 3]>,
}

impl Image {
    fn at(&self, x: u32, y: u32) -> [u8; 3] {
        self.pixels[(y * self.width + x) as usize]
    }

    /// The centre pixel of a cell.
    fn centre(&self, row: u32, col: u32) -> [u8; 3] {
        let (cw, ch) = cell_size();
        self.at(col * cw + cw / 2, row * ch + ch / 2)
    }

    /// Every pixel of a cell.
    fn cell(&self, row: u32, col: u32) -> Vec<[u8; 3]> {
        let (cw, ch) = cell_size();
        let mut out = Vec::new();
        for y in row * ch..(row + 1) * ch {
            for x in col * cw..(col + 1) * cw {
                out.push(self.at(x, y));
            }
        }
        out
    }
}

fn decode(png: &Png) -> Image {
    let mut decoder = png::Decoder::new(std::io::Cursor::new(&png.bytes));
    decoder.set_transformations(png::Transformations::EXPAND);
    let mut reader = decoder.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size().unwrap()];
    let info = reader.next_frame(&mut buf).unwrap();
    assert_eq!(
        info.color_type,
        png::ColorType::Rgb,
        "screenshots are opaque"
    );
    Image {
        width: info.width,
        height: info.height,
        pixels: buf[..info.buffer_size()]
            .chunks_exact(3)
            .map(|p| [p[0], p[1], p[2]])
            .collect(),
    }
}

fn shot(term: &Term<VoidListener>, opts: RenderOptions) -> Image {
    decode(&screenshot(term, &opts).unwrap())
}

fn rgb(c: Rgb) -> [u8; 3] {
    [c.r, c.g, c.b]
}

fn theme_bg(t: Theme) -> [u8; 3] {
    rgb(t.colors().background)
}

#[test]
fn image_is_columns_by_rows_cells() {
    let (cw, ch) = cell_size();
    let png = screenshot(&term(13, 4, "hello"), &RenderOptions::default()).unwrap();
    assert_eq!((png.width, png.height), (13 * cw, 4 * ch));
    assert_eq!(
        (png.cell_width, png.cell_height, png.columns, png.rows),
        (cw, ch, 13, 4)
    );
    assert_eq!(&png.bytes[1..4], b"PNG");
    let img = decode(&png);
    assert_eq!((img.width, img.height), (13 * cw, 4 * ch));
}

#[test]
fn every_theme_paints_its_background_and_red_is_red() {
    for theme in Theme::ALL {
        let img = shot(
            &term(6, 2, "\x1b[41m  \x1b[0m\x1b[31m\u{2588}\x1b[0m"),
            RenderOptions {
                theme,
                show_cursor: false,
                ..Default::default()
            },
        );
        assert_eq!(img.centre(1, 5), theme_bg(theme), "{theme}");
        for col in [0, 1, 2] {
            let [r, g, b] = img.centre(0, col);
            assert!(
                r as i32 > g as i32 + 80 && r as i32 > b as i32 + 80,
                "{theme} col {col}: {r},{g},{b}"
            );
        }
    }
}

#[test]
fn indexed_and_truecolor_backgrounds_are_exact() {
    let img = shot(
        &term(
            4,
            1,
            "\x1b[48;5;196m \x1b[48;2;10;20;30m \x1b[48;5;244m \x1b[0m",
        ),
        RenderOptions::default(),
    );
    assert_eq!(img.centre(0, 0), [255, 0, 0]);
    assert_eq!(img.centre(0, 1), [10, 20, 30]);
    assert_eq!(img.centre(0, 2), [128, 128, 128]);
}

#[test]
fn osc_colour_overrides_are_used() {
    let img = shot(
        &term(3, 1, "\x1b]11;rgb:12/34/56\x1b\\"),
        RenderOptions {
            show_cursor: false,
            ..Default::default()
        },
    );
    assert_eq!(img.centre(0, 1), [0x12, 0x34, 0x56]);
}

#[test]
fn the_cursor_cell_is_drawn_unless_hidden_or_turned_off() {
    let cursor = rgb(Theme::Dark.colors().cursor);
    let t = term(5, 2, "ab");
    assert!(t.grid().cursor.point.column.0 == 2);
    assert_eq!(shot(&t, RenderOptions::default()).centre(0, 2), cursor);
    let off = RenderOptions {
        show_cursor: false,
        ..Default::default()
    };
    assert_eq!(shot(&t, off).centre(0, 2), theme_bg(Theme::Dark));
    let hidden = term(5, 2, "ab\x1b[?25l");
    assert_eq!(
        shot(&hidden, RenderOptions::default()).centre(0, 2),
        theme_bg(Theme::Dark)
    );
    // A bar cursor (DECSCUSR 6) covers the left edge only.
    let bar = shot(&term(5, 2, "ab\x1b[6 q"), RenderOptions::default());
    let (cw, ch) = cell_size();
    assert_eq!(bar.at(2 * cw, ch / 2), cursor);
    assert_eq!(bar.centre(0, 2), theme_bg(Theme::Dark));
}

#[test]
fn box_drawing_lines_are_continuous_across_cells() {
    let img = shot(
        &term(
            6,
            3,
            "\u{250c}\u{2500}\u{2500}\u{2510}\r\n\u{2502}  \u{2502}",
        ),
        RenderOptions {
            show_cursor: false,
            ..Default::default()
        },
    );
    let (cw, ch) = cell_size();
    let bg = theme_bg(Theme::Dark);
    // Some row is lit from the middle of cell 0 to the middle of cell 3 without a gap.
    let joined = (0..ch).any(|y| (cw / 2 + 1..3 * cw + cw / 2).all(|x| img.at(x, y) != bg));
    assert!(joined, "the top line has a gap");
    // The left vertical runs from the corner down through row 1.
    let column = (0..cw).any(|x| (ch / 2 + 1..2 * ch).all(|y| img.at(x, y) != bg));
    assert!(column, "the left line has a gap");
}

#[test]
fn attributes_change_the_pixels() {
    let opts = RenderOptions {
        show_cursor: false,
        ..Default::default()
    };
    let img = shot(
        &term(
            8,
            1,
            "a\x1b[1ma\x1b[0m\x1b[3ma\x1b[0m\x1b[2ma\x1b[0m\x1b[7ma\x1b[0m\x1b[4m \x1b[0m\x1b[9m \x1b[0m",
        ),
        opts,
    );
    let plain = img.cell(0, 0);
    for col in 1..=3 {
        assert_ne!(img.cell(0, col), plain, "bold/italic/dim at {col}");
    }
    // Dim is darker than normal on the dark theme.
    let brightest = |px: Vec<[u8; 3]>| {
        px.iter()
            .map(|p| p[0] as u32 + p[1] as u32 + p[2] as u32)
            .max()
            .unwrap()
    };
    assert!(brightest(img.cell(0, 3)) < brightest(plain));
    // Inverse: the background takes the foreground colour.
    assert_eq!(
        img.at(4 * cell_size().0 + 1, 1),
        rgb(Theme::Dark.colors().foreground)
    );
    // Underline and strike-through draw a full-width line in an otherwise blank cell.
    let fg = rgb(Theme::Dark.colors().foreground);
    let (cw, ch) = cell_size();
    for col in [5, 6] {
        let full_row = (0..ch).any(|y| (0..cw).all(|x| img.at(col * cw + x, y) == fg));
        assert!(full_row, "line in cell {col}");
    }
}

#[test]
fn missing_glyphs_get_a_visible_box() {
    let img = shot(
        &term(3, 1, "\u{10FFFD}"),
        RenderOptions {
            show_cursor: false,
            ..Default::default()
        },
    );
    let fg = rgb(Theme::Dark.colors().foreground);
    let (cw, ch) = cell_size();
    assert_eq!(img.at(1, ch / 2), fg, "left edge of the box");
    assert_eq!(img.at(cw - 2, ch / 2), fg, "right edge of the box");
    assert_eq!(img.centre(0, 0), theme_bg(Theme::Dark), "hollow");
}

#[test]
fn wide_characters_span_two_cells() {
    let opts = RenderOptions {
        show_cursor: false,
        ..Default::default()
    };
    let img = shot(&term(4, 1, "\u{6f22}"), opts);
    let bg = theme_bg(Theme::Dark);
    for col in [0, 1] {
        assert!(
            img.cell(0, col).iter().any(|&p| p != bg),
            "cell {col} is blank"
        );
    }
    let has_font = fallback::find('\u{6f22}').is_some();
    let sprite = glyphs::cache()
        .get('\u{6f22}', fonts::Style::Regular, 2)
        .clone();
    let placeholder = glyphs::cache()
        .get('\u{10FFFD}', fonts::Style::Regular, 2)
        .clone();
    // With a CJK font on the system the real glyph is drawn, else the two-cell box.
    assert_eq!(sprite != placeholder, has_font);
    if !has_font {
        eprintln!("no CJK font on this system: checked the placeholder path only");
    }
}

#[test]
fn colour_emoji_come_from_a_system_font_when_there_is_one() {
    let sprite = glyphs::cache()
        .get('\u{1F642}', fonts::Style::Regular, 2)
        .clone();
    if !matches!(sprite.pixels, glyphs::Pixels::Rgba(_)) {
        eprintln!("no colour emoji font on this system: skipped");
        return;
    }
    let img = shot(
        &term(4, 1, "\u{1F642}"),
        RenderOptions {
            show_cursor: false,
            ..Default::default()
        },
    );
    let yellow = |p: &[u8; 3]| p[0] > 180 && p[1] > 120 && p[2] < 100;
    assert!(
        img.cell(0, 0)
            .iter()
            .chain(img.cell(0, 1).iter())
            .any(yellow)
    );
}

#[test]
fn the_ring_circles_the_target_cell() {
    let t = term(20, 6, "");
    let ring = rgb(Theme::Dark.colors().ring);
    let img = shot(
        &t,
        RenderOptions {
            ring: Some((3, 10)),
            show_cursor: false,
            ..Default::default()
        },
    );
    let (cw, ch) = cell_size();
    let (cx, cy) = (10 * cw + cw / 2, 3 * ch + ch / 2);
    assert_eq!(
        img.at(cx, cy),
        theme_bg(Theme::Dark),
        "the cell itself stays visible"
    );
    let on_ring = (cx..cx + 2 * ch).any(|x| img.at(x, cy) == ring);
    assert!(on_ring, "no ring to the right of the cell");
    let err = screenshot(
        &t,
        &RenderOptions {
            ring: Some((6, 0)),
            ..Default::default()
        },
    )
    .unwrap_err()
    .to_string();
    assert!(err.contains("row 7") && err.contains("1 to 6"), "{err}");
}

#[test]
fn oversized_screens_are_refused_with_a_reason() {
    let err = screenshot(&term(1000, 500, ""), &RenderOptions::default())
        .unwrap_err()
        .to_string();
    assert!(err.contains("1000×500") && err.contains("resize"), "{err}");
}

#[test]
fn the_alternate_screen_renders() {
    let mut text = String::new();
    for i in 0..40 {
        text.push_str(&format!("line {i}\r\n"));
    }
    text.push_str("\x1b[?1049h\x1b[H\x1b[44mALT");
    let png = screenshot(&term(20, 5, &text), &RenderOptions::default()).unwrap();
    let img = decode(&png);
    assert!(
        img.centre(0, 0)[2] > 150,
        "blue background on the alternate screen"
    );
    assert_eq!(
        img.centre(1, 0),
        theme_bg(Theme::Dark),
        "the main screen is not shown"
    );
}

#[test]
fn a_scrolled_viewport_shows_the_scrollback() {
    use alacritty_terminal::grid::Scroll;
    let mut text = String::new();
    for i in 0..20 {
        text.push_str(&format!("\x1b[4{}m \x1b[0m{i}\r\n", 1 + i % 2));
    }
    let mut t = term(6, 4, &text);
    let bottom = shot(&t, RenderOptions::default());
    t.scroll_display(Scroll::Delta(3));
    let scrolled = shot(&t, RenderOptions::default());
    // Lines alternate red and green backgrounds; three lines up, the colour at row 0 flips.
    let (a, b) = (bottom.centre(0, 0), scrolled.centre(0, 0));
    assert_ne!(a, b);
    assert!(a[0].max(a[1]) > 150 && b[0].max(b[1]) > 150, "{a:?} {b:?}");
}

/// Writes a sample screenshot for a person to look at: `cargo test render_sample -- --ignored`.
#[test]
#[ignore]
fn render_sample() {
    let text = concat!(
        "\x1b[1mtermpilot\x1b[0m screenshot \x1b[2mdim\x1b[0m \x1b[3mitalic\x1b[0m \x1b[1;3mbold-italic\x1b[0m \x1b[4munder\x1b[0m \x1b[9mstrike\x1b[0m \x1b[4:3mcurly\x1b[0m \x1b[7minverse\x1b[0m\r\n",
        "\x1b[31mred \x1b[32mgreen \x1b[33myellow \x1b[34mblue \x1b[35mmagenta \x1b[36mcyan \x1b[1;31mbright-red\x1b[0m \x1b[38;5;208m208 \x1b[38;2;255;128;0mtruecolor\x1b[0m\r\n",
        "┌──────┬──────┐ ╔════╦════╗ ╭────╮ ┏━━━┳━━━┓ ░▒▓█▀▄▌▐ ▖▗▘▝▚▞ ⣿⡇⠿ ╱╲╳ ┄┈╌\r\n",
        "│ cell │ cell │ ║ ab ║ cd ║ │ ok │ ┃ a ┃ b ┃ ▁▂▃▄▅▆▇█ ╟─╫─╢ ╞═╪═╡\r\n",
        "├──────┼──────┤ ╠════╬════╣ ╰────╯ ┣━━━╋━━━┫ ✓ ✗ → ⇶ λ Ω й ü ß ← ©\r\n",
        "└──────┴──────┘ ╚════╩════╝ CJK: 漢字かな한국 emoji: 🙂🚀 pua: \u{10FFFD}\r\n",
        "$ ls -la\x1b[42m \x1b[0m",
    );
    for theme in Theme::ALL {
        let png = screenshot(
            &term(80, 8, text),
            &RenderOptions {
                theme,
                ring: Some((6, 3)),
                show_cursor: true,
            },
        )
        .unwrap();
        std::fs::write(format!("/tmp/termpilot-sample-{theme}.png"), &png.bytes).unwrap();
    }
    // The left half, three times larger, to check lines and joins pixel by pixel.
    let img = decode(&screenshot(&term(80, 8, text), &RenderOptions::default()).unwrap());
    let (w, h, k) = (img.width / 2, img.height, 3);
    let mut big = Vec::new();
    for y in 0..h * k {
        for x in 0..w * k {
            big.extend_from_slice(&img.at(x / k, y / k));
        }
    }
    let mut out = Vec::new();
    let mut enc = png::Encoder::new(&mut out, w * k, h * k);
    enc.set_color(png::ColorType::Rgb);
    enc.write_header().unwrap().write_image_data(&big).unwrap();
    std::fs::write("/tmp/termpilot-sample-zoom.png", out).unwrap();
}
