//! Remote targets end to end: the real binary, driven by rmcp's client, against a real
//! `sshd` the test starts on loopback (`common::sshd`), never the machine's own ssh setup.

mod common;

use std::time::{Duration, Instant};

use common::sshd::{self, Sshd};
use serde_json::{Value, json};

async fn server_for(sshd: &Sshd) -> common::Server {
    common::start_with(
        common::Era::Initialize,
        &["--ssh-config", sshd.config_arg()],
        &[],
    )
    .await
}

#[tokio::test]
async fn run_on_a_host_keeps_exit_code_and_streams_apart() {
    let Some(sshd) = Sshd::start() else { return };
    let server = server_for(&sshd).await;
    let r = server
        .ok(
            "terminal_run",
            json!({"cmd": "sh", "args": ["-c", "echo out; echo err >&2; exit 3"], "host": "alpha"}),
        )
        .await;
    assert_eq!(r["exitCode"], 3, "{r}");
    assert_eq!(r["stdout"]["raw"], "out\n", "{r}");
    assert_eq!(r["stderr"]["raw"], "err\n", "{r}");
    assert_eq!(r["ok"], false, "{r}");
    assert_eq!(r["host"], "alpha");
    assert_eq!(r["via"], "terminal");

    // Arguments arrive as the same words, quotes and all; cwd, env and stdin apply there.
    let r = server
        .ok(
            "terminal_run",
            json!({"cmd": "printf", "args": ["[%s]", "a b", "it's", "$HOME"], "host": "beta"}),
        )
        .await;
    assert_eq!(r["stdout"]["raw"], "[a b][it's][$HOME]", "{r}");
    assert_eq!(r["exitCode"], 0);
    assert_eq!(r["ok"], true);
    let r = server
        .ok(
            "terminal_run",
            json!({"cmd": "pwd; echo \"$GREETING\"; tr a-z A-Z", "shell": true, "cwd": "/tmp",
                   "env": {"GREETING": "hello there"}, "stdin": "piped in\n", "host": "alpha"}),
        )
        .await;
    assert_eq!(r["stdout"]["raw"], "/tmp\nhello there\nPIPED IN\n", "{r}");
    assert_eq!(r["cwd"], "/tmp");
    server.stop().await;
}

#[tokio::test]
async fn a_paged_run_on_a_host_pages_its_stdout() {
    let Some(sshd) = Sshd::start() else { return };
    let server = server_for(&sshd).await;
    let r = server
        .extra(
            "terminal_run_paged",
            json!({"cmd": "seq", "args": ["1", "25"], "pageSize": 10, "page": 1, "host": "alpha"}),
        )
        .await;
    assert_eq!(
        r["stdout"]["raw"],
        (11..=20)
            .map(|n| n.to_string())
            .collect::<Vec<_>>()
            .join("\n"),
        "{r}"
    );
    assert_eq!(r["pageInfo"]["totalLines"], 25, "{r}");
    assert_eq!(r["pageInfo"]["hasNext"], true);
    assert_eq!(r["host"], "alpha");
    assert_eq!(r["via"], "terminal");
    let e = server
        .extra_err(
            "terminal_run_paged",
            json!({"cmd": "true", "host": "wrongkey"}),
        )
        .await;
    assert!(e.contains("refused the login"), "{e}");
    server.stop().await;
}

#[tokio::test]
async fn an_unknown_host_key_is_a_clear_error_at_once_and_is_not_accepted() {
    let Some(sshd) = Sshd::start() else { return };
    let server = server_for(&sshd).await;
    let started = Instant::now();
    let e = server
        .err("terminal_run", json!({"cmd": "true", "host": "stranger"}))
        .await;
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
    assert!(
        e.contains("`stranger`") && e.contains("not in known_hosts"),
        "{e}"
    );
    assert!(e.contains("ssh-keyscan"), "{e}");
    assert_eq!(
        std::fs::read_to_string(&sshd.stranger_known_hosts).unwrap(),
        "",
        "the key must not be added"
    );
    server.stop().await;
}

#[tokio::test]
async fn a_changed_host_key_and_a_refused_user_key_are_clear_errors() {
    let Some(sshd) = Sshd::start() else { return };
    let server = server_for(&sshd).await;
    let e = server
        .err("terminal_run", json!({"cmd": "true", "host": "impostor"}))
        .await;
    assert!(
        e.contains("CHANGED") && e.contains("refused to connect"),
        "{e}"
    );
    let e = server
        .err("terminal_run", json!({"cmd": "true", "host": "wrongkey"}))
        .await;
    assert!(e.contains("`wrongkey` refused the login"), "{e}");
    assert!(e.contains("ssh-add"), "{e}");
    let e = server
        .err("terminal_run", json!({"cmd": "true", "host": "nowhere"}))
        .await;
    assert!(
        e.contains("could not be reached") && e.contains("Connection refused"),
        "{e}"
    );
    server.stop().await;
}

