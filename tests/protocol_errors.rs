//! The protocol answers every request: lines rmcp would drop or answer with `id: null`,
//! calls before `initialize`, a `tools/call` without a name, and signals that end the server
//! while its client keeps stdin open. All through the raw line client.

mod common;

use std::time::{Duration, Instant};

use common::{RawClient, procs};
use serde_json::{Value, json};

/// The error of `reply`, checked to carry `id` and `code`; returns its message.
fn error_for(reply: &Value, id: Value, code: i64) -> String {
    assert_eq!(reply["id"], id, "{reply}");
    assert_eq!(reply["error"]["code"], code, "{reply}");
    reply["error"]["message"].as_str().unwrap().to_string()
}

/// The server still answers after whatever came before.
async fn still_answers(raw: &mut RawClient) {
    let reply = raw.request(4242, "ping", json!({})).await;
    assert_eq!(reply["result"], json!({}), "{reply}");
}

#[tokio::test]
async fn invalid_utf8_gets_a_parse_error_with_its_id() {
    let mut raw = RawClient::start(&[]);
    raw.initialize("2025-11-25").await;
    raw.send_bytes(
        b"{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"ping\",\"params\":{\"x\":\"\xff\xfe\"}}",
    )
    .await;
    let e = error_for(&raw.recv().await, json!(5), -32700);
    assert!(e.contains("UTF-8"), "{e}");
    still_answers(&mut raw).await;
    raw.close().await;
}

