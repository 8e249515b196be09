//! Many HTTP clients at once (issue 32 item 4): `termpilot --http` on loopback, 50 MCP clients
//! (`TERMPILOT_BENCH_HTTP_CLIENTS`), each with its own MCP session and its own terminal session,
//! all calling `terminal_exec` `echo hi` at the same time, 20 calls each. Every call must
//! succeed (the errors are counted) and answer in p99 ≤ 20 ms, client to result.
//!
//! The calls are timed between two barriers: every client has its session before the first
//! `echo hi` goes out, and none stops its session before the last one is answered, so the
//! figure is fifty sessions driven at once, not the tail of fifty shells starting (or being
//! killed and their process trees swept) beside it.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::Row;
use crate::client::{percentile, server_bin};

const DEFAULT_CLIENTS: usize = 50;
/// Calls per client (`TERMPILOT_BENCH_HTTP_CALLS`; more for a profile of the timed part).
const CALLS: usize = 20;

fn calls() -> usize {
    std::env::var("TERMPILOT_BENCH_HTTP_CALLS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(CALLS)
        .max(1)
}
const TOKEN: &str = "bench-token-0123456789abcdef";
const CALL_TIMEOUT: Duration = Duration::from_secs(60);
/// The longest a client waits at a barrier for the others.
const BARRIER_TIMEOUT: Duration = Duration::from_secs(300);

/// One MCP client over Streamable HTTP: its own connection pool and MCP session.
struct Http {
    client: reqwest::Client,
    url: String,
    session: Option<String>,
    next_id: u64,
}

impl Http {
    /// Sends one JSON-RPC message; the result of a request (`None` for a notification).
    async fn send(&mut self, method: &str, params: Value, notify: bool) -> Result<Value, String> {
        let mut body = json!({"jsonrpc": "2.0", "method": method, "params": params});
        let id = self.next_id;
        if !notify {
            body["id"] = json!(id);
            self.next_id += 1;
        }
        let mut request = self
            .client
            .post(&self.url)
            .bearer_auth(TOKEN)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .body(body.to_string());
        if let Some(session) = &self.session {
            request = request.header("mcp-session-id", session);
        }
        let response = tokio::time::timeout(CALL_TIMEOUT, request.send())
            .await
            .map_err(|_| format!("{method}: no answer in {CALL_TIMEOUT:?}"))?
            .map_err(|e| format!("{method}: {e}"))?;
        let status = response.status();
        if let Some(session) = response.headers().get("mcp-session-id") {
            self.session = session.to_str().ok().map(str::to_string);
        }
        let text = response
            .text()
            .await
            .map_err(|e| format!("{method}: {e}"))?;
        if !status.is_success() {
            return Err(format!("{method}: HTTP {status}: {text}"));
        }
        if notify {
            return Ok(Value::Null);
        }
        // A JSON body, or server-sent events whose `data:` lines carry the reply.
        let reply = std::iter::once(text.as_str())
            .chain(text.lines().filter_map(|l| l.strip_prefix("data:")))
            .filter_map(|chunk| serde_json::from_str::<Value>(chunk.trim()).ok())
            .find(|v| v["id"] == json!(id))
            .ok_or_else(|| format!("{method}: no reply in {text}"))?;
        if let Some(error) = reply.get("error") {
            return Err(format!("{method}: {error}"));
        }
        Ok(reply["result"].clone())
    }

    async fn call(&mut self, tool: &str, args: Value) -> Result<Value, String> {
        let result = self
            .send(
                "tools/call",
                json!({"name": tool, "arguments": args}),
                false,
            )
            .await?;
        if result["isError"] == true {
            return Err(format!("{tool}: {result}"));
        }
        Ok(result["structuredContent"].clone())
    }
}

/// Waits, at most [`BARRIER_TIMEOUT`], until every client is here; true for the one client
/// the barrier names its leader.
async fn meet(barrier: &tokio::sync::Barrier) -> Result<bool, String> {
    tokio::time::timeout(BARRIER_TIMEOUT, barrier.wait())
        .await
        .map(|w| w.is_leader())
        .map_err(|_| format!("the other clients did not come in {BARRIER_TIMEOUT:?}"))
}

/// CPU seconds the process `pid` has used so far (user and system, all its threads).
fn cpu_secs(pid: u32) -> f64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    // Fields after the command name: utime is the 12th, stime the 13th.
    let fields: Vec<&str> = stat
        .rsplit_once(") ")
        .map_or(Vec::new(), |(_, rest)| rest.split(' ').collect());
    let ticks = |i: usize| {
        fields
            .get(i)
            .and_then(|f| f.parse::<u64>().ok())
            .unwrap_or(0)
    };
    // SAFETY: sysconf has no preconditions.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) } as f64;
    (ticks(11) + ticks(12)) as f64 / hz
}

/// The server's CPU seconds when the timed part began and ended (its leader client notes them).
type Window = std::sync::Arc<std::sync::Mutex<(f64, f64)>>;