#[tokio::test]
async fn bad_remote_calls_are_refused_before_anything_runs() {
    let server = common::start().await;
    for (args, says) in [
        (json!({"cmd": "true", "host": "box:22"}), "ssh://box:22"),
        (
            json!({"cmd": "true", "host": "-oProxyCommand=x"}),
            "does not name a machine",
        ),
        (json!({"cmd": "true", "host": "ftp://x"}), "unknown scheme"),
        (
            json!({"cmd": "true", "host": "a", "hosts": ["b"]}),
            "both given",
        ),
        (json!({"cmd": "true", "hosts": ["a", "a"]}), "twice"),
        (json!({"cmd": "true", "concurrency": 2}), "only to a fleet"),
        (
            json!({"cmd": "true", "hosts": ["a"], "concurrency": 0}),
            "pass 1 to 100",
        ),
        (json!({"cmd": "true", "hosts": []}), "pass 1 to 100"),
        (
            json!({"cmd": "true", "host": "a", "successFile": "x"}),
            "cannot be used with host",
        ),
        (
            json!({"cmd": "true", "host": "a", "env": {"A-B": "1"}}),
            "env name",
        ),
    ] {
        let e = server.err("terminal_run", args.clone()).await;
        assert!(e.contains(says), "{args}: {e}");
    }
    server.stop().await;
}

#[tokio::test]
async fn a_fleet_run_reports_each_host_groups_outputs_and_sums_up() {
    let Some(sshd) = Sshd::start() else { return };
    let server = server_for(&sshd).await;
    let r = server
        .ok(
            "terminal_run",
            json!({"cmd": "hostname; exit 0", "shell": true,
                   "hosts": ["alpha", "beta", "nowhere"], "concurrency": 2}),
        )
        .await;
    let hostname = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap();
    assert_eq!(r["via"], "terminal");
    assert_eq!(
        r["summary"],
        json!({"total": 3, "succeeded": 2, "failed": 0, "timedOut": 0, "unreachable": 1}),
        "{r}"
    );
    assert_eq!(r["ok"], false);
    let results = r["results"].as_array().unwrap();
    let hosts: Vec<&str> = results
        .iter()
        .map(|h| h["host"].as_str().unwrap())
        .collect();
    assert_eq!(hosts, ["alpha", "beta", "nowhere"]);
    for h in &results[..2] {
        assert_eq!(h["status"], "ok", "{h}");
        assert_eq!(h["exitCode"], 0);
        assert_eq!(h["output"], 0, "identical outputs share one group: {r}");
    }
    assert_eq!(results[2]["status"], "unreachable");
    assert_eq!(results[2]["reason"], "unreachable");
    assert!(
        results[2]["error"]
            .as_str()
            .unwrap()
            .contains("could not be reached")
    );
    assert_eq!(
        r["outputs"],
        json!([{"hosts": ["alpha", "beta"], "exitCode": 0, "stdout": hostname, "stderr": ""}]),
        "{r}"
    );

    // Different outputs and exit codes stay apart; a failing host is failed, not unreachable.
    let r = server
        .ok(
            "terminal_run",
            json!({"cmd": "sh", "args": ["-c", "echo $1; exit $2", "sh", "x", "4"],
                   "hosts": ["alpha", "ssh://beta"], "successExitCode": 4}),
        )
        .await;
    assert_eq!(r["summary"]["succeeded"], 2, "{r}");
    assert_eq!(r["outputs"].as_array().unwrap().len(), 1, "{r}");
    let r = server
        .ok(
            "terminal_run",
            json!({"cmd": "sh", "args": ["-c", "exit 1"], "hosts": ["alpha", "stranger"]}),
        )
        .await;
    assert_eq!(r["results"][0]["status"], "failed", "{r}");
    assert_eq!(r["results"][1]["reason"], "unknownHostKey", "{r}");
    assert_eq!(r["summary"]["failed"], 1);
    assert_eq!(r["summary"]["unreachable"], 1);
    server.stop().await;
}

