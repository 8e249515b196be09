//! Kept sessions end to end: sessions that live in the user's session host and outlive the
//! server (and client) that started them. Real binaries, rmcp's client; each test has its
//! own private runtime folder (XDG_RUNTIME_DIR in a temp dir), so tests share no host, and
//! a guard kills the test's host (by its pid) however the test ends.

mod common;

use serde_json::{Value, json};
use std::path::{Path, PathBuf};

/// A test's private runtime folder; dropping it kills the hosts it holds.
struct Runtime {
    dir: tempfile::TempDir,
}

impl Runtime {
    fn new() -> Runtime {
        Runtime {
            dir: tempfile::tempdir().expect("temp dir"),
        }
    }

    fn path(&self) -> &str {
        self.dir.path().to_str().expect("utf-8 temp dir")
    }

    fn keep_dir(&self) -> PathBuf {
        self.dir.path().join("termpilot/keep")
    }

    /// The pids in the hosts' records.
    fn host_pids(&self) -> Vec<i64> {
        std::fs::read_dir(self.keep_dir())
            .into_iter()
            .flatten()
            .flatten()
            .filter(|e| e.path().extension().is_some_and(|x| x == "json"))
            .filter_map(|e| std::fs::read_to_string(e.path()).ok())
            .filter_map(|t| serde_json::from_str::<Value>(&t).ok())
            .filter_map(|v| v["pid"].as_i64())
            .collect()
    }

    /// The one live host's pid, from its record.
    fn host_pid(&self) -> i64 {
        let live: Vec<i64> = self
            .host_pids()
            .into_iter()
            .filter(|&p| is_host(p))
            .collect();
        assert_eq!(live.len(), 1, "one live host: {live:?}");
        live[0]
    }

    async fn server(&self, args: &[&str]) -> common::Server {
        common::start_with(
            common::Era::Initialize,
            args,
            &[("XDG_RUNTIME_DIR", self.path())],
        )
        .await
    }
}

impl Drop for Runtime {
    fn drop(&mut self) {
        for pid in self.host_pids() {
            if is_host(pid) {
                // SAFETY: kill(2) on a session host this test started (checked by its command line).
                unsafe { libc::kill(pid as i32, libc::SIGKILL) };
            }
        }
    }
}

/// True when `pid` is a live session host.
fn is_host(pid: i64) -> bool {
    common::procs::alive(pid)
        && std::fs::read(format!("/proc/{pid}/cmdline"))
            .is_ok_and(|c| String::from_utf8_lossy(&c).contains("__session-host"))
}

async fn start_kept(server: &common::Server) -> String {
    let started = server
        .ok("terminal_start", json!({"keep": true, "shell": "/bin/sh"}))
        .await;
    assert_eq!(started["kept"], true, "{started}");
    let id = started["sessionId"].as_str().expect("an id").to_string();
    assert!(id.starts_with("k-"), "{id}");
    id
}

async fn exec_out(server: &common::Server, id: &str, command: &str) -> String {
    let r = common::exec(server, id, command).await;
    r["output"].as_str().unwrap_or_default().to_string()
}

/// Starts a kept `/bin/sh` session that starts a `nohup sleep` (a process that ignores the
/// hang-up); its id, the shell's pid and the sleep's.
async fn kept_shell_with_a_nohup_sleep(server: &common::Server) -> (String, i64, i64) {
    let started = server
        .ok("terminal_start", json!({"keep": true, "shell": "/bin/sh"}))
        .await;
    let id = started["sessionId"].as_str().unwrap().to_string();
    let shell = started["pid"].as_i64().expect("shell pid");
    let out = exec_out(server, &id, "nohup sleep 300 >/dev/null 2>&1 & echo bg=$!").await;
    let bg: i64 = out
        .lines()
        .find_map(|l| l.trim().strip_prefix("bg="))
        .and_then(|p| p.parse().ok())
        .unwrap_or_else(|| panic!("{out}"));
    (id, shell, bg)
}

/// The undertaker of session host `host`: its child, named so.
fn undertakers_of(host: i64) -> Vec<i64> {
    common::procs::descendants(host)
        .into_iter()
        .filter(|p| {
            std::fs::read_to_string(format!("/proc/{p}/comm"))
                .is_ok_and(|c| c.trim() == "termpilot-under")
        })
        .collect()
}

fn list_entry(list: &Value, id: &str) -> Option<Value> {
    list["sessions"]
        .as_array()?
        .iter()
        .find(|s| s["id"] == id)
        .cloned()
}

#[tokio::test]
async fn a_kept_session_outlives_a_killed_server() {
    let rt = Runtime::new();
    let first = rt.server(&[]).await;
    let id = start_kept(&first).await;
    let out = exec_out(
        &first,
        &id,
        "KEPT_VAR=kept-value; cd /tmp; echo MARK-$((20+22))",
    )
    .await;
    assert!(out.contains("MARK-42"), "{out}");
    first.crash().await;

    // A new server, fresh: it finds the session by id without listing first.
    let second = rt.server(&[]).await;
    let read = second
        .ok("terminal_read", json!({"sessionId": id, "since": 0}))
        .await;
    assert!(
        read["output"]
            .as_str()
            .unwrap_or_default()
            .contains("MARK-42"),
        "{read}"
    );
    let out = exec_out(&second, &id, "echo \"[$KEPT_VAR]\"; pwd").await;
    assert!(out.contains("[kept-value]"), "{out}");
    assert!(out.contains("/tmp"), "{out}");
    let list = second.ok("terminal_list", json!({})).await;
    let entry = list_entry(&list, &id).unwrap_or_else(|| panic!("listed: {list}"));
    assert_eq!(entry["kept"], true, "{entry}");
    assert!(entry["endsInSecs"].as_u64().unwrap_or(0) > 3600, "{entry}");
    second.ok("terminal_stop", json!({"sessionId": id})).await;
    second.stop().await;
}

