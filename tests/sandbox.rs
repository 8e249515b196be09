//! The kernel sandbox end to end (Linux): a server started with `--sandbox` confines every
//! process it starts — sessions and what is typed in them, one-shots, jobs (even after the
//! server is gone) — and its own file tools, and says so in its results.
//!
//! Every check of a denial also checks the file or the listener is untouched. Each test was
//! seen to fail once with the wrapper's restriction calls removed.
#![cfg(target_os = "linux")]

mod common;

use std::io::Write;
use std::path::{Path, PathBuf};

use common::procs::has;
use common::{Era, Server, TEST_TIMEOUT, start_with};
use serde_json::{Value, json};

/// A write root, a directory outside it, and a fake home with a secret.
struct Fixture {
    _dir: tempfile::TempDir,
    root: PathBuf,
    outside: PathBuf,
    home: PathBuf,
}

impl Fixture {
    fn new() -> Fixture {
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path().canonicalize().unwrap();
        let (root, outside, home) = (base.join("root"), base.join("outside"), base.join("home"));
        std::fs::create_dir_all(home.join(".ssh")).unwrap();
        std::fs::create_dir_all(&root).unwrap();
        std::fs::create_dir_all(&outside).unwrap();
        std::fs::write(home.join(".ssh/id_test"), "PRIVATE KEY\n").unwrap();
        std::fs::write(outside.join("victim"), "keep me\n").unwrap();
        Fixture {
            _dir: dir,
            root,
            outside,
            home,
        }
    }

    fn git_init(&self) {
        let ok = std::process::Command::new("git")
            .args(["init", "-q"])
            .current_dir(&self.root)
            .status()
            .unwrap()
            .success();
        assert!(ok, "git init");
        assert!(self.root.join(".git/hooks").is_dir());
    }

    /// A server with `mode` (and `extra` flags) whose write root is `root`.
    async fn server(&self, mode: &str, extra: &[&str]) -> Server {
        let mut args = vec!["--sandbox", mode, "--writable", self.root.to_str().unwrap()];
        args.extend_from_slice(extra);
        start_with(
            Era::Initialize,
            &args,
            &[
                ("HOME", self.home.to_str().unwrap()),
                ("TERMPILOT_CWD", self.root.to_str().unwrap()),
            ],
        )
        .await
    }
}

fn need(program: &str) {
    assert!(has(program), "the sandbox tests need {program}");
}

/// Starts a bash session (`sandbox` = the session's own request, if any).
async fn bash(server: &Server, sandbox: Option<&str>) -> (String, Value) {
    need("bash");
    let mut args = json!({"shell": "bash", "env": {"PS1": "$ "}});
    if let Some(mode) = sandbox {
        args["sandbox"] = json!(mode);
    }
    let started = server.ok("terminal_start", args).await;
    (started["sessionId"].as_str().unwrap().to_string(), started)
}

async fn exec(server: &Server, id: &str, command: &str) -> Value {
    server
        .ok(
            "terminal_exec",
            json!({"sessionId": id, "command": command, "timeout": 30000}),
        )
        .await
}

/// Runs `command` and expects it to fail; returns its output.
async fn denied(server: &Server, id: &str, command: &str) -> String {
    let r = exec(server, id, command).await;
    assert_ne!(r["exitCode"], 0, "`{command}` should have been denied: {r}");
    r["output"].as_str().unwrap_or_default().to_string()
}