#[tokio::test]
async fn each_fleet_host_has_its_own_timeout() {
    let Some(sshd) = Sshd::start() else { return };
    let server = server_for(&sshd).await;
    let started = Instant::now();
    // Each remote shell records its pid, so the test can end what sshd leaves running.
    let pids = sshd.dir.path().join("pids");
    let line = format!("echo $$ >> {}; exec sleep 30", pids.display());
    let r: Value = server
        .ok(
            "terminal_run",
            json!({"cmd": line, "shell": true, "hosts": ["alpha", "beta"], "timeout": 1500}),
        )
        .await;
    for pid in std::fs::read_to_string(&pids).unwrap().split_whitespace() {
        unsafe { libc::kill(pid.parse().unwrap(), libc::SIGKILL) };
    }
    assert!(
        started.elapsed() < Duration::from_secs(15),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(r["summary"]["timedOut"], 2, "{r}");
    assert_eq!(r["results"][0]["status"], "timedOut");
    server.stop().await;
}

/// A stand-in for `kubectl`, `docker` and `podman` on PATH: records the argv it was given
/// (one word per line, NUL-separated), checks its shape, and runs the command here.
const STAND_IN: &str = r#"#!/bin/sh
name=$(basename "$0")
printf '%s\0' "$@" > "$STAND_IN_LOG/$name.argv"
bad() { echo "stand-in $name: unexpected argv: $*" >&2; exit 99; }
case "$name" in
kubectl)
    [ "$1" = exec ] && [ "$2" = -i ] || bad "$@"; shift 2
    if [ "$1" = -n ]; then shift 2; fi
    pod=$1; shift
    if [ "$1" = -c ]; then shift 2; fi
    [ "$1" = -- ] || bad "$@"; shift
    if [ "$pod" = missing ]; then
        echo "Error from server (NotFound): pods \"missing\" not found" >&2; exit 1
    fi ;;
docker|podman)
    [ "$1" = exec ] && [ "$2" = -i ] || bad "$@"; shift 2
    box=$1; shift
    if [ "$box" = gone ]; then
        echo "Error response from daemon: No such container: gone" >&2; exit 1
    fi ;;
esac
exec "$@"
"#;

