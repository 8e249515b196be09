//! Screenshots, clicks, scrolling and batches end to end, through `terminal_extra`.

mod common;

use base64::Engine;
use common::{Server, start, text};
use serde_json::{Value, json};

/// Cell size of every screenshot (render::fonts).
const CELL: (usize, usize) = (9, 20);

/// Starts a small /bin/sh session with a fixed prompt (screenshots are slow in debug builds).
async fn sh(server: &Server, cols: u32, rows: u32) -> String {
    let started = server
        .ok(
            "terminal_start",
            json!({"env": {"PS1": "$ "}, "cols": cols, "rows": rows}),
        )
        .await;
    started["sessionId"].as_str().unwrap().to_string()
}

/// Types a line without waiting for its output.
async fn type_line(server: &Server, id: &str, line: &str) {
    server.type_in(id, format!("{line}\r")).await;
}

/// Waits until `pattern` is on the screen.
async fn on_screen(server: &Server, id: &str, pattern: &str) {
    let waited = server
        .ok(
            "terminal_wait",
            json!({"sessionId": id, "pattern": pattern, "on": "screen", "timeout": 20000}),
        )
        .await;
    assert_eq!(waited["matched"], true, "{pattern}: {waited}");
}

use common::procs::has;

/// A decoded screenshot: RGB pixels.
struct Image {
    width: usize,
    height: usize,
    rgb: Vec<u8>,
}

impl Image {
    fn pixel(&self, x: usize, y: usize) -> (u8, u8, u8) {
        let i = (y * self.width + x) * 3;
        (self.rgb[i], self.rgb[i + 1], self.rgb[i + 2])
    }

    /// The pixels of 1-based cell (row, col).
    fn cell(&self, row: usize, col: usize) -> Vec<(u8, u8, u8)> {
        let (x0, y0) = ((col - 1) * CELL.0, (row - 1) * CELL.1);
        let mut out = Vec::new();
        for y in y0..y0 + CELL.1 {
            for x in x0..x0 + CELL.0 {
                out.push(self.pixel(x, y));
            }
        }
        out
    }
}

/// Calls a tool through terminal_extra and returns its JSON and its one PNG, decoded.
async fn with_image(server: &Server, tool: &str, args: Value) -> (Value, Image) {
    let result = server
        .call("terminal_extra", json!({"tool": tool, "args": args}))
        .await;
    assert_ne!(result.is_error, Some(true), "{tool}: {}", text(&result));
    let value = result
        .structured_content
        .clone()
        .expect("structured result");
    let b64 = result
        .content
        .iter()
        .find_map(|c| c.as_image().map(|i| i.data.clone()))
        .unwrap_or_else(|| panic!("{tool} returned no image"));
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(b64)
        .unwrap();
    let mut decoder = png::Decoder::new(std::io::Cursor::new(bytes));
    decoder.set_transformations(png::Transformations::EXPAND);
    let mut reader = decoder.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size().unwrap()];
    let info = reader.next_frame(&mut buf).unwrap();
    let (width, height) = (info.width as usize, info.height as usize);
    let channels = info.color_type.samples();
    let rgb: Vec<u8> = buf[..info.buffer_size()]
        .chunks(channels)
        .flat_map(|p| [p[0], p[1], p[2]])
        .collect();
    (value, Image { width, height, rgb })
}