#[tokio::test]
async fn workspace_write_confines_a_session_and_everything_typed_in_it() {
    let f = Fixture::new();
    f.git_init();
    let server = f.server("workspace-write", &[]).await;
    let (id, started) = bash(&server, None).await;
    assert_eq!(started["sandbox"], "workspace-write", "{started}");
    let list = server.ok("terminal_list", json!({})).await;
    assert_eq!(list["sessions"][0]["sandbox"], "workspace-write", "{list}");

    let r = exec(
        &server,
        &id,
        "echo inside > inside.txt && echo $TERMPILOT_SANDBOX",
    )
    .await;
    assert_eq!(
        (r["exitCode"].clone(), r["output"].clone()),
        (json!(0), json!("workspace-write")),
        "{r}"
    );
    assert_eq!(
        std::fs::read_to_string(f.root.join("inside.txt")).unwrap(),
        "inside\n"
    );
    let r = exec(
        &server,
        &id,
        "mkdir -p a/b && mv inside.txt a/b/moved && rm -r a",
    )
    .await;
    assert_eq!(
        r["exitCode"], 0,
        "renames and removals inside the root: {r}"
    );

    let etc = format!("/etc/termpilot-sandbox-test-{}", std::process::id());
    let out = denied(&server, &id, &format!("echo x > {etc}")).await;
    let escaped = Path::new(&etc).exists();
    let _ = std::fs::remove_file(&etc);
    assert!(!escaped && out.contains("Permission denied"), "{out}");

    let r = exec(&server, &id, "touch ~/x").await;
    assert!(r["hint"].as_str().unwrap().contains("--writable"), "{r}");
    assert!(!f.home.join("x").exists());

    std::fs::write(f.root.join("mine"), "mine\n").unwrap();
    denied(&server, &id, &format!("mv mine {}/", f.outside.display())).await;
    assert!(f.root.join("mine").exists() && !f.outside.join("mine").exists());

    let target = f.outside.join("through-link");
    denied(
        &server,
        &id,
        &format!("ln -s {} link && echo x > link", target.display()),
    )
    .await;
    assert!(!target.exists(), "a write through a symlink left the root");

    let victim = f.outside.join("victim");
    let r = exec(&server, &id, &format!("cat <(rm -f {})", victim.display())).await;
    assert!(
        r["output"].as_str().unwrap().contains("Permission denied"),
        "{r}"
    );
    assert!(
        victim.exists(),
        "a process substitution removed a file outside the root"
    );

    let out = denied(&server, &id, "cat ~/.ssh/id_test").await;
    assert!(!out.contains("PRIVATE KEY"), "{out}");
    let r = exec(&server, &id, "ls /").await;
    assert_eq!(r["exitCode"], 0, "{r}");
    assert!(r["output"].as_str().unwrap().contains("usr"), "{r}");

    denied(&server, &id, "echo 'echo planted' > .git/hooks/pre-commit").await;
    assert!(!f.root.join(".git/hooks/pre-commit").exists());
    denied(&server, &id, "echo '[core]' >> .git/config").await;
    denied(&server, &id, "mv .git .git-old").await;
    assert!(f.root.join(".git/hooks").is_dir());
    server.stop().await;
}

#[tokio::test]
async fn network_off_refuses_tcp_and_udp_even_on_loopback() {
    let f = Fixture::new();
    let tcp = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    tcp.set_nonblocking(true).unwrap();
    let udp = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    udp.set_nonblocking(true).unwrap();
    let (tcp_port, udp_port) = (
        tcp.local_addr().unwrap().port(),
        udp.local_addr().unwrap().port(),
    );
    let connect = format!("echo hi > /dev/tcp/127.0.0.1/{tcp_port}");
    let send = format!("echo hi > /dev/udp/127.0.0.1/{udp_port}");

    let server = f.server("workspace-write", &[]).await;
    let (id, _) = bash(&server, None).await;
    let out = denied(&server, &id, &connect).await;
    assert!(out.contains("Permission denied"), "{out}");
    let out = denied(&server, &id, &send).await;
    assert!(out.contains("Permission denied"), "{out}");
    let r = server
        .ok(
            "terminal_run",
            json!({"cmd": "bash", "args": ["-c", connect]}),
        )
        .await;
    assert_ne!(r["exitCode"], 0, "a one-shot connected: {r}");
    assert_eq!(r["sandbox"], "workspace-write");
    server.stop().await;
    // The connects failed at socket(2), so nothing can still be on its way.
    assert!(
        tcp.accept().is_err(),
        "a sandboxed process reached the TCP listener"
    );
    assert!(
        udp.recv(&mut [0u8; 16]).is_err(),
        "a sandboxed process sent a UDP datagram"
    );

    // The same commands with the network on do arrive: the checks above can fail.
    let open = f.server("workspace-write", &["--network", "on"]).await;
    let (id, _) = bash(&open, None).await;
    assert_eq!(exec(&open, &id, &connect).await["exitCode"], 0);
    assert_eq!(exec(&open, &id, &send).await["exitCode"], 0);
    open.stop().await;
    tcp.set_nonblocking(false).unwrap();
    assert!(tcp.accept().is_ok());
    udp.set_nonblocking(false).unwrap();
    assert_eq!(udp.recv(&mut [0u8; 16]).unwrap(), 3);
}