fn stand_ins() -> tempfile::TempDir {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    for name in ["kubectl", "docker", "podman"] {
        let path = dir.path().join(name);
        std::fs::write(&path, STAND_IN).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    dir
}

/// The last word of a container or pod run's argv: `script` run by an inner `sh -c` that
/// carries the run's marker, with the sweep of what it left after it (`remote::ending`).
fn assert_marked_run(argv: &[String], script: &str) {
    let outer = argv.last().unwrap();
    let quoted = format!("'{}'", script.replace('\'', r"'\''"));
    assert!(
        outer.starts_with("TERMPILOT_RUN_ID=") && outer.contains(&format!(" sh -c {quoted}\n")),
        "{outer}"
    );
    assert!(outer.ends_with("exit $__tp_rc"), "{outer}");
}

fn logged_argv(dir: &tempfile::TempDir, name: &str) -> Vec<String> {
    let raw = std::fs::read(dir.path().join(format!("{name}.argv"))).unwrap();
    raw.split(|b| *b == 0)
        .filter(|w| !w.is_empty())
        .map(|w| String::from_utf8(w.to_vec()).unwrap())
        .collect()
}

#[tokio::test]
async fn pods_and_containers_get_the_exec_command_lines_they_expect() {
    let bin = stand_ins();
    // The stand-ins run their commands here: on the system's PATH, never one with an
    // installed termpilot (which would make the targets termpilot ones).
    let path = format!("{}:{}", bin.path().display(), sshd::PATH);
    let log = bin.path().to_str().unwrap().to_string();
    let server = common::start_with(
        common::Era::Initialize,
        &[],
        &[("PATH", &path), ("STAND_IN_LOG", &log)],
    )
    .await;
    let r = server
        .ok(
            "terminal_run",
            json!({"cmd": "sh", "args": ["-c", "echo out; echo err >&2; exit 5"],
                   "cwd": "/tmp", "host": "k8s://prod/api-0/app"}),
        )
        .await;
    assert_eq!(r["exitCode"], 5, "{r}");
    assert_eq!(r["stdout"]["raw"], "out\n");
    assert_eq!(r["stderr"]["raw"], "err\n");
    assert_eq!(r["host"], "k8s://prod/api-0/app");
    assert_eq!(r["via"], "terminal");
    let argv = logged_argv(&bin, "kubectl");
    assert_eq!(
        argv[..argv.len() - 1],
        [
            "exec", "-i", "-n", "prod", "api-0", "-c", "app", "--", "sh", "-c",
        ]
    );
    assert_marked_run(
        &logged_argv(&bin, "kubectl"),
        "cd -- /tmp || exit 1\nexec sh -c 'echo out; echo err >&2; exit 5'",
    );
    let r = server
        .ok(
            "terminal_run",
            json!({"cmd": "pwd", "host": "k8s://api-0", "cwd": "/"}),
        )
        .await;
    assert_eq!(r["stdout"]["raw"], "/\n", "{r}");
    assert_eq!(
        logged_argv(&bin, "kubectl")[..4],
        ["exec", "-i", "api-0", "--"]
    );
    let e = server
        .err(
            "terminal_run",
            json!({"cmd": "true", "host": "k8s://missing"}),
        )
        .await;
    assert!(
        e.contains("`k8s://missing` could not be reached") && e.contains("kubectl get pods"),
        "{e}"
    );

    for engine in ["docker", "podman"] {
        let r = server
            .ok(
                "terminal_run",
                json!({"cmd": "echo $X", "shell": true, "env": {"X": "in box"},
                       "host": format!("{engine}://web-1")}),
            )
            .await;
        assert_eq!(r["stdout"]["raw"], "in box\n", "{r}");
        let argv = logged_argv(&bin, engine);
        assert_eq!(argv[..argv.len() - 1], ["exec", "-i", "web-1", "sh", "-c"]);
        assert_marked_run(&argv, "export 'X=in box'\necho $X");
        let e = server
            .err(
                "terminal_run",
                json!({"cmd": "true", "host": format!("{engine}://gone")}),
            )
            .await;
        assert!(
            e.contains("could not be reached") && e.contains(&format!("{engine} ps")),
            "{e}"
        );
    }
    server.stop().await;
}

/// Nothing of the in-band hooks may show in anything an agent reads.
fn assert_no_hook_text(text: &str) {
    for sign in [
        "__tp",
        "__TP",
        "133;",
        "rcfile",
        "termpilot.XXXXXX",
        "PROMPT_COMMAND",
    ] {
        assert!(!text.contains(sign), "hook text `{sign}` leaked: {text}");
    }
}

#[tokio::test]
async fn a_plain_terminal_over_ssh_gives_exact_exec_results() {
    let Some(sshd) = Sshd::start() else { return };
    let server = server_for(&sshd).await;
    let started = server
        .ok(
            "terminal_start",
            json!({"host": "alpha", "env": {"PS1": "$ "}}),
        )
        .await;
    assert_eq!(started["integration"], "osc133", "{started}");
    assert_eq!(started["host"], "alpha");
    assert_eq!(started["via"], "terminal");
    assert_no_hook_text(&started.to_string());
    let id = started["sessionId"].as_str().unwrap().to_string();
    let ssh_pid = started["pid"].as_i64().unwrap() as i32;

    let exec = |command: &'static str| {
        let server = &server;
        let id = id.clone();
        async move {
            let r = server
                .ok(
                    "terminal_exec",
                    json!({"sessionId": id, "command": command, "timeout": 20000}),
                )
                .await;
            assert_no_hook_text(&r.to_string());
            r
        }
    };
    let r = exec("echo hi").await;
    assert_eq!(r["output"], "hi", "{r}");
    assert_eq!(r["exitCode"], 0);
    assert_eq!(exec("(exit 3)").await["exitCode"], 3);
    assert_eq!(exec("sh -c 'exit 42'").await["exitCode"], 42);
    let r = exec("cd /tmp").await;
    assert_eq!(r["cwd"], "/tmp", "{r}");
    assert_eq!(exec("pwd").await["output"], "/tmp");
    // A slow command is not taken for one waiting for input (only ssh is in local /proc).
    let r = exec("sleep 1.5; echo done").await;
    assert_eq!(r["output"], "done", "{r}");
    assert!(r.get("waitingForInput").is_none_or(Value::is_null), "{r}");

    // A read -p prompt: typed, answered, and its result read back.
    server
        .ok(
            "terminal_write",
            json!({"sessionId": id, "data": "read -p 'name? ' who; echo \"got:$who\"\r",
                   "returnOutput": "none"}),
        )
        .await;
    let w = server
        .ok(
            "terminal_wait",
            json!({"sessionId": id, "pattern": "name\\?$", "timeout": 20000}),
        )
        .await;
    assert_eq!(
        w["reason"],
        "pattern",
        "{w}\n{}",
        server.screen_text(&id).await
    );
    server
        .ok(
            "terminal_write",
            json!({"sessionId": id, "data": "bob\r", "returnOutput": "none"}),
        )
        .await;
    let w = server
        .ok(
            "terminal_wait",
            json!({"sessionId": id, "pattern": "got:bob", "timeout": 20000}),
        )
        .await;
    assert_eq!(w["reason"], "pattern", "{w}");

    let list = server.ok("terminal_list", json!({})).await;
    assert_eq!(list["sessions"][0]["host"], "alpha", "{list}");
    assert_eq!(list["sessions"][0]["via"], "terminal", "{list}");
    // The brief form: the same five fields for any session, no host or via.
    let brief = server.ok("terminal_list", json!({"verbose": false})).await;
    let keys: Vec<&String> = brief["sessions"][0].as_object().unwrap().keys().collect();
    assert_eq!(keys, ["alive", "busy", "cwd", "id", "name"], "{brief}");
    assert_eq!(brief["count"], 1, "{brief}");
    let history = server
        .extra(
            "terminal_get_history",
            json!({"sessionId": id, "format": "text"}),
        )
        .await;
    assert_no_hook_text(&history.to_string());
    assert_no_hook_text(&server.screen_text(&id).await);

    server.ok("terminal_stop", json!({"sessionId": id})).await;
    assert!(
        !std::path::Path::new(&format!("/proc/{ssh_pid}")).exists(),
        "the local ssh was left behind"
    );
    server.stop().await;
}

