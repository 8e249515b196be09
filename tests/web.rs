//! The web page in a real browser (headless Chromium over the DevTools protocol) against the
//! real binary with `--http`: log in with the token, see the list, watch a session live,
//! keys ignored until Take control, then a person's keys reach the shell while the agent's
//! typing is refused, and Release gives the keyboard back. Also: nothing but the login page
//! without the cookie.

mod common;

use std::time::{Duration, Instant};

use common::cdp::Browser;
use common::http::{self, HttpServer, TOKEN};
use common::{Era, Server};
use serde_json::json;

/// Where the page's screenshot is saved (a test artefact; the README's image is a copy).
fn artefact() -> std::path::PathBuf {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("web");
    std::fs::create_dir_all(&dir).unwrap();
    dir.join("page.png")
}

async fn start_session(agent: &Server) -> String {
    agent
        .ok(
            "terminal_start",
            json!({"shell": "bash", "name": "demo", "cols": 100, "rows": 24,
                   "env": {"PS1": "$ ", "HOME": "/tmp"}}),
        )
        .await["sessionId"]
        .as_str()
        .unwrap()
        .to_string()
}

#[tokio::test]
async fn a_person_watches_takes_control_and_releases_it_in_a_real_browser() {
    let server = http::start().await;
    let Some(mut browser) = Browser::launch().await else {
        return;
    };
    let agent = server.client(Era::Initialize).await;
    let id = start_session(&agent).await;
    let wait = Duration::from_secs(20);

    // Log in with the token in the URL; the cookie is HttpOnly (scripts cannot read it).
    browser
        .navigate(&format!("{}/#token={TOKEN}", server.url))
        .await;
    let row = format!("document.querySelector('#sessions li[data-id=\"{id}\"]')");
    assert!(browser.wait_for(&row, wait).await, "the session is listed");
    assert_eq!(
        browser.eval("location.hash").await,
        json!(""),
        "the token left the URL"
    );
    assert_eq!(
        browser
            .eval("document.cookie.includes('termpilot_login')")
            .await,
        json!(false)
    );
    assert!(
        browser
            .wait_for(&format!("{row}.textContent.includes('demo')"), wait)
            .await
    );

    // Open it: the current screen first, then what the agent's exec prints, within 1 s.
    browser
        .click(&format!("#sessions li[data-id=\"{id}\"]"))
        .await;
    assert!(
        browser
            .wait_for("window.termpilot.screenText().includes('$')", wait)
            .await,
        "the redraw shows the prompt"
    );
    let ran = agent
        .ok(
            "terminal_exec",
            json!({"sessionId": id, "command": "echo agent-said-$((6*7))", "timeout": 20000}),
        )
        .await;
    assert_eq!(ran["output"], "agent-said-42");
    let printed = Instant::now();
    assert!(
        browser
            .wait_for(
                "window.termpilot.screenText().includes('\\nagent-said-42')",
                Duration::from_secs(1)
            )
            .await,
        "the exec's output reaches the page within 1 s"
    );
    eprintln!("exec output on the page after {:?}", printed.elapsed());

    // Read-only: keys are ignored and say so.
    browser
        .eval("document.querySelector('.xterm-helper-textarea').focus()")
        .await;
    browser.type_text("echo ignored-$((1+1))").await;
    assert!(
        browser
            .wait_for(
                "document.getElementById('notice').textContent.includes('Take control')",
                wait
            )
            .await
    );
    assert!(!agent.screen_text(&id).await.contains("ignored"));

    // Take control: the agent's typing is refused, reads still work and say who types.
    browser.click("#take").await;
    assert!(browser.wait_for("window.termpilot.controlling", wait).await);
    let refused = agent
        .err(
            "terminal_write",
            json!({"sessionId": id, "data": "echo agent\r"}),
        )
        .await;
    assert!(refused.contains("A person is typing"), "{refused}");
    assert!(refused.contains("terminal_wait"), "{refused}");
    let refused = agent
        .err(
            "terminal_exec",
            json!({"sessionId": id, "command": "echo agent"}),
        )
        .await;
    assert!(refused.contains("A person is typing"), "{refused}");
    let listed = agent.ok("terminal_list", json!({})).await;
    assert_eq!(listed["sessions"][0]["controller"], "person", "{listed}");
    let read = agent
        .ok("terminal_read", json!({"sessionId": id, "view": "screen"}))
        .await;
    assert_eq!(read["controller"], "person", "{read}");

    // The person's keys reach the shell.
    browser
        .eval("document.querySelector('.xterm-helper-textarea').focus()")
        .await;
    browser.type_text("echo person-$((2+3))\r").await;
    assert!(
        browser
            .wait_for(
                "window.termpilot.screenText().includes('\\nperson-5')",
                wait
            )
            .await,
        "the shell ran what the person typed"
    );
    agent
        .ok(
            "terminal_wait",
            json!({"sessionId": id, "pattern": "^person-5", "on": "screen", "timeout": 20000}),
        )
        .await;
    assert!(agent.screen_text(&id).await.contains("\nperson-5"));
    let png = browser.screenshot().await;
    assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
    std::fs::write(artefact(), &png).unwrap();
    eprintln!("page screenshot: {}", artefact().display());

    // Release: the agent types again.
    browser.click("#release").await;
    assert!(
        browser
            .wait_for("!window.termpilot.controlling", wait)
            .await
    );
    let listed = agent.ok("terminal_list", json!({})).await;
    assert!(
        listed["sessions"][0].get("controller").is_none(),
        "{listed}"
    );
    let ran = agent
        .ok(
            "terminal_exec",
            json!({"sessionId": id, "command": "echo agent-again", "timeout": 20000}),
        )
        .await;
    assert_eq!(ran["output"], "agent-again");

    // The session ending shows on the page.
    agent.ok("terminal_stop", json!({"sessionId": id})).await;
    assert!(
        browser
            .wait_for(&format!("{row} && {row}.classList.contains('ended')"), wait)
            .await,
        "an ended session stays listed, marked ended"
    );
    browser.close().await;
    agent.stop().await;
    server.terminate().await;
}

