//! A server's link to the session host: one rmcp client over the host's Unix socket.
//!
//! [`KeepLink::connect`] checks, before and after the MCP handshake, that the other end is
//! this user's host of the same protocol and version: the socket's peer uid (`SO_PEERCRED`)
//! must be ours, and the host's `serverInfo` must be `termpilot-session-host/<protocol>` at
//! this binary's version. A host of another version is left alone (the call says so). Every
//! call is bounded like a remote link's: by the call's own `timeout` plus a margin, by the
//! host's end (a host that dies mid-call gives a clear error at once), and by cancellation,
//! which the host is told of (the request's `notifications/cancelled`).
//! The process keeps one link ([`current`]), replaced when it ends.

use std::path::Path;
use std::sync::{Arc, LazyLock};
use std::time::Duration;

use rmcp::model::{CallToolRequestParams, CallToolResult, JsonObject};
use rmcp::{Peer, RoleClient, ServiceExt};
use tokio_util::sync::CancellationToken;

use super::paths::Files;
use crate::mcp::reply::ToolError;

/// Longest wait for the host's handshake.
const HANDSHAKE_MAX: Duration = Duration::from_secs(10);
/// How long a failed call waits for the link to see its connection end.
const ENDING_MAX: Duration = Duration::from_secs(2);
/// How long a server waits for a host another server is starting.
const BUSY_MAX: Duration = Duration::from_secs(5);

/// Why no link could be made.
#[derive(Debug)]
pub enum NoLink {
    /// No host listens on the socket (none was started, or it ended).
    NoHost,
    /// Something is there but cannot be used: the sentence says what.
    Unusable(String),
}

/// A live (or ended) link to the host.
pub struct KeepLink {
    peer: Peer<RoleClient>,
    /// Fired once the connection has ended.
    ended: CancellationToken,
    /// Fired to close the connection (the link is dropped).
    stop: CancellationToken,
    /// What the host said in its handshake (`keepIdleSecs=N`).
    pub keep_idle_secs: Option<u64>,
}

impl Drop for KeepLink {
    fn drop(&mut self) {
        self.stop.cancel();
    }
}

impl KeepLink {
    /// Connects to the host on `socket` and checks who it is (see the module doc).
    pub async fn connect(socket: &Path) -> Result<Arc<KeepLink>, NoLink> {
        let stream = match tokio::net::UnixStream::connect(socket).await {
            Ok(s) => s,
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::NotFound | std::io::ErrorKind::ConnectionRefused
                ) =>
            {
                return Err(NoLink::NoHost);
            }
            Err(e) => {
                return Err(NoLink::Unusable(format!(
                    "the session host's socket {} could not be reached ({e})",
                    socket.display()
                )));
            }
        };
        let me = super::settings::my_uid();
        match stream.peer_cred() {
            Ok(cred) if cred.uid() == me => {}
            Ok(cred) => {
                return Err(NoLink::Unusable(format!(
                    "the socket {} belongs to uid {}, not to you (uid {me}); remove it",
                    socket.display(),
                    cred.uid()
                )));
            }
            Err(e) => {
                return Err(NoLink::Unusable(format!(
                    "the session host's uid could not be checked ({e})"
                )));
            }
        }
        let service = match tokio::time::timeout(HANDSHAKE_MAX, ().serve(stream)).await {
            Ok(Ok(service)) => service,
            Ok(Err(e)) => {
                return Err(NoLink::Unusable(format!(
                    "the session host at {} closed the connection during the handshake ({e}); a host serves only the user it runs as",
                    socket.display()
                )));
            }
            Err(_) => {
                return Err(NoLink::Unusable(format!(
                    "the session host at {} did not answer within {} s",
                    socket.display(),
                    HANDSHAKE_MAX.as_secs()
                )));
            }
        };
        let info = service.peer_info().and_then(|i| i.server_info.clone());
        let (name, version) = info
            .as_ref()
            .map(|i| (i.name.clone(), i.version.clone()))
            .unwrap_or_default();
        let ours = env!("CARGO_PKG_VERSION");
        if name != super::settings::host_name() || version != ours {
            return Err(NoLink::Unusable(format!(
                "a session host of another termpilot ({name} {version}) runs at {}; this termpilot ({} {ours}) does not use it, so its kept sessions stay as they are: stop them with the termpilot that started them, or end that host",
                socket.display(),
                super::settings::host_name()
            )));
        }
        let keep_idle_secs = service
            .peer_info()
            .and_then(|i| i.instructions.clone())
            .and_then(|s| s.strip_prefix("keepIdleSecs=").and_then(|n| n.parse().ok()));
        let ended = CancellationToken::new();
        let stop = CancellationToken::new();
        let peer = service.peer().clone();
        let (fired, stopping) = (ended.clone(), stop.clone());
        tokio::spawn(async move {
            let closing = service.cancellation_token();
            tokio::select! {
                _ = stopping.cancelled() => closing.cancel(),
                _ = service.waiting() => {}
            }
            fired.cancel();
        });
        Ok(Arc::new(KeepLink {
            peer,
            ended,
            stop,
            keep_idle_secs,
        }))
    }

    /// True once the connection has ended.
    pub fn is_ended(&self) -> bool {
        self.ended.is_cancelled() || self.peer.is_transport_closed()
    }

    /// Calls `name` on the host, bounded (see the module doc).
    pub async fn call(
        &self,
        name: &str,
        args: JsonObject,
        cancel: &CancellationToken,
    ) -> Result<CallToolResult, ToolError> {
        let bound = crate::mcp::ctx::forward_bound(&args);
        let params = CallToolRequestParams::new(name.to_string()).with_arguments(args);
        tokio::select! {
            r = self.peer.call_tool(params) => match r {
                Ok(result) => Ok(result),
                Err(e) => {
                    // A write to a host that just died fails before the link has seen the
                    // connection end: give it a moment to, so the error says what happened.
                    let _ = tokio::time::timeout(ENDING_MAX, self.ended.cancelled()).await;
                    Err(if self.is_ended() { host_gone(name) } else {
                        ToolError::new(format!(
                            "The session host did not answer `{name}` ({e}); retry the call."
                        ))
                    })
                }
            },
            _ = self.ended.cancelled() => Err(host_gone(name)),
            _ = tokio::time::sleep(bound) => Err(ToolError::new(format!(
                "The session host did not answer `{name}` within {} s; retry, or list the kept sessions with `termpilot sessions`.",
                bound.as_secs()
            ))),
            // Dropping the request (here, and at the bound above) sends the host
            // `notifications/cancelled` for it (rmcp's abandoned-request guard), so the call
            // is cancelled there too: `kept::cancelling_a_forwarded_call_cancels_it_in_the_host`.
            _ = cancel.cancelled() => Err(ToolError::new(format!(
                "The call `{name}` on a kept session was cancelled."
            ))),
        }
    }
}