#[tokio::test]
async fn file_tools_obey_the_write_roots_and_deny_read_paths() {
    let f = Fixture::new();
    f.git_init();
    let server = f.server("workspace-write", &[]).await;
    let inside = f.root.join("notes/new.txt");
    let r = server
        .extra(
            "terminal_write_file",
            json!({"path": inside, "content": "ok", "createDirs": true}),
        )
        .await;
    assert_eq!(r["success"], true, "{r}");

    let write = |path: PathBuf| json!({"tool": "terminal_write_file", "args": {"path": path, "content": "x"}});
    let outside = f.outside.join("x.txt");
    let e = server.err("terminal_extra", write(outside.clone())).await;
    assert!(e.contains("outside the write roots"), "{e}");
    assert!(!outside.exists());

    std::os::unix::fs::symlink(&f.outside, f.root.join("escape")).unwrap();
    let e = server
        .err("terminal_extra", write(f.root.join("escape/y.txt")))
        .await;
    assert!(e.contains("outside the write roots"), "{e}");
    assert!(!f.outside.join("y.txt").exists());
    let e = server
        .err("terminal_extra", write(f.root.join("../outside/z.txt")))
        .await;
    assert!(e.contains("outside the write roots"), "{e}");

    let e = server
        .err(
            "terminal_extra",
            write(f.root.join(".git/hooks/pre-commit")),
        )
        .await;
    assert!(e.contains("read-only"), "{e}");
    let e = server
        .err(
            "terminal_extra",
            json!({"tool": "edit_file", "args": {"path": f.root.join(".git/config"), "oldText": "[core]", "newText": "[core]\n\thooksPath = /tmp"}}),
        )
        .await;
    assert!(e.contains("read-only"), "{e}");
    let e = server
        .err(
            "terminal_extra",
            json!({"tool": "grep_files", "args": {"pattern": "PRIVATE", "path": f.home.join(".ssh")}}),
        )
        .await;
    assert!(e.contains("deny-read"), "{e}");
    let r = server
        .extra("grep_files", json!({"pattern": "PRIVATE", "path": f.home}))
        .await;
    assert_eq!(r["matches"].as_array().map(Vec::len), Some(0), "{r}");
    server.stop().await;
}

#[tokio::test]
async fn read_only_refuses_every_write_but_the_private_tmp() {
    let f = Fixture::new();
    let server = f.server("read-only", &[]).await;
    let (id, started) = bash(&server, None).await;
    assert_eq!(started["sandbox"], "read-only");
    denied(&server, &id, "echo x > in-root.txt").await;
    assert!(!f.root.join("in-root.txt").exists());
    denied(&server, &id, "mkdir newdir").await;
    denied(&server, &id, &format!("rm {}/victim", f.outside.display())).await;
    assert!(f.outside.join("victim").exists());
    denied(&server, &id, "touch /tmp/termpilot-read-only-test").await;
    let r = exec(&server, &id, "echo t > \"$TMPDIR/t\" && cat \"$TMPDIR/t\" && echo x > /dev/null && echo $TERMPILOT_SANDBOX").await;
    assert_eq!(r["output"], "t\nread-only", "{r}");

    let r = server
        .ok(
            "terminal_run",
            json!({"cmd": "sh", "args": ["-c", "echo x > run.txt"]}),
        )
        .await;
    assert_ne!(r["exitCode"], 0, "{r}");
    assert_eq!(r["sandbox"], "read-only");
    assert!(r["hint"].as_str().unwrap().contains("sandbox"), "{r}");
    assert!(!f.root.join("run.txt").exists());
    let e = server
        .err("terminal_extra", json!({"tool": "terminal_write_file", "args": {"path": f.root.join("w.txt"), "content": "x"}}))
        .await;
    assert!(e.contains("read-only"), "{e}");
    server.stop().await;
}

#[tokio::test]
async fn a_session_can_tighten_the_sandbox_but_never_loosen_it() {
    let f = Fixture::new();
    let server = f.server("workspace-write", &[]).await;
    let (strict, started) = bash(&server, Some("read-only")).await;
    assert_eq!(started["sandbox"], "read-only");
    denied(&server, &strict, "echo x > strict.txt").await;
    assert!(!f.root.join("strict.txt").exists());
    let (loose, started) = bash(&server, Some("off")).await;
    assert_eq!(started["sandbox"], "workspace-write", "{started}");
    denied(&server, &loose, "touch ~/loose").await;
    // Not through env either.
    let started = server
        .ok(
            "terminal_start",
            json!({"shell": "bash", "env": {"TERMPILOT_SANDBOX": "off"}}),
        )
        .await;
    assert_eq!(started["sandbox"], "workspace-write", "{started}");
    let id = started["sessionId"].as_str().unwrap();
    denied(&server, id, "touch ~/loose").await;
    assert!(!f.home.join("loose").exists());
    server.stop().await;
}

