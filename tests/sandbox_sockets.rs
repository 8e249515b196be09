//! termpilot's own Unix sockets against a sandboxed program: Landlock does not mediate
//! `connect()` on pathname sockets and seccomp allows `AF_UNIX`, so without more a confined
//! process could reach another session's attach socket (and type into it) or the session
//! host's MCP socket (and run commands there), both outside its sandbox. Real binaries, the
//! rmcp client, and a hostile python3 client run inside the sandbox; each test has its own
//! private runtime folder (`XDG_RUNTIME_DIR` in a temp dir).
#![cfg(target_os = "linux")]

mod common;

use std::path::PathBuf;

use common::procs::has;
use serde_json::{Value, json};

/// A write root, a folder outside it, a runtime folder, and the hostile client.
struct Fixture {
    _dir: tempfile::TempDir,
    root: PathBuf,
    outside: PathBuf,
    runtime: PathBuf,
    client: PathBuf,
}

/// Connects to each socket path given and reports `connected <path>` or `refused <path>`;
/// `attach` mode then types a frame of input, `mcp` mode calls `terminal_run` over MCP.
const CLIENT: &str = r#"
import json, socket, struct, sys
mode, payload = sys.argv[1], sys.argv[2]
for path in sys.argv[3:]:
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(10)
    try:
        s.connect(path)
    except OSError as e:
        print("refused", path, e, flush=True)
        continue
    print("connected", path, flush=True)
    if mode == "attach":
        data = payload.encode()
        s.sendall(b"i" + struct.pack(">H", len(data)) + data)
        s.sendall(b"d" + struct.pack(">H", 0))
        try:
            while s.recv(4096):
                pass
        except OSError:
            pass
    else:
        f = s.makefile("rwb")
        def send(msg):
            f.write(json.dumps(msg).encode() + b"\n"); f.flush()
        def reply(id):
            while True:
                line = f.readline()
                if not line:
                    return None
                msg = json.loads(line)
                if msg.get("id") == id:
                    return msg
        send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "hostile", "version": "1"}}})
        print("initialized", reply(1) is not None, flush=True)
        send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        send({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
            "name": "terminal_run", "arguments": {"cmd": "sh", "args": ["-c", payload]}}})
        print("called", json.dumps(reply(2)), flush=True)
    s.close()
"#;

impl Fixture {
    fn new() -> Fixture {
        assert!(has("python3"), "the socket tests need python3");
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path().canonicalize().unwrap();
        let (root, outside, runtime) = (base.join("root"), base.join("outside"), base.join("run"));
        for d in [&root, &outside, &runtime] {
            std::fs::create_dir_all(d).unwrap();
        }
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&runtime, std::fs::Permissions::from_mode(0o700)).unwrap();
        let client = base.join("client.py");
        std::fs::write(&client, CLIENT).unwrap();
        Fixture {
            _dir: dir,
            root,
            outside,
            runtime,
            client,
        }
    }

    fn private(&self) -> PathBuf {
        self.runtime.join("termpilot")
    }

    async fn server(&self, args: &[&str]) -> common::Server {
        let mut all = vec!["--writable", self.root.to_str().unwrap()];
        all.extend_from_slice(args);
        common::start_with(
            common::Era::Initialize,
            &all,
            &[
                ("XDG_RUNTIME_DIR", self.runtime.to_str().unwrap()),
                ("TERMPILOT_CWD", self.root.to_str().unwrap()),
            ],
        )
        .await
    }

    /// The hostile client's argv (after `python3`).
    fn attack_args(&self, mode: &str, payload: &str, paths: &[PathBuf]) -> Vec<String> {
        let mut args = vec![
            self.client.display().to_string(),
            mode.to_string(),
            payload.to_string(),
        ];
        args.extend(paths.iter().map(|p| p.display().to_string()));
        args
    }

    /// The hostile client's command line, for a shell.
    fn attack(&self, mode: &str, payload: &str, paths: &[PathBuf]) -> String {
        let quoted: Vec<String> = self
            .attack_args(mode, payload, paths)
            .iter()
            .map(|a| format!("'{a}'"))
            .collect();
        format!("python3 {} 2>&1", quoted.join(" "))
    }

    /// Kills the session hosts this test's runtime folder holds (by their recorded pid).
    fn kill_hosts(&self) {
        let keep = self.private().join("keep");
        for entry in std::fs::read_dir(keep).into_iter().flatten().flatten() {
            if entry.path().extension().is_none_or(|x| x != "json") {
                continue;
            }
            let pid = std::fs::read_to_string(entry.path())
                .ok()
                .and_then(|t| serde_json::from_str::<Value>(&t).ok())
                .and_then(|v| v["pid"].as_i64());
            if let Some(pid) = pid
                && std::fs::read(format!("/proc/{pid}/cmdline"))
                    .is_ok_and(|c| String::from_utf8_lossy(&c).contains("__session-host"))
            {
                // SAFETY: kill(2) on the session host this test started.
                unsafe { libc::kill(pid as i32, libc::SIGKILL) };
            }
        }
    }
}

