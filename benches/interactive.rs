//! Driving interactive programs (issue 14): a REPL's answer in the `terminal_write` that asked
//! (python3 `2+2` → `4`, and bc, node, sqlite3 when installed: p50 ≤ 2 ms since issue 32, was
//! 10 ms; one call) beside the REPL's own time to answer on a bare PTY read in this process (the
//! floor: it knows what answer to wait for), vim started with `terminal_exec` (one call, reply ≤ 2,500 B) and quit with
//! `terminal_write` (the end seen by `terminal_wait until:exit` ≤ 30 ms after the write).

use std::io::{Read, Write};
use std::sync::mpsc::Receiver;
use std::time::{Duration, Instant};

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
        value: format!(
            "{:.1} ms (bare PTY {})",
            percentile(times, 0.5),
            bare_pty(repl).map_or("–".into(), |t| format!("{t:.1} ms"))
        ),
        target: "≤ 2 ms, 1 call (issue 32)",
    }
}

/// The text of `bytes` without escape sequences (CSI, and ESC with one more byte).
fn strip_escapes(bytes: &[u8]) -> String {
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == 0x1b {
            i += 1;
            if bytes.get(i) == Some(&b'[') {
                i += 1;
                while i < bytes.len() && !(0x40..=0x7e).contains(&bytes[i]) {
                    i += 1;
                }
            }
            i += 1;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Reads chunks from `rx` into `seen` until `done(text so far)`, at most `max`; false if not.
fn read_until(
    rx: &Receiver<Vec<u8>>,
    seen: &mut Vec<u8>,
    max: Duration,
    done: impl Fn(&str) -> bool,
) -> bool {
    let deadline = Instant::now() + max;
    loop {
        if done(&strip_escapes(seen)) {
            return true;
        }
        let left = deadline.saturating_duration_since(Instant::now());
        match rx.recv_timeout(left) {
            Ok(chunk) => seen.extend_from_slice(&chunk),
            Err(_) => return false,
        }
    }
}

/// The REPL's own time to answer (p50 over [`CALLS`]): on a bare PTY read by this process,
/// from writing the input to the answer line and, for a REPL with a prompt, the prompt after
/// it. `None` when the REPL did not answer within the bounds.
fn bare_pty(repl: &Repl) -> Option<f64> {
    use portable_pty::{CommandBuilder, PtySize, native_pty_system};
    let pair = native_pty_system()
        .openpty(PtySize {
            rows: 24,
            cols: 80,
            pixel_width: 0,
            pixel_height: 0,
        })
        .ok()?;
    let mut words = repl.start.split_whitespace();
    let mut cmd = CommandBuilder::new(words.next()?);
    cmd.args(words);
    cmd.env("TERM", "xterm-256color");
    let mut child = pair.slave.spawn_command(cmd).ok()?;
    drop(pair.slave);
    let mut reader = pair.master.try_clone_reader().ok()?;
    let mut writer = pair.master.take_writer().ok()?;
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut buf = [0u8; 64 * 1024];
        while let Ok(n) = reader.read(&mut buf) {
            if n == 0 || tx.send(buf[..n].to_vec()).is_err() {
                break;
            }
        }
    });
    let mut seen = Vec::new();
    let ready = read_until(&rx, &mut seen, Duration::from_secs(20), |t| {
        t.ends_with(repl.ready)
    });
    // Whatever else the start prints (bc: nothing to wait for) comes within the quiet.
    while rx.recv_timeout(Duration::from_millis(300)).is_ok() {}
    let mut times = Vec::with_capacity(CALLS);
    for _ in 0..CALLS {
        if !ready {
            break;
        }
        seen.clear();
        let start = Instant::now();
        if writer.write_all(repl.input.as_bytes()).is_err() {
            break;
        }
        let answered = read_until(&rx, &mut seen, Duration::from_secs(5), |t| {
            // Carriage returns aside: bc and sqlite3 return to the column before answering.
            let t = t.replace('\r', "");
            let Some(at) = t.find(&format!("\n{}\n", repl.answer)) else {
                return false;
            };
            repl.ready.is_empty() || t[at..].ends_with(repl.ready)
        });
        if !answered {
            break;
        }
        times.push(ms(start));
        // Anything printed after the answer (none of these REPLs does) is not the next one's.
        while rx.recv_timeout(Duration::from_millis(20)).is_ok() {}
    }
    let _ = child.kill();
    let _ = child.wait();
    (times.len() == CALLS).then(|| percentile(times, 0.5))
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
