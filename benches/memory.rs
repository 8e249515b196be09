//! Memory: the server's resident set with no session, then with 10 idle `/bin/sh` sessions
//! (SPEC §6: server ≤ 8 MiB, issue 14: ≤ 6 MiB; each idle session ≤ 3 MiB beyond it); what a
//! session that printed 5,000 lines at 120 columns costs the server (issue 14: ≤ 4 MiB); and
//! the server's peak over a workload of sessions, `seq 1 200000`, a REPL and vim (≤ 10 MiB
//! since issue 32, was 12).
//! Only the server process is measured; the shells are processes of their own.

use serde_json::json;

use crate::Row;
use crate::client::{Client, installed};

const SESSIONS: usize = 10;

pub fn run() -> Vec<Row> {
    let mut client = Client::spawn(&[]);
    client.initialize();
    client.call_ok("terminal_list", json!({}));
    let empty = client.rss_kib();
    let empty_anon = client.rss_anon_kib();
    let ids: Vec<String> = (0..SESSIONS)
        .map(|_| client.start_session(json!({"env": {"PS1": "$ "}})))
        .collect();
    // Each shell has printed its prompt and gone quiet: a read returns once output has been
    // idle for 200 ms.
    for id in &ids {
        client.call_ok(
            "terminal_read",
            json!({"sessionId": id, "idleTimeout": 200, "timeout": 5000}),
        );
    }
    let idle = client.rss_kib();
    let idle_anon = client.rss_anon_kib();
    for id in &ids {
        client.call_ok("terminal_stop", json!({"sessionId": id}));
    }
    client.close();
    let (printed, printed_growth) = printed_session();
    let (peak, peak_note) = workload_peak();
    let mib = |kib: u64| kib as f64 / 1024.0;
    let per = (idle.saturating_sub(empty)) as f64 / SESSIONS as f64 / 1024.0;
    vec![
        Row {
            figure: "server RSS, 0 sessions".into(),
            value: format!("{:.1} MiB", mib(empty)),
            target: "≤ 6 MiB",
        },
        Row {
            figure: "server RSS, 0 sessions, anonymous part (the rest is the binary's pages)"
                .into(),
            value: format!("{:.1} MiB", mib(empty_anon)),
            target: "",
        },
        Row {
            figure: format!("server RSS, {SESSIONS} idle /bin/sh sessions (anonymous part)"),
            value: format!("{:.1} MiB ({:.1})", mib(idle), mib(idle_anon)),
            target: "",
        },
        Row {
            figure: "server RSS per idle session".into(),
            value: format!("{per:.2} MiB"),
            target: "≤ 3 MiB",
        },
        Row {
            figure: format!(
                "a session that printed 5,000 lines of 120 columns: server RSS beyond an empty server (growth from the printing: {:.1} MiB)",
                mib(printed_growth)
            ),
            value: format!("{:.1} MiB", mib(printed)),
            target: "≤ 4 MiB",
        },
        Row {
            figure: format!("server peak RSS (VmHWM) over {peak_note}"),
            value: format!("{:.1} MiB", mib(peak)),
            target: "≤ 10 MiB (issue 32)",
        },
    ]
}

/// A fresh server, one bash session of 120 columns printing 5,000 full lines: the server's
/// resident set beyond what it was before the session, and the growth from the printing alone.
fn printed_session() -> (u64, u64) {
    let mut client = Client::spawn(&[]);
    client.initialize();
    client.call_ok("terminal_list", json!({}));
    let empty = client.rss_kib();
    let id = client.start_session(json!({"cols": 120, "env": {"PS1": "$ "}}));
    client.call_ok("terminal_exec", json!({"sessionId": id, "command": "true"}));
    let before = client.rss_kib();
    let r = client.call_ok(
        "terminal_exec",
        json!({"sessionId": id, "timeout": 30000,
               "command": "yes \"$(printf '%0119d' 0)\" | head -n 5000"}),
    );
    assert_eq!(r["exitCode"], 0, "the printing failed: {r}");
    let after = client.rss_kib();
    client.call_ok("terminal_stop", json!({"sessionId": id}));
    client.close();
    (after.saturating_sub(empty), after.saturating_sub(before))
}

/// A fresh server driven through three sessions, `seq 1 200000`, a python3 REPL and vim; its
/// peak resident set, and what the workload had.
fn workload_peak() -> (u64, String) {
    let mut client = Client::spawn(&[]);
    client.initialize();
    let ids: Vec<String> = (0..3)
        .map(|_| client.start_session(json!({"shell": "bash", "env": {"PS1": "$ "}})))
        .collect();
    client.call_ok(
        "terminal_exec",
        json!({"sessionId": ids[0], "command": "seq 1 200000", "timeout": 60000}),
    );
    let mut parts = vec!["3 sessions, seq 1 200000"];
    if installed("python3") {
        run_and_type(&mut client, &ids[1], "python3 -q", &["2+2\r", "exit()\r"]);
        parts.push("a python3 REPL");
    }
    if installed("vim") {
        run_and_type(&mut client, &ids[2], "vim -Nu NONE", &[":q!\r"]);
        parts.push("vim");
    }
    let peak = client.status_kib("VmHWM:");
    // What the resident set is made of once the workload is done: the heap and stacks, and
    // the pages of the binary and its libraries (the peak came during `seq`'s output).
    let (anon, file) = (client.status_kib("RssAnon:"), client.status_kib("RssFile:"));
    let end = format!(
        "; at its end anonymous {:.1} MiB, file-backed {:.1} MiB",
        anon as f64 / 1024.0,
        file as f64 / 1024.0
    );
    for id in &ids {
        client.call_ok("terminal_stop", json!({"sessionId": id}));
    }
    client.close();
    (peak, parts.join(", ") + &end)
}

/// Starts `command` in session `id` with `terminal_exec`, then writes each of `inputs`.
fn run_and_type(client: &mut Client, id: &str, command: &str, inputs: &[&str]) {
    client.call_ok(
        "terminal_exec",
        json!({"sessionId": id, "command": command, "timeout": 20000}),
    );
    for data in inputs {
        client.call_ok("terminal_write", json!({"sessionId": id, "data": data}));
    }
}
