//! Driving interactive programs (issue 14): a REPL's answer in the `terminal_write` that asked
//! (python3 `2+2` → `4`, and bc, node, sqlite3 when installed: p50 ≤ 2 ms since issue 32, was
//! 10 ms; one call), vim started with `terminal_exec` (one call, reply ≤ 2,500 B) and quit with
//! `terminal_write` (the end seen by `terminal_wait until:exit` ≤ 30 ms after the write).

use std::time::Instant;

use serde_json::{Value, json};

use crate::Row;
use crate::client::{Client, installed, percentile};

const CALLS: usize = 30;

/// A REPL: how to start it, what to type, what its answer contains.
struct Repl {
    name: &'static str,
    start: &'static str,
    /// Text on the screen once the REPL is ready for input.
    ready: &'static str,
    input: &'static str,
    answer: &'static str,
}

const REPLS: &[Repl] = &[
    Repl {
        name: "python3",
        start: "python3 -q",
        ready: ">>> ",
        input: "2+2\r",
        answer: "4",
    },
    Repl {
        name: "bc",
        start: "bc -q",
        ready: "",
        input: "2+2\r",
        answer: "4",
    },
    Repl {
        name: "node",
        start: "node",
        ready: "> ",
        input: "2+2\r",
        answer: "4",
    },
    Repl {
        name: "sqlite3",
        start: "sqlite3",
        ready: "sqlite> ",
        input: "select 2+2;\r",
        answer: "4",
    },
];

fn ms(start: Instant) -> f64 {
    start.elapsed().as_secs_f64() * 1000.0
}

/// `terminal_write` of `data`; the reply and the milliseconds it took.
fn write(client: &mut Client, id: &str, data: &str) -> (Value, f64) {
    let start = Instant::now();
    let r = client.call_ok("terminal_write", json!({"sessionId": id, "data": data}));
    (r, ms(start))
}

fn repl_row(client: &mut Client, repl: &Repl) -> Row {
    let id = client.start_session(json!({"shell": "bash", "env": {"PS1": "$ "}}));
    client.call_ok(
        "terminal_write",
        json!({"sessionId": id, "data": format!("{}\r", repl.start), "returnOutput": "none"}),
    );
    if !repl.ready.is_empty() {
        client.call_ok(
            "terminal_wait",
            json!({"sessionId": id, "pattern": regex::escape(repl.ready), "on": "screen", "timeout": 20000}),
        );
    } else {
        client.call_ok(
            "terminal_wait",
            json!({"sessionId": id, "until": "quiet", "quietMs": 300, "timeout": 20000}),
        );
    }
    let mut times = Vec::with_capacity(CALLS);
    let mut missed = 0;
    for _ in 0..CALLS {
        let (r, t) = write(client, &id, repl.input);
        let output = r["output"].as_str().unwrap_or_default();
        if !output.lines().any(|l| l.trim() == repl.answer) {
            missed += 1;
        }
        times.push(t);
    }
    client.call_ok("terminal_stop", json!({"sessionId": id}));
    Row {
        figure: format!(
            "{}: `{}` → `{}` in the write's reply, p50 (answer missing {missed}/{CALLS})",
            repl.name,
            repl.input.trim_end(),
            repl.answer
        ),
        value: format!("{:.1} ms", percentile(times, 0.5)),
        target: "≤ 2 ms, 1 call (issue 32)",
    }
}

fn vim_rows(client: &mut Client) -> Vec<Row> {
    let id = client.start_session(json!({"shell": "bash", "env": {"PS1": "$ "}}));
    let file = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(file.path(), "hello from the bench\n").unwrap();
    let start = Instant::now();
    let line = client.request_raw(
        "tools/call",
        json!({"name": "terminal_exec", "arguments": {"sessionId": id,
              "command": format!("vim -Nu NONE {}", file.path().display()), "timeout": 20000}}),
    );
    let start_ms = ms(start);
    let reply: Value = serde_json::from_str(&line).unwrap();
    let seen = line.contains("hello from the bench");
    let waiting = reply["result"]["structuredContent"]["waitingForInput"] == true;
    let start_quit = Instant::now();
    client.call_ok(
        "terminal_write",
        json!({"sessionId": id, "data": ":q!\r", "returnOutput": "none"}),
    );
    let w = client.call_ok(
        "terminal_wait",
        json!({"sessionId": id, "until": "exit", "timeout": 20000}),
    );
    let quit_ms = ms(start_quit);
    let ended = w["reason"] == "exit";
    client.call_ok("terminal_stop", json!({"sessionId": id}));
    vec![
        Row {
            figure: format!(
                "vim FILE by terminal_exec: reply bytes, one call (file seen: {seen}, waitingForInput: {waiting}; {start_ms:.0} ms)"
            ),
            value: format!("{} B", line.len()),
            target: "≤ 2,500 B",
        },
        Row {
            figure: format!(
                ":q! written → the end seen by terminal_wait until:exit (ended: {ended})"
            ),
            value: format!("{quit_ms:.1} ms"),
            target: "≤ 30 ms",
        },
    ]
}

pub fn run() -> Vec<Row> {
    let mut client = Client::spawn(&[]);
    client.initialize();
    let mut rows = Vec::new();
    for repl in REPLS {
        if installed(repl.name) {
            rows.push(repl_row(&mut client, repl));
        } else {
            rows.push(Row {
                figure: format!("{}: not installed", repl.name),
                value: "–".into(),
                target: "",
            });
        }
    }
    if installed("vim") {
        rows.extend(vim_rows(&mut client));
    }
    client.close();
    rows
}
