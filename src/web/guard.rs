//! Who may talk to the HTTP listener: every request's `Host` (and `Origin`, when sent) must
//! name this server (the DNS-rebinding defence), `/mcp` needs `Authorization: Bearer
//! <token>`, and the page's assets, API and WebSockets need the login cookie (or the bearer
//! token). Only the login page itself (`/`, `/login`) and its icon (`/favicon.ico`) are
//! served without them, and they hold no data; so is a one-time secret link (`/secret/…`,
//! its token is its key; a submit must carry the Origin).

use std::collections::VecDeque;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use super::token;

/// The login cookie's name.
pub const COOKIE: &str = "termpilot_login";
/// Most logins remembered at once (the oldest is forgotten first).
const MAX_LOGINS: usize = 64;

/// The access rules of one listener.
pub struct Access {
    token: String,
    /// `Host` values (lowercase `host:port`) that name this server.
    hosts: Vec<String>,
    /// With `--http-allow-remote` on an unspecified address (0.0.0.0, ::), any host name is
    /// accepted on this port: the machine's names are not known.
    any_host_on: Option<u16>,
    logins: Mutex<VecDeque<String>>,
    /// Where the token is, for the 401's sentence.
    hint: String,
}

impl Access {
    /// `hint` says where a client finds the token (the command, the file).
    pub fn new(token: String, addr: SocketAddr, hint: String) -> Self {
        let port = addr.port();
        let ip = addr.ip();
        let mut hosts = Vec::new();
        if ip.is_loopback() {
            for name in ["127.0.0.1", "localhost", "[::1]"] {
                hosts.push(format!("{name}:{port}"));
            }
        }
        let literal = match ip {
            std::net::IpAddr::V4(v4) => v4.to_string(),
            std::net::IpAddr::V6(v6) => format!("[{v6}]"),
        };
        let own = format!("{literal}:{port}");
        if !hosts.contains(&own) {
            hosts.push(own);
        }
        Access {
            token,
            hosts,
            any_host_on: ip.is_unspecified().then_some(port),
            logins: Mutex::new(VecDeque::new()),
            hint,
        }
    }

    /// Where the token is (the command that prints it, its file).
    pub fn hint(&self) -> &str {
        &self.hint
    }

    /// The `Host` values that name this server (for rmcp's own check).
    pub fn allowed_hosts(&self) -> Vec<String> {
        self.hosts.clone()
    }

    fn host_ok(&self, host: &str) -> bool {
        let host = host.to_ascii_lowercase();
        if self.hosts.contains(&host) {
            return true;
        }
        match self.any_host_on {
            Some(port) => host
                .rsplit_once(':')
                .is_some_and(|(name, p)| !name.is_empty() && p == port.to_string()),
            None => false,
        }
    }

    /// Host matches, and Origin (when present, or when `origin_required`) is this server.
    fn place_ok(&self, headers: &HeaderMap, origin_required: bool) -> bool {
        let Some(host) = headers.get(header::HOST).and_then(|h| h.to_str().ok()) else {
            return false;
        };
        if !self.host_ok(host) {
            return false;
        }
        match headers.get(header::ORIGIN).and_then(|o| o.to_str().ok()) {
            Some(origin) => origin
                .strip_prefix("http://")
                .is_some_and(|authority| self.host_ok(authority)),
            None => !origin_required,
        }
    }

    /// `Authorization: Bearer <token>` with this server's token.
    pub fn bearer_ok(&self, headers: &HeaderMap) -> bool {
        headers
            .get(header::AUTHORIZATION)
            .and_then(|h| h.to_str().ok())
            .and_then(|h| h.strip_prefix("Bearer "))
            .is_some_and(|t| token::same(t.trim(), &self.token))
    }

    /// Whether `candidate` is this server's token (the login form).
    pub fn token_ok(&self, candidate: &str) -> bool {
        token::same(candidate.trim(), &self.token)
    }

    /// A login cookie this server handed out.
    pub fn cookie_ok(&self, headers: &HeaderMap) -> bool {
        let Some(value) = cookie(headers, COOKIE) else {
            return false;
        };
        let logins = self.logins.lock().unwrap_or_else(|e| e.into_inner());
        logins.iter().any(|l| token::same(l, &value))
    }

    /// A new login; the value of its cookie.
    pub fn login(&self) -> anyhow::Result<String> {
        let value = token::random_hex(32)?;
        let mut logins = self.logins.lock().unwrap_or_else(|e| e.into_inner());
        if logins.len() >= MAX_LOGINS {
            logins.pop_front();
        }
        logins.push_back(value.clone());
        Ok(value)
    }
}

