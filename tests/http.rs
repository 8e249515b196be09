//! MCP over Streamable HTTP end to end: rmcp's HTTP client in both protocol eras against the
//! real binary with `--http`; one core shared by every client; the token (401), the
//! DNS-rebinding defence (403), loopback only unless allowed, the generated token file and
//! a graceful stop (SIGTERM with a call in flight: answered, sessions ended, token file gone).

mod common;

use common::Era;
use common::http::{self, HttpServer, TOKEN};
use serde_json::json;

/// start → exec → read → screenshot → stop, as an agent would over HTTP.
async fn core_scenario(server: &HttpServer, era: Era) {
    let client = server.client(era).await;
    let started = client
        .ok("terminal_start", json!({"env": {"PS1": "$ "}}))
        .await;
    let id = started["sessionId"].as_str().unwrap().to_string();
    let ran = client
        .ok(
            "terminal_exec",
            json!({"sessionId": id, "command": "echo over-$((40+2))-http", "timeout": 20000}),
        )
        .await;
    assert_eq!(ran["output"], "over-42-http", "{ran}");
    assert_eq!(ran["exitCode"], 0);
    let screen = client.screen_text(&id).await;
    assert!(screen.contains("over-42-http"), "{screen}");
    let shot = client
        .call("terminal_screenshot", json!({"sessionId": id}))
        .await;
    assert_ne!(shot.is_error, Some(true), "{}", common::text(&shot));
    assert!(
        shot.content.iter().any(|c| c.as_image().is_some()),
        "the screenshot came back as an image block"
    );
    let stopped = client.ok("terminal_stop", json!({"sessionId": id})).await;
    assert_eq!(stopped["success"], true, "{stopped}");
    client.stop().await;
}

#[tokio::test]
async fn http_serves_the_core_scenario_in_both_eras() {
    let server = http::start().await;
    core_scenario(&server, Era::Initialize).await;
    core_scenario(&server, Era::Discover).await;
    let status = server.terminate().await;
    assert!(status.success(), "a clean exit on SIGTERM: {status}");
}

#[tokio::test]
async fn two_http_clients_share_one_session() {
    let server = http::start().await;
    let alice = server.client(Era::Initialize).await;
    let bob = server.client(Era::Discover).await;
    let id = alice
        .ok(
            "terminal_start",
            json!({"name": "shared", "env": {"PS1": "$ "}}),
        )
        .await["sessionId"]
        .as_str()
        .unwrap()
        .to_string();
    let listed = bob.ok("terminal_list", json!({})).await;
    assert!(
        listed["sessions"]
            .as_array()
            .unwrap()
            .iter()
            .any(|s| s["id"] == id.as_str()),
        "{listed}"
    );
    let ran = bob
        .ok(
            "terminal_exec",
            json!({"sessionId": "shared", "command": "echo from-bob", "timeout": 20000}),
        )
        .await;
    assert_eq!(ran["output"], "from-bob");
    assert!(alice.screen_text(&id).await.contains("from-bob"));
    alice.stop().await;
    bob.stop().await;
    server.terminate().await;
}

/// A raw MCP `initialize` POST with the given extra headers; the status.
async fn post_initialize(server: &HttpServer, headers: &[(&str, String)]) -> (u16, String) {
    let mut request = reqwest::Client::new()
        .post(format!("{}/mcp", server.url))
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .body(
            json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
                "protocolVersion": "2025-11-25", "capabilities": {},
                "clientInfo": {"name": "raw", "version": "0"}}})
            .to_string(),
        );
    for (k, v) in headers {
        request = request.header(*k, v);
    }
    let response = tokio::time::timeout(common::TEST_TIMEOUT, request.send())
        .await
        .expect("an answer in time")
        .expect("the request reaches the server");
    let status = response.status().as_u16();
    (status, response.text().await.unwrap_or_default())
}

#[tokio::test]
async fn http_needs_the_token_and_our_own_host_and_origin() {
    let server = http::start().await;
    let bearer = ("authorization", format!("Bearer {TOKEN}"));

    let (status, body) = post_initialize(&server, &[]).await;
    assert_eq!(status, 401, "{body}");
    assert!(
        !body.contains("jsonrpc"),
        "a 401 carries nothing else: {body}"
    );
    let (status, _) = post_initialize(
        &server,
        &[("authorization", "Bearer wrong-token-wrong".into())],
    )
    .await;
    assert_eq!(status, 401);
    let (status, _) = post_initialize(&server, &[("authorization", TOKEN.into())]).await;
    assert_eq!(status, 401, "the token without `Bearer` is refused");

    let (status, body) = post_initialize(&server, std::slice::from_ref(&bearer)).await;
    assert_eq!(status, 200, "{body}");

    let foreign_host = ("host", format!("evil.example:{}", server.port));
    let (status, body) = post_initialize(&server, &[bearer.clone(), foreign_host]).await;
    assert_eq!(status, 403, "{body}");
    let foreign_origin = ("origin", "http://evil.example".to_string());
    let (status, _) = post_initialize(&server, &[bearer.clone(), foreign_origin]).await;
    assert_eq!(status, 403);
    let own_origin = ("origin", format!("http://localhost:{}", server.port));
    let (status, _) = post_initialize(&server, &[bearer.clone(), own_origin]).await;
    assert_eq!(status, 200);
    server.terminate().await;
}

