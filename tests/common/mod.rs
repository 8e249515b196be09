//! The end-to-end harness: the real `termpilot` binary, driven by rmcp's own client over
//! stdio, plus a raw line client for what a well-behaved client never sends.
#![allow(dead_code)]

pub mod cdp;
pub mod compat;
pub mod http;
pub mod procs;
pub mod sshd;

use std::process::Stdio;
use std::time::Duration;

use rmcp::model::{CallToolRequestParams, CallToolResult, JsonObject, ProtocolVersion};
use rmcp::service::{ClientLifecycleMode, ClientServiceExt, RunningService};
use rmcp::transport::TokioChildProcess;
use rmcp::{RoleClient, ServiceExt};
use serde_json::Value;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};

/// Every wait in a test is bounded by this.
pub const TEST_TIMEOUT: Duration = Duration::from_secs(60);

pub const BIN: &str = env!("CARGO_BIN_EXE_termpilot");

/// A running server and the temp dir it keeps its state in.
pub struct Server {
    pub client: RunningService<RoleClient, ()>,
    pub state: tempfile::TempDir,
    /// The server process, for tests that kill it.
    pub pid: u32,
}

/// The protocol era a test speaks.
#[derive(Clone, Copy, Debug)]
pub enum Era {
    /// `initialize` handshake (2025-11-25 and older).
    Initialize,
    /// The stateless 2026-07-28 revision with `server/discover`.
    Discover,
}

/// The command that starts the server with an isolated state dir and a pinned shell.
pub fn command(state: &std::path::Path, args: &[&str]) -> Command {
    let mut cmd = Command::new(BIN);
    cmd.args(args)
        .env("TERMPILOT_STATE_DIR", state)
        .env("TERMPILOT_SHELL", "/bin/sh")
        .env_remove("TERMPILOT_CORE_TOOLS")
        .env_remove("TERMPILOT_DISABLED_TOOLS")
        .env_remove("TERMPILOT_COMPAT")
        .env_remove("TERMPILOT_REMOTE_BIN")
        .env_remove("TERMPILOT_SSH_CONFIG")
        .env_remove("SMART_TERMINAL_DISABLED_TOOLS")
        .env_remove("SMART_TERMINAL_SHELL")
        .kill_on_drop(true);
    cmd
}

/// Starts the server with `args` and completes the handshake of `era`.
pub async fn start_with(era: Era, args: &[&str], envs: &[(&str, &str)]) -> Server {
    start_logging(era, args, envs, None).await
}

/// What a server wrote to stderr (its log), kept for a failure's message: the test's own
/// stderr also shows it as it comes, but a long run's output may be cut.
#[derive(Clone, Default)]
pub struct Log(std::sync::Arc<std::sync::Mutex<Vec<String>>>);

impl Log {
    /// Its last `n` lines, one per line.
    pub fn last(&self, n: usize) -> String {
        let lines = self.0.lock().unwrap();
        lines[lines.len().saturating_sub(n)..].join("\n")
    }
}

/// [`start_with`], keeping the server's log in `log` when one is given.
pub async fn start_logging(
    era: Era,
    args: &[&str],
    envs: &[(&str, &str)],
    log: Option<&Log>,
) -> Server {
    let state = tempfile::tempdir().expect("temp dir");
    let mut cmd = command(state.path(), args);
    for (k, v) in envs {
        cmd.env(k, v);
    }
    let stderr = if log.is_some() {
        Stdio::piped()
    } else {
        Stdio::inherit()
    };
    let (transport, piped) = TokioChildProcess::builder(cmd)
        .stderr(stderr)
        .spawn()
        .expect("spawn termpilot");
    if let (Some(log), Some(piped)) = (log, piped) {
        let log = log.clone();
        tokio::spawn(async move {
            let mut lines = BufReader::new(piped).lines();
            while let Ok(Some(line)) = lines.next_line().await {
                eprintln!("{line}");
                log.0.lock().unwrap().push(line);
            }
        });
    }
    let pid = transport.id().expect("server pid");
    let client = match era {
        Era::Initialize => tokio::time::timeout(TEST_TIMEOUT, ().serve(transport))
            .await
            .expect("initialize in time")
            .expect("initialize"),
        Era::Discover => tokio::time::timeout(
            TEST_TIMEOUT,
            ().serve_with_lifecycle(
                transport,
                ClientLifecycleMode::Discover {
                    preferred_versions: vec![ProtocolVersion::V_2026_07_28],
                },
            ),
        )
        .await
        .expect("discover in time")
        .expect("discover"),
    };
    Server { client, state, pid }
}

