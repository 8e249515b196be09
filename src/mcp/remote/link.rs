//! One link to a remote termpilot: the program started over the transport's stdio
//! (`ssh -T host termpilot`, `docker exec -i NAME termpilot`, `kubectl exec -i … --
//! termpilot`), spoken to as an MCP client (rmcp) that relays the remote's secret prompts
//! to the person behind the local call (`secret_relay`).
//!
//! The transport runs in its own process group; a watcher task owns it, reaps it when it
//! ends by itself (the link dropped: [`Link::ended`] fires) and kills the group when the link
//! is shut down. Every call is bounded: by the call's own `timeout` plus a margin, by the
//! link's end, and by the caller's cancellation.

use std::collections::VecDeque;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rmcp::model::{CallToolRequestParams, CallToolResult, JsonObject};
use rmcp::service::RunningService;
use rmcp::{Peer, RoleClient, ServiceExt};
use termpilot_core::remote::{RemoteOptions, Target, Tty, transport_argv};
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio_util::sync::CancellationToken;

use super::secret_relay::{LinkClient, Relay};
use crate::mcp::reply::ToolError;

/// Longest wait for the remote termpilot's handshake: ssh's connect timeout, a login, a
/// cold start on a loaded machine.
const HANDSHAKE_MAX: Duration = Duration::from_secs(30);
/// Lines of the transport's stderr kept for error messages.
const STDERR_LINES: usize = 8;

/// A live (or ended) connection to termpilot on one target.
pub struct Link {
    pub target: Target,
    /// Which connection to this target this is (1, 2, … as it is restarted).
    pub generation: u64,
    peer: Peer<RoleClient>,
    /// Kept so the client runs; dropped (cancelled) at shutdown.
    service: Mutex<Option<RunningService<RoleClient, LinkClient>>>,
    /// Secret prompts of its sessions, relayed to the person behind the local call.
    pub relay: Arc<Relay>,
    /// Fired once the transport has exited and been reaped.
    ended: CancellationToken,
    /// Fired to end the transport (kill its process group).
    stop: CancellationToken,
    stderr: Arc<Mutex<VecDeque<String>>>,
}

impl Link {
    /// Starts `bin` on `target` over the transport and completes the MCP handshake.
    pub async fn connect(
        target: &Target,
        options: &RemoteOptions,
        bin: &str,
        generation: u64,
    ) -> Result<Arc<Link>, ToolError> {
        let mut argv = transport_argv(target, options, Tty::No, &[bin.to_string()]);
        let program = argv.remove(0);
        let mut cmd = termpilot_core::sandbox::tokio_command(&program);
        cmd.args(&argv)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0)
            .kill_on_drop(true);
        termpilot_core::sandbox::seal_tokio(&mut cmd);
        let mut child = cmd.spawn().map_err(|e| {
            ToolError::new(format!(
                "`{target}` is reached through `{program}`, which could not be started here ({e}); install it or put it on PATH."
            ))
        })?;
        let pgid = child.id().map(|p| p as i32);
        let (Some(stdin), Some(stdout), Some(stderr)) =
            (child.stdin.take(), child.stdout.take(), child.stderr.take())
        else {
            return Err(ToolError::new(format!(
                "The link to `{target}` could not be set up (no pipes to `{program}`); retry the call."
            )));
        };
        let last_words = Arc::new(Mutex::new(VecDeque::new()));
        let stderr_done = spawn_stderr(target.to_string(), stderr, last_words.clone());
        let ended = CancellationToken::new();
        let stop = CancellationToken::new();
        spawn_watcher(child, pgid, ended.clone(), stop.clone(), stderr_done);