#[tokio::test]
async fn git_commit_and_python_work_in_workspace_write() {
    need("git");
    need("python3");
    let f = Fixture::new();
    f.git_init();
    let server = f.server("workspace-write", &[]).await;
    let (id, _) = bash(&server, None).await;
    let r = exec(
        &server,
        &id,
        "echo hello > readme && git add readme && git -c user.name=t -c user.email=t@example.com commit -qm first && git log --oneline | wc -l",
    )
    .await;
    assert_eq!(
        (r["exitCode"].clone(), r["output"].clone()),
        (json!(0), json!("1")),
        "{r}"
    );

    std::fs::write(
        f.root.join("test_sample.py"),
        "import tempfile, os\n\ndef test_writes():\n    open('from_python.txt', 'w').write('ok')\n    with tempfile.NamedTemporaryFile() as t:\n        t.write(b'x')\n    assert os.path.exists('from_python.txt')\n\nif __name__ == '__main__':\n    test_writes()\n    print('plain python ok')\n",
    )
    .unwrap();
    let r = exec(&server, &id, "python3 test_sample.py").await;
    assert_eq!(r["output"], "plain python ok", "{r}");
    assert_eq!(
        std::fs::read_to_string(f.root.join("from_python.txt")).unwrap(),
        "ok"
    );
    // pytest too, where this python has it (CI's python3 may not).
    if exec(&server, &id, "python3 -m pytest --version").await["exitCode"] == 0 {
        let r = exec(
            &server,
            &id,
            "python3 -m pytest -q -p no:cacheprovider test_sample.py",
        )
        .await;
        assert_eq!(r["exitCode"], 0, "{r}");
    } else {
        eprintln!("pytest is not installed for python3: checked plain python only");
    }
    server.stop().await;
}

#[tokio::test]
async fn a_job_started_in_the_sandbox_stays_confined_after_a_server_restart() {
    let f = Fixture::new();
    let state = tempfile::tempdir().unwrap();
    let fifo = f.root.join("go");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(made.success());
    let mut envs = vec![
        ("TERMPILOT_STATE_DIR", state.path().to_str().unwrap()),
        ("HOME", f.home.to_str().unwrap()),
        ("TERMPILOT_CWD", f.root.to_str().unwrap()),
    ];
    let root = f.root.to_str().unwrap();
    let first = start_with(
        Era::Initialize,
        &["--sandbox", "workspace-write", "--writable", root],
        &envs,
    )
    .await;
    let late = f.outside.join("after-restart");
    let command = format!(
        "read line < {}; echo x > {} ; echo \"rc=$?\"",
        fifo.display(),
        late.display()
    );
    let job = first.extra("job_start", json!({"command": command})).await;
    let _job = common::procs::JobGuard::of(&job);
    let job_id = job["jobId"].as_str().unwrap().to_string();
    first.crash().await;

    envs.retain(|(k, _)| *k != "TERMPILOT_CWD");
    let second = start_with(Era::Initialize, &[], &envs).await;
    // Opening the fifo for writing returns once the job has it open for reading.
    let writer = tokio::task::spawn_blocking(move || {
        let mut w = std::fs::OpenOptions::new().write(true).open(&fifo).unwrap();
        w.write_all(b"go\n").unwrap();
    });
    tokio::time::timeout(TEST_TIMEOUT, writer)
        .await
        .unwrap()
        .unwrap();
    let r = second
        .extra("job_wait", json!({"jobId": job_id, "timeoutMs": 30000}))
        .await;
    let tail = r["outputTail"].as_str().unwrap();
    assert!(
        tail.contains("Permission denied") && tail.contains("rc=1"),
        "{r}"
    );
    assert!(
        !late.exists(),
        "the job wrote outside the root after the restart"
    );
    second.stop().await;
}

#[test]
fn bad_sandbox_flags_stop_the_server_with_a_sentence() {
    let run = |args: &[&str]| {
        let out = std::process::Command::new(common::BIN)
            .args(args)
            .stdin(std::process::Stdio::null())
            .output()
            .unwrap();
        assert!(!out.status.success(), "{args:?} started");
        String::from_utf8_lossy(&out.stderr).to_string()
    };
    let e = run(&["--sandbox", "strict"]);
    assert!(e.contains("read-only"), "{e}");
    let e = run(&["--network", "off"]);
    assert!(e.contains("--network off needs --sandbox"), "{e}");
    let e = run(&["--sandbox", "workspace-write", "--writable", "/no/such/dir"]);
    assert!(e.contains("not an existing directory"), "{e}");
}