#[tokio::test]
async fn two_servers_share_kept_sessions_and_a_stop_ends_it_for_both() {
    let rt = Runtime::new();
    let a = rt.server(&[]).await;
    let b = rt.server(&[]).await;
    let id = start_kept(&a).await;
    let (ra, rb) = tokio::join!(
        exec_out(&a, &id, "echo from-a-$((1+1))"),
        exec_out(&b, &id, "echo from-b-$((2+2))"),
    );
    assert!(ra.contains("from-a-2"), "{ra}");
    assert!(rb.contains("from-b-4"), "{rb}");
    let listed = b.ok("terminal_list", json!({})).await;
    assert!(list_entry(&listed, &id).is_some(), "{listed}");

    b.ok("terminal_stop", json!({"sessionId": id})).await;
    let listed = a.ok("terminal_list", json!({})).await;
    assert!(list_entry(&listed, &id).is_none(), "{listed}");
    let e = a
        .err(
            "terminal_exec",
            json!({"sessionId": id, "command": "echo hi"}),
        )
        .await;
    assert!(e.contains(&id), "{e}");
    a.stop().await;
    b.stop().await;
}

#[tokio::test]
async fn a_client_restarting_ten_times_keeps_its_session() {
    let rt = Runtime::new();
    let first = rt.server(&[]).await;
    let id = start_kept(&first).await;
    exec_out(&first, &id, "N=0").await;
    first.stop().await;
    for round in 1..=10 {
        let server = rt.server(&[]).await;
        let out = exec_out(&server, &id, "N=$((N+1)); echo round=$N").await;
        assert!(out.contains(&format!("round={round}")), "{out}");
        if round % 2 == 0 {
            server.crash().await;
        } else {
            server.stop().await;
        }
    }
    let last = rt.server(&[]).await;
    last.ok("terminal_stop", json!({"sessionId": id})).await;
    last.stop().await;
}