/// One client's session: initialised, with a terminal session started; its id.
async fn open(http: &mut Http) -> Result<String, String> {
    http.send(
        "initialize",
        json!({"protocolVersion": "2025-11-25", "capabilities": {},
               "clientInfo": {"name": "bench", "version": "0"}}),
        false,
    )
    .await?;
    http.send("notifications/initialized", json!({}), true)
        .await?;
    let started = http
        .call("terminal_start", json!({"env": {"PS1": "$ "}}))
        .await?;
    Ok(started["sessionId"]
        .as_str()
        .ok_or("no sessionId")?
        .to_string())
}

/// The timed part: the milliseconds of each `echo hi`.
async fn echo(http: &mut Http, id: &str) -> Result<Vec<f64>, String> {
    let calls = calls();
    let mut times = Vec::with_capacity(calls);
    for _ in 0..calls {
        let start = Instant::now();
        let r = http
            .call(
                "terminal_exec",
                json!({"sessionId": id, "command": "echo hi"}),
            )
            .await?;
        times.push(start.elapsed().as_secs_f64() * 1000.0);
        if r["output"] != "hi" {
            return Err(format!("echo hi answered {r}"));
        }
    }
    Ok(times)
}

/// One client's whole run: the milliseconds of each `echo hi`, or what went wrong. Every
/// client meets the others at both barriers, whatever happened to it.
async fn drive(
    url: String,
    barrier: std::sync::Arc<tokio::sync::Barrier>,
    server: u32,
    window: Window,
) -> Result<Vec<f64>, String> {
    let mut http = Http {
        client: reqwest::Client::new(),
        url,
        session: None,
        next_id: 1,
    };
    let opened = open(&mut http).await;
    if meet(&barrier).await? {
        window.lock().unwrap().0 = cpu_secs(server);
    }
    let times = match &opened {
        Ok(id) => echo(&mut http, id).await,
        Err(e) => Err(e.clone()),
    };
    if meet(&barrier).await? {
        window.lock().unwrap().1 = cpu_secs(server);
    }
    let times = times?;
    http.call("terminal_stop", json!({"sessionId": opened?}))
        .await?;
    Ok(times)
}

pub fn run() -> Vec<Row> {
    let clients = std::env::var("TERMPILOT_BENCH_HTTP_CLIENTS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(DEFAULT_CLIENTS)
        .max(1);
    let state = tempfile::tempdir().unwrap();
    let max = (clients + 10).to_string();
    let mut child = Command::new(server_bin())
        .args(["--http", "127.0.0.1:0", "--max-sessions", &max])
        .env("TERMPILOT_STATE_DIR", state.path())
        .env("TERMPILOT_SHELL", "/bin/sh")
        .env("TERMPILOT_TOKEN", TOKEN)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn termpilot --http");
    // The address is on stderr; the rest of stderr is drained so the server never blocks.
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let address = lines.by_ref().map_while(Result::ok).find_map(|l| {
        l.strip_prefix("termpilot: listening on ")
            .map(|a| a.trim().to_string())
    });
    std::thread::spawn(move || for _ in lines {});
    let Some(address) = address else {
        let _ = child.kill();
        let _ = child.wait();
        panic!("termpilot --http ended before it listened");
    };
    let url = format!("{address}/mcp");
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let window = Window::default();
    let server = child.id();
    let results = runtime.block_on(async {
        let barrier = std::sync::Arc::new(tokio::sync::Barrier::new(clients));
        let tasks: Vec<_> = (0..clients)
            .map(|_| tokio::spawn(drive(url.clone(), barrier.clone(), server, window.clone())))
            .collect();
        let mut results = Vec::new();
        for task in tasks {
            results.push(task.await.unwrap_or_else(|e| Err(e.to_string())));
        }
        results
    });
    let _ = child.kill();
    let _ = child.wait();
    let mut times = Vec::new();
    let mut errors = Vec::new();
    for result in results {
        match result {
            Ok(t) => times.extend(t),
            Err(e) => errors.push(e),
        }
    }
    if let Some(first) = errors.first() {
        eprintln!(
            "  http: {} client(s) failed, the first: {first}",
            errors.len()
        );
    }
    let answered = times.len();
    let (cpu_from, cpu_to) = *window.lock().unwrap();
    let value = if times.is_empty() {
        "no calls".to_string()
    } else {
        format!(
            "{:.1} / {:.1} ms",
            percentile(times.clone(), 0.5),
            percentile(times, 0.99)
        )
    };
    vec![
        Row {
            figure: format!(
                "HTTP: {clients} clients at once, each its own session, {} × terminal_exec `echo hi`: p50 / p99 (clients failed: {})",
                calls(),
                errors.len()
            ),
            value,
            target: "p99 ≤ 20 ms, no error",
        },
        Row {
            figure:
                "HTTP: the server's CPU per `echo hi` over those calls (user + system, 10 ms ticks)"
                    .into(),
            value: format!(
                "{:.0} µs",
                (cpu_to - cpu_from) * 1e6 / answered.max(1) as f64
            ),
            target: "",
        },
    ]
}