impl Drop for Fixture {
    fn drop(&mut self) {
        self.kill_hosts();
    }
}

/// A session confined by the per-session `sandbox` cannot reach the attach socket of an
/// unconfined session of the same server, by its path or through `/proc/<server>/root`, so it
/// cannot type a command there that writes outside its write roots.
#[tokio::test]
async fn a_sandboxed_session_cannot_type_into_an_unsandboxed_sessions_socket() {
    let f = Fixture::new();
    let server = f.server(&[]).await;
    let free = server
        .ok("terminal_start", json!({"shell": "/bin/sh"}))
        .await;
    let free = free["sessionId"].as_str().unwrap().to_string();
    let boxed = server
        .ok(
            "terminal_start",
            json!({"shell": "/bin/sh", "sandbox": "workspace-write"}),
        )
        .await;
    assert_eq!(boxed["sandbox"], "workspace-write", "{boxed}");
    let boxed = boxed["sessionId"].as_str().unwrap().to_string();
    let socket = f
        .private()
        .join("attach")
        .join(format!("{}-{free}.sock", server.pid));
    assert!(socket.exists(), "the unsandboxed session has a socket");
    let via_proc =
        PathBuf::from(format!("/proc/{}/root", server.pid)).join(socket.strip_prefix("/").unwrap());
    let target = f.outside.join("typed");
    let payload = format!("touch {}\r", target.display());
    let r = common::exec(
        &server,
        &boxed,
        &f.attack("attach", &payload, &[socket.clone(), via_proc]),
    )
    .await;
    let out = r["output"].as_str().unwrap_or_default().to_string();
    // The unconfined session itself is untouched and still works.
    let check = common::exec(&server, &free, "echo alive").await;
    assert!(check["output"].to_string().contains("alive"), "{check}");
    // Typed input would have run before `echo alive`: no wait is needed to see it.
    assert!(
        !out.contains("connected") && out.contains("refused"),
        "a sandboxed session reached an unsandboxed one's socket: {out}"
    );
    assert!(!target.exists(), "it typed a command there: {out}");
    // The owner still attaches from outside the sandbox.
    let mut sock = std::os::unix::net::UnixStream::connect(&socket).expect("attach from outside");
    std::io::Write::write_all(&mut sock, b"d\0\0").unwrap();
    server.stop().await;
}

/// A sandboxed one-shot cannot reach the session host an unsandboxed server keeps sessions
/// in (`<private>/keep/host.sock`), so it cannot run a command there, unconfined.
#[tokio::test]
async fn a_sandboxed_command_cannot_call_the_unsandboxed_session_host() {
    let f = Fixture::new();
    let plain = f.server(&[]).await;
    let kept = plain
        .ok("terminal_start", json!({"keep": true, "shell": "/bin/sh"}))
        .await;
    assert_eq!(kept["kept"], true, "{kept}");
    let host = f.private().join("keep/host.sock");
    assert!(host.exists(), "the unsandboxed host listens");
    let boxed = f.server(&["--sandbox", "workspace-write"]).await;
    let target = f.outside.join("hosted");
    let r = boxed
        .ok(
            "terminal_run",
            json!({
                "cmd": "python3",
                "args": f.attack_args("mcp", &format!("touch {}", target.display()), std::slice::from_ref(&host)),
                "timeout": 30000,
            }),
        )
        .await;
    let out = format!(
        "{}{}",
        r["stdout"]["raw"].as_str().unwrap_or_default(),
        r["stderr"]["raw"].as_str().unwrap_or_default()
    );
    // The host answers a call only after running it: no wait is needed to see its effect.
    assert!(
        !out.contains("connected") && out.contains("refused"),
        "a sandboxed command reached the unsandboxed host: {out}"
    );
    assert!(!target.exists(), "the host ran its command: {out}");
    // The kept session is still there for the unsandboxed server.
    let id = kept["sessionId"].as_str().unwrap();
    let check = common::exec(&plain, id, "echo alive").await;
    assert_eq!(check["output"], "alive", "{check}");
    plain.ok("terminal_stop", json!({"sessionId": id})).await;
    boxed.stop().await;
    plain.stop().await;
}

