//! Screenshot rendering: a 120×30 screen (a full colourful shell screen, and a TUI with box
//! drawing and bars) rendered to PNG by `termpilot_core::render`, fed straight into a `Term`.

use std::time::Instant;

use alacritty_terminal::event::VoidListener;
use alacritty_terminal::grid::Dimensions;
use alacritty_terminal::term::{Config, Term};
use alacritty_terminal::vte::ansi::Processor;
use termpilot_core::render::{RenderOptions, screenshot};

use crate::Row;
use crate::client::{Client, median};

const COLS: usize = 120;
const ROWS: usize = 30;
const RUNS: usize = 50;

struct Size;

impl Dimensions for Size {
    fn total_lines(&self) -> usize {
        ROWS
    }
    fn screen_lines(&self) -> usize {
        ROWS
    }
    fn columns(&self) -> usize {
        COLS
    }
}

/// 30 lines of `ls -l --color`-like output, every cell of every line used.
fn shell_screen() -> String {
    let colours = ["0", "1;34", "32", "1;32", "36", "35", "33", "31"];
    let mut s = String::new();
    for i in 0..ROWS {
        let c = colours[i % colours.len()];
        let line = format!(
            "-rw-r--r-- 1 agent staff {:>8} Nov 30 00:{:02} \x1b[{c}mfile_{i:03}_with_a_rather_long_name.rs\x1b[0m \x1b[2m# {}\x1b[0m",
            i * 1237,
            i,
            "the quick brown fox jumps over the lazy dog "
        );
        s.push_str(&line);
        s.push_str(&" pad".repeat(10));
        s.push_str("\r\n");
    }
    s
}

/// An htop-like screen: bars, a frame, a highlighted row.
fn tui_screen() -> String {
    let mut s = String::from("\x1b[H");
    for cpu in 0..4 {
        s.push_str(&format!(
            "\x1b[{};1H {cpu}[\x1b[32m{}\x1b[31m{}\x1b[0m{}]",
            cpu + 1,
            "|".repeat(20 + cpu * 5),
            "|".repeat(10),
            " ".repeat(20 - cpu * 5)
        ));
    }
    s.push_str("\x1b[6;1H┌");
    s.push_str(&"─".repeat(COLS - 2));
    s.push('┐');
    for row in 7..ROWS {
        let body = if row == 9 {
            format!(
                "\x1b[7m{:<118}\x1b[0m",
                "  1234 agent  20  0  1.2G  80M S 12.0  0.5 0:01.23 cargo build --release"
            )
        } else {
            format!(
                "{:<118}",
                format!(
                    "  {:>4} agent  20  0  {row}00M  12M S  0.{row}  0.1 0:00.{row:02} /usr/bin/process-{row}",
                    row * 37
                )
            )
        };
        s.push_str(&format!("\x1b[{row};1H│{body}│"));
    }
    s.push_str(&format!("\x1b[{ROWS};1H└{}┘", "─".repeat(COLS - 2)));
    s.push_str("\x1b[1;100H\x1b[44;97m ▁▂▃▄▅▆▇█ ░▒▓ \x1b[0m");
    s
}

fn measure(name: &str, text: &str) -> Vec<Row> {
    let mut term = Term::new(Config::default(), &Size, VoidListener);
    let mut parser: Processor = Processor::new();
    parser.advance(&mut term, text.as_bytes());
    let opts = RenderOptions::default();
    let start = Instant::now();
    let first = screenshot(&term, &opts).expect("render");
    let cold = start.elapsed().as_secs_f64() * 1000.0;
    let mut times = Vec::with_capacity(RUNS);
    for _ in 0..RUNS {
        let start = Instant::now();
        let png = screenshot(&term, &opts).expect("render");
        times.push(start.elapsed().as_secs_f64() * 1000.0);
        assert_eq!(png.bytes.len(), first.bytes.len());
    }
    vec![
        Row {
            figure: format!("screenshot {COLS}×{ROWS}, {name} (median of {RUNS})"),
            value: format!("{:.2} ms", median(times)),
            target: "≤ 15 ms",
        },
        Row {
            figure: format!("screenshot {COLS}×{ROWS}, {name}, first call (glyphs uncached)"),
            value: format!("{cold:.2} ms"),
            target: "",
        },
        Row {
            figure: format!(
                "screenshot {COLS}×{ROWS}, {name}, PNG size ({}×{} px)",
                first.width, first.height
            ),
            value: format!("{:.1} KB", first.bytes.len() as f64 / 1024.0),
            target: "small",
        },
    ]
}

/// The whole tool path: `terminal_screenshot` through `terminal_extra` on a live 120×30
/// session (lock, copy, render off the async workers, base64, JSON-RPC), client to result.
fn tool_round_trip() -> Vec<Row> {
    let mut client = Client::spawn(&[]);
    client.initialize();
    let started = client.call(
        "terminal_start",
        serde_json::json!({"cols": COLS, "rows": ROWS, "env": {"PS1": "$ "}}),
    );
    let id = started["structuredContent"]["sessionId"]
        .as_str()
        .expect("a session")
        .to_string();
    // Fill the screen with coloured text, as `ls --color` would.
    let fill = r"i=0; while [ $i -lt 29 ]; do printf '\033[3%dm%s\033[0m %s\n' $((i%8)) file_$i 'the quick brown fox jumps over the lazy dog, again and again and again and again'; i=$((i+1)); done";
    client.call(
        "terminal_write",
        serde_json::json!({"sessionId": id, "data": format!("{fill}\r")}),
    );
    let args = serde_json::json!({"tool": "terminal_screenshot", "args": {"sessionId": id}});
    client.call("terminal_extra", args.clone());
    let mut times = Vec::with_capacity(RUNS);
    for _ in 0..RUNS {
        let start = Instant::now();
        let result = client.call("terminal_extra", args.clone());
        times.push(start.elapsed().as_secs_f64() * 1000.0);
        assert!(result["content"][1]["data"].is_string(), "{result}");
    }
    client.close();
    vec![Row {
        figure: format!("terminal_screenshot {COLS}×{ROWS}, client to result (median of {RUNS})"),
        value: format!("{:.2} ms", median(times)),
        target: "≤ 15 ms",
    }]
}

pub fn run() -> Vec<Row> {
    let mut rows = measure("shell output", &shell_screen());
    rows.extend(measure("TUI", &tui_screen()));
    rows.extend(tool_round_trip());
    rows
}