async fn get(server: &HttpServer, path: &str, headers: &[(&str, &str)]) -> (u16, String) {
    let mut request = reqwest::Client::new().get(format!("{}{path}", server.url));
    for (k, v) in headers {
        request = request.header(*k, *v);
    }
    let response = request.send().await.expect("the server answers");
    (
        response.status().as_u16(),
        response.text().await.unwrap_or_default(),
    )
}

#[tokio::test]
async fn without_the_cookie_only_the_login_page_is_served() {
    let server = http::start().await;
    let origin = format!("http://127.0.0.1:{}", server.port);
    let (status, body) = get(&server, "/", &[]).await;
    assert_eq!(status, 200);
    assert!(
        body.contains("Log in") && !body.contains("app.js"),
        "{body}"
    );
    let (status, _) = get(&server, "/assets/app.js", &[]).await;
    assert_eq!(status, 401);
    for path in [
        "/api/sessions",
        "/api/ended/1/screen",
        "/api/ended/1/cast",
        "/api/sessions/x/cast",
    ] {
        let (status, _) = get(&server, path, &[]).await;
        assert_eq!(status, 401, "{path} needs the cookie");
    }
    let upgrade = [
        ("connection", "Upgrade"),
        ("upgrade", "websocket"),
        ("sec-websocket-version", "13"),
        ("sec-websocket-key", "dGhlIHNhbXBsZSBub25jZQ=="),
        ("origin", origin.as_str()),
    ];
    let (status, _) = get(&server, "/ws/sessions", &upgrade).await;
    assert_eq!(status, 401, "the WebSocket needs the cookie");
    let (status, _) = get(&server, "/ws/sessions", &upgrade[..4]).await;
    assert_eq!(status, 403, "the WebSocket needs our Origin");

    // A wrong token gets no cookie; the right one does, and the cookie opens the rest.
    let login = |token: &'static str| {
        reqwest::Client::new()
            .post(format!("{}/login", server.url))
            .header("origin", origin.clone())
            .body(token)
            .send()
    };
    assert_eq!(
        login("not-the-token-at-all")
            .await
            .unwrap()
            .status()
            .as_u16(),
        401
    );
    let ok = login(TOKEN).await.unwrap();
    assert_eq!(ok.status().as_u16(), 204);
    let cookie = ok.headers()["set-cookie"].to_str().unwrap().to_string();
    assert!(
        cookie.contains("HttpOnly") && cookie.contains("SameSite=Strict"),
        "{cookie}"
    );
    let pair = cookie.split(';').next().unwrap().to_string();
    let (status, body) = get(&server, "/", &[("cookie", &pair)]).await;
    assert_eq!(status, 200);
    assert!(body.contains("app.js"), "{body}");
    let (status, _) = get(&server, "/assets/xterm.js", &[("cookie", &pair)]).await;
    assert_eq!(status, 200);
    let (status, _) = get(
        &server,
        "/assets/app.js",
        &[("cookie", &pair), ("host", "evil.example")],
    )
    .await;
    assert_eq!(status, 403);
    server.terminate().await;
}