        let relay = Relay::new(target.to_string());
        let client = LinkClient {
            relay: relay.clone(),
        };
        let handshake = tokio::time::timeout(HANDSHAKE_MAX, client.serve((stdout, stdin)));
        let service = tokio::select! {
            r = handshake => r,
            // The transport ended before the handshake: say why (ssh's last words).
            _ = ended.cancelled() => Ok(Err(rmcp::service::ClientInitializeError::ConnectionClosed(
                "the transport ended".into(),
            ))),
        };
        let why = |what: String| {
            stop.cancel();
            let words = last_words
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .iter()
                .cloned()
                .collect::<Vec<_>>()
                .join(" / ");
            let said = if words.is_empty() {
                String::new()
            } else {
                format!(": {words}")
            };
            ToolError::new(format!(
                "termpilot could not be started on `{target}` as `{bin}` ({what}{said}); install termpilot there or pass its path with --remote-bin."
            ))
        };
        let service = match service {
            Err(_) => return Err(why(format!("no answer in {} s", HANDSHAKE_MAX.as_secs()))),
            Ok(Err(e)) => {
                // ssh's last words are read by another task: let it finish first (bounded).
                let _ = tokio::time::timeout(Duration::from_secs(2), ended.cancelled()).await;
                return Err(why(e.to_string()));
            }
            Ok(Ok(service)) => service,
        };
        tracing::info!(target: "termpilot::remote", host = %target, generation, "remote termpilot connected");
        Ok(Arc::new(Link {
            target: target.clone(),
            generation,
            peer: service.peer().clone(),
            service: Mutex::new(Some(service)),
            relay,
            ended,
            stop,
            stderr: last_words,
        }))
    }

    /// True once the transport has ended.
    pub fn is_ended(&self) -> bool {
        self.ended.is_cancelled()
    }

    /// Calls `name` on the remote termpilot, bounded (see the module doc).
    pub async fn call(
        &self,
        name: &str,
        args: JsonObject,
        cancel: &CancellationToken,
    ) -> Result<CallToolResult, ToolError> {
        let bound = crate::mcp::ctx::forward_bound(&args);
        let params = CallToolRequestParams::new(name.to_string()).with_arguments(args);
        let target = &self.target;
        tokio::select! {
            r = self.peer.call_tool(params) => r.map_err(|e| {
                if self.is_ended() { self.dropped() } else {
                    ToolError::new(format!(
                        "termpilot on `{target}` did not answer `{name}` ({e}); retry the call."
                    ))
                }
            }),
            _ = self.ended.cancelled() => Err(self.dropped()),
            _ = tokio::time::sleep(bound) => Err(ToolError::new(format!(
                "termpilot on `{target}` did not answer `{name}` within {} s; the host may be down or slow — retry, or check it with terminal_run.",
                bound.as_secs()
            ))),
            _ = cancel.cancelled() => Err(ToolError::new(format!(
                "The call `{name}` on `{target}` was cancelled."
            ))),
        }
    }

    /// The sentence for a call cut by the link's end.
    pub fn dropped(&self) -> ToolError {
        let words = self.last_words();
        ToolError::new(format!(
            "The link to termpilot on `{}` dropped{}; the next call on that host reconnects.",
            self.target,
            if words.is_empty() {
                String::new()
            } else {
                format!(" ({words})")
            }
        ))
    }

    fn last_words(&self) -> String {
        let lines = self.stderr.lock().unwrap_or_else(|e| e.into_inner());
        lines.back().cloned().unwrap_or_default()
    }

    /// Ends the link: the client stops, the transport's process group is killed and
    /// reaped (bounded).
    pub async fn shutdown(&self) {
        let service = self
            .service
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take();
        drop(service);
        self.stop.cancel();
        let _ = tokio::time::timeout(Duration::from_secs(5), self.ended.cancelled()).await;
    }
}

/// Keeps the transport's last stderr lines (ssh's reasons) and logs them; the token fires
/// at the end of stderr.
fn spawn_stderr(
    host: String,
    stderr: tokio::process::ChildStderr,
    keep: Arc<Mutex<VecDeque<String>>>,
) -> CancellationToken {
    let done = CancellationToken::new();
    let fired = done.clone();
    tokio::spawn(async move {
        let mut lines = BufReader::new(stderr).lines();
        while let Ok(Some(line)) = lines.next_line().await {
            tracing::debug!(target: "termpilot::remote", host = %host, "{line}");
            let line = line.trim().to_string();
            if line.is_empty() {
                continue;
            }
            let mut keep = keep.lock().unwrap_or_else(|e| e.into_inner());
            if keep.len() == STDERR_LINES {
                keep.pop_front();
            }
            keep.push_back(line);
        }
        fired.cancel();
    });
    done
}

/// Owns the transport: reaps it when it ends by itself, or kills its group on `stop`.
fn spawn_watcher(
    mut child: tokio::process::Child,
    pgid: Option<i32>,
    ended: CancellationToken,
    stop: CancellationToken,
    stderr_done: CancellationToken,
) {
    tokio::spawn(async move {
        tokio::select! {
            _ = child.wait() => {}
            _ = stop.cancelled() => {
                if let Some(pgid) = pgid {
                    // SAFETY: kill(2) on the process group of the child this task owns and
                    // has not reaped yet, so the id cannot have been reused.
                    unsafe { libc::kill(-pgid, libc::SIGKILL) };
                }
                let _ = child.wait().await;
            }
        }
        // The reasons the transport printed are read before the end is announced.
        let _ = tokio::time::timeout(Duration::from_secs(2), stderr_done.cancelled()).await;
        ended.cancel();
    });
}
