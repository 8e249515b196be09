//! MCP over Streamable HTTP end to end: rmcp's HTTP client in both protocol eras against the
//! real binary with `--http`; one core shared by every client; the token (401), the
//! DNS-rebinding defence (403), loopback only unless allowed, the generated token file and
//! a graceful stop (SIGTERM with a call in flight: answered, sessions ended, token file gone).

mod common;

use common::Era;
use common::http::{self, HttpServer, TOKEN};
use serde_json::json;
use std::os::fd::FromRawFd;

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

/// `termpilot token` prints the token of the running server, with XDG_RUNTIME_DIR set or
/// unset (then under TMPDIR), with or without --port; the 401 names that command.
#[tokio::test]
async fn termpilot_token_prints_the_running_servers_token_with_or_without_xdg_runtime_dir() {
    let runtime = tempfile::tempdir().unwrap();
    let temp = tempfile::tempdir().unwrap();
    let runtime_dir = runtime.path().to_str().unwrap().to_string();
    let temp_dir = temp.path().to_str().unwrap().to_string();
    for xdg in [true, false] {
        // An empty XDG_RUNTIME_DIR is no runtime dir, as if unset (the harness passes
        // the test's own environment on, which may have one).
        let envs = vec![
            ("TMPDIR", temp_dir.as_str()),
            (
                "XDG_RUNTIME_DIR",
                if xdg { runtime_dir.as_str() } else { "" },
            ),
        ];
        let mut cmd_envs = envs.clone();
        let mut server = http::spawn(&["--http", "127.0.0.1:0"], &envs).await;
        let file_line = server.stderr.recv().await.expect("the token file line");
        let expected_dir = if xdg {
            runtime.path().join("termpilot/run")
        } else {
            // SAFETY: geteuid has no preconditions.
            temp.path()
                .join(format!("termpilot-{}/run", unsafe { libc::geteuid() }))
        };
        assert!(
            file_line.contains(expected_dir.to_str().unwrap()),
            "{file_line}"
        );
        if !xdg {
            // `termpilot token` runs where XDG_RUNTIME_DIR is unset, too.
            cmd_envs.retain(|(k, _)| *k != "XDG_RUNTIME_DIR");
        }
        let command = |args: &[&str]| {
            let mut cmd = std::process::Command::new(http::bin());
            cmd.arg("token").args(args).env_remove("XDG_RUNTIME_DIR");
            for (k, v) in &cmd_envs {
                cmd.env(k, v);
            }
            let out = cmd.output().expect("run termpilot token");
            (
                out.status.success(),
                String::from_utf8_lossy(&out.stdout).trim().to_string(),
                String::from_utf8_lossy(&out.stderr).into_owned(),
            )
        };
        let port = server.port.to_string();
        let (ok, token, said) = command(&["--port", &port]);
        assert!(ok, "{said}");
        assert_eq!(token.len(), 64, "{token} / {said}");
        // The only server there: no port needed.
        let (ok, same, said) = command(&[]);
        assert!(ok, "{said}");
        assert_eq!(same, token);
        assert!(said.contains(&format!("/#token={token}")), "{said}");
        // The token works; without it, the 401 says how to get it.
        server.token = token.clone();
        let client = server.client(Era::Initialize).await;
        client.ok("terminal_list", json!({})).await;
        client.stop().await;
        let (status, body) = post_initialize(&server, &[]).await;
        assert_eq!(status, 401);
        assert!(
            body.contains(&format!("termpilot token --port {port}"))
                && body.contains(expected_dir.to_str().unwrap()),
            "{body}"
        );
        let login = reqwest::Client::new()
            .post(format!("{}/login", server.url))
            .body("not-the-token-at-all")
            .send()
            .await
            .unwrap();
        assert_eq!(login.status().as_u16(), 401);
        let said = login.text().await.unwrap();
        assert!(
            said.contains(&format!("termpilot token --port {port}")),
            "{said}"
        );
        server.terminate().await;
        let (ok, _, said) = command(&["--port", &port]);
        assert!(!ok, "no server, no token");
        assert!(
            said.contains(&port) && said.contains("termpilot --http"),
            "{said}"
        );
    }
}

