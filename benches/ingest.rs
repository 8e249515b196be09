//! Output ingestion: how fast a session drains a command that prints as fast as it can,
//! against a bare PTY reader draining the same command in the same run (SPEC §6: ≥ 90 %;
//! issue 32: ≥ 95 %).
//!
//! Through termpilot, `seq` runs in a `/bin/sh` session: `terminal_write` types it and
//! `terminal_wait` waits either for the line printed after it (a pattern, scanned as output
//! arrives) or for the command's end (`until: exit`); the rate is the log positions covered
//! over the wall time between the two calls. The bare reader is this process on a
//! `portable-pty` PTY of the same size, reading 64 KiB at a time until EOF. Each drain also
//! records the CPU time of the reading side (the whole server process, or the bare reader's
//! thread) per MB. Runs alternate, and the median of each is reported; a last figure is how
//! long detecting a command's end takes (`true`, until exit; /bin/sh is dash, which prints
//! prompt marks through its `PS1`).

use std::io::Read;
use std::time::Instant;

use portable_pty::{CommandBuilder, PtySize, native_pty_system};
use serde_json::json;

use crate::Row;
use crate::client::{Client, median};

/// Roughly 44 MB on a PTY (38.9 MB of digits and newlines, each `\n` sent as `\r\n`).
const COMMAND: &str = "seq 1 5000000";
/// Runs of each drain: five, so that a median survives two runs disturbed by other work on a
/// shared machine.
const RUNS: usize = 5;
/// Runs of the exit-detection figure.
const TAIL_RUNS: usize = 10;
const COLS: u16 = 120;
const ROWS: u16 = 30;
/// The marker printed after the command; typed with quotes inside so the echoed command
/// line never matches it.
const DONE: &str = "__DONE__";
const TYPED_DONE: &str = "echo __DO''NE__";
/// Bound on one drain through termpilot.
const WAIT_MS: u64 = 300_000;

/// How the drain's end is waited for.
#[derive(Clone, Copy)]
enum Until {
    Pattern,
    Exit,
}

/// One drain: bytes, wall seconds, and CPU seconds of the reading side (the whole server,
/// or the bare reader's thread).
#[derive(Clone, Copy)]
struct Drain {
    bytes: u64,
    secs: f64,
    cpu: f64,
}

impl Drain {
    fn mb_per_s(self) -> f64 {
        self.bytes as f64 / 1e6 / self.secs
    }

    fn cpu_ms_per_mb(self) -> f64 {
        self.cpu * 1000.0 / (self.bytes as f64 / 1e6)
    }
}

/// CPU time of the calling thread, in seconds.
fn thread_cpu_secs() -> f64 {
    // SAFETY: getrusage fills the struct it is given.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_THREAD, &mut usage) };
    let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    secs(usage.ru_utime) + secs(usage.ru_stime)
}

/// One drain through a session.
fn through_session(client: &mut Client, id: &str, until: Until) -> Drain {
    let cpu = client.cpu_secs();
    let start = Instant::now();
    let written = client.call_ok(
        "terminal_write",
        json!({"sessionId": id, "data": format!("{COMMAND}; {TYPED_DONE}\r"), "returnOutput": "none"}),
    );
    let from = written["position"].as_u64().expect("position");
    let waited = match until {
        Until::Pattern => client.call_ok(
            "terminal_wait",
            json!({"sessionId": id, "pattern": DONE, "since": from, "timeout": WAIT_MS,
                   "returnMode": "match-only"}),
        ),
        Until::Exit => client.call_ok(
            "terminal_wait",
            json!({"sessionId": id, "until": "exit", "since": from, "timeout": WAIT_MS,
                   "tailLines": 1}),
        ),
    };
    let secs = start.elapsed().as_secs_f64();
    let finished = match until {
        Until::Pattern => waited["matched"] == true,
        Until::Exit => waited["reason"] == "exit",
    };
    assert!(finished, "the drain did not finish: {waited}");
    let to = waited["position"].as_u64().expect("position");
    Drain {
        bytes: to - from,
        secs,
        cpu: client.cpu_secs() - cpu,
    }
}

/// Milliseconds from typing `true` to `terminal_wait` until exit returning: what detecting a
/// command's end costs (the next prompt's marks, or without them the foreground group plus a
/// settle), to set against the drain's wall time.
fn exit_detection(client: &mut Client, id: &str) -> f64 {
    let times = (0..TAIL_RUNS)
        .map(|_| {
            let start = Instant::now();
            client.call_ok(
                "terminal_write",
                json!({"sessionId": id, "data": "true\r", "returnOutput": "none"}),
            );
            let waited = client.call_ok(
                "terminal_wait",
                json!({"sessionId": id, "until": "exit", "timeout": 10000, "tailLines": 1}),
            );
            assert_eq!(waited["reason"], "exit", "{waited}");
            start.elapsed().as_secs_f64() * 1000.0
        })
        .collect();
    median(times)
}