/// A logged-in WebSocket on `/ws/session/{id}` (no browser: the page's own protocol).
async fn live_socket(
    server: &HttpServer,
    id: &str,
) -> tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>> {
    use tokio_tungstenite::tungstenite::client::IntoClientRequest;
    let origin = format!("http://127.0.0.1:{}", server.port);
    let login = reqwest::Client::new()
        .post(format!("{}/login", server.url))
        .header("origin", &origin)
        .body(TOKEN)
        .send()
        .await
        .unwrap();
    let cookie = login.headers()["set-cookie"].to_str().unwrap().to_string();
    let mut request = format!("ws://127.0.0.1:{}/ws/session/{id}", server.port)
        .into_client_request()
        .unwrap();
    let headers = request.headers_mut();
    headers.insert("origin", origin.parse().unwrap());
    headers.insert("cookie", cookie.split(';').next().unwrap().parse().unwrap());
    let (ws, _) = tokio_tungstenite::connect_async(request)
        .await
        .expect("the live socket opens");
    ws
}

/// The next text message of type `kind` (terminal bytes and other messages skipped).
async fn next_of(
    ws: &mut tokio_tungstenite::WebSocketStream<
        tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>,
    >,
    kind: &str,
) -> serde_json::Value {
    use futures_util::StreamExt;
    use tokio_tungstenite::tungstenite::Message;
    tokio::time::timeout(common::TEST_TIMEOUT, async {
        loop {
            match ws.next().await {
                Some(Ok(Message::Text(text))) => {
                    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
                    if v["type"] == kind {
                        return v;
                    }
                }
                Some(Ok(_)) => {}
                other => panic!("the socket ended before a {kind} message: {other:?}"),
            }
        }
    })
    .await
    .unwrap_or_else(|_| panic!("a {kind} message in time"))
}

#[tokio::test]
async fn one_page_holds_control_another_is_refused_and_closing_the_tab_releases_it() {
    use futures_util::SinkExt;
    use tokio_tungstenite::tungstenite::Message;
    let server = http::start().await;
    let agent = server.client(Era::Initialize).await;
    let id = agent
        .ok("terminal_start", json!({"env": {"PS1": "$ "}}))
        .await["sessionId"]
        .as_str()
        .unwrap()
        .to_string();
    let mut first = live_socket(&server, &id).await;
    let mut second = live_socket(&server, &id).await;
    let hello = next_of(&mut first, "hello").await;
    assert_eq!(hello["controller"], "agent");
    next_of(&mut second, "hello").await;

    let send = |value: serde_json::Value| Message::Text(value.to_string().into());
    first.send(send(json!({"type": "take"}))).await.unwrap();
    let control = next_of(&mut first, "control").await;
    assert_eq!(
        (control["controller"].clone(), control["you"].clone()),
        (json!("person"), json!(true))
    );
    second
        .send(send(json!({"type": "input", "data": "echo sneaky\r"})))
        .await
        .unwrap();
    let refused = next_of(&mut second, "refused").await;
    assert!(
        refused["why"].as_str().unwrap().contains("another page"),
        "{refused}"
    );
    assert!(
        agent
            .err(
                "terminal_send_key",
                json!({"sessionId": id, "key": "Enter"})
            )
            .await
            .contains("A person is typing")
    );

    // Closing the holder's tab gives the keyboard back to the agent.
    first.close(None).await.unwrap();
    drop(first);
    // (The second page first heard that a person took control; then that it came back.)
    while next_of(&mut second, "control").await["controller"] != "agent" {}
    let ran = agent
        .ok(
            "terminal_exec",
            json!({"sessionId": id, "command": "echo agent-back", "timeout": 20000}),
        )
        .await;
    assert_eq!(ran["output"], "agent-back");
    assert!(!agent.screen_text(&id).await.contains("sneaky"));
    agent.stop().await;
    server.terminate().await;
}