/// The sentence for a call cut by the host's end.
pub fn host_gone(name: &str) -> ToolError {
    ToolError::new(format!(
        "The session host ended during `{name}` (it died or was killed), and the kept sessions it held ended with it; start a new one with terminal_start and keep: true."
    ))
}

/// This server's files of its host (its policy's key).
pub fn files() -> Option<&'static Files> {
    static FILES: LazyLock<Option<Files>> = LazyLock::new(|| {
        let dir = super::paths::dir().ok()?;
        Some(Files::of(
            &dir,
            &super::paths::key(&super::settings::settings().policy),
        ))
    });
    FILES.as_ref()
}

static CURRENT: LazyLock<tokio::sync::Mutex<Option<Arc<KeepLink>>>> =
    LazyLock::new(Default::default);

/// The link to this server's host: the live one, or a new connection. With `start`, a host
/// is started when none runs ([`super::start::spawn_host`]); without, `Ok(None)` says there
/// is none.
pub async fn current(start: bool) -> Result<Option<Arc<KeepLink>>, ToolError> {
    let mut slot = CURRENT.lock().await;
    if let Some(link) = slot.as_ref()
        && !link.is_ended()
    {
        return Ok(Some(link.clone()));
    }
    *slot = None;
    let Some(files) = files() else {
        return Err(ToolError::new(
            "The private runtime folder could not be used, so kept sessions are not available; check XDG_RUNTIME_DIR and TMPDIR.",
        ));
    };
    let link = match KeepLink::connect(&files.socket).await {
        Ok(link) => link,
        Err(NoLink::NoHost) if !start => return Ok(None),
        Err(NoLink::NoHost) => {
            super::start::spawn_host(files).await?;
            // Ours listens now; or another server's host holds the lock and is about to
            // (it binds right after taking it): a short, bounded wait for that one.
            let deadline = tokio::time::Instant::now() + BUSY_MAX;
            loop {
                match KeepLink::connect(&files.socket).await {
                    Ok(link) => break link,
                    Err(NoLink::NoHost) if tokio::time::Instant::now() < deadline => {
                        tokio::time::sleep(Duration::from_millis(20)).await;
                    }
                    Err(NoLink::NoHost) => {
                        return Err(ToolError::new(
                            "The session host started but its socket does not answer; retry the call.",
                        ));
                    }
                    Err(NoLink::Unusable(why)) => return Err(unusable(&why)),
                }
            }
        }
        Err(NoLink::Unusable(why)) => return Err(unusable(&why)),
    };
    *slot = Some(link.clone());
    Ok(Some(link))
}

fn unusable(why: &str) -> ToolError {
    let mut why = why.to_string();
    if let Some(first) = why.get(0..1) {
        why.replace_range(0..1, &first.to_uppercase());
    }
    ToolError::new(format!("Kept sessions are not reachable: {why}."))
}
