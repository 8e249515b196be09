//! `terminal_exec` in a warm bash session (SPEC §6): `echo hi` client to result (p50 ≤ 5 ms with
//! the user's rc files, whose prompt hooks run at every prompt; ≤ 1.5 ms without them),
//! `sleep 2` (back within 2.05 s: completion detected, no polling tail), and what a large
//! output (`seq 1 200000`) costs the agent in bytes, and how long after a 3,000,000-line
//! command's end its reply comes (≤ 20 ms: the output is rendered while it runs).
//!
//! A server without `terminal_exec` (neither listed nor behind `terminal_extra`) gets one row
//! saying so instead of a failure.

use std::time::Instant;

use serde_json::{Value, json};

use crate::Row;
use crate::client::{Client, percentile};

const TOOL: &str = "terminal_exec";
const WARM_UP: usize = 5;
const CALLS: usize = 200;

/// How the tool is reached: listed directly, or through `terminal_extra`.
struct Exec {
    extra: bool,
}

impl Exec {
    /// Calls `terminal_exec`; returns the structured result and the size of the reply line.
    fn call(&self, client: &mut Client, args: Value) -> (Value, usize) {
        let (name, args) = if self.extra {
            ("terminal_extra", json!({"tool": TOOL, "args": args}))
        } else {
            (TOOL, args)
        };
        let line = client.request_raw("tools/call", json!({"name": name, "arguments": args}));
        let reply: Value = serde_json::from_str(&line).expect("JSON reply");
        let result = &reply["result"];
        if result["isError"] == true || result.is_null() {
            panic!("{TOOL} failed: {reply}");
        }
        (result["structuredContent"].clone(), line.len())
    }

    /// Runs `command` and returns the result, the reply size and the milliseconds it took.
    fn run(&self, client: &mut Client, id: &str, command: &str) -> (Value, usize, f64) {
        let start = Instant::now();
        let (result, bytes) = self.call(
            client,
            json!({"sessionId": id, "command": command, "timeout": 30000}),
        );
        (result, bytes, start.elapsed().as_secs_f64() * 1000.0)
    }
}

pub fn run() -> Vec<Row> {
    let mut client = Client::spawn(&[]);
    client.initialize();
    let (direct, extra) = client.tool_names();
    let exec = if direct.iter().any(|n| n == TOOL) {
        Exec { extra: false }
    } else if extra.iter().any(|n| n == TOOL) {
        Exec { extra: true }
    } else {
        client.close();
        return vec![Row {
            figure: "terminal_exec not available (not in tools/list nor terminal_extra)".into(),
            value: "–".into(),
            target: "",
        }];
    };
    let id = client.start_session(json!({"shell": "bash"}));
    for _ in 0..WARM_UP {
        exec.run(&mut client, &id, "echo hi");
    }
    let mut times = Vec::with_capacity(CALLS);
    for _ in 0..CALLS {
        let (result, _, ms) = exec.run(&mut client, &id, "echo hi");
        let output = result["output"].as_str().unwrap_or_default();
        assert!(output.contains("hi"), "echo hi gave {result}");
        times.push(ms);
    }
    // The same in a bash that reads no rc files of the user's (HOME is an empty folder): what
    // is left is termpilot's own round trip and bash's prompt.
    let home = tempfile::tempdir().unwrap();
    let bare = client
        .start_session(json!({"shell": "bash", "env": {"HOME": home.path().to_str().unwrap()}}));
    for _ in 0..WARM_UP {
        exec.run(&mut client, &bare, "echo hi");
    }
    let bare_times: Vec<f64> = (0..CALLS)
        .map(|_| exec.run(&mut client, &bare, "echo hi").2)
        .collect();
    client.call_ok("terminal_stop", json!({"sessionId": bare}));
    let (slept, _, sleep_ms) = exec.run(&mut client, &id, "sleep 2");
    assert_eq!(slept["timedOut"], false, "sleep 2 timed out: {slept}");
    let (seq, seq_bytes, seq_ms) = exec.run(&mut client, &id, "seq 1 200000");
    let output_len = seq["output"].as_str().map(str::len).unwrap_or(0);
    let mut notes = Vec::new();
    if seq["truncated"] == true {
        notes.push("truncated");
    }
    if seq["fullOutputPath"].is_string() {
        notes.push("fullOutputPath");
    }
    // What is left after the end is known: the reply's wall time minus the command's own.
    let (big, _, big_ms) = exec.run(&mut client, &id, "seq 1 3000000");
    let big_lag = big_ms - big["durationMs"].as_f64().unwrap_or(big_ms);
    client.call_ok("terminal_stop", json!({"sessionId": id}));
    client.close();

    vec![
        Row {
            figure: format!(
                "terminal_exec `seq 1 3000000`: reply after the end ({big_ms:.0} ms in all)"
            ),
            value: format!("{big_lag:.1} ms"),
            target: "≤ 20 ms",
        },
        Row {
            figure: format!(
                "terminal_exec `echo hi`, warm bash session (the user's rc files), p50 of {CALLS}"
            ),
            value: format!("{:.2} ms", percentile(times.clone(), 0.5)),
            target: "≤ 5 ms",
        },
        Row {
            figure: format!(
                "terminal_exec `echo hi`, warm bash session without the user's rc files, p50 of {CALLS}"
            ),
            value: format!("{:.2} ms", percentile(bare_times, 0.5)),
            target: "≤ 1.5 ms",
        },
        Row {
            figure: format!("terminal_exec `echo hi`, p99 of {CALLS}"),
            value: format!("{:.2} ms", percentile(times, 0.99)),
            target: "",
        },
        Row {
            figure: "terminal_exec `sleep 2`, wall time".into(),
            value: format!("{:.3} s", sleep_ms / 1000.0),
            target: "≤ 2.05 s",
        },
        Row {
            figure: format!(
                "terminal_exec `seq 1 200000`: reply bytes (output {output_len} B{}{}), {seq_ms:.0} ms",
                if notes.is_empty() { "" } else { ", " },
                notes.join(", ")
            ),
            value: format!("{seq_bytes} B"),
            target: "small",
        },
    ]
}
