//! The HTTP listener: MCP over Streamable HTTP at `/mcp` (`--http`) and the web page at `/`
//! (`--http`, or `--web` next to stdio).
//!
//! rmcp's `StreamableHttpService` serves both protocol eras: the 2025 `initialize` handshake
//! with `Mcp-Session-Id`, and the stateless 2026-07-28 revision. Every request passes
//! [`crate::web::guard`] first (Host/Origin → 403, token → 401). All clients share one
//! [`Core`], so a session one client starts is visible to every other. Loopback only,
//! unless `--http-allow-remote`.
//!
//! Stopping ([`Running::stop`]) first cancels the calls in flight and waits (at most
//! [`DRAIN_CALLS`]) for their answers to go out ([`super::drain`]), then cancels rmcp's
//! sessions, closes the page's sockets, waits at most [`DRAIN`] for connections to finish
//! and removes the token file.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use termpilot_core::Core;
use tokio_util::sync::CancellationToken;

use super::drain::Drain;
use super::server::Server;
use crate::web::guard::{self, Access};
use crate::web::token::{self, TokenFile};
use crate::web::{self, Web};

/// The default listening address.
pub const DEFAULT_ADDR: &str = "127.0.0.1:8765";
/// Longest wait for open connections after a stop.
pub const DRAIN: Duration = Duration::from_secs(5);
/// Longest wait for cancelled calls to answer before the sessions and streams close.
pub const DRAIN_CALLS: Duration = Duration::from_secs(3);

/// What to listen on and how.
pub struct Options {
    pub addr: String,
    pub allow_remote: bool,
    /// The token from `--token`/`TERMPILOT_TOKEN`; made up when absent.
    pub token: Option<String>,
}

/// `127.0.0.1:8765`, `localhost:8765`, `[::1]:8765` or a bare port → an address.
pub fn parse_addr(text: &str) -> anyhow::Result<SocketAddr> {
    let text = text.trim();
    if let Ok(port) = text.parse::<u16>() {
        return Ok(SocketAddr::from(([127, 0, 0, 1], port)));
    }
    if let Some(port) = text.strip_prefix("localhost:") {
        let port: u16 = port.parse().map_err(|_| {
            anyhow::anyhow!("`{text}` has no valid port; write e.g. 127.0.0.1:8765")
        })?;
        return Ok(SocketAddr::from(([127, 0, 0, 1], port)));
    }
    text.parse().map_err(|_| {
        anyhow::anyhow!("`{text}` is not an address to listen on; write e.g. 127.0.0.1:8765")
    })
}

/// A listener that is serving.
pub struct Running {
    /// The MCP calls in flight, answered before anything closes.
    calls: Option<Drain>,
    cancel: CancellationToken,
    task: tokio::task::JoinHandle<()>,
    _token_file: Option<TokenFile>,
}

impl Running {
    /// Stops accepting, closes sockets and MCP sessions, and waits (bounded) for the rest.
    pub async fn stop(self) {
        if let Some(calls) = &self.calls {
            calls.stop(DRAIN_CALLS).await;
        }
        self.cancel.cancel();
        if tokio::time::timeout(DRAIN, self.task).await.is_err() {
            tracing::warn!("HTTP connections still open after {DRAIN:?}; leaving them");
        }
    }
}

/// Binds and starts serving. `mcp` is the MCP server to mount at `/mcp` (`None` for the
/// page alone, `--web`).
pub async fn start(
    options: Options,
    core: Arc<Core>,
    mcp: Option<Server>,
) -> anyhow::Result<Running> {
    let wanted = parse_addr(&options.addr)?;
    if !wanted.ip().is_loopback() && !options.allow_remote {
        anyhow::bail!(
            "refusing to listen on {wanted}: it is not a loopback address, and whoever reaches it with the token can run commands as you; pass --http-allow-remote to do it anyway, or listen on 127.0.0.1"
        );
    }
    let (token, generated) = match options.token.filter(|t| !t.is_empty()) {
        Some(t) => {
            token::check_given(&t)?;
            (t, false)
        }
        None => (token::random_hex(32)?, true),
    };
    let listener = tokio::net::TcpListener::bind(wanted)
        .await
        .map_err(|e| anyhow::anyhow!("could not listen on {wanted}: {e}"))?;
    let addr = listener.local_addr()?;
    let access = Arc::new(Access::new(token.clone(), addr));
    let cancel = CancellationToken::new();
    let web = Arc::new(Web {
        core,
        access: access.clone(),
        shutdown: cancel.clone(),
    });
    let mut app: Router = web::router(web);
    let calls = mcp.as_ref().map(Server::drain);
    if let Some(server) = mcp {
        let config = StreamableHttpServerConfig::default()
            .with_allowed_hosts(access.allowed_hosts())
            .with_cancellation_token(cancel.child_token());
        let config = if access_is_any_host(addr) {
            config.disable_allowed_hosts()
        } else {
            config
        };
        let service = StreamableHttpService::new(
            move || Ok(server.clone()),
            LocalSessionManager::default().into(),
            config,
        );
        app = app.route_service("/mcp", service);
    }
    let app = app.layer(axum::middleware::from_fn_with_state(access, guard::check));
    let token_file = if generated {
        Some(TokenFile::write(&token, addr.port())?)
    } else {
        None
    };
    let url = format!("http://{addr}");
    eprintln!("termpilot: listening on {url}");
    match &token_file {
        Some(file) => {
            eprintln!(
                "termpilot: token written to {} (send it as Authorization: Bearer <token>)",
                file.path().display()
            );
            eprintln!("termpilot: watch and take over at {url}/#token={token}");
        }
        None => eprintln!("termpilot: watch and take over at {url}/ (log in with your token)"),
    }
    let stop = cancel.clone();
    let task = tokio::spawn(async move {
        let served = axum::serve(listener, app)
            .with_graceful_shutdown(stop.cancelled_owned())
            .await;
        if let Err(e) = served {
            tracing::warn!("HTTP server ended: {e}");
        }
    });
    Ok(Running {
        calls,
        cancel,
        task,
        _token_file: token_file,
    })
}

/// An unspecified address (0.0.0.0, ::) has no one host name: our guard checks the port.
fn access_is_any_host(addr: SocketAddr) -> bool {
    addr.ip().is_unspecified()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses() {
        assert_eq!(parse_addr("8765").unwrap().to_string(), "127.0.0.1:8765");
        assert_eq!(
            parse_addr("localhost:9").unwrap().to_string(),
            "127.0.0.1:9"
        );
        assert_eq!(parse_addr("[::1]:80").unwrap().to_string(), "[::1]:80");
        assert!(parse_addr("somewhere").is_err());
    }
}
