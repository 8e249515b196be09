//! The HTTP listener: MCP over Streamable HTTP at `/mcp` (`--http`) and the web page at `/`
//! (`--http`, or `--web` next to stdio).
//!
//! rmcp's `StreamableHttpService` serves both protocol eras: the 2025 `initialize` handshake
//! with `Mcp-Session-Id`, and the stateless 2026-07-28 revision. Every request passes
//! [`crate::web::guard`] first (Host/Origin → 403, token → 401). All clients share one
//! [`Core`], so a session one client starts is visible to every other. Loopback only,
//! unless `--http-allow-remote`.
//!
//! Connections are bounded ([`super::http_serve`]: a cap, a header/idle timeout) and so are
//! MCP sessions ([`super::http_sessions`]). `DELETE /mcp` ends a session with 200 (rmcp
//! answers 202, which the Python SDK logs as a failed termination on every disconnect). A
//! quick call's reply goes out in one write ([`super::http_quick`]).
//! With `--web`, a taken port never costs the stdio server: the page moves to a free port.
//!
//! Stopping ([`Running::stop`]) first cancels the calls in flight and waits (at most
//! [`DRAIN_CALLS`]) for their answers to go out ([`super::drain`]), then cancels rmcp's
//! sessions, closes the page's sockets, waits at most [`DRAIN`] for connections to finish
//! and removes the token file.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::extract::Request;
use axum::http::{Method, StatusCode};
use axum::middleware::Next;
use axum::response::Response;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use termpilot_core::Core;
use tokio_util::sync::CancellationToken;

use super::drain::Drain;
use super::http_quick;
use super::http_serve::{self, Limits};
use super::http_sessions::{CappedSessions, MAX_SESSIONS};
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
    /// The token from `TERMPILOT_TOKEN`/`--token-file`; made up when absent.
    pub token: Option<String>,
    /// The page alone next to stdio (`--web`): a taken port moves it to a free one.
    pub page_only: bool,
}

/// The address to listen on, refused when it is not loopback without `--http-allow-remote`.
pub fn check(options: &Options) -> anyhow::Result<SocketAddr> {
    let wanted = parse_addr(&options.addr)?;
    if !wanted.ip().is_loopback() && !options.allow_remote {
        anyhow::bail!(
            "refusing to listen on {wanted}: it is not a loopback address, and whoever reaches it with the token can run commands as you; pass --http-allow-remote to do it anyway, or listen on 127.0.0.1"
        );
    }
    Ok(wanted)
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
    _token_file: TokenFile,
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
    let wanted = check(&options)?;
    let token = match options.token.filter(|t| !t.is_empty()) {
        Some(t) => {
            token::check_given(&t)?;
            t
        }
        None => token::random_hex(32)?,
    };
    let listener = match tokio::net::TcpListener::bind(wanted).await {
        Ok(listener) => listener,
        Err(e) if options.page_only && e.kind() == std::io::ErrorKind::AddrInUse => {
            let free = SocketAddr::new(wanted.ip(), 0);
            let listener = tokio::net::TcpListener::bind(free).await.map_err(|e| {
                anyhow::anyhow!("could not listen on {wanted} ({e}), nor on a free port")
            })?;
            eprintln!(
                "termpilot: {wanted} is taken ({e}); the web page moves to port {} (`termpilot token --port {}` prints its token)",
                listener.local_addr()?.port(),
                listener.local_addr()?.port()
            );
            listener
        }
        Err(e) => anyhow::bail!("could not listen on {wanted}: {e}"),
    };
    let addr = listener.local_addr()?;
    super::secrets::listening(addr);
    let token_file = TokenFile::write(&token, addr.port())?;
    let access = Arc::new(Access::new(
        token.clone(),
        addr,
        format!(
            "`termpilot token --port {}` prints it; it is in {}",
            addr.port(),
            token_file.path().display()
        ),
    ));
    let cancel = CancellationToken::new();
    let web = Arc::new(Web {
        core,
        access: access.clone(),
        shutdown: cancel.clone(),
    });
    let mut app: Router = web::router(web);
    let calls = mcp.as_ref().map(Server::drain);
    let serves_mcp = mcp.is_some();
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
            CappedSessions::new(MAX_SESSIONS).into(),
            config,
        );
        let mcp = Router::new()
            .route_service("/mcp", service)
            .layer(axum::middleware::from_fn(http_quick::head_with_first_event))
            .layer(axum::middleware::from_fn(deleted_is_ok));
        app = app.merge(mcp);
    }
    let app = app.layer(axum::middleware::from_fn_with_state(access, guard::check));
    let url = format!("http://{addr}");
    eprintln!("termpilot: listening on {url}");
    eprintln!(
        "termpilot: token written to {} (`termpilot token --port {}` prints it; send it as Authorization: Bearer <token>)",
        token_file.path().display(),
        addr.port()
    );
    eprintln!("termpilot: watch and take over at {url}/#token={token}");
    if serves_mcp {
        eprintln!(
            "termpilot: serving MCP over Streamable HTTP at {url}/mcp and the web page at {url}/ (stdin is not read); Ctrl+C ends it"
        );
    } else {
        eprintln!("termpilot: serving the web page at {url}/; MCP is on stdin/stdout");
    }
    let limits = Limits::from_environment();
    let stop = cancel.clone();
    let task = tokio::spawn(http_serve::serve(listener, app, limits, stop));
    Ok(Running {
        calls,
        cancel,
        task,
        _token_file: token_file,
    })
}

/// `DELETE /mcp` ended the session: 200, as the SDKs expect (rmcp says 202 Accepted).
async fn deleted_is_ok(request: Request, next: Next) -> Response {
    let delete = request.method() == Method::DELETE;
    let mut response = next.run(request).await;
    if delete && response.status() == StatusCode::ACCEPTED {
        *response.status_mut() = StatusCode::OK;
    }
    response
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