/// Issue 30 item 6: the token is never on the command line (`--token VALUE` is refused,
/// naming the alternatives); `--token-file` must be the user's own and closed to others;
/// another local user sees no token in the server's argv and cannot read its token file
/// or its environment.
#[tokio::test]
async fn another_user_sees_no_token_in_argv_and_cannot_read_it() {
    let state = tempfile::tempdir().unwrap();
    for args in [
        vec!["--http", "127.0.0.1:0", "--token", TOKEN],
        vec!["--web", "--token"],
        vec!["serve", "--http=127.0.0.1:0", "--token=abcdefabcdefabcdef"],
    ] {
        let out = tokio::time::timeout(
            common::TEST_TIMEOUT,
            common::command(state.path(), &args)
                .stdin(std::process::Stdio::null())
                .output(),
        )
        .await
        .expect("refused at once")
        .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(
            stderr.contains("TERMPILOT_TOKEN") && stderr.contains("--token-file"),
            "{stderr}"
        );
    }
    // A token file open to others is refused.
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("token");
    std::fs::write(&file, format!("{TOKEN}\n")).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).unwrap();
    let out = common::command(state.path(), &["--http=127.0.0.1:0", "--token-file"])
        .arg(&file)
        .stdin(std::process::Stdio::null())
        .output()
        .await
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("chmod 600"), "{stderr}");
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600)).unwrap();

    let path = file.to_str().unwrap().to_string();
    let mut server = http::spawn(&["--http", "127.0.0.1:0", "--token-file", &path], &[]).await;
    server.token = TOKEN.to_string();
    let client = server.client(Era::Initialize).await;
    client.ok("terminal_list", json!({})).await;
    client.stop().await;
    let file_line = server.stderr.recv().await.expect("the token file line");
    let token_file = file_line
        .strip_prefix("termpilot: token written to ")
        .and_then(|rest| rest.split(" (").next())
        .unwrap_or_else(|| panic!("{file_line}"))
        .to_string();
    assert_eq!(std::fs::read_to_string(&token_file).unwrap().trim(), TOKEN);

    if let Some(other) = common::procs::other_user() {
        let pid = server.child.id().unwrap();
        let (read, argv) = common::procs::run_as(other, "cat", &[&format!("/proc/{pid}/cmdline")]);
        assert!(read, "another user reads any argv (what ps shows): {argv}");
        assert!(argv.contains("--token-file"), "{argv}");
        assert!(!argv.contains(TOKEN), "the token is not in argv: {argv}");
        let (read, environ) =
            common::procs::run_as(other, "cat", &[&format!("/proc/{pid}/environ")]);
        assert!(!read && !environ.contains(TOKEN), "{environ}");
        let (read, text) = common::procs::run_as(other, "cat", &[&token_file]);
        assert!(!read && !text.contains(TOKEN), "{text}");
        // A token file of another user is refused: its owner could change it.
        std::os::unix::fs::chown(&file, Some(other.0), Some(other.1)).unwrap();
        let out = common::command(state.path(), &["--http=127.0.0.1:0", "--token-file"])
            .arg(&file)
            .stdin(std::process::Stdio::null())
            .output()
            .await
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{stderr}");
        assert!(stderr.contains("not to you"), "{stderr}");
    }
    server.terminate().await;
}

