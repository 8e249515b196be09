//! The HTTP harness: the real binary with `--http` on a free loopback port, and rmcp's
//! Streamable HTTP client talking to it (both protocol eras).

use std::process::Stdio;

use rmcp::ServiceExt;
use rmcp::model::ProtocolVersion;
use rmcp::service::{ClientLifecycleMode, ClientServiceExt};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::Child;
use tokio::sync::mpsc;

use super::{BIN, Era, Server, TEST_TIMEOUT};

/// A token long enough for the server to accept.
pub const TOKEN: &str = "test-token-0123456789abcdef";

/// A running `termpilot --http` (killed when dropped).
pub struct HttpServer {
    pub child: Child,
    /// `http://127.0.0.1:PORT`
    pub url: String,
    pub port: u16,
    pub token: String,
    /// Every stderr line after the one that named the address.
    pub stderr: mpsc::UnboundedReceiver<String>,
    /// Lines read before it (banner), kept for tests that check them.
    pub banner: Vec<String>,
    pub state: tempfile::TempDir,
}

/// Starts `termpilot <args>` and waits for its `listening on` line.
pub async fn spawn(args: &[&str], envs: &[(&str, &str)]) -> HttpServer {
    let state = tempfile::tempdir().expect("temp dir");
    let mut cmd = super::command(state.path(), args);
    cmd.env_remove("TERMPILOT_TOKEN");
    for (k, v) in envs {
        cmd.env(k, v);
    }
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn termpilot --http");
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let mut banner = Vec::new();
    let url = tokio::time::timeout(TEST_TIMEOUT, async {
        while let Ok(Some(line)) = lines.next_line().await {
            eprintln!("server: {line}");
            banner.push(line.clone());
            if let Some(url) = line.strip_prefix("termpilot: listening on ") {
                return url.trim().to_string();
            }
        }
        panic!("the server ended before listening: {banner:?}");
    })
    .await
    .expect("the server listens in time");
    // Two more banner lines follow (token file / page URL); keep them with the banner.
    let (tx, rx) = mpsc::unbounded_channel();
    tokio::spawn(async move {
        while let Ok(Some(line)) = lines.next_line().await {
            eprintln!("server: {line}");
            if tx.send(line).is_err() {
                // keep draining so the server never blocks on stderr
            }
        }
    });
    let port = url.rsplit(':').next().unwrap().parse().unwrap();
    let token = envs
        .iter()
        .find(|(k, _)| *k == "TERMPILOT_TOKEN")
        .map(|(_, v)| v.to_string())
        .unwrap_or_default();
    HttpServer {
        child,
        url,
        port,
        token,
        stderr: rx,
        banner,
        state,
    }
}

/// `termpilot --http 127.0.0.1:0` with [`TOKEN`] and `/bin/sh` sessions.
pub async fn start() -> HttpServer {
    spawn(&["--http", "127.0.0.1:0"], &[("TERMPILOT_TOKEN", TOKEN)]).await
}

impl HttpServer {
    /// An MCP client over Streamable HTTP in `era`, as the harness's [`Server`] (its
    /// `ok`/`err`/`call` helpers work the same; stopping it leaves the server running).
    pub async fn client(&self, era: Era) -> Server {
        let config = StreamableHttpClientTransportConfig::with_uri(format!("{}/mcp", self.url))
            .auth_header(self.token.clone());
        let transport = StreamableHttpClientTransport::with_client(reqwest::Client::new(), config);
        let client = match era {
            Era::Initialize => tokio::time::timeout(TEST_TIMEOUT, ().serve(transport))
                .await
                .expect("initialize in time")
                .expect("initialize over HTTP"),
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
            .expect("discover over HTTP"),
        };
        Server {
            client,
            state: tempfile::tempdir().expect("temp dir"),
            pid: self.child.id().unwrap_or(0),
        }
    }

    /// Asks the server to stop (SIGTERM) and waits for it to exit; its exit status.
    #[cfg(unix)]
    pub async fn terminate(mut self) -> std::process::ExitStatus {
        let pid = self.child.id().expect("server pid") as i32;
        // SAFETY: kill(2) on the pid of the server this test started.
        unsafe { libc::kill(pid, libc::SIGTERM) };
        tokio::time::timeout(TEST_TIMEOUT, self.child.wait())
            .await
            .expect("the server ends in time after SIGTERM")
            .expect("wait for the server")
    }
}

/// The binary, for tests that run it directly.
pub fn bin() -> &'static str {
    BIN
}

/// A stdio server (MCP over stdin/stdout, as a client starts it) whose stderr the test reads:
/// for `--web`, whose page is announced there. `configure` may change the command (e.g. a
/// resource limit) before it starts.
pub async fn stdio_with_stderr(
    args: &[&str],
    envs: &[(&str, &str)],
    configure: impl FnOnce(&mut tokio::process::Command),
) -> (Server, mpsc::UnboundedReceiver<String>) {
    let state = tempfile::tempdir().expect("temp dir");
    let mut cmd = super::command(state.path(), args);
    cmd.env_remove("TERMPILOT_TOKEN");
    for (k, v) in envs {
        cmd.env(k, v);
    }
    configure(&mut cmd);
    let (transport, stderr) = rmcp::transport::TokioChildProcess::builder(cmd)
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn termpilot");
    let pid = transport.id().expect("server pid");
    let (tx, rx) = mpsc::unbounded_channel();
    if let Some(stderr) = stderr {
        let mut lines = BufReader::new(stderr).lines();
        tokio::spawn(async move {
            while let Ok(Some(line)) = lines.next_line().await {
                eprintln!("server: {line}");
                let _ = tx.send(line);
            }
        });
    }
    let client = tokio::time::timeout(TEST_TIMEOUT, ().serve(transport))
        .await
        .expect("initialize in time")
        .expect("initialize over stdio");
    (Server { client, state, pid }, rx)
}

/// The next stderr line holding `needle` (bounded by [`TEST_TIMEOUT`]).
pub async fn line_with(stderr: &mut mpsc::UnboundedReceiver<String>, needle: &str) -> String {
    tokio::time::timeout(TEST_TIMEOUT, async {
        while let Some(line) = stderr.recv().await {
            if line.contains(needle) {
                return line;
            }
        }
        panic!("the server's stderr ended before a line with `{needle}`");
    })
    .await
    .unwrap_or_else(|_| panic!("no stderr line with `{needle}` in time"))
}

/// The port of a `termpilot: listening on http://127.0.0.1:PORT` line.
pub fn port_of(line: &str) -> u16 {
    line.rsplit(':')
        .next()
        .and_then(|p| p.trim().parse().ok())
        .unwrap_or_else(|| panic!("no port in `{line}`"))
}