#[tokio::test]
async fn a_remote_session_with_an_unknown_host_key_is_a_clear_error() {
    let Some(sshd) = Sshd::start() else { return };
    let server = server_for(&sshd).await;
    let started = Instant::now();
    let e = server
        .err("terminal_start", json!({"host": "stranger"}))
        .await;
    assert!(e.contains("not in known_hosts"), "{e}");
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
    let list = server.ok("terminal_list", json!({})).await;
    assert_eq!(list["count"], 0, "the failed session is gone: {list}");
    let e = server
        .err("terminal_start", json!({"host": "alpha", "shell": "fish"}))
        .await;
    assert!(e.contains("bash or sh"), "{e}");
    server.stop().await;
}

#[tokio::test]
async fn a_plain_sh_terminal_over_ssh_is_integrated_too() {
    let Some(sshd) = Sshd::start() else { return };
    let server = server_for(&sshd).await;
    let started = server
        .ok(
            "terminal_start",
            json!({"host": "beta", "shell": "sh", "cwd": "/tmp"}),
        )
        .await;
    assert_eq!(started["integration"], "osc133", "{started}");
    let id = started["sessionId"].as_str().unwrap();
    for (command, output, code) in [
        ("echo hi", "hi", 0),
        ("(exit 3)", "", 3),
        ("pwd", "/tmp", 0),
    ] {
        let r = server
            .ok(
                "terminal_exec",
                json!({"sessionId": id, "command": command, "timeout": 20000}),
            )
            .await;
        assert_eq!(r["output"], output, "{command}: {r}");
        assert_eq!(r["exitCode"], code, "{command}: {r}");
        assert_no_hook_text(&r.to_string());
    }
    server.stop().await;
}

/// The pids of `parent`'s children (from /proc).
fn children(parent: u32) -> Vec<i32> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<i32>() else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            continue;
        };
        // The fields after the command's closing parenthesis: state, ppid, …
        let after = stat.rsplit_once(')').map(|(_, rest)| rest).unwrap_or("");
        if after.split_whitespace().nth(1) == Some(parent.to_string().as_str()) {
            found.push(pid);
        }
    }
    found
}