/// Issue 30 item 8: the token's folder is checked like the private folder: one owned by
/// another user (open to all), or a symlink to theirs, is refused with a sentence naming it.
#[tokio::test]
async fn a_token_folder_another_user_owns_or_links_is_refused() {
    let Some(other) = common::procs::other_user() else {
        return;
    };
    use std::os::unix::fs::PermissionsExt;
    let state = tempfile::tempdir().unwrap();
    let runtime = tempfile::tempdir().unwrap();
    let theirs = tempfile::tempdir().unwrap();
    std::fs::set_permissions(theirs.path(), std::fs::Permissions::from_mode(0o777)).unwrap();
    std::os::unix::fs::chown(theirs.path(), Some(other.0), Some(other.1)).unwrap();
    let folder = runtime.path().join("termpilot");
    let refused = |why: &'static str| {
        let mut cmd = common::command(state.path(), &["--http", "127.0.0.1:0"]);
        cmd.env("XDG_RUNTIME_DIR", runtime.path())
            .env_remove("TERMPILOT_TOKEN")
            .stdin(std::process::Stdio::null());
        async move {
            let out = tokio::time::timeout(common::TEST_TIMEOUT, cmd.output())
                .await
                .expect("refused at once")
                .unwrap();
            let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
            assert!(!out.status.success(), "{stderr}");
            assert!(
                stderr.contains(why) && !stderr.contains("listening on"),
                "{stderr}"
            );
            stderr
        }
    };
    // Made by the other user, open to all (they could swap or delete the token file).
    std::fs::create_dir(&folder).unwrap();
    std::fs::set_permissions(&folder, std::fs::Permissions::from_mode(0o777)).unwrap();
    std::os::unix::fs::chown(&folder, Some(other.0), Some(other.1)).unwrap();
    let said = refused("belongs to uid").await;
    assert!(said.contains(folder.to_str().unwrap()), "{said}");
    // Ours, but its run/ sub-folder is theirs.
    std::os::unix::fs::chown(&folder, Some(0), Some(0)).unwrap();
    std::fs::set_permissions(&folder, std::fs::Permissions::from_mode(0o700)).unwrap();
    let run = folder.join("run");
    std::fs::create_dir(&run).unwrap();
    std::os::unix::fs::chown(&run, Some(other.0), Some(other.1)).unwrap();
    refused("belongs to uid").await;
    // A symlink to the other user's folder.
    std::fs::remove_dir(&run).unwrap();
    std::fs::remove_dir(&folder).unwrap();
    std::os::unix::fs::symlink(theirs.path(), &folder).unwrap();
    refused("not a real directory").await;
    // The other user can neither write nor swap a folder termpilot made itself.
    std::fs::remove_file(&folder).unwrap();
    let mut server = http::spawn(
        &["--http", "127.0.0.1:0"],
        &[("XDG_RUNTIME_DIR", runtime.path().to_str().unwrap())],
    )
    .await;
    let file_line = server.stderr.recv().await.expect("the token file line");
    assert!(file_line.contains(run.to_str().unwrap()), "{file_line}");
    let (wrote, said) = common::procs::run_as(
        other,
        "sh",
        &["-c", &format!("echo x > {}/swapped", run.display())],
    );
    assert!(!wrote, "{said}");
    let mode = std::fs::symlink_metadata(&folder)
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o700);
    server.terminate().await;
}

/// Issue 30 item 9: no child inherits the token — not `TERMPILOT_TOKEN`, nor another
/// variable holding it — in a session, a one-shot run, a job or Python; the page still
/// takes it.
#[tokio::test]
async fn no_child_inherits_the_token() {
    let copy = format!("prefix-{TOKEN}");
    let (server, mut stderr) = http::stdio_with_stderr(
        &["--web", "127.0.0.1:0"],
        &[("TERMPILOT_TOKEN", TOKEN), ("MY_COPY_OF_IT", &copy)],
        |_| {},
    )
    .await;
    let port = http::port_of(&http::line_with(&mut stderr, "listening on").await);
    let seen = |what: &str, text: &str| {
        assert!(
            !text.contains(TOKEN) && !text.contains("TERMPILOT_TOKEN"),
            "{what} sees the token: {text}"
        );
        assert!(
            text.contains("PATH="),
            "{what} printed its environment: {text}"
        );
    };
    let ran = server.ok("terminal_run", json!({"cmd": "env"})).await;
    seen("terminal_run", &ran.to_string());
    let id = server.ok("terminal_start", json!({})).await["sessionId"]
        .as_str()
        .unwrap()
        .to_string();
    let exec = server
        .ok(
            "terminal_exec",
            json!({"sessionId": id, "command": "env", "timeout": 20000}),
        )
        .await;
    seen("a session", &exec.to_string());
    if common::procs::has("python3") {
        let python = server
            .ok(
                "run_python",
                json!({"code": "import os\nfor k, v in os.environ.items(): print(f'{k}={v}')"}),
            )
            .await;
        seen("run_python", &python.to_string());
    }
    let out = server.state.path().join("job-env.txt");
    let job = server
        .extra(
            "job_start",
            json!({"command": format!("env > {}", out.display())}),
        )
        .await;
    let _job = common::procs::JobGuard::of(&job);
    let waited = server
        .extra(
            "job_wait",
            json!({"jobId": job["jobId"], "timeoutMs": 20000}),
        )
        .await;
    assert_eq!(waited["running"], false, "{waited}");
    seen("a job", &std::fs::read_to_string(&out).unwrap());
    // The page was given the token all the same.
    let page = reqwest::Client::new()
        .get(format!("http://127.0.0.1:{port}/api/sessions"))
        .bearer_auth(TOKEN)
        .send()
        .await
        .unwrap();
    assert_eq!(page.status().as_u16(), 200);
    server.stop().await;
}

