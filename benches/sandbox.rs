//! What the kernel sandbox costs (issue 15): `echo hi` through `terminal_exec` in a
//! `--sandbox workspace-write` session against an unsandboxed one (within 10 %), the
//! session's start (within 5 ms), and a one-shot `terminal_run` of `true`. The write root is a
//! git checkout, so the read-only git mounts are part of every sandboxed start; the session's
//! HOME has no startup files, so prompt hooks of the user's own (pyenv, direnv) stay out of it.
//!
//! The two servers run side by side and every sample is taken in pairs, in alternating order,
//! so a drift of the machine (frequency, another process) weighs on both sides alike: taken one
//! server after the other, a sub-millisecond `echo hi` read anywhere from −11 % to +22 %.

use std::time::Instant;

use serde_json::json;

use crate::Row;
use crate::client::{Client, median, percentile};

const WARM_UP: usize = 5;
const CALLS: usize = 200;
const STARTS: usize = 20;
const RUNS: usize = 50;

/// One server, unsandboxed or sandboxed, and the samples taken from it.
struct Side {
    client: Client,
    /// The session `echo hi` runs in, once the starts are measured.
    session: Option<String>,
    execs: Vec<f64>,
    starts: Vec<f64>,
    runs: Vec<f64>,
}

fn ms_since(t: Instant) -> f64 {
    t.elapsed().as_secs_f64() * 1000.0
}

impl Side {
    fn spawn(args: &[&str]) -> Side {
        let mut client = Client::spawn(args);
        client.initialize();
        Side {
            client,
            session: None,
            execs: Vec::with_capacity(CALLS),
            starts: Vec::with_capacity(STARTS),
            runs: Vec::with_capacity(RUNS),
        }
    }

    /// Starts a session and stops it again; the time to the start's reply.
    fn start_and_stop(&mut self, session: &serde_json::Value) -> f64 {
        let t = Instant::now();
        let id = self.client.start_session(session.clone());
        let ms = ms_since(t);
        self.client
            .call_ok("terminal_stop", json!({"sessionId": id}));
        ms
    }

    fn exec_echo(&mut self) -> f64 {
        let id = self.session.as_deref().expect("a session to exec in");
        let t = Instant::now();
        let r = self.client.call_ok(
            "terminal_exec",
            json!({"sessionId": id, "command": "echo hi", "timeout": 30000}),
        );
        assert_eq!(r["output"], "hi", "echo hi gave {r}");
        ms_since(t)
    }

    fn run_true(&mut self, root: &str) -> f64 {
        let t = Instant::now();
        let r = self
            .client
            .call_ok("terminal_run", json!({"cmd": "true", "cwd": root}));
        assert_eq!(r["exitCode"], 0, "{r}");
        ms_since(t)
    }

    fn close(mut self) {
        if let Some(id) = self.session.take() {
            self.client
                .call_ok("terminal_stop", json!({"sessionId": id}));
        }
        self.client.close();
    }
}

/// Takes one sample from each side, the unsandboxed one first on even rounds.
fn pair(round: usize, plain: &mut Side, boxed: &mut Side, mut sample: impl FnMut(&mut Side)) {
    if round.is_multiple_of(2) {
        sample(plain);
        sample(boxed);
    } else {
        sample(boxed);
        sample(plain);
    }
}

fn measure(plain: &mut Side, boxed: &mut Side, root: &str, home: &str) {
    // A HOME without startup files: the figure is the sandbox's, not the user's prompt hooks'.
    let session = json!({"shell": "bash", "cwd": root, "env": {"HOME": home}});
    for round in 0..STARTS {
        pair(round, plain, boxed, |side| {
            let ms = side.start_and_stop(&session);
            side.starts.push(ms);
        });
    }
    for side in [&mut *plain, &mut *boxed] {
        side.session = Some(side.client.start_session(session.clone()));
        for _ in 0..WARM_UP {
            side.exec_echo();
        }
    }
    for round in 0..CALLS {
        pair(round, plain, boxed, |side| {
            let ms = side.exec_echo();
            side.execs.push(ms);
        });
    }
    for round in 0..RUNS {
        pair(round, plain, boxed, |side| {
            let ms = side.run_true(root);
            side.runs.push(ms);
        });
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
    let mut plain = Side::spawn(&[]);
    let mut boxed = Side::spawn(&["--sandbox", "workspace-write", "--writable", root]);
    measure(&mut plain, &mut boxed, root, home);
    let exec_p50 = |s: &Side| percentile(s.execs.clone(), 0.5);
    let exec_p99 = |s: &Side| percentile(s.execs.clone(), 0.99);
    let start = |s: &Side| median(s.starts.clone());
    let run = |s: &Side| median(s.runs.clone());
    let rows = vec![
        Row {
            figure: format!(
                "sandbox: terminal_exec `echo hi`, p50 of {CALLS} paired calls, off → workspace-write"
            ),
            value: format!(
                "{:.2} → {:.2} ms ({:+.0} %)",
                exec_p50(&plain),
                exec_p50(&boxed),
                (exec_p50(&boxed) / exec_p50(&plain) - 1.0) * 100.0
            ),
            target: "≤ +10 %",
        },
        Row {
            figure: format!(
                "sandbox: terminal_exec `echo hi`, p99 of {CALLS} paired calls, off → workspace-write"
            ),
            value: format!("{:.2} → {:.2} ms", exec_p99(&plain), exec_p99(&boxed)),
            target: "",
        },
        Row {
            figure: format!(
                "sandbox: terminal_start (bash), median of {STARTS} pairs, off → workspace-write"
            ),
            value: format!(
                "{:.2} → {:.2} ms ({:+.2} ms)",
                start(&plain),
                start(&boxed),
                start(&boxed) - start(&plain)
            ),
            target: "≤ +5 ms",
        },
        Row {
            figure: format!(
                "sandbox: terminal_run `true`, median of {RUNS} pairs, off → workspace-write"
            ),
            value: format!(
                "{:.2} → {:.2} ms ({:+.2} ms)",
                run(&plain),
                run(&boxed),
                run(&boxed) - run(&plain)
            ),
            target: "",
        },
    ];
    plain.close();
    boxed.close();
    rows
}