#[tokio::test]
async fn screenshots_show_colours_cursor_and_joined_lines() {
    let server = start().await;
    let id = sh(&server, 40, 10).await;
    // A red cell pair at row 3, a box-drawing line at row 5, the prompt at row 8.
    type_line(
        &server,
        &id,
        r"clear; printf '\033[3;5H\033[41m  \033[0m\033[5;5H\342\224\200\342\224\200\033[8;1H'",
    )
    .await;
    // The line, two empty rows, then the new prompt on row 8 (the typed command is cleared).
    on_screen(&server, &id, "──\n\n\n\\$ $").await;
    let (info, image) = with_image(&server, "terminal_screenshot", json!({"sessionId": id})).await;
    assert_eq!(
        (image.width, image.height),
        (40 * CELL.0, 10 * CELL.1),
        "{info}"
    );
    assert_eq!(info["width"], 360);
    assert_eq!(info["height"], 200);
    assert_eq!(info["cols"], 40);
    assert_eq!(info["theme"], "dark");
    let background = image.pixel(image.width - 1, image.height - 1);

    let red = image.cell(3, 5);
    let (r, g, b) = red[red.len() / 2];
    assert!(r > 150 && g < 90 && b < 90, "red cell is {:?}", (r, g, b));

    // The box-drawing line: some pixel row is lit across both cells, with no gap.
    let (x0, y0) = (4 * CELL.0, 4 * CELL.1);
    let joined = (y0..y0 + CELL.1).any(|y| {
        (x0..x0 + 2 * CELL.0).all(|x| {
            let (r, g, b) = image.pixel(x, y);
            r as u32 + g as u32 + b as u32 > 300
        })
    });
    assert!(joined, "the line is not continuous across two cells");

    // The cursor sits after `$ ` (row 8, column 3) and is drawn; an empty cell is not.
    let cursor = image.cell(8, 3);
    assert!(cursor.iter().any(|&p| p != background), "no cursor drawn");
    assert!(image.cell(8, 20).iter().all(|&p| p == background));

    let (light, image) = with_image(
        &server,
        "terminal_screenshot",
        json!({"sessionId": id, "theme": "light"}),
    )
    .await;
    assert_eq!(light["theme"], "light");
    let (r, g, b) = image.pixel(image.width - 1, image.height - 1);
    assert!(
        r > 200 && g > 200 && b > 200,
        "light background {:?}",
        (r, g, b)
    );
    server.stop().await;
}

#[tokio::test]
async fn a_click_preview_rings_the_cell_and_sends_nothing() {
    let server = start().await;
    let id = sh(&server, 30, 6).await;
    let (_, plain) = with_image(&server, "terminal_screenshot", json!({"sessionId": id})).await;
    let (info, ringed) = with_image(
        &server,
        "terminal_click",
        json!({"sessionId": id, "row": 3, "col": 10}),
    )
    .await;
    assert_eq!(info["preview"], true);
    assert!(info["hint"].as_str().unwrap().contains("preview:false"));
    // The ring is drawn on and around the target cell, nowhere far from it.
    let near = |x: usize, y: usize| {
        let (cx, cy) = (9 * CELL.0 + CELL.0 / 2, 2 * CELL.1 + CELL.1 / 2);
        // The ring's radius is one cell height, plus its stroke.
        x.abs_diff(cx) <= CELL.1 + 4 && y.abs_diff(cy) <= CELL.1 + 4
    };
    let mut changed = 0;
    for y in 0..plain.height {
        for x in 0..plain.width {
            if plain.pixel(x, y) != ringed.pixel(x, y) {
                assert!(near(x, y), "pixel {x},{y} changed far from the cell");
                changed += 1;
            }
        }
    }
    assert!(changed > 20, "no ring drawn ({changed} pixels changed)");
    // Nothing was typed: no new output.
    let read = server
        .ok(
            "terminal_read",
            json!({"sessionId": id, "timeout": 300, "idleTimeout": 100}),
        )
        .await;
    assert_eq!(read["output"], "", "{read}");

    let e = server
        .extra_err(
            "terminal_click",
            json!({"sessionId": id, "row": 3, "col": 10, "preview": false}),
        )
        .await;
    assert!(e.contains("has not enabled mouse reporting"), "{e}");
    let e = server
        .extra_err(
            "terminal_click",
            json!({"sessionId": id, "row": 7, "col": 1}),
        )
        .await;
    assert!(e.contains("outside the screen"), "{e}");
    let e = server
        .extra_err(
            "terminal_click",
            json!({"sessionId": id, "row": 0, "col": 1}),
        )
        .await;
    assert!(e.contains("`row` is 0, below the minimum 1"), "{e}");
    server.stop().await;
}