/// Sets the open-file limit of the child to `n` (soft and hard, so raising cannot help).
fn nofile(cmd: &mut tokio::process::Command, n: libc::rlim_t) {
    // SAFETY: setrlimit is async-signal-safe; the closure allocates nothing.
    unsafe {
        cmd.pre_exec(move || {
            let limit = libc::rlimit {
                rlim_cur: n,
                rlim_max: n,
            };
            if libc::setrlimit(libc::RLIMIT_NOFILE, &limit) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
}

/// Reads from `stream` until the server closes it; how long that took from `since`. Writes
/// one more header line every 200 ms meanwhile when `trickle` (a slowloris).
async fn closed_after(
    mut stream: tokio::net::TcpStream,
    trickle: bool,
    since: std::time::Instant,
) -> std::time::Duration {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut buf = [0u8; 4096];
    let mut tick = tokio::time::interval(std::time::Duration::from_millis(200));
    let deadline = tokio::time::sleep(std::time::Duration::from_secs(30));
    tokio::pin!(deadline);
    loop {
        tokio::select! {
            read = stream.read(&mut buf) => match read {
                Ok(0) | Err(_) => return since.elapsed(),
                Ok(_) => {}
            },
            _ = tick.tick(), if trickle => {
                if stream.write_all(b"X-Slow: y\r\n").await.is_err() {
                    return since.elapsed();
                }
            }
            _ = &mut deadline => return since.elapsed(),
        }
    }
}

/// Issue 30 item 7: idle and slow connections cannot exhaust the server. At an open-file
/// limit of 256 (the 1,100 sockets at 1024, scaled), 400 idle sockets to the page
/// leave stdio tools working; a slowloris (headers trickled forever) and an idle
/// keep-alive connection are closed within the header timeout; the page answers again
/// once the flood is gone. The soft limit is raised to the hard one at start.
#[tokio::test]
async fn idle_and_slow_connections_cannot_exhaust_the_server() {
    const TIMEOUT_MS: u64 = 1500;
    let timeout = std::time::Duration::from_millis(TIMEOUT_MS);
    let slack = std::time::Duration::from_secs(3);
    let (server, mut stderr) = http::stdio_with_stderr(
        &["--web", "127.0.0.1:0"],
        &[
            ("TERMPILOT_TOKEN", TOKEN),
            ("TERMPILOT_HTTP_HEADER_TIMEOUT_MS", &TIMEOUT_MS.to_string()),
        ],
        |cmd| nofile(cmd, 256),
    )
    .await;
    let port = http::port_of(&http::line_with(&mut stderr, "listening on").await);
    let addr = format!("127.0.0.1:{port}");

    // A slowloris and an idle connection are closed within the timeout.
    let t = std::time::Instant::now();
    let mut slow = tokio::net::TcpStream::connect(&addr).await.unwrap();
    tokio::io::AsyncWriteExt::write_all(
        &mut slow,
        format!("GET / HTTP/1.1\r\nHost: {addr}\r\n").as_bytes(),
    )
    .await
    .unwrap();
    let idle = tokio::net::TcpStream::connect(&addr).await.unwrap();
    let (slow, idle) = tokio::join!(closed_after(slow, true, t), closed_after(idle, false, t));
    eprintln!(
        "header timeout {timeout:?}: a slowloris closed after {slow:?}, an idle socket after {idle:?}"
    );
    assert!(slow < timeout + slack, "the slowloris was held {slow:?}");
    assert!(idle < timeout + slack, "the idle socket was held {idle:?}");
    // Keep-alive: after one answered request, an idle connection is closed too.
    let mut kept = tokio::net::TcpStream::connect(&addr).await.unwrap();
    tokio::io::AsyncWriteExt::write_all(
        &mut kept,
        format!("GET / HTTP/1.1\r\nHost: {addr}\r\n\r\n").as_bytes(),
    )
    .await
    .unwrap();
    let t = std::time::Instant::now();
    let held = closed_after(kept, false, t).await;
    eprintln!("an idle keep-alive socket closed after {held:?}");
    assert!(
        held < timeout + slack,
        "a kept-alive socket was held {held:?}"
    );

    // A flood of idle sockets, more than the server has descriptors.
    let mut flood = Vec::new();
    for _ in 0..400 {
        flood.push(tokio::net::TcpStream::connect(&addr).await.unwrap());
    }
    let id = server.ok("terminal_start", json!({})).await["sessionId"]
        .as_str()
        .unwrap()
        .to_string();
    let ran = server
        .ok(
            "terminal_exec",
            json!({"sessionId": id, "command": "echo still-$((40+2))", "timeout": 20000}),
        )
        .await;
    assert_eq!(ran["output"], "still-42", "{ran}");
    let ran = server
        .ok(
            "terminal_run",
            json!({"cmd": "echo one-shot", "shell": true}),
        )
        .await;
    assert!(ran.to_string().contains("one-shot"), "{ran}");
    let path = server.state.path().join("written.txt");
    server
        .ok(
            "terminal_write_file",
            json!({"path": path, "content": "written"}),
        )
        .await;
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "written");
    drop(flood);
    let flooded = std::time::Instant::now();
    // The flood gone, the page answers (the accepted sockets close with the timeout).
    let page = tokio::time::timeout(
        common::TEST_TIMEOUT,
        reqwest::Client::new()
            .get(format!("http://{addr}/api/sessions"))
            .bearer_auth(TOKEN)
            .send(),
    )
    .await
    .expect("the page answers in time")
    .unwrap();
    assert_eq!(page.status().as_u16(), 200);
    eprintln!(
        "the page answered {:?} after the flood of 400 idle sockets went away",
        flooded.elapsed()
    );
    server.stop().await;

    // The soft limit is raised to the hard one at start.
    let (raised, _stderr) = http::stdio_with_stderr(&[], &[], |cmd| {
        // SAFETY: setrlimit is async-signal-safe.
        unsafe {
            cmd.pre_exec(|| {
                let limit = libc::rlimit {
                    rlim_cur: 256,
                    rlim_max: 4096,
                };
                libc::setrlimit(libc::RLIMIT_NOFILE, &limit);
                Ok(())
            });
        }
    })
    .await;
    let limits = std::fs::read_to_string(format!("/proc/{}/limits", raised.pid)).unwrap();
    let line = limits
        .lines()
        .find(|l| l.starts_with("Max open files"))
        .unwrap();
    let numbers: Vec<&str> = line.split_whitespace().skip(3).take(2).collect();
    assert_eq!(numbers, ["4096", "4096"], "{line}");
    raised.stop().await;
}

/// Issue 37 item 9: `DELETE /mcp` ends the session with 200 (the Python SDK logs anything
/// but 200/204 as a failed termination); the session is gone afterwards.
#[tokio::test]
async fn delete_mcp_answers_200_and_ends_the_session() {
    let server = http::start().await;
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
    let deleted = reqwest::Client::new()
        .delete(format!("{}/mcp", server.url))
        .bearer_auth(&server.token)
        .header("mcp-session-id", &session)
        .header("mcp-protocol-version", "2025-06-18")
        .send()
        .await
        .unwrap();
    assert_eq!(deleted.status().as_u16(), 200);
    let after = post(
        &server,
        Some(&session),
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}),
    )
    .await;
    assert_eq!(after.status().as_u16(), 404, "the session is gone");
    server.terminate().await;
}