/// What a sandboxed program legitimately uses of the private folder still works under the
/// sandbox: its shell integration (a bash session's hooks are sourced from there) and the
/// spill file a reply points at (`fullOutputPath`), read back with `cat`.
#[tokio::test]
async fn a_sandboxed_session_still_reads_its_spill_files_and_shell_integration() {
    let f = Fixture::new();
    assert!(has("bash"), "this test needs bash");
    let server = f.server(&["--sandbox", "workspace-write"]).await;
    let r = server
        .ok(
            "terminal_run",
            json!({"cmd": "seq", "args": ["1", "200000"], "maxOutputBytes": 1000}),
        )
        .await;
    let full = r["stdout"]["fullOutputPath"]
        .as_str()
        .unwrap_or_else(|| panic!("a spill file: {r}"))
        .to_string();
    assert!(full.starts_with(f.private().to_str().unwrap()), "{full}");
    let started = server
        .ok(
            "terminal_start",
            json!({"shell": "bash", "env": {"PS1": "$ "}}),
        )
        .await;
    let id = started["sessionId"].as_str().unwrap();
    let r = common::exec(&server, id, &format!("tail -n 1 {full}")).await;
    assert_eq!(r["output"], "200000", "{r}");
    assert_eq!(
        r["exitCode"], 0,
        "the shell integration reported the exit code: {r}"
    );
    server.stop().await;
}

/// The cover cannot be side-stepped by moving the private folder away: with the runtime folder
/// itself a write root, a sandboxed session that renames the private folder and makes a new one
/// in its place would have the server put later sockets where no cover is. The private folder is
/// a mount point in the sandbox, so it cannot be renamed or removed from inside.
#[tokio::test]
async fn a_sandboxed_session_cannot_move_the_private_folder_from_under_the_cover() {
    let f = Fixture::new();
    let runtime = f.runtime.to_str().unwrap();
    let server = common::start_with(
        common::Era::Initialize,
        &["--writable", runtime, "--sandbox", "workspace-write"],
        &[
            ("XDG_RUNTIME_DIR", runtime),
            ("TERMPILOT_CWD", f.root.to_str().unwrap()),
        ],
    )
    .await;
    let boxed = server
        .ok("terminal_start", json!({"shell": "/bin/sh"}))
        .await;
    let boxed = boxed["sessionId"].as_str().unwrap().to_string();
    let private = f.private();
    let moved = f.runtime.join("moved");
    let r = common::exec(
        &server,
        &boxed,
        &format!(
            "mv {p} {m} 2>&1; mkdir -m 700 {p} 2>&1; echo done",
            p = private.display(),
            m = moved.display()
        ),
    )
    .await;
    let said = r["output"].as_str().unwrap_or_default().to_string();
    assert!(said.contains("done"), "{r}");
    assert!(!moved.exists(), "the private folder was moved away: {said}");
    // A session started now (per-session `sandbox` cannot loosen, so it is confined too, but its
    // socket is what matters) has its socket under the cover all the same.
    let later = server
        .ok("terminal_start", json!({"shell": "/bin/sh"}))
        .await;
    let later = later["sessionId"].as_str().unwrap().to_string();
    let socket = private
        .join("attach")
        .join(format!("{}-{later}.sock", server.pid));
    assert!(socket.exists(), "the later session has a socket");
    let target = f.outside.join("typed");
    let r = common::exec(
        &server,
        &boxed,
        &f.attack(
            "attach",
            &format!("touch {}\r", target.display()),
            &[socket],
        ),
    )
    .await;
    let out = r["output"].as_str().unwrap_or_default().to_string();
    assert!(!out.contains("connected"), "{out}");
    assert!(out.contains("refused"), "{out}");
    server.stop().await;
}

