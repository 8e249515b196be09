//! Kept sessions (issue 34): `terminal_exec` `echo hi` p50 on a kept session beside a local
//! one, in the same server (target: at most 0.3 ms more), and the session host's resident
//! memory at rest holding one idle session (target ≤ 4 MiB). Both sessions are bash reading
//! no rc files (HOME is an empty folder). The host lives in a private runtime folder of the
//! bench's own and is killed by its pid at the end, whatever happens.

use std::time::Instant;

use serde_json::{Value, json};

use crate::Row;
use crate::client::{Client, median};

const WARM_UP: usize = 10;
const CALLS: usize = 200;

/// Kills the host recorded in `keep` when dropped.
struct HostGuard(std::path::PathBuf);

impl HostGuard {
    fn pid(&self) -> Option<i32> {
        let text = std::fs::read_to_string(self.0.join("host.json")).ok()?;
        let record: Value = serde_json::from_str(&text).ok()?;
        record["pid"].as_i64().map(|p| p as i32)
    }
}

impl Drop for HostGuard {
    fn drop(&mut self) {
        if let Some(pid) = self.pid() {
            // SAFETY: kill(2) on the host this bench started (its own runtime folder's).
            unsafe { libc::kill(pid, libc::SIGKILL) };
        }
    }
}

fn exec_ms(client: &mut Client, id: &str) -> f64 {
    let start = Instant::now();
    let result = client.call_ok(
        "terminal_exec",
        json!({"sessionId": id, "command": "echo hi", "timeout": 30000}),
    );
    let ms = start.elapsed().as_secs_f64() * 1000.0;
    assert!(
        result["output"].as_str().unwrap_or_default().contains("hi"),
        "echo hi gave {result}"
    );
    ms
}

fn status_kib(pid: i32, field: &str) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .unwrap_or_default()
        .lines()
        .find_map(|l| l.strip_prefix(field))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}

pub fn run() -> Vec<Row> {
    let runtime = tempfile::tempdir().unwrap();
    let guard = HostGuard(runtime.path().join("termpilot/keep"));
    let mut client = Client::spawn_with_env(
        &[],
        &[("XDG_RUNTIME_DIR", runtime.path().to_str().unwrap())],
    );
    client.initialize();
    let home = tempfile::tempdir().unwrap();
    let env = json!({"HOME": home.path().to_str().unwrap()});
    let local = client.start_session(json!({"shell": "bash", "env": env}));
    let kept = client.start_session(json!({"shell": "bash", "env": env, "keep": true}));
    for _ in 0..WARM_UP {
        exec_ms(&mut client, &local);
        exec_ms(&mut client, &kept);
    }
    let (mut local_times, mut kept_times) = (Vec::new(), Vec::new());
    // Interleaved, so a noisy moment of the machine costs both alike.
    for _ in 0..CALLS {
        local_times.push(exec_ms(&mut client, &local));
        kept_times.push(exec_ms(&mut client, &kept));
    }
    let (local_p50, kept_p50) = (median(local_times), median(kept_times));
    // At rest: one idle kept session, nothing asked for a moment.
    std::thread::sleep(std::time::Duration::from_secs(2));
    let host = guard.pid().expect("the host's record");
    let rss = status_kib(host, "VmRSS:");
    let anon = status_kib(host, "RssAnon:");
    client.call_ok("terminal_stop", json!({"sessionId": kept}));
    client.close();
    drop(guard);
    vec![
        Row {
            figure: "kept: echo hi p50, local session (bash, no rc)".into(),
            value: format!("{local_p50:.2} ms"),
            target: "",
        },
        Row {
            figure: "kept: echo hi p50, kept session (same server)".into(),
            value: format!("{kept_p50:.2} ms"),
            target: "",
        },
        Row {
            figure: "kept: cost of a kept session's call (p50 difference)".into(),
            value: format!("{:+.2} ms", kept_p50 - local_p50),
            target: "≤ +0.3 ms",
        },
        Row {
            figure: "kept: session host RSS at rest (1 idle session)".into(),
            value: format!(
                "{:.1} MiB ({:.1} MiB anonymous)",
                rss as f64 / 1024.0,
                anon as f64 / 1024.0
            ),
            target: "≤ 4 MiB",
        },
    ]
}