/// Issue 30, lower grade: HTTP MCP sessions are capped (256); past that the least recently
/// used is closed (its client gets 404 and starts again), the newer ones go on.
#[tokio::test]
async fn http_mcp_sessions_are_capped_least_recently_used_first() {
    let server = http::start().await;
    let initialize = || {
        post(
            &server,
            None,
            json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
                "protocolVersion": "2025-06-18", "capabilities": {},
                "clientInfo": {"name": "many", "version": "1"}}}),
        )
    };
    let mut ids = Vec::new();
    for _ in 0..260 {
        let init = initialize().await;
        assert_eq!(init.status().as_u16(), 200);
        ids.push(
            init.headers()["mcp-session-id"]
                .to_str()
                .unwrap()
                .to_string(),
        );
        init.text().await.unwrap();
    }
    let list = |id: String| {
        let server = &server;
        async move {
            post(
                server,
                Some(&id),
                json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}),
            )
            .await
            .status()
            .as_u16()
        }
    };
    for old in &ids[..4] {
        assert_eq!(list(old.clone()).await, 404, "the oldest were closed");
    }
    for new in &ids[ids.len() - 4..] {
        assert_eq!(list(new.clone()).await, 200, "the newest go on");
    }
    server.terminate().await;
}

/// Issue 37 item 7: `termpilot --http` started by hand (stdin a terminal) says what it serves
/// and where, and not that it speaks MCP on stdin/stdout.
#[tokio::test]
async fn http_started_in_a_terminal_says_what_it_serves_and_where() {
    // A terminal for its stdin.
    // SAFETY: plain libc calls on descriptors this test owns.
    let (master, slave) = unsafe {
        let master = libc::posix_openpt(libc::O_RDWR | libc::O_NOCTTY);
        assert!(master >= 0);
        assert_eq!(libc::grantpt(master), 0);
        assert_eq!(libc::unlockpt(master), 0);
        let name = std::ffi::CStr::from_ptr(libc::ptsname(master)).to_owned();
        let slave = libc::open(name.as_ptr(), libc::O_RDWR | libc::O_NOCTTY);
        assert!(slave >= 0);
        (master, slave)
    };
    let state = tempfile::tempdir().unwrap();
    let mut cmd = common::command(state.path(), &["--http", "127.0.0.1:0"]);
    // SAFETY: `slave` is an open descriptor this test owns; the child gets its own copy.
    let stdin = unsafe { std::process::Stdio::from(std::os::fd::OwnedFd::from_raw_fd(slave)) };
    let mut child = cmd
        .env("TERMPILOT_TOKEN", TOKEN)
        .stdin(stdin)
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    use tokio::io::AsyncBufReadExt;
    let mut lines = tokio::io::BufReader::new(child.stderr.take().unwrap()).lines();
    let mut said = Vec::new();
    tokio::time::timeout(common::TEST_TIMEOUT, async {
        while let Ok(Some(line)) = lines.next_line().await {
            let done = line.contains("Ctrl+C");
            said.push(line);
            if done {
                break;
            }
        }
    })
    .await
    .expect("the banner in time");
    let url = said
        .iter()
        .find_map(|l| l.strip_prefix("termpilot: listening on "))
        .unwrap_or_else(|| panic!("{said:?}"))
        .to_string();
    // Once it answers, its signals are handled (and any notice for a person printed):
    // stop it and read the rest.
    let answered = reqwest::Client::new()
        .get(format!("{url}/"))
        .send()
        .await
        .unwrap();
    assert_eq!(answered.status().as_u16(), 200);
    // SAFETY: kill(2) on the server this test started.
    unsafe { libc::kill(child.id().unwrap() as i32, libc::SIGTERM) };
    tokio::time::timeout(common::TEST_TIMEOUT, async {
        while let Ok(Some(line)) = lines.next_line().await {
            said.push(line);
        }
    })
    .await
    .expect("the server ends in time");
    let said = said.join("\n");
    assert!(
        said.contains(&format!("MCP over Streamable HTTP at {url}/mcp"))
            && said.contains(&format!("web page at {url}/")),
        "{said}"
    );
    assert!(!said.contains("stdin/stdout"), "{said}");
    child.wait().await.unwrap();
    // SAFETY: closing the descriptor this test opened.
    unsafe { libc::close(master) };
}

