//! Load: 50 sessions printing continuously while an idle 51st session is called (SPEC §6:
//! no call slower than 100 ms p99 on an idle session, memory flat after warm-up).
//!
//! `TERMPILOT_BENCH_SOAK_SECS` sets the duration (default 60 s). Warm-up, not measured,
//! lasts until every printing session has filled its bounded buffers (1.5× the raw log's
//! ring, which also fills the scrollback and the line history), at most half the duration. `TERMPILOT_BENCH_SOAK_LOAD` is the line each of the
//! 50 sessions runs: by default one perl process printing 100 lines every 50 ms (~2,000
//! lines/s per session, a busy build log, no fork per line); `yes` is the torture case,
//! every session printing as fast as the server drains it, which on a small machine
//! measures CPU starvation as much as the server. Calls alternate `terminal_read` on the idle session and `terminal_list`, one
//! every 10 ms; the server's RSS is sampled once a second.

use std::time::{Duration, Instant};

use serde_json::json;

use termpilot_core::session::DEFAULT_CAPACITY;

use crate::Row;
use crate::client::{Client, percentile};

const LOADED: usize = 50;
const DEFAULT_SECS: u64 = 60;
const DEFAULT_LOAD: &str = r#"perl -e '$|=1; while (1) { print "line $_ of a session that keeps printing\n" for 1..100; select(undef, undef, undef, 0.05) }'"#;
/// The same without perl: a fork for every 100 lines, so heavier on a small machine.
const FALLBACK_LOAD: &str =
    "while :; do seq -f 'line %g of a session that keeps printing' 1 100; sleep 0.05; done";
/// The gap between two measured calls.
const PACE: Duration = Duration::from_millis(10);
const RSS_EVERY: Duration = Duration::from_secs(1);
/// Output each printing session has produced when warm-up ends.
const WARM_BYTES: u64 = DEFAULT_CAPACITY as u64 * 3 / 2;

fn duration() -> Duration {
    let secs = std::env::var("TERMPILOT_BENCH_SOAK_SECS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(DEFAULT_SECS)
        .max(1);
    Duration::from_secs(secs)
}

fn load() -> String {
    if let Ok(load) = std::env::var("TERMPILOT_BENCH_SOAK_LOAD") {
        return load;
    }
    let path = std::env::var_os("PATH").unwrap_or_default();
    if std::env::split_paths(&path).any(|d| d.join("perl").is_file()) {
        DEFAULT_LOAD.into()
    } else {
        FALLBACK_LOAD.into()
    }
}

/// Milliseconds one call takes, client to result.
fn timed(client: &mut Client, tool: &str, args: serde_json::Value) -> f64 {
    let start = Instant::now();
    client.call_ok(tool, args);
    start.elapsed().as_secs_f64() * 1000.0
}

/// The loaded sessions' output positions: bytes each has printed so far.
fn printed(client: &mut Client, ids: &[String]) -> Vec<u64> {
    ids.iter()
        .map(|id| {
            let read = client.call_ok(
                "terminal_read",
                json!({"sessionId": id, "view": "screen", "cursor": false, "highlights": false}),
            );
            read["position"].as_u64().unwrap_or(0)
        })
        .collect()
}

fn summary(v: &[f64]) -> String {
    if v.is_empty() {
        return "no calls".into();
    }
    format!(
        "{:.1} / {:.1} / {:.1} ms ({} calls)",
        percentile(v.to_vec(), 0.5),
        percentile(v.to_vec(), 0.99),
        percentile(v.to_vec(), 1.0),
        v.len()
    )
}

pub fn run() -> Vec<Row> {
    let total = duration();
    let load = load();
    let max = (LOADED + 10).to_string();
    let mut client = Client::spawn(&["--max-sessions", &max]);
    client.initialize();
    let rss_empty = client.rss_kib();
    let idle = client.start_session(json!({"env": {"PS1": "$ "}}));
    let loaded: Vec<String> = (0..LOADED)
        .map(|_| {
            let id = client.start_session(json!({"env": {"PS1": "$ "}}));
            client.call_ok(
                "terminal_write",
                json!({"sessionId": id, "data": format!("{load}\r"), "returnOutput": "none"}),
            );
            id
        })
        .collect();
    let read_args = json!({"sessionId": idle, "idleTimeout": 0, "timeout": 0});
    let list_args = json!({});

    // Warm-up: the same calls, not recorded, until the buffers are full.
    let start = Instant::now();
    let mut checked = Instant::now();
    while start.elapsed() < total / 2 {
        timed(&mut client, "terminal_read", read_args.clone());
        timed(&mut client, "terminal_list", list_args.clone());
        std::thread::sleep(PACE);
        if checked.elapsed() >= RSS_EVERY {
            checked = Instant::now();
            if printed(&mut client, &loaded).into_iter().min() >= Some(WARM_BYTES) {
                break;
            }
        }
    }
    let warm_up = start.elapsed();
    let rss_warm = client.rss_kib();
    let printed_warm: u64 = printed(&mut client, &loaded).into_iter().sum();
    let measured_from = Instant::now();

    let mut reads = Vec::new();
    let mut lists = Vec::new();
    let mut rss_max = rss_warm;
    let mut rss_at = Instant::now();
    while start.elapsed() < total {
        reads.push(timed(&mut client, "terminal_read", read_args.clone()));
        std::thread::sleep(PACE);
        lists.push(timed(&mut client, "terminal_list", list_args.clone()));
        std::thread::sleep(PACE);
        if rss_at.elapsed() >= RSS_EVERY {
            rss_max = rss_max.max(client.rss_kib());
            rss_at = Instant::now();
        }
    }
    let rss_end = client.rss_kib();
    let printed_end: u64 = printed(&mut client, &loaded).into_iter().sum();
    let secs = measured_from.elapsed().as_secs_f64();
    let listed = client.call_ok("terminal_list", json!({}));
    let busy = listed["sessions"]
        .as_array()
        .map(|s| s.iter().filter(|s| s["busy"] == true).count())
        .unwrap_or(0);
    eprintln!("  soak: {busy} of {} sessions busy at the end", LOADED + 1);
    client.close();

    let mib = |kib: u64| kib as f64 / 1024.0;
    let shown = if load == DEFAULT_LOAD || load == FALLBACK_LOAD {
        "printing loop".to_string()
    } else {
        format!("`{load}`")
    };
    let what = format!("{LOADED} sessions: {shown}, {}s", total.as_secs());
    vec![
        Row {
            figure: format!("{what}: terminal_read on an idle session, p50 / p99 / max"),
            value: summary(&reads),
            target: "p99 ≤ 100 ms",
        },
        Row {
            figure: format!("{what}: terminal_list, p50 / p99 / max"),
            value: summary(&lists),
            target: "p99 ≤ 100 ms",
        },
        Row {
            figure: format!(
                "{what}: server RSS after {:.0}s warm-up → end (max)",
                warm_up.as_secs_f64()
            ),
            value: format!(
                "{:.1} → {:.1} ({:.1}) MiB",
                mib(rss_warm),
                mib(rss_end),
                mib(rss_max)
            ),
            target: "flat",
        },
        Row {
            figure: format!("{what}: server RSS per printing session (full buffers)"),
            value: format!(
                "{:.1} MiB",
                mib(rss_end.saturating_sub(rss_empty)) / (LOADED + 1) as f64
            ),
            target: "",
        },
        Row {
            figure: format!("{what}: output ingested, all sessions together"),
            value: format!(
                "{:.1} MB/s",
                printed_end.saturating_sub(printed_warm) as f64 / 1e6 / secs
            ),
            target: "",
        },
    ]
}