/// The page time (ms) at which the replay wrote the event that completed `marker`.
fn played_at(marker: &str) -> String {
    format!(
        "(() => {{ let text = ''; for (const e of window.termpilot.played) {{ text += e.data; if (text.includes({m})) return e.t; }} return null; }})()",
        m = serde_json::to_string(marker).unwrap()
    )
}

#[tokio::test]
async fn an_ended_session_stays_listed_with_its_last_screen_and_its_cast_replays() {
    let server = http::start().await;
    let Some(mut browser) = Browser::launch().await else {
        return;
    };
    let agent = server.client(Era::Initialize).await;
    let id = start_session(&agent).await;
    let wait = Duration::from_secs(20);
    // Two lines half a second apart (the shell sleeps, not the test), then a last one.
    let ran = agent
        .ok(
            "terminal_exec",
            json!({"sessionId": id, "timeout": 20000,
                   "command": "printf 'cast-%s\\n' one; sleep 0.5; printf 'cast-%s\\n' two"}),
        )
        .await;
    assert_eq!(ran["output"], "cast-one\ncast-two", "{ran}");
    agent
        .ok(
            "terminal_exec",
            json!({"sessionId": id, "command": "echo last-$((3*4))", "timeout": 20000}),
        )
        .await;
    let dir = tempfile::tempdir().unwrap();
    let cast = dir.path().join("demo.cast");
    let stopped = agent
        .ok(
            "terminal_stop",
            json!({"sessionId": id, "transcriptPath": cast.display().to_string()}),
        )
        .await;
    assert_eq!(stopped["transcript"]["format"], "asciicast-v2", "{stopped}");
    // Agents still see live sessions only.
    let listed = agent.ok("terminal_list", json!({})).await;
    assert_eq!(listed["sessions"], json!([]), "{listed}");

    // A page opened after the end still lists it, marked ended.
    browser
        .navigate(&format!("{}/#token={TOKEN}", server.url))
        .await;
    let row = format!("document.querySelector('#sessions li.ended[data-id=\"{id}\"]')");
    assert!(
        browser
            .wait_for(
                &format!("{row} && {row}.textContent.includes('demo') && {row}.textContent.includes('replay')"),
                wait
            )
            .await,
        "the ended session is listed, with its transcript"
    );

    // Opening it shows its last screen.
    browser
        .click(&format!("#sessions li.ended[data-id=\"{id}\"]"))
        .await;
    assert!(
        browser
            .wait_for(
                "window.termpilot.mode === 'ended' && window.termpilot.screenText().includes('\\nlast-12')",
                wait
            )
            .await,
        "the last screen is shown"
    );
    assert!(browser.wait_for("!document.getElementById('replay').hidden && document.getElementById('take').hidden", wait).await);

    // Replay: a fresh terminal plays the transcript with its recorded timing.
    browser.click("#replay").await;
    assert!(
        browser
            .wait_for("window.termpilot.mode === 'replayed'", wait)
            .await,
        "the replay ends"
    );
    let text = browser.eval("window.termpilot.screenText()").await;
    let text = text.as_str().unwrap();
    assert!(
        text.contains("\ncast-one") && text.contains("\ncast-two") && text.contains("\nlast-12"),
        "{text}"
    );
    let one = browser.eval(&played_at("cast-one")).await.as_f64().unwrap();
    let two = browser.eval(&played_at("cast-two")).await.as_f64().unwrap();
    assert!(
        two - one >= 300.0,
        "the half-second pause is replayed at 1x ({} ms)",
        two - one
    );
    let png = browser.screenshot().await;
    std::fs::write(artefact().with_file_name("replay.png"), &png).unwrap();
    browser.close().await;
    agent.stop().await;
    server.terminate().await;
}

type PageSocket =
    tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>;

/// One page's WebSocket on session `id`, as the page opens it (our Origin, logged in; here
/// with the bearer token).
async fn page_socket(server: &HttpServer, id: &str) -> PageSocket {
    use tokio_tungstenite::tungstenite::client::IntoClientRequest;
    let url = format!("ws://127.0.0.1:{}/ws/session/{id}", server.port);
    let mut request = url.into_client_request().unwrap();
    let headers = request.headers_mut();
    headers.insert("authorization", format!("Bearer {TOKEN}").parse().unwrap());
    headers.insert("origin", server.url.parse().unwrap());
    let (ws, _) = tokio::time::timeout(
        common::TEST_TIMEOUT,
        tokio_tungstenite::connect_async(request),
    )
    .await
    .expect("the socket opens in time")
    .expect("the page's socket opens");
    ws
}

