//! The HTTP listener's accept loop, bounded so that no client (or other local user) can
//! exhaust the server: at most [`Limits::connections`] connections at once (the rest wait in
//! the kernel's backlog, holding none of our descriptors), and a connection that has not
//! sent a whole request head within [`Limits::header_timeout`] is closed — a slowloris that
//! trickles its headers, and an idle keep-alive connection between requests, alike (hyper
//! times the head from the moment it waits for one). A response being streamed (SSE) or an
//! upgraded WebSocket is not idle and is not timed.
//!
//! A connection's slot travels with its socket ([`Slotted`]), so a WebSocket keeps its slot
//! after the upgrade until it closes.
//!
//! The connection cap is at most a quarter of the descriptor limit, so three quarters stay
//! in reserve for the tools (sessions, one-shot runs, jobs), whatever HTTP clients do; the
//! soft limit is raised to the hard one at start ([`raise_nofile_limit`]).

use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use axum::Router;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio_util::sync::CancellationToken;

/// Most connections at once, before the descriptor limit lowers it.
pub const MAX_CONNECTIONS: usize = 256;
/// How long a connection may take to send a request head, or wait idle for the next one.
pub const HEADER_TIMEOUT: Duration = Duration::from_secs(10);
/// Overrides [`HEADER_TIMEOUT`] in milliseconds (tests).
const HEADER_TIMEOUT_ENV: &str = "TERMPILOT_HTTP_HEADER_TIMEOUT_MS";
/// How long to wait before accepting again after the system refused (e.g. out of descriptors).
const ACCEPT_BACKOFF: Duration = Duration::from_millis(100);

/// The bounds of one listener.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    pub connections: usize,
    pub header_timeout: Duration,
}

impl Limits {
    /// [`MAX_CONNECTIONS`], at most a quarter of the open-file limit (at least 4), and the
    /// header timeout.
    pub fn from_environment() -> Limits {
        let header_timeout = std::env::var(HEADER_TIMEOUT_ENV)
            .ok()
            .and_then(|ms| ms.parse().ok())
            .map(Duration::from_millis)
            .unwrap_or(HEADER_TIMEOUT);
        let connections = match nofile_limit() {
            Some(limit) => MAX_CONNECTIONS.min((limit / 4) as usize).max(4),
            None => MAX_CONNECTIONS,
        };
        Limits {
            connections,
            header_timeout,
        }
    }
}

/// The soft open-file limit.
#[cfg(unix)]
fn nofile_limit() -> Option<u64> {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit writes into the struct it is given.
    #[allow(clippy::unnecessary_cast)] // rlim_t is not u64 on every platform
    (unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) } == 0)
        .then_some(limit.rlim_cur as u64)
}

#[cfg(not(unix))]
fn nofile_limit() -> Option<u64> {
    None
}

/// Raises the soft open-file limit to the hard one (children inherit it).
pub fn raise_nofile_limit() {
    #[cfg(unix)]
    {
        let mut limit = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        // SAFETY: getrlimit/setrlimit read and write the struct they are given.
        unsafe {
            if libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) == 0
                && limit.rlim_cur < limit.rlim_max
            {
                let wanted = libc::rlimit {
                    rlim_cur: limit.rlim_max,
                    rlim_max: limit.rlim_max,
                };
                // macOS refuses more than OPEN_MAX for the soft limit: keep what we have.
                let _ = libc::setrlimit(libc::RLIMIT_NOFILE, &wanted);
            }
        }
    }
}

/// Serves `app` on `listener` until `stop` is cancelled, then asks every connection to
/// finish (a response under way completes) and waits for them (the caller bounds the wait).
pub async fn serve(listener: TcpListener, app: Router, limits: Limits, stop: CancellationToken) {
    let slots = Arc::new(Semaphore::new(limits.connections));
    tracing::debug!(?limits, "HTTP connection limits");
    loop {
        let slot = tokio::select! {
            slot = slots.clone().acquire_owned() => match slot {
                Ok(slot) => slot,
                Err(_) => break,
            },
            _ = stop.cancelled() => break,
        };
        let stream = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => stream,
                Err(e) => {
                    tracing::warn!("HTTP accept failed: {e}; trying again shortly");
                    tokio::time::sleep(ACCEPT_BACKOFF).await;
                    continue;
                }
            },
            _ = stop.cancelled() => break,
        };
        let _ = stream.set_nodelay(true);
        let stream = Slotted {
            stream,
            _slot: slot,
        };
        let service = TowerToHyperService::new(app.clone());
        let stop = stop.clone();
        tokio::spawn(async move {
            let mut builder = hyper::server::conn::http1::Builder::new();
            builder
                .timer(TokioTimer::new())
                .header_read_timeout(limits.header_timeout);
            let connection = builder
                .serve_connection(TokioIo::new(stream), service)
                .with_upgrades();
            tokio::pin!(connection);
            tokio::select! {
                result = connection.as_mut() => {
                    if let Err(e) = result {
                        tracing::debug!("HTTP connection ended: {e}");
                    }
                }
                _ = stop.cancelled() => {
                    connection.as_mut().graceful_shutdown();
                    let _ = connection.await;
                }
            }
        });
    }
    drop(listener);
    // Every connection holds a slot until it ends: all of them back means all have ended.
    let _ = slots.acquire_many(limits.connections as u32).await;
}

/// A connection's socket with its slot: the slot is given back when the socket is dropped,
/// whoever holds it then (hyper, or a WebSocket after the upgrade).
struct Slotted {
    stream: TcpStream,
    _slot: OwnedSemaphorePermit,
}

impl AsyncRead for Slotted {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.stream).poll_read(cx, buf)
    }
}

impl AsyncWrite for Slotted {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.stream).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[std::io::IoSlice<'_>],
    ) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.stream).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.stream.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.stream).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.stream).poll_shutdown(cx)
    }
}