/// Starts the server with default flags over the `initialize` handshake.
pub async fn start() -> Server {
    start_with(Era::Initialize, &[], &[]).await
}

/// Starts a server keeping its state in `dir`, which several servers may share (the
/// caller owns the dir; the server's own temp dir stays unused).
pub async fn start_in(dir: &std::path::Path, envs: &[(&str, &str)]) -> Server {
    let dir = dir.to_str().expect("utf-8 state dir");
    let mut all = vec![("TERMPILOT_STATE_DIR", dir)];
    all.extend_from_slice(envs);
    start_with(Era::Initialize, &[], &all).await
}

fn object(args: Value) -> JsonObject {
    match args {
        Value::Object(map) => map,
        Value::Null => JsonObject::new(),
        other => panic!("tool arguments must be an object, not {other}"),
    }
}

impl Server {
    /// Calls a tool and returns the raw result (success or tool error).
    pub async fn call(&self, name: &str, args: Value) -> CallToolResult {
        let params = CallToolRequestParams::new(name.to_string()).with_arguments(object(args));
        tokio::time::timeout(TEST_TIMEOUT, self.client.call_tool(params))
            .await
            .unwrap_or_else(|_| panic!("{name} answered in time"))
            .unwrap_or_else(|e| panic!("{name} failed at the protocol level: {e}"))
    }

    /// Calls a tool that must succeed and returns its structured result, checking that the
    /// text block carries the same JSON.
    pub async fn ok(&self, name: &str, args: Value) -> Value {
        let result = self.call(name, args.clone()).await;
        assert_ne!(
            result.is_error,
            Some(true),
            "{name}({args}) failed: {}",
            text(&result)
        );
        let structured = result
            .structured_content
            .clone()
            .unwrap_or_else(|| panic!("{name} returned no structuredContent"));
        let from_text: Value = serde_json::from_str(&text(&result)).expect("text block is JSON");
        assert_eq!(structured, from_text, "text and structuredContent differ");
        structured
    }

    /// Calls a tool that must fail with a tool error, returning its sentence.
    pub async fn err(&self, name: &str, args: Value) -> String {
        let result = self.call(name, args.clone()).await;
        assert_eq!(
            result.is_error,
            Some(true),
            "{name}({args}) should have failed but returned {}",
            text(&result)
        );
        text(&result)
    }

    /// Calls an extra tool through `terminal_extra`.
    pub async fn extra(&self, tool: &str, args: Value) -> Value {
        self.ok(
            "terminal_extra",
            serde_json::json!({"tool": tool, "args": args}),
        )
        .await
    }

    /// Kills the server with SIGKILL, as a crash would, and waits until it is gone.
    #[cfg(unix)]
    pub async fn crash(self) {
        // SAFETY: kill(2) on the pid of the server this test started.
        unsafe { libc::kill(self.pid as i32, libc::SIGKILL) };
        let _ = tokio::time::timeout(TEST_TIMEOUT, self.client.cancel()).await;
    }

    /// Ends the client (closing the server's stdin) and waits for the server to exit.
    pub async fn stop(self) {
        let _ = tokio::time::timeout(TEST_TIMEOUT, self.client.cancel()).await;
    }
}