/// The next JSON message of `kind` on a page's socket (terminal bytes skipped).
async fn next_message(ws: &mut PageSocket, kind: &str) -> serde_json::Value {
    use futures_util::StreamExt;
    use tokio_tungstenite::tungstenite::Message;
    tokio::time::timeout(common::TEST_TIMEOUT, async {
        while let Some(Ok(message)) = ws.next().await {
            if let Message::Text(text) = message {
                let value: serde_json::Value = serde_json::from_str(&text).unwrap();
                if value["type"] == kind {
                    return value;
                }
            }
        }
        panic!("the socket closed before a `{kind}` message");
    })
    .await
    .unwrap_or_else(|_| panic!("no `{kind}` message in time"))
}

async fn send(ws: &mut PageSocket, value: serde_json::Value) {
    use futures_util::SinkExt;
    ws.send(tokio_tungstenite::tungstenite::Message::Text(
        value.to_string().into(),
    ))
    .await
    .unwrap();
}

/// Issue 30, lower grade: a second page asking for control while another holds it is told
/// who holds it and gets nothing; asking again with `force` takes it, and the first page is
/// told it lost it.
#[tokio::test]
async fn a_second_page_is_told_who_holds_control_and_takes_it_only_when_forced() {
    let server = http::start().await;
    let agent = server.client(Era::Initialize).await;
    let id = start_session(&agent).await;
    let mut first = page_socket(&server, &id).await;
    next_message(&mut first, "hello").await;
    send(&mut first, json!({"type": "take"})).await;
    let control = next_message(&mut first, "control").await;
    assert_eq!(control["you"], true, "{control}");

    let mut second = page_socket(&server, &id).await;
    let hello = next_message(&mut second, "hello").await;
    assert_eq!(hello["controller"], "person", "{hello}");
    send(&mut second, json!({"type": "take"})).await;
    let refused = next_message(&mut second, "refused").await;
    let why = refused["why"].as_str().unwrap();
    assert!(
        why.contains("Another page holds control")
            && why.contains("page #")
            && why.contains("opened at")
            && why.contains("Take control again"),
        "{refused}"
    );
    assert_eq!(refused["canForce"], true);
    // The first page still holds it: its keys reach the shell, the second's do not.
    send(
        &mut second,
        json!({"type": "input", "data": "echo second-$((1+1))\r"}),
    )
    .await;
    next_message(&mut second, "refused").await;
    send(
        &mut first,
        json!({"type": "input", "data": "echo first-$((2+2))\r"}),
    )
    .await;
    agent
        .ok(
            "terminal_wait",
            json!({"sessionId": id, "pattern": "^first-4", "on": "screen", "timeout": 20000}),
        )
        .await;
    assert!(!agent.screen_text(&id).await.contains("second-2"));

    send(&mut second, json!({"type": "take", "force": true})).await;
    let control = next_message(&mut second, "control").await;
    assert_eq!(control["you"], true, "{control}");
    let lost = next_message(&mut first, "control").await;
    assert_eq!(lost["you"], false, "the first page is told: {lost}");
    agent.stop().await;
    server.terminate().await;
}

/// Issue 37 item 3: a page port that is taken (a second client window, an `--http` server)
/// never costs the stdio MCP server: the page moves to a free port and says which.
#[tokio::test]
async fn a_taken_page_port_never_costs_the_stdio_server() {
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = taken.local_addr().unwrap().port();
    let addr = format!("127.0.0.1:{port}");
    let (server, mut stderr) = http::stdio_with_stderr(&["--web", &addr], &[], |_| {}).await;
    let tools = server.client.list_all_tools().await.expect("tools/list");
    assert!(tools.iter().any(|t| t.name == "terminal_start"));
    let moved = http::line_with(&mut stderr, "is taken").await;
    let listening = http::line_with(&mut stderr, "listening on").await;
    let new_port = http::port_of(&listening);
    assert_ne!(new_port, port);
    assert!(
        moved.contains(&addr) && moved.contains(&format!("port {new_port}")),
        "{moved}"
    );
    // The page there works, with the token `termpilot token --port N` prints.
    let out = std::process::Command::new(http::bin())
        .args(["token", "--port", &new_port.to_string()])
        .output()
        .unwrap();
    let token = String::from_utf8_lossy(&out.stdout).trim().to_string();
    assert!(out.status.success() && token.len() == 64, "{out:?}");
    let page = reqwest::Client::new()
        .get(format!("http://127.0.0.1:{new_port}/api/sessions"))
        .bearer_auth(&token)
        .send()
        .await
        .unwrap();
    assert_eq!(page.status().as_u16(), 200);
    server
        .ok(
            "terminal_run",
            json!({"cmd": "echo still-serving", "shell": true}),
        )
        .await;
    server.stop().await;
    drop(taken);
}

