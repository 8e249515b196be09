//! The session reader's work without a PTY: the bytes of `seq 1 5000000` as a terminal sends
//! them (`\r\n` line ends), fed in 4 KiB chunks (what one PTY read returns) through each
//! consumer a session's reader thread feeds: the emulator and the line history alone, then
//! all four (with the raw log and the echo mask, which cost next to nothing), as the reader
//! does. This is the ceiling of
//! ingestion through a session, to set against the kernel's PTY rate in `ingest`.

use std::time::{Duration, Instant};

use termpilot_core::session::EchoMask;
use termpilot_core::session::LineHistory;
use termpilot_core::session::{DEFAULT_CAPACITY, OutputLog};
use termpilot_core::session::{Emulator, Size};

use crate::Row;
use crate::client::median;

const LINES: u32 = 5_000_000;
const CHUNK: usize = 4096;
const RUNS: usize = 3;
const SIZE: Size = Size {
    cols: 120,
    rows: 30,
};
/// The default scrollback of a session.
const SCROLLBACK: usize = 5000;

fn seq_output() -> Vec<u8> {
    let mut out = Vec::with_capacity(45_000_000);
    for i in 1..=LINES {
        out.extend_from_slice(i.to_string().as_bytes());
        out.extend_from_slice(b"\r\n");
    }
    out
}

/// MB/s of `feed` over the whole input, median of [`RUNS`], each on fresh state.
fn rate<S>(input: &[u8], new: impl Fn() -> S, feed: impl Fn(&mut S, &[u8], u64)) -> f64 {
    let runs = (0..RUNS)
        .map(|_| {
            let mut state = new();
            let start = Instant::now();
            let mut at = 0u64;
            for chunk in input.chunks(CHUNK) {
                feed(&mut state, chunk, at);
                at += chunk.len() as u64;
            }
            input.len() as f64 / 1e6 / start.elapsed().as_secs_f64()
        })
        .collect();
    median(runs)
}

struct All {
    emu: Emulator,
    history: LineHistory,
    log: OutputLog,
    echo: EchoMask,
}

pub fn run() -> Vec<Row> {
    let input = seq_output();
    let emulator = rate(
        &input,
        || Emulator::new(SIZE, SCROLLBACK),
        |e, c, _| {
            e.feed(c);
        },
    );
    let history = rate(&input, LineHistory::default, |h, c, _| h.feed(c));
    let all = rate(
        &input,
        || All {
            emu: Emulator::new(SIZE, SCROLLBACK),
            history: LineHistory::default(),
            log: OutputLog::new(DEFAULT_CAPACITY),
            echo: EchoMask::default(),
        },
        |a, c, at| {
            a.log.push(c, Duration::ZERO);
            a.history.feed(c);
            a.echo.observe(c, at);
            a.emu.feed(c);
        },
    );
    let row = |what: &str, v: f64| Row {
        figure: format!("reader work on `seq 1 5000000`, in process: {what}"),
        value: format!("{v:.1} MB/s"),
        target: "",
    };
    vec![
        row("emulator (120×30, 5000 lines scrollback)", emulator),
        row("line history", history),
        row("all four, as the reader thread does", all),
    ]
}