#[tokio::test]
async fn a_host_killed_under_a_session_takes_it_along_and_servers_say_so() {
    let rt = Runtime::new();
    let server = rt.server(&[]).await;
    // A process that ignores the hang-up: the host's undertaker still ends it.
    let (id, shell, bg) = kept_shell_with_a_nohup_sleep(&server).await;
    let host = rt.host_pid();
    // Told apart for the failure's message.
    let undertaker = undertakers_of(host);
    // SAFETY: kill(2) on the host this test started.
    unsafe { libc::kill(host as i32, libc::SIGKILL) };
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while [host, shell, bg].iter().any(|&p| common::procs::alive(p)) {
        if std::time::Instant::now() >= deadline {
            let told: Vec<String> = [host, shell, bg]
                .iter()
                .chain(&undertaker)
                .map(|&p| common::procs::describe(p))
                .collect();
            panic!(
                "[host, shell, nohup sleep] survived the host's kill; undertaker {undertaker:?}\n{}",
                told.join("\n")
            );
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }

    let e = server
        .err(
            "terminal_exec",
            json!({"sessionId": id, "command": "echo hi"}),
        )
        .await;
    assert!(e.contains(&id) && e.contains("session host"), "{e}");
    server.stop().await;

    // A later server says so too, in the list and on a call.
    let later = rt.server(&[]).await;
    let list = later.ok("terminal_list", json!({})).await;
    let entry = list_entry(&list, &id).unwrap_or_else(|| panic!("{list}"));
    assert_eq!(entry["alive"], false, "{entry}");
    let e = later.err("terminal_read", json!({"sessionId": id})).await;
    assert!(e.contains("ended") && e.contains("session host"), "{e}");
    later.stop().await;
}

/// A killed host whose descriptors outlive its main thread (one of its threads still in the
/// kernel; here, a copy of them held by the test) still takes its sessions along at once:
/// its undertaker goes by its parent-death signal, not only by the end of file on its pipe,
/// which this copy holds back. (The pipe alone left a host's sessions running in CI.)
#[cfg(target_os = "linux")]
#[tokio::test]
async fn a_host_whose_descriptors_outlive_it_still_takes_its_sessions_along() {
    let rt = Runtime::new();
    let server = rt.server(&[]).await;
    let (_id, _shell, bg) = kept_shell_with_a_nohup_sleep(&server).await;
    let host = rt.host_pid();
    let undertaker = *undertakers_of(host).first().expect("the host's undertaker");
    // The host's end of the undertaker's pipe: the host's descriptor on the same pipe.
    let pipe = std::fs::read_link(format!("/proc/{undertaker}/fd/3")).unwrap();
    let write_end: i32 = std::fs::read_dir(format!("/proc/{host}/fd"))
        .unwrap()
        .flatten()
        .find(|f| std::fs::read_link(f.path()).is_ok_and(|l| l == pipe))
        .and_then(|f| f.file_name().to_str()?.parse().ok())
        .expect("the host holds the pipe's write end");
    // SAFETY: pidfd_open and pidfd_getfd on the host this test started; the copy is ours
    // and closed below.
    let copy = unsafe {
        let pidfd = libc::syscall(libc::SYS_pidfd_open, host as libc::pid_t, 0) as i32;
        assert!(
            pidfd >= 0,
            "pidfd_open: {}",
            std::io::Error::last_os_error()
        );
        let copy = libc::syscall(libc::SYS_pidfd_getfd, pidfd, write_end, 0) as i32;
        libc::close(pidfd);
        copy
    };
    assert!(
        copy >= 0,
        "pidfd_getfd: {}",
        std::io::Error::last_os_error()
    );
    // SAFETY: kill(2) on the host this test started.
    unsafe { libc::kill(host as i32, libc::SIGKILL) };
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    let left = loop {
        let left: Vec<i64> = [bg, undertaker]
            .into_iter()
            .filter(|&p| common::procs::alive(p))
            .collect();
        if left.is_empty() || std::time::Instant::now() >= deadline {
            break left;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    };
    // SAFETY: closing our copy of the pipe's write end; then ending what survived.
    unsafe {
        libc::close(copy);
        for &pid in &left {
            libc::kill(pid as i32, libc::SIGKILL);
        }
    }
    assert!(
        left.is_empty(),
        "[the nohup sleep, the undertaker] survived the host's kill: {left:?}"
    );
    server.stop().await;
}

#[tokio::test]
async fn a_server_without_kept_sessions_starts_no_host() {
    let rt = Runtime::new();
    let server = rt.server(&[]).await;
    let local = server.ok("terminal_start", json!({})).await;
    let id = local["sessionId"].as_str().unwrap().to_string();
    assert!(!id.starts_with("k-"), "{id}");
    assert!(local.get("kept").is_none(), "{local}");
    server.ok("terminal_list", json!({})).await;
    let e = server
        .err("terminal_read", json!({"sessionId": "k-none-here"}))
        .await;
    assert!(e.contains("No kept session"), "{e}");
    let e = server
        .err("terminal_start", json!({"name": "k-mine"}))
        .await;
    assert!(e.contains("ids of kept sessions"), "{e}");
    server.ok("terminal_stop", json!({"sessionId": id})).await;
    assert!(rt.host_pids().is_empty(), "a host was started");
    assert!(
        !rt.keep_dir().join("host.sock").exists(),
        "a host socket exists"
    );
    server.stop().await;
}

#[tokio::test]
async fn another_user_cannot_reach_the_host() {
    let Some(other) = common::procs::other_user() else {
        return;
    };
    let rt = Runtime::new();
    let server = rt.server(&[]).await;
    let id = start_kept(&server).await;
    let socket = rt.keep_dir().join("host.sock");
    let sock = socket.to_str().unwrap();
    // As made: the folder and the socket are private.
    let (ok, said) = common::procs::run_as(other, common::BIN, &["sessions", "--socket", sock]);
    assert!(!ok && !said.contains(&id), "{said}");
    // Even with the permissions opened, the host refuses another uid before any MCP.
    open_up(rt.dir.path(), &socket);
    let (ok, said) = common::procs::run_as(other, common::BIN, &["sessions", "--socket", sock]);
    assert!(!ok && !said.contains(&id), "{said}");
    // The host logs the refusal (it handles the connection on its own time: bounded wait).
    let log_path = rt.keep_dir().join("host.log");
    let refused = |log: &str| log.contains(&format!("uid {}", other.0)) && log.contains("refused");
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(10);
    let mut log = String::new();
    while tokio::time::Instant::now() < deadline {
        log = std::fs::read_to_string(&log_path).unwrap_or_default();
        if refused(&log) {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    assert!(refused(&log), "the host's log: {log}");
    // Its own user still lists it from a shell (its folders private again).
    close_again(rt.dir.path());
    let mine = std::process::Command::new(common::BIN)
        .args(["sessions"])
        .env("XDG_RUNTIME_DIR", rt.path())
        .output()
        .expect("run termpilot sessions");
    assert!(
        String::from_utf8_lossy(&mine.stdout).contains(&id),
        "{mine:?}"
    );
    server.ok("terminal_stop", json!({"sessionId": id})).await;
    server.stop().await;
}

/// Opens the runtime folder, the private folder, the keep folder and the socket to everyone.
fn open_up(runtime: &Path, socket: &Path) {
    use std::os::unix::fs::PermissionsExt;
    for p in [
        runtime.to_path_buf(),
        runtime.join("termpilot"),
        runtime.join("termpilot/keep"),
        socket.to_path_buf(),
    ] {
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o777)).expect("chmod");
    }
}

fn close_again(runtime: &Path) {
    use std::os::unix::fs::PermissionsExt;
    for p in [
        runtime.to_path_buf(),
        runtime.join("termpilot"),
        runtime.join("termpilot/keep"),
    ] {
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o700)).expect("chmod");
    }
}