#[tokio::test]
async fn a_lone_surrogate_gets_a_parse_error_with_its_id() {
    let mut raw = RawClient::start(&[]);
    raw.initialize("2025-11-25").await;
    raw.send(r#"{"jsonrpc":"2.0","id":"s-1","method":"ping","params":{"x":"\udc00"}}"#)
        .await;
    let e = error_for(&raw.recv().await, json!("s-1"), -32700);
    assert!(e.contains("surrogate"), "{e}");
    still_answers(&mut raw).await;
    raw.close().await;
}

#[tokio::test]
async fn deep_nesting_is_refused_with_its_id_and_the_limit() {
    let mut raw = RawClient::start(&[]);
    raw.initialize("2025-11-25").await;
    for depth in [127, 200] {
        let line = format!(
            r#"{{"jsonrpc":"2.0","id":{depth},"method":"tools/call","params":{{"name":"terminal_list","arguments":{{"x":{}{}}}}}}}"#,
            "[".repeat(depth),
            "]".repeat(depth)
        );
        raw.send(&line).await;
        let e = error_for(&raw.recv().await, json!(depth), -32600);
        assert!(e.contains("limit is 64"), "{e}");
    }
    still_answers(&mut raw).await;
    raw.close().await;
}

#[tokio::test]
async fn an_oversized_line_is_refused_with_its_id_and_the_limit() {
    let mut raw = RawClient::start(&[]);
    raw.initialize("2025-11-25").await;
    let big = "a".repeat(17 << 20);
    let line = format!(
        r#"{{"jsonrpc":"2.0","id":31,"method":"tools/call","params":{{"name":"terminal_list","arguments":{{"x":"{big}"}}}}}}"#
    );
    raw.send(&line).await;
    let e = error_for(&raw.recv().await, json!(31), -32600);
    assert!(e.contains("16 MiB"), "{e}");
    still_answers(&mut raw).await;
    raw.close().await;
}

#[tokio::test]
async fn tools_call_without_a_name_says_what_to_send() {
    let mut raw = RawClient::start(&[]);
    raw.initialize("2025-11-25").await;
    let reply = raw.request(8, "tools/call", json!({"arguments": {}})).await;
    let e = error_for(&reply, json!(8), -32602);
    assert!(e.contains("params.name") && e.contains("tools/list"), "{e}");
    let reply = raw
        .request(
            9,
            "tools/call",
            json!({"name": "terminal_list", "arguments": [1]}),
        )
        .await;
    let e = error_for(&reply, json!(9), -32602);
    assert!(e.contains("params.arguments"), "{e}");
    still_answers(&mut raw).await;
    raw.close().await;
}

#[tokio::test]
async fn calls_before_initialize_say_to_initialize() {
    let mut raw = RawClient::start(&[]);
    let reply = raw.request(3, "tools/list", json!({})).await;
    let e = error_for(&reply, json!(3), -32602);
    assert!(
        e.contains("send `initialize` first") && e.contains("_meta"),
        "{e}"
    );
    // A notification or a response before initialize needs no answer and ends nothing.
    raw.send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#)
        .await;
    raw.send(r#"{"jsonrpc":"2.0","id":77,"result":{}}"#).await;
    still_answers(&mut raw).await;
    let init = raw.initialize("2025-11-25").await;
    assert_eq!(init["result"]["serverInfo"]["name"], "termpilot", "{init}");
    let tools = raw.request(1, "tools/list", json!({})).await;
    assert!(tools["result"]["tools"].is_array(), "{tools}");
    raw.close().await;
}

#[tokio::test]
async fn raw_discover_without_meta_is_answered_and_the_server_goes_on() {
    let mut raw = RawClient::start(&[]);
    for params in [json!({}), Value::Null] {
        let reply = raw.request(4, "server/discover", params).await;
        let e = error_for(&reply, json!(4), -32602);
        assert!(
            e.contains("io.modelcontextprotocol/protocolVersion") && e.contains("\"2026-07-28\""),
            "{e}"
        );
    }
    still_answers(&mut raw).await;
    let init = raw.initialize("2025-11-25").await;
    assert_eq!(init["result"]["serverInfo"]["name"], "termpilot", "{init}");
    raw.close().await;
}

#[tokio::test]
async fn a_client_that_leaves_before_initialize_is_a_clean_exit() {
    let state = tempfile::tempdir().unwrap();
    let mut child = common::command(state.path(), &[])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    tokio::io::AsyncWriteExt::write_all(
        &mut stdin,
        b"{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"server/discover\"}\n",
    )
    .await
    .unwrap();
    drop(stdin);
    let out = tokio::time::timeout(common::TEST_TIMEOUT, child.wait_with_output())
        .await
        .expect("exit in time")
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{:?}: {stderr}", out.status);
    assert!(!stderr.contains("connection closed"), "{stderr}");
    let reply: Value = serde_json::from_str(stdout.trim()).expect("one reply line");
    error_for(&reply, json!(4), -32602);
}

/// Starts a server with a session running `sleep`, sends `signal`, and checks the server
/// exits within a second with its stdin still open, the session's shell gone.
async fn ends_on(signal: i32) {
    let mut raw = RawClient::start(&[]);
    raw.initialize("2025-11-25").await;
    let started = raw
        .request(
            1,
            "tools/call",
            json!({"name": "terminal_start", "arguments": {}}),
        )
        .await;
    let shell = started["result"]["structuredContent"]["pid"]
        .as_i64()
        .unwrap_or_else(|| panic!("terminal_start: {started}"));
    assert!(procs::alive(shell));
    let pid = raw.child.id().expect("server pid") as i32;
    let sent = Instant::now();
    // SAFETY: kill(2) on the server this test started.
    unsafe { libc::kill(pid, signal) };
    let status = tokio::time::timeout(Duration::from_secs(5), raw.child.wait())
        .await
        .unwrap_or_else(|_| panic!("signal {signal}: the server is still running after 5 s"))
        .unwrap();
    let took = sent.elapsed();
    assert!(
        took < Duration::from_secs(1),
        "signal {signal}: exited after {took:?}"
    );
    assert!(status.code().is_some(), "{status:?}");
    procs::all_gone(&[shell]).await;
    raw.close().await;
}

#[tokio::test]
async fn sigterm_ends_the_server_while_stdin_stays_open() {
    ends_on(libc::SIGTERM).await;
}

#[tokio::test]
async fn sigint_ends_the_server_while_stdin_stays_open() {
    ends_on(libc::SIGINT).await;
}

#[tokio::test]
async fn sighup_ends_the_server_while_stdin_stays_open() {
    ends_on(libc::SIGHUP).await;
}

#[tokio::test]
async fn started_in_a_terminal_it_says_it_speaks_mcp_on_stdio() {
    let (master, slave) = termpilot_core::platform::openpty().expect("openpty");
    let state = tempfile::tempdir().unwrap();
    let mut child = common::command(state.path(), &[])
        .stdin(std::process::Stdio::from(slave))
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut stderr = tokio::io::BufReader::new(child.stderr.take().unwrap());
    let mut line = String::new();
    tokio::time::timeout(
        common::TEST_TIMEOUT,
        tokio::io::AsyncBufReadExt::read_line(&mut stderr, &mut line),
    )
    .await
    .expect("a line on stderr in time")
    .unwrap();
    assert!(
        line.contains("Model Context Protocol on stdin/stdout") && line.contains("mcp add"),
        "{line}"
    );
    // SAFETY: kill(2) on the server this test started.
    unsafe { libc::kill(child.id().unwrap() as i32, libc::SIGTERM) };
    let status = tokio::time::timeout(Duration::from_secs(5), child.wait())
        .await
        .expect("exit after SIGTERM")
        .unwrap();
    assert!(status.code().is_some(), "{status:?}");
    drop(master);
}

#[tokio::test]
async fn with_stdin_a_pipe_stderr_stays_quiet() {
    let state = tempfile::tempdir().unwrap();
    let out = common::command(state.path(), &[])
        .stdin(std::process::Stdio::null())
        .output()
        .await
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
