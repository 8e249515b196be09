//! Many sessions printing flat out (issue 32 item 4): while `TERMPILOT_BENCH_FLAT_SESSIONS`
//! sessions (default 20) each run `yes`, printing as fast as the server drains them, a call on
//! an idle 21st session (`terminal_read`, nothing to read) must answer in p99 ≤ 25 ms: the
//! printing sessions must not starve a quiet one. `TERMPILOT_BENCH_FLAT_SECS` sets how long
//! the calls are measured (default 15 s, after 2 s of printing).

use std::time::{Duration, Instant};

use serde_json::json;

use crate::Row;
use crate::client::{Client, percentile};

const DEFAULT_SESSIONS: usize = 20;
const DEFAULT_SECS: u64 = 15;
const WARM_UP: Duration = Duration::from_secs(2);
/// The gap between two measured calls.
const PACE: Duration = Duration::from_millis(10);

fn env_number(key: &str, default: u64) -> u64 {
    std::env::var(key)
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(default)
        .max(1)
}

pub fn run() -> Vec<Row> {
    let sessions = env_number("TERMPILOT_BENCH_FLAT_SESSIONS", DEFAULT_SESSIONS as u64) as usize;
    let secs = env_number("TERMPILOT_BENCH_FLAT_SECS", DEFAULT_SECS);
    let max = (sessions + 5).to_string();
    let mut client = Client::spawn(&["--max-sessions", &max]);
    client.initialize();
    let idle = client.start_session(json!({"env": {"PS1": "$ "}}));
    let printing: Vec<String> = (0..sessions)
        .map(|_| {
            let id = client.start_session(json!({"env": {"PS1": "$ "}}));
            client.call_ok(
                "terminal_write",
                json!({"sessionId": id, "data": "yes\r", "returnOutput": "none"}),
            );
            id
        })
        .collect();
    std::thread::sleep(WARM_UP);
    let args = json!({"sessionId": idle, "idleTimeout": 0, "timeout": 0});
    let mut times = Vec::new();
    let end = Instant::now() + Duration::from_secs(secs);
    while Instant::now() < end {
        let start = Instant::now();
        client.call_ok("terminal_read", args.clone());
        times.push(start.elapsed().as_secs_f64() * 1000.0);
        std::thread::sleep(PACE);
    }
    for id in &printing {
        client.call_ok("terminal_stop", json!({"sessionId": id}));
    }
    client.close();
    vec![Row {
        figure: format!(
            "{sessions} sessions printing flat out (`yes`), {secs}s: terminal_read on an idle session, p50 / p99 / max ({} calls)",
            times.len()
        ),
        value: format!(
            "{:.1} / {:.1} / {:.1} ms",
            percentile(times.clone(), 0.5),
            percentile(times.clone(), 0.99),
            percentile(times, 1.0)
        ),
        target: "p99 ≤ 25 ms",
    }]
}