/// Issue 37 item 9: a plain stop says "stopped", not "killed by Killed", in terminal_stop
/// and in the page's list of ended sessions.
#[tokio::test]
async fn a_plain_stop_is_called_stopped_not_killed() {
    let server = http::start().await;
    let agent = server.client(Era::Initialize).await;
    let id = start_session(&agent).await;
    let stopped = agent.ok("terminal_stop", json!({"sessionId": id})).await;
    let message = stopped["message"].as_str().unwrap();
    assert_eq!(
        message,
        format!("Session {id} stopped; its processes are gone."),
        "{stopped}"
    );
    let (_, listing) = get(
        &server,
        "/api/sessions",
        &[("authorization", &format!("Bearer {TOKEN}"))],
    )
    .await;
    let listing: serde_json::Value = serde_json::from_str(&listing).unwrap();
    let first = listing["ended"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["id"] == id.as_str())
        .unwrap_or_else(|| panic!("{listing}"))
        .clone();
    assert_eq!(first["exited"], "stopped", "{first}");
    agent.stop().await;
    server.terminate().await;
}

/// Issue 30 item 7: a WebSocket keeps its connection's slot after the upgrade, so page
/// sockets count against the connection cap too (a quarter of the open-file limit: 16 at
/// 64); the tools over stdio go on meanwhile.
#[tokio::test]
async fn page_sockets_count_against_the_connection_cap() {
    let (server, mut stderr) = http::stdio_with_stderr(
        &["--web", "127.0.0.1:0"],
        &[("TERMPILOT_TOKEN", TOKEN)],
        |cmd| {
            // SAFETY: setrlimit is async-signal-safe; nothing is allocated.
            unsafe {
                cmd.pre_exec(|| {
                    let limit = libc::rlimit {
                        rlim_cur: 64,
                        rlim_max: 64,
                    };
                    if libc::setrlimit(libc::RLIMIT_NOFILE, &limit) != 0 {
                        return Err(std::io::Error::last_os_error());
                    }
                    Ok(())
                });
            }
        },
    )
    .await;
    let port = http::port_of(&http::line_with(&mut stderr, "listening on").await);
    let (tx, mut opened) = tokio::sync::mpsc::unbounded_channel();
    let mut sockets = Vec::new();
    for _ in 0..24 {
        let tx = tx.clone();
        sockets.push(tokio::spawn(async move {
            use tokio_tungstenite::tungstenite::client::IntoClientRequest;
            let mut request = format!("ws://127.0.0.1:{port}/ws/sessions")
                .into_client_request()
                .unwrap();
            let headers = request.headers_mut();
            headers.insert("authorization", format!("Bearer {TOKEN}").parse().unwrap());
            headers.insert(
                "origin",
                format!("http://127.0.0.1:{port}").parse().unwrap(),
            );
            if let Ok((ws, _)) = tokio_tungstenite::connect_async(request).await {
                let _ = tx.send(());
                // Held open until the test ends.
                std::future::pending::<()>().await;
                drop(ws);
            }
        }));
    }
    drop(tx);
    let mut count = 0;
    // Sockets past the cap never open: count what opens until none has for 3 s.
    while let Ok(Some(())) = tokio::time::timeout(Duration::from_secs(3), opened.recv()).await {
        count += 1;
    }
    assert_eq!(count, 16, "page sockets open at once with 16 slots");
    let ran = server
        .ok(
            "terminal_run",
            json!({"cmd": "echo still-serving", "shell": true}),
        )
        .await;
    assert!(ran.to_string().contains("still-serving"), "{ran}");
    for socket in &sockets {
        socket.abort();
    }
    server.stop().await;
}
