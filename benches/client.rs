//! A minimal line client for the benchmark: spawn the binary, write JSON-RPC lines, read
//! replies. No MCP SDK in the way, so the figures are the server's.
#![allow(dead_code)] // sections use different parts of it

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::time::Duration;

use serde_json::{Value, json};

pub const BIN: &str = env!("CARGO_BIN_EXE_termpilot");

/// The server binary: `TERMPILOT_BENCH_BIN` when set (e.g. a build with symbols, to profile
/// under `perf`), else the release binary cargo built.
pub fn server_bin() -> String {
    std::env::var("TERMPILOT_BENCH_BIN").unwrap_or_else(|_| BIN.into())
}

/// The longest the client waits for one reply; a server that takes longer is a failure.
const REPLY_TIMEOUT: Duration = Duration::from_secs(180);

pub struct Client {
    pub child: Child,
    stdin: ChildStdin,
    /// Lines of the server's stdout, read on their own thread so every wait is bounded.
    lines: Receiver<String>,
    next_id: u64,
    _state: tempfile::TempDir,
}

impl Client {
    pub fn spawn(args: &[&str]) -> Client {
        Client::spawn_with_env(args, &[])
    }

    /// [`Client::spawn`] with extra environment variables.
    pub fn spawn_with_env(args: &[&str], envs: &[(&str, &str)]) -> Client {
        let state = tempfile::tempdir().unwrap();
        let mut child = Command::new(server_bin())
            .args(args)
            .envs(envs.iter().copied())
            .env("TERMPILOT_STATE_DIR", state.path())
            .env("TERMPILOT_SHELL", "/bin/sh")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("spawn the release binary");
        let stdin = child.stdin.take().unwrap();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        let (tx, lines) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in stdout.lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        Client {
            child,
            stdin,
            lines,
            next_id: 1,
            _state: state,
        }
    }

    pub fn send(&mut self, msg: &Value) {
        let mut line = msg.to_string();
        line.push('\n');
        self.stdin.write_all(line.as_bytes()).unwrap();
        self.stdin.flush().unwrap();
    }

    /// Sends a request and returns the raw response line with its id.
    pub fn request_raw(&mut self, method: &str, params: Value) -> String {
        let id = self.next_id;
        self.next_id += 1;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        loop {
            let line = match self.lines.recv_timeout(REPLY_TIMEOUT) {
                Ok(line) => line,
                Err(RecvTimeoutError::Timeout) => {
                    panic!("no reply to {method} in {REPLY_TIMEOUT:?}")
                }
                Err(RecvTimeoutError::Disconnected) => panic!("the server closed stdout"),
            };
            let v: Value = serde_json::from_str(&line).unwrap();
            if v["id"] == id {
                return line;
            }
        }
    }

    pub fn request(&mut self, method: &str, params: Value) -> Value {
        serde_json::from_str(&self.request_raw(method, params)).unwrap()
    }

    pub fn initialize(&mut self) -> Value {
        let reply = self.request(
            "initialize",
            json!({"protocolVersion": "2025-11-25", "capabilities": {},
                   "clientInfo": {"name": "bench", "version": "0"}}),
        );
        self.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        reply
    }

    pub fn call(&mut self, tool: &str, args: Value) -> Value {
        let reply = self.request("tools/call", json!({"name": tool, "arguments": args}));
        reply["result"].clone()
    }

    /// Calls a tool that must succeed and returns its `structuredContent`.
    pub fn call_ok(&mut self, tool: &str, args: Value) -> Value {
        let result = self.call(tool, args.clone());
        if result["isError"] == true || result.is_null() {
            panic!("{tool} {args} failed: {result}");
        }
        result["structuredContent"].clone()
    }

    /// Names of the tools in the default listing and behind `terminal_extra`.
    pub fn tool_names(&mut self) -> (Vec<String>, Vec<String>) {
        let names = |tools: &Value| -> Vec<String> {
            tools
                .as_array()
                .map(|a| {
                    a.iter()
                        .filter_map(|t| t["name"].as_str())
                        .map(String::from)
                        .collect()
                })
                .unwrap_or_default()
        };
        let direct = names(&self.request("tools/list", json!({}))["result"]["tools"]);
        let extra = if direct.iter().any(|n| n == "terminal_extra") {
            names(&self.call("terminal_extra", json!({"list": true}))["structuredContent"]["tools"])
        } else {
            Vec::new()
        };
        (direct, extra)
    }

    /// Starts a session with `args` and returns its id.
    pub fn start_session(&mut self, args: Value) -> String {
        let started = self.call_ok("terminal_start", args);
        started["sessionId"]
            .as_str()
            .expect("sessionId")
            .to_string()
    }

    /// Resident memory of the server, in KiB.
    pub fn rss_kib(&self) -> u64 {
        self.status_kib("VmRSS:")
    }

    /// The anonymous part of the resident memory (heap, stacks), in KiB: the rest is pages
    /// of the binary and its libraries, shared with the page cache.
    pub fn rss_anon_kib(&self) -> u64 {
        self.status_kib("RssAnon:")
    }

    /// A field of `/proc/PID/status` in KiB (`VmRSS:`, `VmHWM:`, …).
    pub fn status_kib(&self, field: &str) -> u64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id())).unwrap();
        status
            .lines()
            .find_map(|l| l.strip_prefix(field))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
            .unwrap_or(0)
    }

    /// CPU time the server has used so far (user + system), in seconds.
    pub fn cpu_secs(&self) -> f64 {
        let stat = std::fs::read_to_string(format!("/proc/{}/stat", self.child.id())).unwrap();
        // Fields after the command name: state is 3rd, utime 14th, stime 15th (1-based).
        let after = &stat[stat.rfind(')').unwrap() + 2..];
        let fields: Vec<&str> = after.split(' ').collect();
        let ticks: u64 = fields[11].parse::<u64>().unwrap() + fields[12].parse::<u64>().unwrap();
        // SAFETY: sysconf has no preconditions.
        let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) } as f64;
        ticks as f64 / hz
    }

    pub fn close(mut self) {
        drop(self.stdin);
        let _ = self.child.wait();
    }
}

pub fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    v[v.len() / 2]
}

pub fn percentile(mut v: Vec<f64>, p: f64) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    let i = ((v.len() as f64 - 1.0) * p).round() as usize;
    v[i]
}

/// Whether `program` is on the PATH (a section skips, with a row saying so, what is missing).
pub fn installed(program: &str) -> bool {
    std::process::Command::new("sh")
        .args(["-c", &format!("command -v {program}")])
        .output()
        .is_ok_and(|o| o.status.success())
}
