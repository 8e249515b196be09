//! One-shot commands end to end: terminal_run (argv, shell, stdin, timeouts, caps and spill
//! files, parsers on real git repositories, success checks), terminal_run_paged and
//! run_python, through the real binary. Unix only: the commands are POSIX tools.
#![cfg(unix)]

mod common;

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use common::start;
use serde_json::{Value, json};

use common::procs::has as have;

/// Waits until `pid` is gone (or a zombie nobody reaped yet), failing after the test timeout.
fn assert_dies(pid: i32) {
    let deadline = Instant::now() + common::TEST_TIMEOUT;
    while termpilot_core::platform::pid_exists(pid)
        && termpilot_core::platform::process_state(pid) != Some('Z')
    {
        assert!(
            Instant::now() < deadline,
            "process {pid} survived the timeout"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
}

#[tokio::test]
async fn argv_passes_through_untouched() {
    let server = start().await;
    let args = json!(["$(id)", "a  b", "q\"uote'", "`x`;|&"]);
    let r = server
        .ok("terminal_run", json!({"cmd": "echo", "args": args}))
        .await;
    assert_eq!(r["stdout"]["raw"], "$(id) a  b q\"uote' `x`;|&\n");
    assert_eq!(
        (r["ok"].clone(), r["exitCode"].clone()),
        (json!(true), json!(0))
    );
    assert_eq!(r["stdout"]["parsed"], Value::Null);
    let r = server
        .ok(
            "terminal_run",
            json!({"cmd": "echo hi | tr a-z A-Z", "shell": true}),
        )
        .await;
    assert_eq!(r["stdout"]["raw"], "HI\n");
    // With shell:true, cmd is shell text and each arg stays one word, unexpanded.
    let r = server
        .ok(
            "terminal_run",
            json!({"cmd": "printf '<%s>\\n'", "args": ["a b", "$HOME", "it's"], "shell": true}),
        )
        .await;
    assert_eq!(r["stdout"]["raw"], "<a b>\n<$HOME>\n<it's>\n", "{r}");
    let r = server
        .ok(
            "terminal_run",
            json!({"cmd": "cat", "stdin": "fed through stdin"}),
        )
        .await;
    assert_eq!(r["stdout"]["raw"], "fed through stdin");
    let r = server
        .ok("terminal_run", json!({"cmd": "sh", "args": ["-c", "echo $FOO; echo oops >&2; exit 4"], "env": {"FOO": "bar"}}))
        .await;
    assert_eq!(r["stdout"]["raw"], "bar\n");
    assert_eq!(r["stderr"]["raw"], "oops\n");
    assert_eq!(
        (r["ok"].clone(), r["exitCode"].clone()),
        (json!(false), json!(4))
    );
    server.stop().await;
}

#[tokio::test]
async fn bad_calls_are_clear_errors() {
    let server = start().await;
    let e = server
        .err("terminal_run", json!({"cmd": "no-such-program-xyz"}))
        .await;
    assert!(e.contains("was not found"), "{e}");
    let e = server
        .err(
            "terminal_run",
            json!({"cmd": "true", "cwd": "/no/such/dir"}),
        )
        .await;
    assert!(e.contains("does not exist"), "{e}");
    let e = server
        .err("terminal_run", json!({"cmd": "true", "timeout": 0}))
        .await;
    assert!(e.contains("`timeout`"), "{e}");
    let e = server
        .err(
            "terminal_run",
            json!({"cmd": "true", "successFilePattern": "x"}),
        )
        .await;
    assert!(e.contains("needs successFile"), "{e}");
    let e = server
        .err(
            "terminal_run",
            json!({"cmd": "true", "successFile": "f", "successFilePattern": "a("}),
        )
        .await;
    assert!(e.contains("not a valid regex"), "{e}");
    server.stop().await;
}

#[tokio::test]
async fn timeout_kills_the_whole_tree() {
    let server = start().await;
    let started = Instant::now();
    let r = server
        .ok(
            "terminal_run",
            json!({"cmd": "sh", "args": ["-c", "sleep 100 & echo $$ $!; sleep 100"], "timeout": 500}),
        )
        .await;
    assert!(started.elapsed() < Duration::from_secs(10));
    assert_eq!(r["timedOut"], true);
    assert_eq!(r["ok"], false);
    assert_eq!(r["exitCode"], Value::Null);
    assert!(r["hint"].as_str().unwrap().contains("timed out"));
    let pids: Vec<i32> = r["stdout"]["raw"]
        .as_str()
        .unwrap()
        .split_whitespace()
        .map(|p| p.parse().unwrap())
        .collect();
    assert_eq!(pids.len(), 2, "{r}");
    for pid in pids {
        assert_dies(pid);
    }
    server.stop().await;
}

#[tokio::test]
async fn a_large_stdout_is_capped_and_spilled_whole() {
    let server = start().await;
    let size = 5 * 1024 * 1024;
    let r = server
        .ok(
            "terminal_run",
            json!({"cmd": "sh", "args": ["-c", format!("yes 0123456789abcdef | head -c {size}")]}),
        )
        .await;
    let out = &r["stdout"];
    assert_eq!(out["truncated"], true);
    assert_eq!(out["totalBytes"], size);
    // maxOutputBytes caps the text in the reply, escaping included: a line is 18 bytes there.
    let escaped = serde_json::to_string(out["raw"].as_str().unwrap())
        .unwrap()
        .len()
        - 2;
    assert!((102_400 - 18..=102_400).contains(&escaped), "{escaped}");
    let path = out["fullOutputPath"].as_str().unwrap();
    let whole = std::fs::read(path).unwrap();
    assert_eq!(whole.len(), size);
    assert!(whole.starts_with(b"0123456789abcdef\n0123"));
    assert!(
        whole
            .chunks(17)
            .all(|c| b"0123456789abcdef\n".starts_with(c))
    );
    std::fs::remove_file(path).unwrap();
    server.stop().await;
}

#[tokio::test]
async fn exit_code_and_success_file_checks() {
    let server = start().await;
    let dir = tempfile::tempdir().unwrap();
    let cwd = dir.path().to_str().unwrap();
    let run = |args: Value| server.ok("terminal_run", args);
    let r = run(json!({"cmd": "sh", "args": ["-c", "exit 3"], "successExitCode": 3})).await;
    assert_eq!(r["ok"], true);
    let r = run(json!({"cmd": "sh", "args": ["-c", "exit 1"], "successExitCode": null})).await;
    assert_eq!(r["ok"], true);
    let write_log = json!(["-c", "echo 'Result: 0 error(s)' > build.log"]);
    let r = run(json!({"cmd": "sh", "args": write_log, "cwd": cwd, "successFile": "build.log", "successFilePattern": "0 error"})).await;
    assert_eq!(r["ok"], true, "{r}");
    assert_eq!(r["checks"]["successFile"]["matched"], true);
    let r = run(json!({"cmd": "true", "cwd": cwd, "successFile": "build.log", "successFilePattern": "^fatal"})).await;
    assert_eq!(r["ok"], false);
    assert_eq!(r["checks"]["successFile"]["matched"], false);
    let r = run(json!({"cmd": "true", "cwd": cwd, "successFile": "missing.log"})).await;
    assert_eq!(r["ok"], false);
    assert_eq!(r["checks"]["successFile"]["exists"], false);
    server.stop().await;
}

fn git(dir: &Path, args: &[&str]) {
    let out = Command::new("git")
        .args([
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@e",
            "-c",
            "init.defaultBranch=main",
        ])
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .output()
        .expect("git runs");
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A repository with two branches, an upstream, staged, modified, renamed and untracked files.
fn repo() -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap();
    let p = d.path();
    git(p, &["init", "-q"]);
    std::fs::write(p.join("a.txt"), "a\n").unwrap();
    std::fs::write(p.join("sp ace.txt"), "b\n").unwrap();
    git(p, &["add", "."]);
    git(p, &["commit", "-qm", "first commit"]);
    git(p, &["branch", "feat"]);
    git(p, &["remote", "add", "origin", "https://example.com/r.git"]);
    git(p, &["update-ref", "refs/remotes/origin/main", "HEAD"]);
    git(p, &["branch", "-q", "--set-upstream-to=origin/main"]);
    std::fs::write(p.join("a.txt"), "a\nx\n").unwrap();
    git(p, &["commit", "-qam", "second"]);
    std::fs::write(p.join("a.txt"), "a\nx\ny\n").unwrap();
    git(p, &["add", "a.txt"]);
    std::fs::write(p.join("a.txt"), "a\nx\ny\nz\n").unwrap();
    git(p, &["mv", "sp ace.txt", "sp ace2.txt"]);
    std::fs::write(p.join("new file.txt"), "n\n").unwrap();
    d
}

#[tokio::test]
async fn git_signatures_are_parsed_from_real_repositories() {
    if !have("git") {
        return;
    }
    let server = start().await;
    let d = repo();
    let cwd = d.path().to_str().unwrap();
    let parsed = |args: Value| {
        let server = &server;
        async move {
            let r = server
                .ok(
                    "terminal_run",
                    json!({"cmd": "git", "args": args, "cwd": cwd}),
                )
                .await;
            assert_eq!(r["ok"], true, "{r}");
            assert_ne!(
                r["stdout"]["parsed"],
                Value::Null,
                "git {args} not parsed: {r}"
            );
            r["stdout"]["parsed"].clone()
        }
    };
    let v = parsed(json!(["log", "--oneline"])).await;
    assert_eq!(v["count"], 2);
    assert_eq!(v["commits"][0]["subject"], "second");
    assert_eq!(
        parsed(json!(["log", "--oneline", "-n", "1"])).await["count"],
        1
    );
    for args in [
        json!(["status", "--porcelain=v1", "--branch"]),
        json!(["status", "--short", "--branch"]),
    ] {
        let v = parsed(args).await;
        assert_eq!(v["branch"]["head"], "main");
        assert_eq!(v["branch"]["upstream"], "origin/main");
        assert_eq!(v["branch"]["ahead"], 1);
        assert_eq!(
            v["staged"][1],
            json!({"status": "R", "path": "sp ace2.txt", "from": "sp ace.txt"})
        );
        assert_eq!(v["modified"][0]["path"], "a.txt");
        assert_eq!(v["untracked"], json!(["new file.txt"]));
    }
    assert_eq!(
        parsed(json!(["status", "--short"])).await["branch"],
        Value::Null
    );
    let v = parsed(json!(["branch"])).await;
    assert_eq!(v["current"], "main");
    assert_eq!(v["branches"].as_array().unwrap().len(), 2);
    let v = parsed(json!(["branch", "--all"])).await;
    assert_eq!(v["branches"][2]["name"], "remotes/origin/main");
    assert_eq!(
        parsed(json!(["branch", "--remotes"])).await["branches"][0]["name"],
        "origin/main"
    );
    let v = parsed(json!(["branch", "-vv"])).await;
    assert_eq!(v["branches"][1]["upstream"], "origin/main");
    assert_eq!(v["branches"][1]["ahead"], 1);
    assert_eq!(
        parsed(json!(["branch", "--show-current"])).await["branch"],
        "main"
    );
    assert_eq!(
        parsed(json!(["rev-parse", "--abbrev-ref", "HEAD"])).await["ref"],
        "main"
    );
    let top = parsed(json!(["rev-parse", "--show-toplevel"])).await;
    assert_eq!(
        std::fs::canonicalize(top["path"].as_str().unwrap()).unwrap(),
        std::fs::canonicalize(d.path()).unwrap()
    );
    assert_eq!(
        parsed(json!(["rev-parse", "--is-inside-work-tree"])).await["insideWorkTree"],
        true
    );
    assert_eq!(
        parsed(json!(["diff", "--name-only"])).await["files"],
        json!(["a.txt"])
    );
    let v = parsed(json!(["diff", "--cached", "--name-status"])).await;
    assert_eq!(v["files"][1]["oldPath"], "sp ace.txt");
    let v = parsed(json!(["diff", "--stat", "HEAD~1"])).await;
    // a.txt gained 3 lines; the rename adds none.
    assert_eq!(v["filesChanged"], 2);
    assert_eq!(
        v["files"][0],
        json!({"path": "a.txt", "changes": 3, "insertions": 3, "deletions": 0})
    );
    assert_eq!(v["insertions"], 3);
    assert_eq!(
        parsed(json!(["diff", "--shortstat", "HEAD~1"])).await["insertions"],
        3
    );
    assert_eq!(
        parsed(json!(["ls-files"])).await["files"],
        json!(["a.txt", "sp ace2.txt"])
    );
    assert_eq!(
        parsed(json!(["remote", "-v"])).await["remotes"][0]["fetch"],
        "https://example.com/r.git"
    );

    // parseOnly drops raw; summary replaces it.
    let r = server
        .ok("terminal_run", json!({"cmd": "git", "args": ["status", "--short", "--branch"], "cwd": cwd, "parseOnly": true}))
        .await;
    assert!(
        r["stdout"].get("raw").is_none() && r["stdout"]["parsed"].is_object(),
        "{r}"
    );
    let r = server
        .ok(
            "terminal_run",
            json!({"cmd": "git", "args": ["log", "--oneline"], "cwd": cwd, "summary": true}),
        )
        .await;
    assert!(r["stdout"].get("raw").is_none(), "{r}");
    assert!(
        r["stdout"]["summary"]
            .as_str()
            .unwrap()
            .starts_with("2 commits; latest")
    );
    // which is parsed too.
    let r = server
        .ok("terminal_run", json!({"cmd": "which", "args": ["sh"]}))
        .await;
    assert!(
        r["stdout"]["parsed"]["paths"][0]
            .as_str()
            .unwrap()
            .ends_with("/sh")
    );
    server.stop().await;
}

#[tokio::test]
async fn large_unparsed_git_output_gets_the_hint() {
    if !have("git") {
        return;
    }
    let server = start().await;
    let d = tempfile::tempdir().unwrap();
    git(d.path(), &["init", "-q"]);
    for i in 0..80 {
        std::fs::write(d.path().join(format!("file-{i:03}.txt")), "x\n").unwrap();
    }
    git(d.path(), &["add", "."]);
    let cwd = d.path().to_str().unwrap();
    let r = server
        .ok(
            "terminal_run",
            json!({"cmd": "git", "args": ["ls-files", "-s"], "cwd": cwd}),
        )
        .await;
    assert_eq!(r["stdout"]["parsed"], Value::Null);
    assert!(
        r["hint"]
            .as_str()
            .unwrap()
            .starts_with("Structured parser unavailable"),
        "{r}"
    );
    let r = server
        .ok(
            "terminal_run",
            json!({"cmd": "git", "args": ["ls-files"], "cwd": cwd}),
        )
        .await;
    assert!(r.get("hint").is_none());
    server.stop().await;
}

#[tokio::test]
async fn paged_output_boundaries() {
    let server = start().await;
    let page = |page: u64, extra: Value| {
        let server = &server;
        async move {
            let mut args =
                json!({"cmd": "seq", "args": ["1", "250"], "page": page, "pageSize": 100});
            for (k, v) in extra.as_object().unwrap() {
                args[k] = v.clone();
            }
            server.extra("terminal_run_paged", args).await
        }
    };
    let r = page(0, json!({})).await;
    assert_eq!(
        r["pageInfo"],
        json!({"page": 0, "pageSize": 100, "totalLines": 250, "hasNext": true})
    );
    assert!(r["stdout"]["raw"].as_str().unwrap().starts_with("1\n2\n"));
    let r = page(2, json!({})).await;
    let lines: Vec<&str> = r["stdout"]["raw"].as_str().unwrap().lines().collect();
    assert_eq!((lines.len(), lines[0], lines[49]), (50, "201", "250"));
    assert_eq!(r["pageInfo"]["hasNext"], false);
    let r = page(3, json!({})).await;
    assert_eq!(r["stdout"]["raw"], "");
    // Pages come from the whole stream even past the inline cap.
    let r = page(
        4,
        json!({"args": ["1", "100000"], "maxOutputBytes": 1000, "pageSize": 10000}),
    )
    .await;
    assert_eq!(r["pageInfo"]["totalLines"], 100000);
    assert!(r["stdout"]["raw"].as_str().unwrap().starts_with("40001\n"));
    assert_eq!(r["stdout"]["truncated"], true);
    std::fs::remove_file(r["stdout"]["fullOutputPath"].as_str().unwrap()).unwrap();
    server.stop().await;
}

#[tokio::test]
async fn run_python_with_args_and_a_timeout() {
    if !have("python3") && !have("python") {
        return;
    }
    let server = start().await;
    let dir = tempfile::tempdir().unwrap();
    let code = "import sys, os\nprint(sys.argv[1:])\nprint(os.getcwd())\nsys.exit(2)";
    let r = server
        .extra(
            "run_python",
            json!({"code": code, "args": ["a b", "$(id)"], "cwd": dir.path()}),
        )
        .await;
    let out = r["stdout"]["text"].as_str().unwrap();
    assert!(out.starts_with("['a b', '$(id)']\n"), "{r}");
    assert!(
        out.contains(dir.path().file_name().unwrap().to_str().unwrap()),
        "{r}"
    );
    assert_eq!(r["exitCode"], 2);
    assert!(r["pythonExecutable"].as_str().unwrap().contains("python"));
    let args = json!({"tool": "run_python", "args": {
        "code": "import time\nprint('before', flush=True)\ntime.sleep(100)", "timeoutMs": 700}});
    // A timeout is a normal result: timedOut, what it printed, and a hint.
    let r = server.ok("terminal_extra", args).await;
    assert_eq!(r["timedOut"], true, "{r}");
    assert_eq!(r["stdout"]["text"], "before\n", "{r}");
    assert!(
        r["hint"]
            .as_str()
            .unwrap()
            .contains("timed out after 700 ms"),
        "{r}"
    );
    let r = server
        .extra("run_python", json!({"code": "print('quick')"}))
        .await;
    assert_eq!(r["timedOut"], false, "{r}");
    assert!(r["hint"].is_null(), "{r}");
    server.stop().await;
}
