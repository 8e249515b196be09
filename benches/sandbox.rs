//! What the kernel sandbox costs (issue 15): `echo hi` through `terminal_exec` in a
//! `--sandbox workspace-write` session against an unsandboxed one (within 10 %), the
//! session's start (within 5 ms), and a one-shot `terminal_run` of `true`. The write root is a
//! git checkout, so the read-only git mounts are part of every sandboxed start; the session's
//! HOME has no startup files, so prompt hooks of the user's own (pyenv, direnv) stay out of it.

use std::time::Instant;

use serde_json::json;

use crate::Row;
use crate::client::{Client, median, percentile};

const WARM_UP: usize = 5;
const CALLS: usize = 200;
const STARTS: usize = 20;
const RUNS: usize = 50;

struct Figures {
    exec_p50: f64,
    exec_p99: f64,
    start_median: f64,
    run_median: f64,
}

fn ms_since(t: Instant) -> f64 {
    t.elapsed().as_secs_f64() * 1000.0
}

fn measure(args: &[&str], root: &str, home: &str) -> Figures {
    let mut client = Client::spawn(args);
    client.initialize();
    // A HOME without startup files: the figure is the sandbox's, not the user's prompt hooks'.
    let session = json!({"shell": "bash", "cwd": root, "env": {"HOME": home}});
    let mut starts = Vec::with_capacity(STARTS);
    for _ in 0..STARTS {
        let t = Instant::now();
        let id = client.start_session(session.clone());
        starts.push(ms_since(t));
        client.call_ok("terminal_stop", json!({"sessionId": id}));
    }
    let id = client.start_session(session);
    let exec = |client: &mut Client| {
        let t = Instant::now();
        let r = client.call_ok(
            "terminal_exec",
            json!({"sessionId": id, "command": "echo hi", "timeout": 30000}),
        );
        assert_eq!(r["output"], "hi", "echo hi gave {r}");
        ms_since(t)
    };
    for _ in 0..WARM_UP {
        exec(&mut client);
    }
    let times: Vec<f64> = (0..CALLS).map(|_| exec(&mut client)).collect();
    let mut runs = Vec::with_capacity(RUNS);
    for _ in 0..RUNS {
        let t = Instant::now();
        let r = client.call_ok("terminal_run", json!({"cmd": "true", "cwd": root}));
        assert_eq!(r["exitCode"], 0, "{r}");
        runs.push(ms_since(t));
    }
    client.call_ok("terminal_stop", json!({"sessionId": id}));
    client.close();
    Figures {
        exec_p50: percentile(times.clone(), 0.5),
        exec_p99: percentile(times, 0.99),
        start_median: median(starts),
        run_median: median(runs),
    }
}

pub fn run() -> Vec<Row> {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    let _ = std::process::Command::new("git")
        .args(["init", "-q"])
        .current_dir(&root)
        .status();
    let home = tempfile::tempdir().unwrap();
    let (root, home) = (root.to_str().unwrap(), home.path().to_str().unwrap());
    let plain = measure(&[], root, home);
    let boxed = measure(
        &["--sandbox", "workspace-write", "--writable", root],
        root,
        home,
    );
    vec![
        Row {
            figure: format!(
                "sandbox: terminal_exec `echo hi`, p50 of {CALLS}, off → workspace-write"
            ),
            value: format!(
                "{:.2} → {:.2} ms ({:+.0} %)",
                plain.exec_p50,
                boxed.exec_p50,
                (boxed.exec_p50 / plain.exec_p50 - 1.0) * 100.0
            ),
            target: "≤ +10 %",
        },
        Row {
            figure: format!(
                "sandbox: terminal_exec `echo hi`, p99 of {CALLS}, off → workspace-write"
            ),
            value: format!("{:.2} → {:.2} ms", plain.exec_p99, boxed.exec_p99),
            target: "",
        },
        Row {
            figure: format!(
                "sandbox: terminal_start (bash), median of {STARTS}, off → workspace-write"
            ),
            value: format!(
                "{:.2} → {:.2} ms ({:+.2} ms)",
                plain.start_median,
                boxed.start_median,
                boxed.start_median - plain.start_median
            ),
            target: "≤ +5 ms",
        },
        Row {
            figure: format!(
                "sandbox: terminal_run `true`, median of {RUNS}, off → workspace-write"
            ),
            value: format!(
                "{:.2} → {:.2} ms ({:+.2} ms)",
                plain.run_median,
                boxed.run_median,
                boxed.run_median - plain.run_median
            ),
            target: "",
        },
    ]
}
