//! The page's files, compiled into the binary: HTML, script and styles written here,
//! xterm.js 6.0.0 as published in its npm package (`vendor/xterm/`, MIT, its LICENSE kept
//! beside it) and the JetBrains Mono faces the screenshots use; `favicon.ico` (a `>_` prompt,
//! 16 and 32 px) is served to anyone, as the login page is.

use axum::extract::Path;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};

pub const LOGIN_HTML: &str = include_str!("assets/login.html");
pub const APP_HTML: &str = include_str!("assets/app.html");

/// `(name, content type, bytes)` of every asset under `/assets/`.
const FILES: &[(&str, &str, &[u8])] = &[
    (
        "app.js",
        "text/javascript; charset=utf-8",
        include_bytes!("assets/app.js"),
    ),
    (
        "app.css",
        "text/css; charset=utf-8",
        include_bytes!("assets/app.css"),
    ),
    (
        "xterm.js",
        "text/javascript; charset=utf-8",
        include_bytes!("assets/vendor/xterm/xterm.js"),
    ),
    (
        "xterm.css",
        "text/css; charset=utf-8",
        include_bytes!("assets/vendor/xterm/xterm.css"),
    ),
    (
        "xterm-LICENSE.txt",
        "text/plain; charset=utf-8",
        include_bytes!("assets/vendor/xterm/LICENSE"),
    ),
    (
        "JetBrainsMono-Regular.ttf",
        "font/ttf",
        termpilot_core::render::JETBRAINS_REGULAR,
    ),
    (
        "JetBrainsMono-Bold.ttf",
        "font/ttf",
        termpilot_core::render::JETBRAINS_BOLD,
    ),
];

pub async fn serve(Path(name): Path<String>) -> Response {
    match FILES.iter().find(|(n, _, _)| *n == name) {
        Some((_, kind, bytes)) => (
            [
                (header::CONTENT_TYPE, *kind),
                (header::CACHE_CONTROL, "private, max-age=3600"),
            ],
            *bytes,
        )
            .into_response(),
        None => (StatusCode::NOT_FOUND, "No such file.").into_response(),
    }
}

/// `/favicon.ico`: browsers ask for it on every page, the login page included.
pub async fn favicon() -> Response {
    (
        [
            (header::CONTENT_TYPE, "image/x-icon"),
            (header::CACHE_CONTROL, "public, max-age=86400"),
        ],
        &include_bytes!("assets/favicon.ico")[..],
    )
        .into_response()
}