/// The value of cookie `name` in the request.
fn cookie(headers: &HeaderMap, name: &str) -> Option<String> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|h| h.to_str().ok())
        .flat_map(|h| h.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(k, _)| *k == name)
        .map(|(_, v)| v.to_string())
}

/// What a path needs.
#[derive(PartialEq)]
enum Need {
    /// The login page: nothing but the right Host/Origin.
    Nothing,
    /// MCP: the bearer token.
    Bearer,
    /// The page's assets, API and sockets: the cookie (or the bearer token).
    Login,
}

fn need(path: &str) -> Need {
    match path {
        "/" | "/login" | "/favicon.ico" => Need::Nothing,
        // A one-time secret link is its own key (`web::secret` checks its Host and Origin).
        _ if path.starts_with("/secret/") => Need::Nothing,
        "/mcp" => Need::Bearer,
        _ => Need::Login,
    }
}

/// The middleware in front of every route.
pub async fn check(State(access): State<Arc<Access>>, request: Request, next: Next) -> Response {
    let path = request.uri().path().to_string();
    let headers = request.headers();
    let is_socket = path.starts_with("/ws/");
    let is_secret_submit = (path.starts_with("/secret/") || path.starts_with("/api/secret/"))
        && request.method() == axum::http::Method::POST;
    if !access.place_ok(headers, is_socket || is_secret_submit) {
        return refuse(
            StatusCode::FORBIDDEN,
            "The Host or Origin header does not name this server (a defence against DNS rebinding); open the URL termpilot printed.",
        );
    }
    let allowed = match need(&path) {
        Need::Nothing => true,
        Need::Bearer => access.bearer_ok(headers),
        Need::Login => access.cookie_ok(headers) || access.bearer_ok(headers),
    };
    if !allowed {
        let why = if need(&path) == Need::Bearer {
            let sent = if headers.contains_key(header::AUTHORIZATION) {
                "That is not this server's token"
            } else {
                "No token was sent"
            };
            format!(
                "{sent}: send it as `Authorization: Bearer <token>`; {}.",
                access.hint
            )
        } else {
            format!(
                "Log in first: open the URL with #token=… that termpilot printed, or paste the token ({}).",
                access.hint
            )
        };
        let mut response = refuse(StatusCode::UNAUTHORIZED, why);
        response.headers_mut().insert(
            header::WWW_AUTHENTICATE,
            HeaderValue::from_static("Bearer realm=\"termpilot\""),
        );
        return response;
    }
    next.run(request).await
}

fn refuse(status: StatusCode, why: impl Into<Body>) -> Response {
    (
        status,
        [(header::CONTENT_TYPE, "text/plain; charset=utf-8")],
        why.into(),
    )
        .into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.append(*k, HeaderValue::from_str(v).unwrap());
        }
        h
    }

    #[test]
    fn loopback_names_and_origin() {
        let a = Access::new(
            "t".repeat(20),
            "127.0.0.1:8765".parse().unwrap(),
            String::new(),
        );
        assert!(a.place_ok(&headers(&[("host", "127.0.0.1:8765")]), false));
        assert!(a.place_ok(&headers(&[("host", "localhost:8765")]), false));
        assert!(!a.place_ok(&headers(&[("host", "evil.example:8765")]), false));
        assert!(!a.place_ok(&headers(&[("host", "127.0.0.1:9999")]), false));
        assert!(!a.place_ok(&headers(&[("host", "127.0.0.1:8765")]), true));
        assert!(a.place_ok(
            &headers(&[
                ("host", "127.0.0.1:8765"),
                ("origin", "http://localhost:8765")
            ]),
            true
        ));
        assert!(!a.place_ok(
            &headers(&[
                ("host", "127.0.0.1:8765"),
                ("origin", "http://evil.example")
            ]),
            false
        ));
    }

    #[test]
    fn cookies_are_ours() {
        let a = Access::new(
            "t".repeat(20),
            "127.0.0.1:1".parse().unwrap(),
            String::new(),
        );
        let value = a.login().unwrap();
        assert!(a.cookie_ok(&headers(&[("cookie", &format!("x=1; {COOKIE}={value}"))])));
        assert!(!a.cookie_ok(&headers(&[("cookie", &format!("{COOKIE}=nope"))])));
    }
}