#[tokio::test]
async fn a_dropped_link_ends_the_session_and_leaves_no_local_process() {
    let Some(sshd) = Sshd::start() else { return };
    let server = server_for(&sshd).await;
    let started = server.ok("terminal_start", json!({"host": "alpha"})).await;
    let id = started["sessionId"].as_str().unwrap();
    let ssh_pid = started["pid"].as_i64().unwrap() as i32;
    // vim opens and quits on the remote terminal.
    server.type_in(id, "vim -Nu NONE\r").await;
    let w = server
        .ok(
            "terminal_wait",
            json!({"sessionId": id, "pattern": "^~", "on": "screen", "timeout": 20000}),
        )
        .await;
    assert_eq!(w["reason"], "pattern", "{w}");
    server.type_in(id, ":q!\r").await;
    let w = server
        .ok(
            "terminal_wait",
            json!({"sessionId": id, "until": "exit", "timeout": 20000}),
        )
        .await;
    assert_eq!(w["reason"], "exit", "vim's end is the command's end: {w}");
    let r = server
        .ok(
            "terminal_exec",
            json!({"sessionId": id, "command": "echo back", "timeout": 20000}),
        )
        .await;
    assert_eq!(r["output"], "back", "{r}");

    // The connection's sshd process dies: the session ends, the local ssh is reaped.
    let handlers = children(sshd.pid());
    assert!(!handlers.is_empty(), "sshd forked no connection handler");
    for pid in handlers {
        unsafe { libc::kill(pid, libc::SIGKILL) };
    }
    // (No wait here: the session may end before a wait arrives, and the reserved-id rule
    // would answer it instead of the call below.)
    let deadline = Instant::now() + Duration::from_secs(10);
    while std::path::Path::new(&format!("/proc/{ssh_pid}")).exists() {
        assert!(Instant::now() < deadline, "the local ssh was left behind");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    // The next call is told the session ended, and a new one of the same shape runs.
    let e = server
        .err(
            "terminal_exec",
            json!({"sessionId": id, "command": "echo again", "timeout": 20000}),
        )
        .await;
    assert!(e.contains("had ended") && e.contains("same shape"), "{e}");
    let r = server
        .ok(
            "terminal_exec",
            json!({"sessionId": id, "command": "echo again", "timeout": 20000}),
        )
        .await;
    assert_eq!(r["output"], "again", "{r}");
    server.stop().await;
}

// ---- The remote-termpilot way: the same binary started on the "remote" end of the link.

/// An sshd whose sessions keep termpilot's state in their own folder (the target's disk),
/// and a server told to start this very binary there (`--remote-bin`).
struct RemoteTermpilot {
    sshd: Sshd,
    /// The target's state dir (jobs live here).
    remote_state: tempfile::TempDir,
}

impl RemoteTermpilot {
    fn start() -> Option<RemoteTermpilot> {
        let remote_state = tempfile::tempdir().expect("temp dir");
        let state = remote_state.path().to_str().expect("utf-8 temp path");
        let sshd = Sshd::start_with(&[("TERMPILOT_STATE_DIR", state)])?;
        Some(RemoteTermpilot { sshd, remote_state })
    }

    async fn server(&self) -> common::Server {
        common::start_with(
            common::Era::Initialize,
            &[
                "--ssh-config",
                self.sshd.config_arg(),
                "--remote-bin",
                common::BIN,
            ],
            &[],
        )
        .await
    }
}

/// The pids of `parent`'s children whose command is `name`.
fn children_named(parent: u32, name: &str) -> Vec<i32> {
    children(parent)
        .into_iter()
        .filter(|pid| {
            std::fs::read_to_string(format!("/proc/{pid}/comm")).is_ok_and(|c| c.trim() == name)
        })
        .collect()
}

#[tokio::test]
async fn a_remote_termpilot_session_gives_exact_exec_input_prompts_and_screenshots() {
    let Some(remote) = RemoteTermpilot::start() else {
        return;
    };
    let server = remote.server().await;
    let started = server
        .ok("terminal_start", json!({"host": "alpha", "shell": "bash"}))
        .await;
    assert_eq!(started["via"], "termpilot", "{started}");
    assert_eq!(started["host"], "alpha");
    let id = started["sessionId"].as_str().unwrap().to_string();

    let r = server
        .ok(
            "terminal_exec",
            json!({"sessionId": id, "command": "cd /tmp && echo hi; false", "timeout": 20000}),
        )
        .await;
    assert_eq!(r["output"], "hi", "{r}");
    assert_eq!(r["exitCode"], 1, "{r}");
    assert_eq!(r["cwd"], "/tmp", "{r}");
    assert_eq!(r["via"], "termpilot");
    assert_eq!(r["sessionId"].as_str().unwrap_or(&id), id, "{r}");

    // waitingForInput comes from the target's /proc, through the remote server.
    let r = server
        .ok(
            "terminal_exec",
            json!({"sessionId": id, "command": "read -p 'Continue? ' answer; echo \"got $answer\"", "timeout": 20000}),
        )
        .await;
    assert_eq!(r["waitingForInput"], true, "{r}");
    assert!(r["prompt"].as_str().unwrap().contains("Continue?"), "{r}");
    server.type_in(&id, "yes\r").await;
    let w = server
        .ok(
            "terminal_wait",
            json!({"sessionId": id, "pattern": "got yes", "timeout": 20000}),
        )
        .await;
    assert_eq!(w["reason"], "pattern", "{w}");

    // A screenshot rendered there arrives as an image.
    let shot = server
        .call(
            "terminal_extra",
            json!({"tool": "terminal_screenshot", "args": {"sessionId": id}}),
        )
        .await;
    assert_ne!(shot.is_error, Some(true), "{}", common::text(&shot));
    let png = shot
        .content
        .iter()
        .find_map(|c| c.as_image().map(|i| i.data.clone()))
        .expect("an image block");
    assert!(png.len() > 100, "a PNG, base64");

    // The list shows it under its local id, with host and via.
    let list = server.ok("terminal_list", json!({})).await;
    let entry = list["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["id"] == id.as_str())
        .unwrap_or_else(|| panic!("{id} not listed: {list}"))
        .clone();
    assert_eq!(entry["host"], "alpha", "{entry}");
    assert_eq!(entry["via"], "termpilot", "{entry}");

    server.ok("terminal_stop", json!({"sessionId": id})).await;
    let list = server.ok("terminal_list", json!({})).await;
    assert_eq!(list["count"], 0, "{list}");
    server.stop().await;
}

#[tokio::test]
async fn a_job_started_through_a_remote_termpilot_survives_the_local_server() {
    let Some(remote) = RemoteTermpilot::start() else {
        return;
    };
    let server = remote.server().await;
    let job = server
        .extra(
            "job_start",
            json!({"command": "sleep 600", "name": "survivor", "host": "alpha"}),
        )
        .await;
    assert_eq!(job["via"], "termpilot", "{job}");
    let job_id = job["jobId"].as_str().unwrap().to_string();
    // On the target's disk, not this server's.
    assert!(
        job["logPaths"]["combined"]
            .as_str()
            .unwrap()
            .starts_with(remote.remote_state.path().to_str().unwrap()),
        "{job}"
    );
    let local = server
        .extra_err("job_status", json!({"jobId": job_id}))
        .await;
    assert!(!local.is_empty());
    server.stop().await;

    let server = remote.server().await;
    let status = server
        .extra("job_status", json!({"jobId": job_id, "host": "alpha"}))
        .await;
    assert_eq!(status["running"], true, "{status}");
    assert_eq!(status["host"], "alpha");
    let killed = server
        .extra("job_kill", json!({"jobId": job_id, "host": "alpha"}))
        .await;
    assert_eq!(killed["killed"], true, "{killed}");
    server.stop().await;
}

#[tokio::test]
async fn file_python_grep_and_process_tools_run_on_the_target() {
    let Some(remote) = RemoteTermpilot::start() else {
        return;
    };
    let server = remote.server().await;
    let path = remote.sshd.dir.path().join("notes.txt");
    let path_str = path.to_str().unwrap();
    let w = server
        .extra(
            "terminal_write_file",
            json!({"path": path_str, "content": "alpha\nbeta\n", "host": "alpha"}),
        )
        .await;
    assert_eq!(w["via"], "termpilot", "{w}");
    let e = server
        .extra(
            "edit_file",
            json!({"path": path_str, "oldText": "beta", "newText": "gamma", "host": "alpha"}),
        )
        .await;
    assert_eq!(e["host"], "alpha", "{e}");
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "alpha\ngamma\n");
    let g = server
        .extra(
            "grep_files",
            json!({"pattern": "gam+a", "path": remote.sshd.dir.path().to_str().unwrap(), "host": "alpha"}),
        )
        .await;
    assert!(g.to_string().contains("notes.txt"), "{g}");
    let p = server
        .extra(
            "process_list",
            json!({"nameFilter": "sshd", "host": "alpha"}),
        )
        .await;
    assert_eq!(p["via"], "termpilot", "{p}");
    if sshd::find("python3").is_some() {
        let r = server
            .extra(
                "run_python",
                json!({"code": "import sys; print(sys.argv[1:]); sys.exit(2)", "args": ["a b"], "host": "alpha"}),
            )
            .await;
        assert_eq!(r["exitCode"], 2, "{r}");
        assert_eq!(r["stdout"]["text"], "['a b']\n", "{r}");
        assert_eq!(r["via"], "termpilot", "{r}");
    }
    server.stop().await;
}

#[tokio::test]
async fn a_network_off_sandbox_refuses_remote_targets_either_way() {
    let Some(remote) = RemoteTermpilot::start() else {
        return;
    };
    let server = common::start_with(
        common::Era::Initialize,
        &[
            "--ssh-config",
            remote.sshd.config_arg(),
            "--remote-bin",
            common::BIN,
            "--sandbox",
            "read-only",
        ],
        &[],
    )
    .await;
    let e = server
        .err("terminal_run", json!({"cmd": "true", "host": "alpha"}))
        .await;
    assert!(e.contains("network off"), "{e}");
    let e = server.extra_err("job_list", json!({"host": "alpha"})).await;
    assert!(e.contains("network off"), "{e}");
    server.stop().await;
}

#[tokio::test]
async fn a_termpilot_only_tool_on_a_plain_target_says_what_it_needs() {
    let Some(sshd) = Sshd::start() else { return };
    let server = server_for(&sshd).await;
    let e = server.extra_err("job_list", json!({"host": "alpha"})).await;
    assert!(
        e.contains("needs termpilot on the target") && e.contains("--remote-bin"),
        "{e}"
    );
    // The plain way still serves the tools that have one.
    let r = server
        .ok("terminal_run", json!({"cmd": "true", "host": "alpha"}))
        .await;
    assert_eq!(r["via"], "terminal", "{r}");
    server.stop().await;
}

/// Issue 37: after `cargo install`, root's `~/.bashrc` put `~/.cargo/bin` on the loopback
/// target's PATH and the plain-way tests took the remote-termpilot way. The target's HOME and
/// PATH are pinned, so what is installed on the machine changes nothing.
#[tokio::test]
async fn the_test_target_sees_a_pinned_home_and_path_whatever_is_installed() {
    let Some(sshd) = Sshd::start() else { return };
    let server = server_for(&sshd).await;
    let r = server
        .ok(
            "terminal_run",
            json!({"cmd": "printf '%s|%s|' \"$HOME\" \"$PATH\"; command -v termpilot || echo none",
                   "shell": true, "host": "alpha"}),
        )
        .await;
    assert_eq!(r["via"], "terminal", "{r}");
    let home = sshd.dir.path().join("home");
    assert_eq!(
        r["stdout"]["raw"],
        format!("{}|{}|none\n", home.display(), sshd::PATH),
        "{r}"
    );
    server.stop().await;
}

#[tokio::test]
async fn a_dropped_termpilot_link_ends_its_sessions_with_a_notice_and_no_local_orphan() {
    let Some(remote) = RemoteTermpilot::start() else {
        return;
    };
    let server = remote.server().await;
    let started = server.ok("terminal_start", json!({"host": "alpha"})).await;
    let id = started["sessionId"].as_str().unwrap().to_string();
    let r = server
        .ok(
            "terminal_exec",
            json!({"sessionId": id, "command": "echo before", "timeout": 20000}),
        )
        .await;
    assert_eq!(r["output"], "before", "{r}");
    let links = children_named(server.pid, "ssh");
    assert_eq!(links.len(), 1, "one link per target: {links:?}");

    // Every connection's sshd process dies: the link drops, its local ssh is reaped.
    for pid in children(remote.sshd.pid()) {
        unsafe { libc::kill(pid, libc::SIGKILL) };
    }
    let deadline = Instant::now() + Duration::from_secs(10);
    while std::path::Path::new(&format!("/proc/{}", links[0])).exists() {
        assert!(Instant::now() < deadline, "the local ssh was left behind");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let list = server.ok("terminal_list", json!({})).await;
    assert!(
        list["sessions"]
            .as_array()
            .unwrap()
            .iter()
            .any(|s| s["id"] == id.as_str() && s["alive"] == false),
        "{list}"
    );
    let e = server
        .err(
            "terminal_exec",
            json!({"sessionId": id, "command": "echo again", "timeout": 20000}),
        )
        .await;
    assert!(e.contains("had ended") && e.contains("same shape"), "{e}");
    let r = server
        .ok(
            "terminal_exec",
            json!({"sessionId": id, "command": "echo again", "timeout": 20000}),
        )
        .await;
    assert_eq!(r["output"], "again", "{r}");
    assert_eq!(children_named(server.pid, "ssh").len(), 1, "one new link");
    server.stop().await;
}

/// A target whose transport is not installed here is named as such (a typed "not found"
/// from the runner, not a match on its wording), for a one-shot run and for a fleet.
#[tokio::test]
async fn a_target_whose_transport_is_not_installed_says_so() {
    let empty = tempfile::tempdir().unwrap();
    // `sh` is needed by nothing here: the transport is spawned directly.
    let path = empty.path().display().to_string();
    let server = common::start_with(common::Era::Initialize, &[], &[("PATH", &path)]).await;
    let e = server
        .err(
            "terminal_run",
            json!({"cmd": "true", "host": "k8s://api-0"}),
        )
        .await;
    assert!(
        e.contains("`k8s://api-0` is reached through `kubectl`, which is not installed here"),
        "{e}"
    );
    let r = server
        .ok(
            "terminal_run",
            json!({"cmd": "true", "hosts": ["docker://a", "k8s://b"]}),
        )
        .await;
    assert_eq!(r["summary"]["unreachable"], 2, "{r}");
    assert_eq!(r["results"][0]["status"], "unreachable", "{r}");
    assert_eq!(r["results"][0]["reason"], "error", "{r}");
    let why = r["results"][0]["error"].as_str().unwrap();
    assert!(
        why.contains("is reached through `docker`, which is not installed here"),
        "{r}"
    );
    server.stop().await;
}
