//! The web page for people: watch an agent's terminals live and take over the keyboard.
//!
//! - [`guard`]: Host/Origin checks, the bearer token, the login cookie.
//! - [`token`]: the token (given or made up) and its 0600 file.
//! - [`assets`]: the page, its script and styles, xterm.js and the fonts, compiled in.
//! - [`list`]: the session list (JSON, and a WebSocket that pushes it on every change).
//! - [`ended`]: ended sessions' last screens and `.cast` transcripts, for replay.
//! - [`live`]: one session over a WebSocket — the attach redraw, then every byte; take
//!   control / release.
//! - [`kept`]: a kept session (the session host's) on the page, through its attach socket.
//! - [`secret`]: the one-time page where a person answers a secret prompt (issue 35).
//! - [`secret_field`]: the page's own password field on a session waiting at one.
//!
//! Served by [`crate::mcp::http`], next to `/mcp` (`--http`) or alone next to stdio (`--web`).

pub mod assets;
pub mod ended;
pub mod guard;
pub mod kept;
pub mod list;
pub mod live;
pub mod secret;
pub mod secret_field;
pub mod token;

use std::sync::Arc;

use axum::Router;
use axum::body::Body;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use termpilot_core::Core;
use tokio_util::sync::CancellationToken;

use guard::Access;

/// What the page's handlers share.
pub struct Web {
    pub core: Arc<Core>,
    pub access: Arc<Access>,
    /// Cancelled when the server ends: every socket closes.
    pub shutdown: CancellationToken,
}

/// The page's routes (the guard is layered on by the caller, over these and `/mcp`).
pub fn router(web: Arc<Web>) -> Router {
    Router::new()
        .route("/", get(index))
        .route("/login", post(login))
        .route("/favicon.ico", get(assets::favicon))
        .route("/assets/{name}", get(assets::serve))
        .route("/api/sessions", get(list::json))
        .route("/api/ended/{seq}/screen", get(ended::screen))
        .route("/api/ended/{seq}/cast", get(ended::cast))
        .route("/api/sessions/{id}/cast", get(ended::live_cast))
        .route("/ws/sessions", get(list::socket))
        .route("/ws/session/{id}", get(live::socket))
        .route("/secret/{token}", get(secret::page).post(secret::submit))
        .route("/api/secret/{id}", post(secret_field::submit))
        .with_state(web)
}

/// The app for a logged-in person, the login page for anyone else.
async fn index(State(web): State<Arc<Web>>, headers: HeaderMap) -> Response {
    let page = if web.access.cookie_ok(&headers) {
        assets::APP_HTML
    } else {
        assets::LOGIN_HTML
    };
    (
        [
            (header::CONTENT_TYPE, "text/html; charset=utf-8"),
            (header::CACHE_CONTROL, "no-store"),
        ],
        page,
    )
        .into_response()
}

/// The token (the request body) for a cookie.
async fn login(State(web): State<Arc<Web>>, body: String) -> Response {
    if !web.access.token_ok(&body) {
        return (
            StatusCode::UNAUTHORIZED,
            format!(
                "That is not this server's token; copy it from the URL termpilot printed ({}).",
                web.access.hint()
            ),
        )
            .into_response();
    }
    match web.access.login() {
        Ok(value) => Response::builder()
            .status(StatusCode::NO_CONTENT)
            .header(
                header::SET_COOKIE,
                format!(
                    "{}={value}; HttpOnly; SameSite=Strict; Path=/",
                    guard::COOKIE
                ),
            )
            .body(Body::empty())
            .unwrap_or_default(),
        Err(e) => (StatusCode::INTERNAL_SERVER_ERROR, e.to_string()).into_response(),
    }
}