#[tokio::test]
async fn a_sandboxed_kept_session_stays_confined_after_its_server_ends() {
    if !cfg!(target_os = "linux") {
        return;
    }
    let rt = Runtime::new();
    let work = tempfile::tempdir().expect("work dir");
    let outside = tempfile::tempdir().expect("outside dir");
    let work_s = work.path().to_str().unwrap();
    let args = ["--sandbox", "workspace-write", "--cwd", work_s];
    let server = rt.server(&args).await;
    let id = start_kept(&server).await;
    server.crash().await;
    let again = rt.server(&args).await;
    let target = outside.path().join("escaped");
    let out = exec_out(
        &again,
        &id,
        &format!(
            "touch {} 2>&1; echo made=$?; touch inside; echo in=$?",
            target.display()
        ),
    )
    .await;
    assert!(out.contains("in=0"), "{out}");
    assert!(!out.contains("made=0"), "{out}");
    assert!(
        !target.exists(),
        "the kept session wrote outside its sandbox"
    );
    // A server without the sandbox does not reach the sandboxed host's sessions.
    let plain = rt.server(&[]).await;
    let e = plain.err("terminal_read", json!({"sessionId": id})).await;
    assert!(e.contains(&id), "{e}");
    plain.stop().await;
    again.ok("terminal_stop", json!({"sessionId": id})).await;
    again.stop().await;
}

#[tokio::test]
async fn a_host_dying_mid_call_gives_a_clear_error_at_once() {
    let rt = Runtime::new();
    let server = rt.server(&[]).await;
    let id = start_kept(&server).await;
    let host = rt.host_pid();
    let call = server.call(
        "terminal_exec",
        json!({"sessionId": id, "command": "sleep 45; echo late", "timeout": 60000}),
    );
    let killer = async {
        // Once the command runs under the host, the host is killed.
        let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(20);
        loop {
            let sleeping = common::procs::descendants(host).into_iter().any(|p| {
                std::fs::read_to_string(format!("/proc/{p}/comm"))
                    .is_ok_and(|c| c.trim() == "sleep")
            });
            if sleeping {
                break;
            }
            assert!(
                tokio::time::Instant::now() < deadline,
                "the command never ran"
            );
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
        let at = std::time::Instant::now();
        // SAFETY: kill(2) on the host this test started.
        unsafe { libc::kill(host as i32, libc::SIGKILL) };
        at
    };
    let (result, killed_at) = tokio::join!(call, killer);
    assert!(
        killed_at.elapsed() < std::time::Duration::from_secs(10),
        "the call hung after its host died"
    );
    assert_eq!(result.is_error, Some(true), "{}", common::text(&result));
    let e = common::text(&result);
    assert!(e.contains("session host ended during"), "{e}");
    server.stop().await;
}

#[tokio::test]
async fn kept_sessions_end_after_keep_idle_and_the_list_says_when() {
    let rt = Runtime::new();
    let server = rt.server(&["--keep-idle", "2s"]).await;
    let id = start_kept(&server).await;
    let list = server.ok("terminal_list", json!({})).await;
    let entry = list_entry(&list, &id).unwrap_or_else(|| panic!("{list}"));
    assert!(
        entry["endsInSecs"].as_u64().is_some_and(|s| s <= 2),
        "{entry}"
    );
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(20);
    loop {
        let list = server.ok("terminal_list", json!({})).await;
        if list_entry(&list, &id).is_none() {
            break;
        }
        assert!(tokio::time::Instant::now() < deadline, "still kept: {list}");
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    }
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn attach_joins_a_kept_session_after_its_server_ended() {
    use std::process::Stdio;
    use tokio::io::AsyncWriteExt;
    let rt = Runtime::new();
    let first = rt.server(&[]).await;
    let id = start_kept(&first).await;
    first.stop().await;

    // Found by id alone: the host holds its attach socket.
    let mut child = tokio::process::Command::new(common::BIN)
        .args(["attach", &id])
        .env("XDG_RUNTIME_DIR", rt.path())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("run termpilot attach");
    let mut stdin = child.stdin.take().expect("stdin");
    stdin
        .write_all(b"echo via-$((6*7))-attach\r")
        .await
        .unwrap();
    stdin.flush().await.unwrap();
    let second = rt.server(&[]).await;
    let waited = second
        .ok(
            "terminal_wait",
            json!({"sessionId": id, "pattern": "^via-42-attach$", "on": "screen"}),
        )
        .await;
    assert_eq!(waited["matched"], true, "{waited}");
    stdin.write_all(b"\x1d").await.unwrap();
    stdin.flush().await.unwrap();
    let out = tokio::time::timeout(common::TEST_TIMEOUT, child.wait_with_output())
        .await
        .expect("attach ended in time")
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("via-42-attach"),
        "{out:?}"
    );
    second.ok("terminal_stop", json!({"sessionId": id})).await;
    second.stop().await;
}

#[tokio::test]
async fn keep_sessions_keeps_every_native_start_unless_told_not_to() {
    let rt = Runtime::new();
    let server = rt.server(&["--keep-sessions"]).await;
    let kept = server.ok("terminal_start", json!({})).await;
    let id = kept["sessionId"].as_str().unwrap().to_string();
    assert!(id.starts_with("k-") && kept["kept"] == true, "{kept}");
    let local = server.ok("terminal_start", json!({"keep": false})).await;
    let local_id = local["sessionId"].as_str().unwrap();
    assert!(!local_id.starts_with("k-"), "{local}");
    let e = server
        .err("terminal_start", json!({"keep": true, "host": "box"}))
        .await;
    assert!(e.contains("keep cannot be combined with host"), "{e}");
    server.ok("terminal_stop", json!({"sessionId": id})).await;
    server.stop().await;
}

/// A session host of another termpilot version: answers the handshake, records every
/// request it gets.
async fn older_host(socket: PathBuf) -> tokio::sync::mpsc::UnboundedReceiver<String> {
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
    let listener = tokio::net::UnixListener::bind(&socket).expect("bind the fake host");
    let (seen, methods) = tokio::sync::mpsc::unbounded_channel();
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            let seen = seen.clone();
            tokio::spawn(async move {
                let (read, mut write) = stream.into_split();
                let mut lines = BufReader::new(read).lines();
                while let Ok(Some(line)) = lines.next_line().await {
                    let msg: Value = serde_json::from_str(&line).unwrap_or_default();
                    let method = msg["method"].as_str().unwrap_or("").to_string();
                    let _ = seen.send(method.clone());
                    if method == "initialize" {
                        let reply = json!({"jsonrpc": "2.0", "id": msg["id"], "result": {
                            "protocolVersion": msg["params"]["protocolVersion"],
                            "capabilities": {"tools": {}},
                            "serverInfo": {"name": "termpilot-session-host/0", "version": "0.0.1"}}});
                        let _ = write.write_all(format!("{reply}\n").as_bytes()).await;
                    }
                }
            });
        }
    });
    methods
}