/// One drain by a bare PTY reader in this process.
fn bare_pty() -> Drain {
    let pair = native_pty_system()
        .openpty(PtySize {
            rows: ROWS,
            cols: COLS,
            pixel_width: 0,
            pixel_height: 0,
        })
        .expect("open a PTY");
    let mut cmd = CommandBuilder::new("/bin/sh");
    cmd.args(["-c", COMMAND]);
    let cpu = thread_cpu_secs();
    let start = Instant::now();
    let mut child = pair.slave.spawn_command(cmd).expect("spawn seq");
    drop(pair.slave);
    let mut reader = pair.master.try_clone_reader().expect("PTY reader");
    let mut buf = vec![0u8; 64 * 1024];
    let mut total = 0u64;
    loop {
        match reader.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => total += n as u64,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            // Linux reports the slave's last close as EIO.
            Err(_) => break,
        }
    }
    let secs = start.elapsed().as_secs_f64();
    let cpu = thread_cpu_secs() - cpu;
    let _ = child.wait();
    Drain {
        bytes: total,
        secs,
        cpu,
    }
}

/// The 1-minute load average, to read the ratios against on a shared machine.
fn load() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|l| l.split_whitespace().next().map(str::to_string))
        .unwrap_or_else(|| "?".into())
}

pub fn run() -> Vec<Row> {
    let load_before = load();
    let mut client = Client::spawn(&[]);
    client.initialize();
    let id = client.start_session(json!({"cols": COLS, "rows": ROWS, "env": {"PS1": "$ "}}));
    let (mut bare, mut pattern, mut exit) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..RUNS {
        let b = bare_pty();
        let p = through_session(&mut client, &id, Until::Pattern);
        let e = through_session(&mut client, &id, Until::Exit);
        eprintln!(
            "  ingest: bare {:.1} MB/s ({:.1} ms CPU/MB), session waiting for a pattern {:.1} MB/s ({:.1} ms/MB), until exit {:.1} MB/s ({:.1} ms/MB), {} bytes",
            b.mb_per_s(),
            b.cpu_ms_per_mb(),
            p.mb_per_s(),
            p.cpu_ms_per_mb(),
            e.mb_per_s(),
            e.cpu_ms_per_mb(),
            p.bytes
        );
        bare.push(b);
        pattern.push(p);
        exit.push(e);
    }
    let load_after = load();
    let tail = exit_detection(&mut client, &id);
    client.call_ok("terminal_stop", json!({"sessionId": id}));
    client.close();
    let bytes = pattern[0].bytes;
    let rates = |v: &[Drain]| median(v.iter().map(|d| d.mb_per_s()).collect());
    let cpu = |v: &[Drain]| median(v.iter().map(|d| d.cpu_ms_per_mb()).collect());
    let (bare_cpu, pattern_cpu, exit_cpu) = (cpu(&bare), cpu(&pattern), cpu(&exit));
    let (bare, pattern, exit) = (rates(&bare), rates(&pattern), rates(&exit));
    vec![
        Row {
            figure: format!(
                "ingestion `{COMMAND}` ({:.0} MB), bare PTY reader (median of {RUNS}; load {load_before} → {load_after} on {} cores)",
                bytes as f64 / 1e6,
                std::thread::available_parallelism().map_or(0, |n| n.get())
            ),
            value: format!("{bare:.1} MB/s, {bare_cpu:.1} ms CPU/MB"),
            target: "",
        },
        Row {
            figure: "ingestion through a session, terminal_wait for a pattern (server CPU)".into(),
            value: format!("{pattern:.1} MB/s, {pattern_cpu:.1} ms CPU/MB"),
            target: "",
        },
        Row {
            figure: "ingestion, session (pattern) / bare PTY".into(),
            value: format!("{:.0} %", pattern / bare * 100.0),
            target: "≥ 95 % (issue 32)",
        },
        Row {
            figure: "ingestion through a session, terminal_wait until exit (server CPU)".into(),
            value: format!("{exit:.1} MB/s, {exit_cpu:.1} ms CPU/MB"),
            target: "",
        },
        Row {
            figure: "ingestion, session (until exit) / bare PTY".into(),
            value: format!("{:.0} %", exit / bare * 100.0),
            target: "≥ 95 % (issue 32)",
        },
        Row {
            figure: format!(
                "`true` then terminal_wait until exit, /bin/sh (prompt marks), median of {TAIL_RUNS}"
            ),
            value: format!("{tail:.1} ms"),
            target: "",
        },
    ]
}