#[tokio::test]
async fn clicks_and_wheel_reach_a_mouse_aware_program() {
    if !has("python3") {
        return;
    }
    let fixture = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/mouse.py");
    let server = start().await;
    let id = sh(&server, 60, 12).await;
    type_line(&server, &id, &format!("python3 {fixture}")).await;
    on_screen(&server, &id, "mouse ready").await;

    let clicked = server
        .extra(
            "terminal_click",
            json!({"sessionId": id, "row": 4, "col": 10, "preview": false}),
        )
        .await;
    assert_eq!(clicked["preview"], false);
    assert!(clicked["encoding"].is_string(), "{clicked}");
    // curses reports a quick press and release as one click.
    on_screen(&server, &id, "(press|click) row=4 col=10").await;

    let scrolled = server
        .extra(
            "terminal_scroll",
            json!({"sessionId": id, "row": 6, "col": 33, "direction": "down", "amount": 1}),
        )
        .await;
    assert_eq!(scrolled["sentAs"], "wheel");
    on_screen(&server, &id, "wheel-down row=6 col=33").await;
    server
        .extra(
            "terminal_scroll",
            json!({"sessionId": id, "row": 2, "col": 1, "direction": "up", "amount": 1}),
        )
        .await;
    on_screen(&server, &id, "wheel-up row=2 col=1").await;
    server.stop().await;
}

#[tokio::test]
async fn scroll_moves_less_and_is_refused_at_a_prompt() {
    if !has("less") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("long.txt");
    let body: String = (1..=100).map(|i| format!("line number {i}\n")).collect();
    std::fs::write(&file, body).unwrap();
    let server = start().await;
    let id = sh(&server, 40, 10).await;

    let e = server
        .extra_err(
            "terminal_scroll",
            json!({"sessionId": id, "row": 1, "col": 1}),
        )
        .await;
    assert!(e.contains("terminal_read"), "{e}");

    // -+X: less uses the alternate screen (LESS=-FRX in every session turns it off).
    type_line(&server, &id, &format!("less -+X {}", file.display())).await;
    on_screen(&server, &id, "(?m)^line number 9$").await;
    let scrolled = server
        .extra(
            "terminal_scroll",
            json!({"sessionId": id, "row": 5, "col": 5, "direction": "down", "amount": 5}),
        )
        .await;
    assert_eq!(scrolled["sentAs"], "keys", "{scrolled}");
    on_screen(&server, &id, "\\Aline number 6\\n").await;
    server
        .extra(
            "terminal_scroll",
            json!({"sessionId": id, "row": 5, "col": 5, "direction": "up", "amount": 2}),
        )
        .await;
    on_screen(&server, &id, "\\Aline number 4\\n").await;
    type_line(&server, &id, "q").await;
    server.stop().await;
}