/// A quick call's reply goes out in one write (issue 32: fifty clients at once): its head
/// waited for its answer, and the two are read together. A call still running
/// after a second has its head sent without its answer (an HTTP client's read timeout must
/// see a head), and its answer follows on the same stream.
#[tokio::test]
async fn a_quick_reply_is_one_write_and_a_slow_one_streams_its_head_first() {
    let server = http::start().await;
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
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    // Sent by hand, read once: the first read holds the head and the answer, which left in
    // one write (a head written on its own is read on its own by a reader already waiting).
    // It answers after a fifth of a second: a head sent at once would be read alone.
    let body = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
        "name": "terminal_run", "arguments": {"cmd": "sleep 0.2; echo qu''ick", "shell": true}}})
    .to_string();
    let request = format!(
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nAuthorization: Bearer {}\r\n\
         Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n\
         Mcp-Session-Id: {session}\r\nContent-Length: {}\r\n\r\n{body}",
        server.port,
        server.token,
        body.len()
    );
    let mut socket = tokio::net::TcpStream::connect(("127.0.0.1", server.port))
        .await
        .unwrap();
    socket.write_all(request.as_bytes()).await.unwrap();
    let mut first = vec![0u8; 1 << 20];
    let n = tokio::time::timeout(common::TEST_TIMEOUT, socket.read(&mut first))
        .await
        .expect("an answer in time")
        .unwrap();
    let first = String::from_utf8_lossy(&first[..n]);
    assert!(first.starts_with("HTTP/1.1 200"), "{first}");
    assert!(
        first.contains("text/event-stream")
            && first.contains("\"id\":2")
            && first.contains("quick"),
        "the first read: {first}"
    );
    drop(socket);

    // A call that cannot answer before the test lets it.
    let dir = tempfile::tempdir().unwrap();
    let gate = dir.path().join("gate");
    let slow = tokio::spawn({
        let (url, token, session) = (server.url.clone(), server.token.clone(), session.clone());
        let command = format!(
            "while [ ! -e '{}' ]; do sleep 0.02; done; echo thr''ough",
            gate.display()
        );
        async move {
            reqwest::Client::new()
                .post(format!("{url}/mcp"))
                .bearer_auth(token)
                .header("content-type", "application/json")
                .header("accept", "application/json, text/event-stream")
                .header("mcp-session-id", session)
                .body(
                    json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {
                        "name": "terminal_run", "arguments": {"cmd": command, "shell": true}}})
                    .to_string(),
                )
                .send()
                .await
        }
    });
    let head = tokio::time::timeout(common::TEST_TIMEOUT, slow)
        .await
        .expect("the slow call's head comes before its answer")
        .unwrap()
        .unwrap();
    assert_eq!(head.status().as_u16(), 200);
    if head.headers().get("content-length").is_some() {
        panic!(
            "the slow call's reply came whole before it could answer: {:?}",
            head.text().await
        );
    }
    std::fs::write(&gate, "").unwrap();
    let body = tokio::time::timeout(common::TEST_TIMEOUT, head.text())
        .await
        .expect("the answer in time")
        .unwrap();
    // The quotes keep the command's own text from matching.
    assert!(
        body.contains("\"id\":3") && body.contains("through") && !body.contains("isError\":true"),
        "{body}"
    );
    server.terminate().await;
}