#[tokio::test]
async fn http_refuses_a_non_loopback_address_without_the_flag() {
    let state = tempfile::tempdir().unwrap();
    let out = tokio::time::timeout(
        common::TEST_TIMEOUT,
        common::command(state.path(), &["--http", "0.0.0.0:0"])
            .env("TERMPILOT_TOKEN", TOKEN)
            .stdin(std::process::Stdio::null())
            .output(),
    )
    .await
    .expect("the server answers in time")
    .expect("run termpilot");
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("--http-allow-remote"), "{stderr}");

    // With the flag it listens (on every address; the token still applies).
    let server = http::spawn(
        &["--http", "0.0.0.0:0", "--http-allow-remote"],
        &[("TERMPILOT_TOKEN", TOKEN)],
    )
    .await;
    let (status, _) = post_initialize(&server, &[]).await;
    assert_eq!(status, 401);
    server.terminate().await;
}

#[tokio::test]
async fn a_made_up_token_is_written_0600_printed_once_and_removed_at_the_end() {
    let mut server = http::spawn(&["--http", "127.0.0.1:0"], &[]).await;
    let file_line = server.stderr.recv().await.expect("the token file line");
    let page_line = server.stderr.recv().await.expect("the page line");
    let path = file_line
        .strip_prefix("termpilot: token written to ")
        .and_then(|rest| rest.split(" (").next())
        .unwrap_or_else(|| panic!("{file_line}"))
        .to_string();
    let token = std::fs::read_to_string(&path).unwrap().trim().to_string();
    assert_eq!(token.len(), 64, "256 bits of hex: {token}");
    assert!(
        page_line.ends_with(&format!("/#token={token}")),
        "{page_line}"
    );
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
    }
    server.token = token;
    let client = server.client(Era::Initialize).await;
    let id = client.ok("terminal_start", json!({})).await["sessionId"]
        .as_str()
        .unwrap()
        .to_string();
    let shell_pid = client.ok("terminal_list", json!({"verbose": true})).await;
    assert!(shell_pid.to_string().contains(&id));
    let status = server.terminate().await;
    assert!(status.success(), "{status}");
    assert!(
        !std::path::Path::new(&path).exists(),
        "the token file is removed on exit"
    );
    let _ = http::bin();
}

/// Waits (at most 10 s, looking every 20 ms: nothing announces a process starting) until a
/// process whose command line contains `fragment` runs; its pids.
async fn running(fragment: &str) -> Vec<i64> {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        let pids = common::procs::pids_running(fragment);
        if !pids.is_empty() {
            return pids;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "`{fragment}` never started"
        );
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
}

/// One JSON-RPC POST to `/mcp` the way any HTTP client sends it; the response.
async fn post(
    server: &HttpServer,
    session: Option<&str>,
    body: serde_json::Value,
) -> reqwest::Response {
    let mut request = reqwest::Client::new()
        .post(format!("{}/mcp", server.url))
        .bearer_auth(&server.token)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .body(body.to_string());
    if let Some(id) = session {
        request = request.header("mcp-session-id", id);
    }
    tokio::time::timeout(common::TEST_TIMEOUT, request.send())
        .await
        .expect("the server answers in time")
        .expect("the server answers")
}

#[tokio::test]
async fn sigterm_answers_the_call_in_flight_ends_the_sessions_and_removes_the_token_file() {
    let mut server = http::spawn(&["--http", "127.0.0.1:0"], &[]).await;
    let file_line = server.stderr.recv().await.expect("the token file line");
    let path = file_line
        .strip_prefix("termpilot: token written to ")
        .and_then(|rest| rest.split(" (").next())
        .unwrap_or_else(|| panic!("{file_line}"))
        .to_string();
    server.token = std::fs::read_to_string(&path).unwrap().trim().to_string();
    // A plain HTTP client (what is on the wire is what counts), 2025 era.
    let init = post(
        &server,
        None,
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "test", "version": "1"}}}),
    )
    .await;
    let session = init.headers()["mcp-session-id"]
        .to_str()
        .unwrap()
        .to_string();
    init.text().await.unwrap();
    post(
        &server,
        Some(&session),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
    )
    .await;
    let started = post(
        &server,
        Some(&session),
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
               "params": {"name": "terminal_start", "arguments": {}}}),
    )
    .await
    .text()
    .await
    .unwrap();
    let id = started
        .split("\"sessionId\":\"")
        .nth(1)
        .and_then(|rest| rest.split('"').next())
        .unwrap_or_else(|| panic!("{started}"))
        .to_string();
    // A long call in flight when the signal comes.
    let in_flight = post(
        &server,
        Some(&session),
        json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
               "params": {"name": "terminal_exec", "arguments":
                   {"sessionId": id, "command": "sleep 30.4321", "timeout": 60000}}}),
    )
    .await;
    let answer = tokio::spawn(async move { in_flight.text().await });
    let sleeping = running("sleep 30.4321").await;

    let asked = std::time::Instant::now();
    let status = server.terminate().await;
    let took = asked.elapsed();
    assert!(status.success(), "{status}");
    assert!(
        took < std::time::Duration::from_secs(8),
        "the server ended {took:?} after SIGTERM"
    );
    // The call got its answer before the stream closed: the exec says it was cancelled.
    let answer = tokio::time::timeout(common::TEST_TIMEOUT, answer)
        .await
        .expect("the stream of the call in flight ends")
        .unwrap()
        .unwrap_or_default();
    assert!(
        answer.contains("\"id\":3")
            && answer.contains("\"result\"")
            && answer.contains("cancelled"),
        "{answer}"
    );
    common::procs::all_gone(&sleeping).await;
    assert!(
        common::procs::pids_running("sleep 30.4321").is_empty(),
        "no sleep is left"
    );
    assert!(
        !std::path::Path::new(&path).exists(),
        "the token file is removed"
    );
}