/// Where no mount namespace can be had (here: no capability, and user namespaces capped at 0),
/// the cover cannot be made, so `--sandbox read-only` is refused at start with a sentence,
/// as `workspace-write` is for `.git` (fail closed), instead of running with the sockets open.
#[tokio::test]
async fn without_a_mount_namespace_the_sandbox_is_refused_with_a_sentence() {
    for program in ["unshare", "setpriv"] {
        if !has(program) {
            common::procs::skip(&format!("{program} (util-linux) is missing"));
            return;
        }
    }
    let f = Fixture::new();
    let tmp = f.runtime.join("tmp");
    std::fs::create_dir_all(&tmp).unwrap();
    // In a user namespace of its own with user namespaces capped at 0 and every capability
    // dropped: no mount namespace can be made there.
    let confined = |program: &str| {
        format!(
            "echo 0 > /proc/sys/user/max_user_namespaces && exec setpriv --bounding-set=-all \
             --inh-caps=-all --ambient-caps=-all -- {program}"
        )
    };
    let run = |script: String| {
        let mut cmd = tokio::process::Command::new("unshare");
        cmd.args(["-U", "-r", "sh", "-c", &script])
            .env_remove("XDG_RUNTIME_DIR")
            .env("TMPDIR", &tmp)
            .env("HOME", &f.root)
            .stdin(std::process::Stdio::null())
            .kill_on_drop(true);
        async move {
            tokio::time::timeout(common::TEST_TIMEOUT, cmd.output())
                .await
                .expect("it ends in time")
                .expect("run unshare")
        }
    };
    let probe = run(confined("sh -c 'unshare -m true; echo mount=$?'")).await;
    let probed = String::from_utf8_lossy(&probe.stdout);
    if !probed.contains("mount=") || probed.contains("mount=0") {
        common::procs::skip(&format!(
            "cannot make a place without mount namespaces here: {probed}{}",
            String::from_utf8_lossy(&probe.stderr)
        ));
        return;
    }
    let out = run(confined(&format!(
        "{} --sandbox read-only --writable {}",
        common::BIN,
        f.root.display()
    )))
    .await;
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "the server started: {said}");
    assert!(
        said.contains("--sandbox read-only cannot be enforced")
            && said.contains("mount namespace")
            && said.contains("--sandbox off"),
        "{said}"
    );
}

/// With the private folder inside a write root (here the runtime folder itself), a sandboxed
/// program cannot plant code in it: the shell-integration script that later sessions, confined
/// or not, source stays as termpilot wrote it. Its own `TMPDIR` there stays writable.
#[tokio::test]
async fn a_write_root_holding_the_private_folder_cannot_plant_shell_integration() {
    assert!(has("bash"), "this test needs bash");
    let f = Fixture::new();
    let runtime = f.runtime.to_str().unwrap();
    let server = common::start_with(
        common::Era::Initialize,
        &["--writable", runtime, "--sandbox", "workspace-write"],
        // No runtime folder: the private folder is `$TMPDIR/termpilot-<uid>`, and the
        // sandbox's own TMPDIR lies in it.
        &[
            ("XDG_RUNTIME_DIR", ""),
            ("TMPDIR", runtime),
            ("TERMPILOT_CWD", f.root.to_str().unwrap()),
        ],
    )
    .await;
    // SAFETY: getuid(2) cannot fail.
    let private = f
        .runtime
        .join(format!("termpilot-{}", unsafe { libc::getuid() }));
    // A bash session makes termpilot write its shell integration into the private folder.
    let bash = server
        .ok(
            "terminal_start",
            json!({"shell": "bash", "env": {"PS1": "$ "}}),
        )
        .await;
    let bash = bash["sessionId"].as_str().unwrap().to_string();
    let script = private.join("shell-integration/bash.sh");
    let before = std::fs::read_to_string(&script).expect("the bash integration script");
    let r = common::exec(
        &server,
        &bash,
        &format!(
            "echo 'touch {o}' >> {s}; echo w=$?; touch {p}/planted; echo p=$?; touch \"$TMPDIR/ok\"; echo t=$?",
            o = f.outside.join("planted").display(),
            s = script.display(),
            p = private.display()
        ),
    )
    .await;
    let out = r["output"].as_str().unwrap_or_default().to_string();
    assert!(
        out.contains("t=0"),
        "the sandbox's TMPDIR is writable: {out}"
    );
    assert!(!out.contains("w=0") && !out.contains("p=0"), "{out}");
    assert_eq!(
        std::fs::read_to_string(&script).unwrap(),
        before,
        "the shell integration was changed from the sandbox"
    );
    assert!(!private.join("planted").exists(), "{out}");
    server.stop().await;
}
