//! Idle memory: the server's resident set with no session, then with 10 idle `/bin/sh`
//! sessions (SPEC §6: server ≤ 8 MiB; each idle session ≤ 3 MiB beyond it). Only the
//! server process is measured; the shells are processes of their own.

use serde_json::json;

use crate::Row;
use crate::client::Client;

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
    let mib = |kib: u64| kib as f64 / 1024.0;
    let per = (idle.saturating_sub(empty)) as f64 / SESSIONS as f64 / 1024.0;
    vec![
        Row {
            figure: "server RSS, 0 sessions".into(),
            value: format!("{:.1} MiB", mib(empty)),
            target: "≤ 8 MiB",
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
    ]
}