#[tokio::test]
async fn a_batch_runs_in_order_and_stops_at_the_first_failure() {
    let server = start().await;
    let id = sh(&server, 50, 8).await;
    let done = server
        .extra(
            "terminal_batch",
            json!({"sessionId": id, "actions": [
                {"type": "type", "text": "echo one"},
                {"type": "press", "key": "Enter"},
                {"type": "wait", "pattern": "^one$"},
                {"type": "wait", "ms": 10},
                {"type": "paste", "text": "echo two\n"},
                {"type": "wait", "pattern": "^two$", "timeout": 10000},
            ]}),
        )
        .await;
    assert_eq!(done["ok"], true, "{done}");
    assert_eq!(done["completed"], 6);
    assert!(done["screen"]["text"].as_str().unwrap().contains("two"));

    let failed = server
        .extra(
            "terminal_batch",
            json!({"sessionId": id, "actions": [
                {"type": "type", "text": "echo first\r"},
                {"type": "wait", "pattern": "^first$"},
                {"type": "wait", "pattern": "never-shown", "timeout": 200},
                {"type": "type", "text": "echo not-sent\r"},
            ]}),
        )
        .await;
    assert_eq!(failed["ok"], false, "{failed}");
    assert_eq!(failed["completed"], 2);
    assert_eq!(failed["failedAction"], 3);
    let error = failed["error"].as_str().unwrap();
    assert!(
        error.starts_with("Action 3 (wait for /never-shown/) failed")
            && error.contains("actions 1–2 were sent"),
        "{error}"
    );
    let screen = failed["screen"]["text"].as_str().unwrap();
    assert!(
        screen.contains("first") && !screen.contains("not-sent"),
        "{screen}"
    );

    // A click where no program reports the mouse fails when it is reached.
    let clicked = server
        .extra(
            "terminal_batch",
            json!({"sessionId": id, "actions": [
                {"type": "type", "text": "echo before\r"},
                {"type": "click", "row": 1, "col": 1},
            ]}),
        )
        .await;
    assert_eq!(
        (
            clicked["failedAction"].clone(),
            clicked["completed"].clone()
        ),
        (json!(2), json!(1))
    );

    // Invalid batches are refused whole, before anything is sent.
    let e = server
        .extra_err(
            "terminal_batch",
            json!({"sessionId": id, "actions": [
                {"type": "type", "text": "echo refused\r"},
                {"type": "press", "key": "Banana"},
            ]}),
        )
        .await;
    assert!(
        e.contains("Action 2 (press Banana) is invalid") && e.contains("nothing was sent"),
        "{e}"
    );
    let e = server
        .extra_err(
            "terminal_batch",
            json!({"sessionId": id, "actions": [{"type": "click", "row": 9, "col": 1}]}),
        )
        .await;
    assert!(e.contains("outside the screen"), "{e}");
    let e = server
        .extra_err(
            "terminal_batch",
            json!({"sessionId": id, "actions": [{"type": "wait"}]}),
        )
        .await;
    assert!(e.contains("needs either `ms` or `pattern`"), "{e}");
    let many: Vec<Value> = (0..51)
        .map(|_| json!({"type": "type", "text": "x"}))
        .collect();
    let e = server
        .extra_err("terminal_batch", json!({"sessionId": id, "actions": many}))
        .await;
    assert!(e.contains("at most 50 items"), "{e}");
    let read = server
        .ok(
            "terminal_read",
            json!({"sessionId": id, "view": "screen", "cursor": false}),
        )
        .await;
    assert!(
        !read["text"].as_str().unwrap().contains("refused"),
        "{read}"
    );
    server.stop().await;
}

#[tokio::test]
async fn a_huge_title_is_cut_in_results() {
    let server = start().await;
    let started = server
        .ok(
            "terminal_start",
            json!({"shell": "bash", "env": {"PS1": "$ "}}),
        )
        .await;
    let id = started["sessionId"].as_str().unwrap().to_string();
    let r = server
        .ok(
            "terminal_exec",
            json!({"sessionId": id, "command": "printf '\\033]2;%s\\007' \"$(head -c 100000 /dev/zero | tr '\\0' T)\"; echo set", "timeout": 20000}),
        )
        .await;
    assert_eq!(r["output"], "set", "{r}");
    let read = server
        .ok("terminal_read", json!({"sessionId": id, "view": "screen"}))
        .await;
    let title = read["title"].as_str().expect("a title");
    assert_eq!(title.chars().count(), 257, "{title}");
    assert!(title.starts_with("TTTT") && title.ends_with('…'), "{title}");
    server.stop().await;
}

/// The numbers of a page of `seq` output, in order (other rows, such as the prompt, left out).
fn numbers(page: &Value) -> Vec<u32> {
    page["text"]
        .as_str()
        .unwrap()
        .lines()
        .filter_map(|l| l.trim().parse().ok())
        .collect()
}

