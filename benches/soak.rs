//! Load: 50 sessions printing continuously while an idle 51st session is called (SPEC §6:
//! no call slower than 100 ms p99 on an idle session, memory flat after warm-up).
//!
//! `TERMPILOT_BENCH_SOAK_SECS` sets the duration (default 60 s); the first sixth of it
//! (2–10 s) is warm-up, not measured. `TERMPILOT_BENCH_SOAK_LOAD` is the line each of the
//! 50 sessions runs: by default a loop printing 100 lines every 50 ms (~2,000 lines/s per
//! session, a busy build log); `yes` is the torture case, every session printing as fast as
//! the server drains it, which on a small machine measures CPU starvation as much as the
//! server. Calls alternate `terminal_read` on the idle session and `terminal_list`, one
//! every 10 ms; the server's RSS is sampled once a second.

use std::time::{Duration, Instant};

use serde_json::json;

use crate::Row;
use crate::client::{Client, percentile};

const LOADED: usize = 50;
const DEFAULT_SECS: u64 = 60;
const DEFAULT_LOAD: &str =
    "while :; do seq -f 'line %g of a session that keeps printing' 1 100; sleep 0.05; done";
/// The gap between two measured calls.
const PACE: Duration = Duration::from_millis(10);
const RSS_EVERY: Duration = Duration::from_secs(1);

fn duration() -> Duration {
    let secs = std::env::var("TERMPILOT_BENCH_SOAK_SECS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(DEFAULT_SECS)
        .max(1);
    Duration::from_secs(secs)
}

fn load() -> String {
    std::env::var("TERMPILOT_BENCH_SOAK_LOAD").unwrap_or_else(|_| DEFAULT_LOAD.into())
}

/// Milliseconds one call takes, client to result.
fn timed(client: &mut Client, tool: &str, args: serde_json::Value) -> f64 {
    let start = Instant::now();
    client.call_ok(tool, args);
    start.elapsed().as_secs_f64() * 1000.0
}

/// The sum of the loaded sessions' output positions: bytes they have printed so far.
fn printed(client: &mut Client, ids: &[String]) -> u64 {
    ids.iter()
        .map(|id| {
            let read = client.call_ok(
                "terminal_read",
                json!({"sessionId": id, "view": "screen", "cursor": false, "highlights": false}),
            );
            read["position"].as_u64().unwrap_or(0)
        })
        .sum()
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
    let warm_up = (total / 6).clamp(Duration::from_secs(2), Duration::from_secs(10));
    let load = load();
    let max = (LOADED + 10).to_string();
    let mut client = Client::spawn(&["--max-sessions", &max]);
    client.initialize();
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

    // Warm-up: the same calls, not recorded.
    let start = Instant::now();
    while start.elapsed() < warm_up {
        timed(&mut client, "terminal_read", read_args.clone());
        timed(&mut client, "terminal_list", list_args.clone());
        std::thread::sleep(PACE);
    }
    let rss_warm = client.rss_kib();
    let printed_warm = printed(&mut client, &loaded);
    let measured_from = Instant::now();

    let mut reads = Vec::new();
    let mut lists = Vec::new();
    let mut rss_max = rss_warm;
    let mut rss_at = Instant::now();
    while start.elapsed() < total.max(warm_up + Duration::from_secs(1)) {
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
    let printed_end = printed(&mut client, &loaded);
    let secs = measured_from.elapsed().as_secs_f64();
    let listed = client.call_ok("terminal_list", json!({}));
    let busy = listed["sessions"]
        .as_array()
        .map(|s| s.iter().filter(|s| s["busy"] == true).count())
        .unwrap_or(0);
    eprintln!("  soak: {busy} of {} sessions busy at the end", LOADED + 1);
    client.close();

    let mib = |kib: u64| kib as f64 / 1024.0;
    let shown = if load == DEFAULT_LOAD {
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
                "{what}: server RSS after {}s warm-up → end (max)",
                warm_up.as_secs()
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
            figure: format!("{what}: output ingested, all sessions together"),
            value: format!(
                "{:.1} MB/s",
                printed_end.saturating_sub(printed_warm) as f64 / 1e6 / secs
            ),
            target: "",
        },
    ]
}