#[tokio::test]
async fn a_host_of_another_version_is_named_and_left_alone() {
    let rt = Runtime::new();
    let keep = rt.keep_dir();
    std::fs::create_dir_all(&keep).unwrap();
    for p in [rt.dir.path().join("termpilot"), keep.clone()] {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o700)).unwrap();
    }
    let mut methods = older_host(keep.join("host.sock")).await;
    let server = rt.server(&[]).await;
    let e = server.err("terminal_start", json!({"keep": true})).await;
    assert!(
        e.contains("another termpilot") && e.contains("0.0.1") && e.contains("does not use it"),
        "{e}"
    );
    let e = server
        .err("terminal_read", json!({"sessionId": "k-old-one"}))
        .await;
    assert!(e.contains("does not use it"), "{e}");
    server.stop().await;
    let mut asked = Vec::new();
    while let Ok(m) = methods.try_recv() {
        asked.push(m);
    }
    assert!(asked.contains(&"initialize".to_string()), "{asked:?}");
    assert!(
        !asked.iter().any(|m| m == "tools/call"),
        "the older host was used: {asked:?}"
    );
    assert!(rt.host_pids().is_empty(), "a second host was started");
}

#[tokio::test]
async fn two_servers_keeping_at_once_share_one_host() {
    let rt = Runtime::new();
    let (a, b) = tokio::join!(rt.server(&[]), rt.server(&[]));
    let (ia, ib) = tokio::join!(start_kept(&a), start_kept(&b));
    assert_ne!(ia, ib);
    rt.host_pid();
    let listed = a.ok("terminal_list", json!({})).await;
    assert!(
        list_entry(&listed, &ia).is_some() && list_entry(&listed, &ib).is_some(),
        "{listed}"
    );
    a.ok("terminal_stop", json!({"sessionId": ia})).await;
    b.ok("terminal_stop", json!({"sessionId": ib})).await;
    a.stop().await;
    b.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_silent_attached_person_keeps_a_kept_session_from_idling() {
    use std::process::Stdio;
    use std::time::Duration;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let rt = Runtime::new();
    let server = rt.server(&["--keep-idle", "2s"]).await;
    let id = start_kept(&server).await;
    let mut child = tokio::process::Command::new(common::BIN)
        .args(["attach", &id])
        .env("XDG_RUNTIME_DIR", rt.path())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("run termpilot attach");
    let mut stdin = child.stdin.take().expect("stdin");
    let mut stdout = child.stdout.take().expect("stdout");
    // Joined once the redraw arrives.
    let mut first = [0u8; 256];
    let n = tokio::time::timeout(common::TEST_TIMEOUT, stdout.read(&mut first))
        .await
        .expect("the redraw in time")
        .unwrap();
    assert!(n > 0, "attach ended at once");
    let drain = tokio::spawn(async move {
        let mut rest = Vec::new();
        let _ = stdout.read_to_end(&mut rest).await;
    });

    // Three times the idle limit with nobody typing and nothing printed: still there.
    let until = tokio::time::Instant::now() + Duration::from_secs(6);
    while tokio::time::Instant::now() < until {
        let list = server.ok("terminal_list", json!({})).await;
        let entry =
            list_entry(&list, &id).unwrap_or_else(|| panic!("ended while attached: {list}"));
        assert_eq!(entry["endsInSecs"], 2, "{entry}");
        tokio::time::sleep(Duration::from_millis(500)).await;
    }

    // Detached: the idle clock runs from the leaving, and it ends.
    stdin.write_all(b"\x1d").await.unwrap();
    stdin.flush().await.unwrap();
    let status = tokio::time::timeout(common::TEST_TIMEOUT, child.wait())
        .await
        .expect("attach ended in time")
        .unwrap();
    assert!(status.success(), "{status:?}");
    let _ = drain.await;
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    loop {
        let list = server.ok("terminal_list", json!({})).await;
        if list_entry(&list, &id).is_none() {
            break;
        }
        assert!(tokio::time::Instant::now() < deadline, "still kept: {list}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    server.stop().await;
}

type PageSocket =
    tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>;

/// The next JSON message of `kind` on a page's socket; the terminal bytes seen meanwhile are
/// added to `seen`.
async fn page_message(ws: &mut PageSocket, kind: &str, seen: &mut String) -> Value {
    use futures_util::StreamExt;
    use tokio_tungstenite::tungstenite::Message;
    tokio::time::timeout(common::TEST_TIMEOUT, async {
        while let Some(Ok(message)) = ws.next().await {
            match message {
                Message::Text(text) => {
                    let value: Value = serde_json::from_str(&text).unwrap();
                    if value["type"] == kind {
                        return value;
                    }
                }
                Message::Binary(bytes) => seen.push_str(&String::from_utf8_lossy(&bytes)),
                _ => {}
            }
        }
        panic!("the page's socket closed before a `{kind}` message; saw {seen:?}");
    })
    .await
    .unwrap_or_else(|_| panic!("no `{kind}` message in time; saw {seen:?}"))
}

/// Reads the page's socket until its terminal bytes hold `needle`.
async fn page_bytes_until(ws: &mut PageSocket, needle: &str, seen: &mut String) {
    use futures_util::StreamExt;
    use tokio_tungstenite::tungstenite::Message;
    tokio::time::timeout(common::TEST_TIMEOUT, async {
        while !seen.contains(needle) {
            match ws.next().await {
                Some(Ok(Message::Binary(bytes))) => seen.push_str(&String::from_utf8_lossy(&bytes)),
                Some(Ok(_)) => {}
                other => panic!("the page's socket ended before {needle:?}: {other:?}"),
            }
        }
    })
    .await
    .unwrap_or_else(|_| panic!("{needle:?} on the page in time; saw {seen:?}"));
}

async fn page_send(ws: &mut PageSocket, value: Value) {
    use futures_util::SinkExt;
    ws.send(tokio_tungstenite::tungstenite::Message::Text(
        value.to_string().into(),
    ))
    .await
    .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_web_page_lists_a_kept_session_and_a_person_watches_and_takes_it_over() {
    use common::http::{self, TOKEN};
    use tokio_tungstenite::tungstenite::client::IntoClientRequest;
    let rt = Runtime::new();
    let starter = rt.server(&[]).await;
    let id = start_kept(&starter).await;
    exec_out(&starter, &id, "echo before-$((5*5))").await;
    starter.stop().await;

    // Another server, with the page: its list has the kept session, marked.
    let web = http::spawn(
        &["--http", "127.0.0.1:0"],
        &[("TERMPILOT_TOKEN", TOKEN), ("XDG_RUNTIME_DIR", rt.path())],
    )
    .await;
    let listed: Value = reqwest::Client::new()
        .get(format!("{}/api/sessions", web.url))
        .header("authorization", format!("Bearer {TOKEN}"))
        .header("origin", &web.url)
        .send()
        .await
        .expect("the list answers")
        .text()
        .await
        .map(|t| serde_json::from_str(&t).expect("the list is JSON"))
        .unwrap();
    let entry = list_entry(&listed, &id).unwrap_or_else(|| panic!("kept session listed: {listed}"));
    assert_eq!(entry["kept"], true, "{entry}");

    // A client without the token, and a foreign page with it, cannot open the kept
    // session's socket (the proxy stands behind the page's guard like its own sessions).
    for (token, origin, status) in [
        (false, web.url.as_str(), 401u16),
        (true, "http://evil.example", 403),
    ] {
        let mut request = format!("ws://127.0.0.1:{}/ws/session/{id}", web.port)
            .into_client_request()
            .unwrap();
        let headers = request.headers_mut();
        if token {
            headers.insert("authorization", format!("Bearer {TOKEN}").parse().unwrap());
        }
        headers.insert("origin", origin.parse().unwrap());
        let opened = tokio::time::timeout(
            common::TEST_TIMEOUT,
            tokio_tungstenite::connect_async(request),
        )
        .await
        .expect("answered in time");
        match opened {
            Err(tokio_tungstenite::tungstenite::Error::Http(response)) => assert_eq!(
                response.status().as_u16(),
                status,
                "token {token}, origin {origin}"
            ),
            Err(e) => panic!("token {token}, origin {origin}: {e}"),
            Ok(_) => panic!("the kept session's socket opened (token {token}, origin {origin})"),
        }
    }

    // The page's live socket: the redraw (scrollback from before), keys refused until taken.
    let mut request = format!("ws://127.0.0.1:{}/ws/session/{id}", web.port)
        .into_client_request()
        .unwrap();
    let headers = request.headers_mut();
    headers.insert("authorization", format!("Bearer {TOKEN}").parse().unwrap());
    headers.insert("origin", web.url.parse().unwrap());
    let (mut page, _) = tokio::time::timeout(
        common::TEST_TIMEOUT,
        tokio_tungstenite::connect_async(request),
    )
    .await
    .expect("the socket opens in time")
    .expect("the page's socket on a kept session opens");
    let mut seen = String::new();
    let hello = page_message(&mut page, "hello", &mut seen).await;
    assert_eq!(
        (hello["kept"].clone(), hello["controller"].clone()),
        (json!(true), json!("agent")),
        "{hello}"
    );
    page_send(&mut page, json!({"type": "input", "data": "echo sneaky\r"})).await;
    let refused = page_message(&mut page, "refused", &mut seen).await;
    assert!(
        refused["why"]
            .as_str()
            .unwrap()
            .contains("agent holds control"),
        "{refused}"
    );
    page_bytes_until(&mut page, "before-25", &mut seen).await;

    // Taken: the agent (any server) is refused, the person's keys reach the shell.
    page_send(&mut page, json!({"type": "take"})).await;
    let control = page_message(&mut page, "control", &mut seen).await;
    assert_eq!(
        (control["controller"].clone(), control["you"].clone()),
        (json!("person"), json!(true)),
        "{control}"
    );
    let agent = rt.server(&[]).await;
    let deadline = tokio::time::Instant::now() + common::TEST_TIMEOUT;
    loop {
        let e = agent
            .call(
                "terminal_send_key",
                json!({"sessionId": id, "key": "Enter"}),
            )
            .await;
        if e.is_error == Some(true) {
            let e = common::text(&e);
            assert!(e.contains("A person is typing"), "{e}");
            break;
        }
        // The take travels to the host beside the list; a key sent before it landed is harmless.
        assert!(
            tokio::time::Instant::now() < deadline,
            "the agent was never refused"
        );
    }
    page_send(
        &mut page,
        json!({"type": "input", "data": "echo page-$((6*7))\r"}),
    )
    .await;
    let waited = agent
        .ok(
            "terminal_wait",
            json!({"sessionId": id, "pattern": "^page-42$", "on": "screen"}),
        )
        .await;
    assert_eq!(waited["matched"], true, "{waited}");
    page_bytes_until(&mut page, "page-42", &mut seen).await;

    // Released: the agent types again; the page closes, the session stays kept.
    page_send(&mut page, json!({"type": "release"})).await;
    while page_message(&mut page, "control", &mut seen).await["controller"] != "agent" {}
    let out = exec_out(&agent, &id, "echo agent-back").await;
    assert!(out.contains("agent-back"), "{out}");
    drop(page);
    agent.ok("terminal_stop", json!({"sessionId": id})).await;
    agent.stop().await;
    web.terminate().await;
}

#[tokio::test]
async fn cancelling_a_forwarded_call_cancels_it_in_the_host() {
    use rmcp::model::{CallToolRequest, CallToolRequestParams, ClientRequest};
    use rmcp::service::PeerRequestOptions;
    let rt = Runtime::new();
    let server = rt.server(&[]).await;
    let id = start_kept(&server).await;
    let own = format!(
        "3{}.{}",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .subsec_micros()
    );
    let params = CallToolRequestParams::new("terminal_exec").with_arguments(
        json!({"sessionId": id, "command": format!("sleep {own}"), "timeout": 60000})
            .as_object()
            .unwrap()
            .clone(),
    );
    let handle = server
        .client
        .peer()
        .send_cancellable_request(
            ClientRequest::CallToolRequest(CallToolRequest::new(params)),
            PeerRequestOptions::no_options(),
        )
        .await
        .unwrap();
    let deadline = tokio::time::Instant::now() + common::TEST_TIMEOUT;
    loop {
        let list = server.ok("terminal_list", json!({})).await;
        if list_entry(&list, &id).is_some_and(|e| e["busy"] == true) {
            break;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "the sleep never started: {list}"
        );
        tokio::task::yield_now().await;
    }
    handle.cancel(Some("test".into())).await.unwrap();
    // The host interrupted it: the prompt is back, the sleep gone.
    let out = exec_out(&server, &id, "echo hi").await;
    assert_eq!(out, "hi");
    let ps = exec_out(
        &server,
        &id,
        &format!("ps -eo args | grep -c '^sleep {own}$' || true"),
    )
    .await;
    assert_eq!(ps, "0", "the sleep survived the cancel");
    server.ok("terminal_stop", json!({"sessionId": id})).await;
    server.stop().await;
}

#[tokio::test]
async fn a_batch_on_a_kept_session_runs_in_the_host() {
    let rt = Runtime::new();
    let server = rt.server(&[]).await;
    let id = start_kept(&server).await;
    let done = server
        .ok(
            "terminal_batch",
            json!({"sessionId": id, "actions": [
                {"type": "type", "text": "echo batch-$((7*6))"},
                {"type": "press", "key": "Enter"},
                {"type": "wait", "pattern": "^batch-42$"},
            ]}),
        )
        .await;
    assert_eq!(done["ok"], true, "{done}");
    assert!(done["screen"].to_string().contains("batch-42"), "{done}");
    server.ok("terminal_stop", json!({"sessionId": id})).await;
    server.stop().await;
}

/// A process's resident set, in KiB.
fn rss_kib(pid: i64) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .unwrap_or_default()
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}

#[tokio::test]
async fn a_quiet_host_gives_memory_back_and_still_serves() {
    let rt = Runtime::new();
    let server = rt.server(&[]).await;
    let id = start_kept(&server).await;
    for i in 0..5 {
        let out = exec_out(&server, &id, &format!("echo busy-{i}")).await;
        assert!(out.contains(&format!("busy-{i}")), "{out}");
    }
    let host = rt.host_pid();
    // Quiet for a moment: it settles (within a tick or two of a second of quiet).
    wait_settled(host, rss_kib(host)).await;
    let out = exec_out(&server, &id, "echo after-rest-$((40+2))").await;
    assert!(out.contains("after-rest-42"), "{out}");
    server.ok("terminal_stop", json!({"sessionId": id})).await;
    server.stop().await;
}

/// Waits (bounded) until the host's resident memory has dropped below three quarters of `busy`:
/// it settled.
async fn wait_settled(host: i64, busy: u64) {
    let deadline = tokio::time::Instant::now() + common::TEST_TIMEOUT;
    while rss_kib(host) * 4 > busy * 3 {
        assert!(
            tokio::time::Instant::now() < deadline,
            "the host kept {} KiB of {busy} KiB at rest",
            rss_kib(host)
        );
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
}

#[tokio::test]
async fn a_settled_host_keeps_scrollback_history_and_positions() {
    let rt = Runtime::new();
    let server = rt.server(&[]).await;
    let id = start_kept(&server).await;
    // Enough lines to scroll well past the screen, in scrollback and the line history.
    let out = exec_out(&server, &id, "seq 1 300; echo DONE-$((6*7))").await;
    assert!(out.contains("DONE-42"), "{out}");
    let host = rt.host_pid();
    let look = || async {
        let raw = server
            .ok(
                "terminal_read",
                json!({"sessionId": id, "since": 0, "timeout": 0}),
            )
            .await;
        let scrolled = server
            .ok(
                "terminal_read",
                json!({"sessionId": id, "view": "screen", "page": 5, "cursor": false}),
            )
            .await;
        let history = server
            .ok(
                "terminal_get_history",
                json!({"sessionId": id, "maxLines": 10000}),
            )
            .await;
        (raw, scrolled, history)
    };
    let before = look().await;
    assert!(
        before.0["output"]
            .as_str()
            .unwrap_or_default()
            .contains("299"),
        "{}",
        before.0
    );
    assert!(
        before.2["totalLines"].as_u64().unwrap_or(0) > 300,
        "{}",
        before.2
    );
    // Its stacks trimmed, its heaps trimmed, its code pages dropped: all of it stays.
    wait_settled(host, rss_kib(host)).await;
    let after = look().await;
    assert_eq!(before.0, after.0, "the raw output from 0");
    assert_eq!(before.1, after.1, "a page of scrollback");
    assert_eq!(before.2, after.2, "the line history");
    let out = exec_out(&server, &id, "echo after-rest-$((40+2))").await;
    assert!(out.contains("after-rest-42"), "{out}");
    server.ok("terminal_stop", json!({"sessionId": id})).await;
    server.stop().await;
}

#[tokio::test]
async fn a_kept_session_shows_in_the_page_of_a_real_browser() {
    use common::http::{self, TOKEN};
    let rt = Runtime::new();
    let starter = rt.server(&[]).await;
    let id = start_kept(&starter).await;
    exec_out(&starter, &id, "echo shown-$((8*8))").await;
    starter.stop().await;
    let web = http::spawn(
        &["--http", "127.0.0.1:0"],
        &[("TERMPILOT_TOKEN", TOKEN), ("XDG_RUNTIME_DIR", rt.path())],
    )
    .await;
    let Some(mut browser) = common::cdp::Browser::launch().await else {
        return;
    };
    let wait = std::time::Duration::from_secs(20);
    browser
        .navigate(&format!("{}/#token={TOKEN}", web.url))
        .await;
    let row = format!("document.querySelector('#sessions li[data-id=\"{id}\"]')");
    assert!(
        browser
            .wait_for(
                &format!("{row} && {row}.querySelector('.badge.kept')"),
                wait
            )
            .await,
        "the kept session is listed with its badge"
    );
    browser
        .click(&format!("#sessions li[data-id=\"{id}\"]"))
        .await;
    assert!(
        browser
            .wait_for("window.termpilot.screenText().includes('shown-64')", wait)
            .await,
        "the page shows the kept session's screen"
    );
    let agent = rt.server(&[]).await;
    agent.ok("terminal_stop", json!({"sessionId": id})).await;
    agent.stop().await;
    web.terminate().await;
}

/// A host that holds no session does not end while it answers a call: a `terminal_run` of
/// 7 s, called on the host's own socket after its last session stopped, outlasts the host's
/// 5 s grace and is answered by the same host. (It ended mid-call at the grace; in a fresh
/// clone's run beside a browser test, a slow first `terminal_start` lost the same race:
/// "the session host ended during `terminal_start`".)
#[tokio::test]
async fn an_empty_host_answers_the_call_it_runs_before_it_ends() {
    use rmcp::ServiceExt;
    use rmcp::model::CallToolRequestParams;
    let rt = Runtime::new();
    let server = rt.server(&[]).await;
    let id = start_kept(&server).await;
    let host = rt.host_pid();
    server.ok("terminal_stop", json!({"sessionId": id})).await;
    let stream = tokio::net::UnixStream::connect(rt.keep_dir().join("host.sock"))
        .await
        .expect("the host's socket");
    let client = tokio::time::timeout(common::TEST_TIMEOUT, ().serve(stream))
        .await
        .expect("a handshake in time")
        .expect("a handshake with the host");
    let params = CallToolRequestParams::new("terminal_run").with_arguments(
        json!({"cmd": "/bin/sleep", "args": ["7"], "timeout": 30000})
            .as_object()
            .unwrap()
            .clone(),
    );
    let answered = tokio::time::timeout(common::TEST_TIMEOUT, client.call_tool(params))
        .await
        .expect("an answer in time");
    let result = answered.unwrap_or_else(|e| panic!("the host ended during the call: {e}"));
    assert_ne!(result.is_error, Some(true), "{result:?}");
    let text = common::text(&result);
    assert!(text.contains("\"exitCode\":0"), "{text}");
    assert_eq!(rt.host_pids(), vec![host], "the same host, still running");
    let _ = client.cancel().await;
    server.stop().await;
}