/// The first text block of a result.
pub fn text(result: &CallToolResult) -> String {
    result
        .content
        .iter()
        .find_map(|c| c.as_text().map(|t| t.text.clone()))
        .unwrap_or_default()
}

/// A client that writes raw lines, for malformed input and hand-made handshakes.
pub struct RawClient {
    pub child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    _state: tempfile::TempDir,
}

impl RawClient {
    pub fn start(args: &[&str]) -> Self {
        let state = tempfile::tempdir().expect("temp dir");
        let mut child = command(state.path(), args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("spawn termpilot");
        let stdin = child.stdin.take().unwrap();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        RawClient {
            child,
            stdin,
            stdout,
            _state: state,
        }
    }

    pub async fn send(&mut self, line: &str) {
        self.stdin.write_all(line.as_bytes()).await.unwrap();
        self.stdin.write_all(b"\n").await.unwrap();
        self.stdin.flush().await.unwrap();
    }

    /// Writes `bytes` and a newline, as they are (for lines that are not UTF-8).
    pub async fn send_bytes(&mut self, bytes: &[u8]) {
        self.stdin.write_all(bytes).await.unwrap();
        self.stdin.write_all(b"\n").await.unwrap();
        self.stdin.flush().await.unwrap();
    }

    /// The next line the server writes, as JSON.
    pub async fn recv(&mut self) -> Value {
        let mut line = String::new();
        tokio::time::timeout(TEST_TIMEOUT, self.stdout.read_line(&mut line))
            .await
            .expect("a reply in time")
            .expect("read stdout");
        serde_json::from_str(&line)
            .unwrap_or_else(|e| panic!("stdout line is not JSON ({e}): {line}"))
    }

    /// Sends a request and returns the response with the same id (skipping notifications).
    pub async fn request(&mut self, id: u64, method: &str, params: Value) -> Value {
        let msg =
            serde_json::json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        self.send(&msg.to_string()).await;
        loop {
            let reply = self.recv().await;
            if reply["id"] == id {
                return reply;
            }
        }
    }

    /// The `initialize` handshake at `version`.
    pub async fn initialize(&mut self, version: &str) -> Value {
        let reply = self
            .request(
                0,
                "initialize",
                serde_json::json!({
                    "protocolVersion": version,
                    "capabilities": {},
                    "clientInfo": {"name": "raw-test", "version": "0"}
                }),
            )
            .await;
        self.send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#)
            .await;
        reply
    }

    pub async fn close(mut self) {
        drop(self.stdin);
        let _ = tokio::time::timeout(TEST_TIMEOUT, self.child.wait()).await;
        let _ = self.child.kill().await;
    }
}

/// Runs `command` with `terminal_exec` (20 s timeout) and returns its result.
pub async fn exec(server: &Server, id: &str, command: &str) -> Value {
    server
        .ok(
            "terminal_exec",
            serde_json::json!({"sessionId": id, "command": command, "timeout": 20000}),
        )
        .await
}

impl Server {
    /// Types into a session and returns at once (`returnOutput: "none"`).
    pub async fn type_in(&self, session: &str, data: impl AsRef<str>) -> Value {
        self.ok(
            "terminal_write",
            serde_json::json!({"sessionId": session, "data": data.as_ref(), "returnOutput": "none"}),
        )
        .await
    }

    /// The session's screen as text, without the cursor marker.
    pub async fn screen_text(&self, session: &str) -> String {
        let read = self
            .ok(
                "terminal_read",
                serde_json::json!({"sessionId": session, "view": "screen", "cursor": false}),
            )
            .await;
        read["text"].as_str().unwrap_or_default().to_string()
    }

    /// Calls an extra tool through `terminal_extra`, expecting a tool error.
    pub async fn extra_err(&self, tool: &str, args: Value) -> String {
        self.err(
            "terminal_extra",
            serde_json::json!({"tool": tool, "args": args}),
        )
        .await
    }
}