#[tokio::test]
async fn scrollback_reads_back_page_by_page_to_its_limit() {
    let server = start().await;
    let id = sh(&server, 40, 10).await;
    let r = common::exec(&server, &id, "seq 1 3000").await;
    assert_eq!(r["exitCode"], 0, "{r}");
    let read = |page: usize| {
        let (server, id) = (&server, &id);
        async move {
            server
                .ok(
                    "terminal_read",
                    json!({"sessionId": id, "view": "screen", "page": page, "cursor": false}),
                )
                .await
        }
    };
    let now = read(0).await;
    let back = now["pagesBack"].as_u64().unwrap() as usize;
    assert!(back >= 300, "3,000 lines above a 10-row screen: {now}");
    // Every page is a run of consecutive numbers that ends where the page below begins.
    let mut below = numbers(&now);
    for page in 1..=3 {
        let above = numbers(&read(page).await);
        assert_eq!(above.len(), 10, "page {page}: {above:?}");
        assert!(above.windows(2).all(|w| w[1] == w[0] + 1), "{above:?}");
        assert_eq!(
            above.last().unwrap() + 1,
            below[0],
            "page {page} joins the one below"
        );
        below = above;
    }
    // The oldest page (the rest of a page) ends with the first lines printed, the page below
    // it goes on from there.
    let oldest = numbers(&read(back).await);
    let next = numbers(&read(back - 1).await);
    let joined: Vec<u32> = oldest.iter().chain(&next).copied().collect();
    assert!(joined.starts_with(&[1, 2, 3]), "{oldest:?} {next:?}");

    // A session given 100 lines of scrollback keeps the newest 100.
    let small = server
        .ok(
            "terminal_start",
            json!({"env": {"PS1": "$ "}, "cols": 40, "rows": 10, "scrollback": 100}),
        )
        .await;
    let small = small["sessionId"].as_str().unwrap().to_string();
    common::exec(&server, &small, "seq 1 3000").await;
    let now = server
        .ok(
            "terminal_read",
            json!({"sessionId": small, "view": "screen", "page": 0}),
        )
        .await;
    assert_eq!(now["pagesBack"], 10, "{now}");
    let oldest = server
        .ok(
            "terminal_read",
            json!({"sessionId": small, "view": "screen", "page": 10, "cursor": false}),
        )
        .await;
    let oldest = numbers(&oldest);
    assert!(
        oldest.first().is_some_and(|&n| n > 2800),
        "only the newest 100 lines are kept: {oldest:?}"
    );
    server.stop().await;
}

/// A flood of lines, most of which the emulator never parses (only the last scrollback + 2 ×
/// rows lines of a long run of plain text can show): read while it runs, the screen and the
/// newest scrollback page are whole runs of consecutive numbers; after it, the scrollback
/// holds exactly the newest lines, from the first line it must keep.
#[tokio::test]
async fn a_flood_of_lines_leaves_exactly_its_last_lines_on_screen_and_in_scrollback() {
    let server = start().await;
    let started = server
        .ok(
            "terminal_start",
            json!({"env": {"PS1": "$ "}, "cols": 40, "rows": 10, "scrollback": 100}),
        )
        .await;
    let id = started["sessionId"].as_str().unwrap().to_string();
    let read = |page: usize| {
        let (server, id) = (&server, &id);
        async move {
            server
                .ok(
                    "terminal_read",
                    json!({"sessionId": id, "view": "screen", "page": page, "cursor": false}),
                )
                .await
        }
    };
    // While it runs (the line being printed may be cut short: it is left out).
    type_line(&server, &id, "seq 1 2000000").await;
    server
        .ok(
            "terminal_wait",
            json!({"sessionId": id, "pattern": "^1000$", "timeout": 30000}),
        )
        .await;
    for _ in 0..3 {
        let mut screen = numbers(&read(0).await);
        screen.pop();
        assert!(
            screen.windows(2).all(|w| w[1] == w[0] + 1),
            "the screen mid-flood: {screen:?}"
        );
    }
    let waited = server
        .ok(
            "terminal_wait",
            json!({"sessionId": id, "until": "exit", "timeout": 120000}),
        )
        .await;
    assert_eq!(waited["reason"], "exit", "{waited}");
    // After it: the prompt on the last row, 2000000 above it, and 100 rows of scrollback
    // above the screen's first (1999992), the oldest 1999892.
    let now = read(0).await;
    assert_eq!(now["pagesBack"], 10, "{now}");
    let screen = numbers(&now);
    assert_eq!(
        screen,
        (1_999_992..=2_000_000).collect::<Vec<u32>>(),
        "{now}"
    );
    let mut kept = Vec::new();
    for page in (1..=10).rev() {
        kept.extend(numbers(&read(page).await));
    }
    assert_eq!(kept, (1_999_892..=1_999_991).collect::<Vec<u32>>());
    server.stop().await;
}
