//! Conformance of `--compat smart-terminal` with seed 000 (smart-terminal-mcp, in
//! Japanese): the 8 core tools and `terminal_extra`, `SMART_TERMINAL_DISABLED_TOOLS` and
//! `SMART_TERMINAL_SHELL`, the exact parameter sets, fire-and-forget writes, the parser
//! hint, read-only paging, watch context, and the 10-session limit. Each case names the
//! seed section it comes from.

mod common;

use std::process::Command;

use common::compat::{Params, check_params, server_name, start_preset, tools};
use serde_json::{Value, json};

const CORE: &[&str] = &[
    "terminal_start",
    "terminal_exec",
    "terminal_run",
    "terminal_read",
    "terminal_write",
    "terminal_wait",
    "terminal_stop",
    "terminal_list",
];
const EXTRAS: &[&str] = &[
    "terminal_run_paged",
    "terminal_retry",
    "terminal_diff",
    "terminal_resize",
    "terminal_send_key",
    "terminal_get_history",
    "terminal_write_file",
    "terminal_watch",
];

const PARAMS: &[Params] = &[
    Params {
        seed: "terminal_start",
        tool: "terminal_start",
        params: &["shell", "cols", "rows", "cwd", "name", "env"],
        required: &[],
        defaults: &[],
    },
    Params {
        seed: "terminal_exec",
        tool: "terminal_exec",
        params: &[
            "sessionId",
            "command",
            "timeout",
            "maxLines",
            "quietExitMs",
            "minOutputBytes",
        ],
        required: &["sessionId", "command"],
        defaults: &[
            ("timeout", "30000"),
            ("maxLines", "200"),
            ("minOutputBytes", "1"),
        ],
    },
    Params {
        seed: "terminal_run",
        tool: "terminal_run",
        params: &[
            "cmd",
            "args",
            "shell",
            "cwd",
            "timeout",
            "maxOutputBytes",
            "parse",
            "parseOnly",
            "summary",
            "successExitCode",
            "successFile",
            "successFilePattern",
        ],
        required: &["cmd"],
        defaults: &[
            ("timeout", "30000"),
            ("maxOutputBytes", "102400"),
            ("parse", "true"),
            ("successExitCode", "0"),
        ],
    },
    Params {
        seed: "terminal_write",
        tool: "terminal_write",
        params: &["sessionId", "data"],
        required: &["sessionId", "data"],
        defaults: &[],
    },
    Params {
        seed: "terminal_read",
        tool: "terminal_read",
        params: &["sessionId", "timeout", "idleTimeout", "maxLines", "since"],
        required: &["sessionId"],
        defaults: &[
            ("timeout", "30000"),
            ("idleTimeout", "500"),
            ("maxLines", "200"),
        ],
    },
    Params {
        seed: "terminal_wait",
        tool: "terminal_wait",
        params: &[
            "sessionId",
            "pattern",
            "timeout",
            "returnMode",
            "tailLines",
            "since",
        ],
        required: &["sessionId", "pattern"],
        defaults: &[("timeout", "30000"), ("tailLines", "50")],
    },
    Params {
        seed: "terminal_stop",
        tool: "terminal_stop",
        params: &["sessionId", "snapshotLines", "transcriptPath"],
        required: &["sessionId"],
        defaults: &[("snapshotLines", "0")],
    },
    Params {
        seed: "terminal_list",
        tool: "terminal_list",
        params: &["verbose"],
        required: &[],
        defaults: &[("verbose", "true")],
    },
    Params {
        seed: "terminal_send_key",
        tool: "terminal_send_key",
        params: &["sessionId", "key"],
        required: &["sessionId", "key"],
        defaults: &[],
    },
    Params {
        seed: "terminal_run_paged",
        tool: "terminal_run_paged",
        params: &[
            "cmd",
            "args",
            "cwd",
            "timeout",
            "maxOutputBytes",
            "page",
            "pageSize",
            "summary",
        ],
        required: &["cmd"],
        defaults: &[
            ("page", "0"),
            ("pageSize", "100"),
            ("maxOutputBytes", "102400"),
        ],
    },
    Params {
        seed: "terminal_get_history (COMPAT.md)",
        tool: "terminal_get_history",
        params: &["sessionId", "offset", "maxLines", "format"],
        required: &["sessionId"],
        defaults: &[("offset", "0"), ("maxLines", "200")],
    },
    Params {
        seed: "terminal_retry",
        tool: "terminal_retry",
        params: &[
            "sessionId",
            "command",
            "maxRetries",
            "backoff",
            "delayMs",
            "timeout",
            "maxLines",
            "successExitCode",
            "successPattern",
        ],
        required: &["sessionId", "command"],
        defaults: &[("maxRetries", "3"), ("delayMs", "1000")],
    },
    Params {
        seed: "terminal_diff",
        tool: "terminal_diff",
        params: &[
            "sessionId",
            "commandA",
            "commandB",
            "timeout",
            "maxLines",
            "contextLines",
        ],
        required: &["sessionId", "commandA", "commandB"],
        defaults: &[("contextLines", "3")],
    },
    Params {
        seed: "terminal_resize",
        tool: "terminal_resize",
        params: &["sessionId", "cols", "rows"],
        required: &["sessionId", "cols", "rows"],
        defaults: &[],
    },
    Params {
        seed: "terminal_write_file (COMPAT.md: sessionId required)",
        tool: "terminal_write_file",
        params: &["sessionId", "path", "content", "encoding", "append"],
        required: &["sessionId", "path", "content"],
        defaults: &[],
    },
    Params {
        seed: "terminal_watch",
        tool: "terminal_watch",
        params: &[
            "sessionId",
            "triggers",
            "timeout",
            "quietExitMs",
            "contextLines",
            "since",
        ],
        required: &["sessionId", "triggers"],
        defaults: &[("timeout", "60000"), ("contextLines", "3")],
    },
];

fn sorted(names: impl IntoIterator<Item = impl ToString>) -> Vec<String> {
    let mut v: Vec<String> = names.into_iter().map(|n| n.to_string()).collect();
    v.sort();
    v
}

/// "ツール定義のオーバーヘッドを削減する": which tools are direct for each setting of
/// SMART_TERMINAL_DISABLED_TOOLS.
#[tokio::test]
async fn disabled_tools_move_behind_terminal_extra() {
    let mut all: Vec<&str> = CORE.to_vec();
    all.extend_from_slice(EXTRAS);
    let example_1 = "terminal_run,terminal_run_paged,terminal_retry,terminal_diff,terminal_write_file,terminal_resize,terminal_send_key,terminal_get_history,terminal_watch";
    let example_2 = "terminal_exec,terminal_diff,terminal_retry,terminal_resize,terminal_send_key,terminal_write,terminal_read,terminal_get_history,terminal_watch";
    let table: Vec<(&str, Option<&str>, Vec<&str>)> = vec![
        ("default: 8 core + terminal_extra", None, {
            let mut v = CORE.to_vec();
            v.push("terminal_extra");
            v
        }),
        (
            "empty string: all 16 with full schemas",
            Some(""),
            all.clone(),
        ),
        (
            "first example (the names win over \"5 core\")",
            Some(example_1),
            vec![
                "terminal_start",
                "terminal_exec",
                "terminal_read",
                "terminal_write",
                "terminal_wait",
                "terminal_stop",
                "terminal_list",
                "terminal_extra",
            ],
        ),
        (
            "second example: 7 core",
            Some(example_2),
            vec![
                "terminal_start",
                "terminal_run",
                "terminal_wait",
                "terminal_stop",
                "terminal_list",
                "terminal_run_paged",
                "terminal_write_file",
                "terminal_extra",
            ],
        ),
    ];
    for (seed, env, want) in table {
        let envs: Vec<(&str, &str)> = env
            .map(|v| vec![("SMART_TERMINAL_DISABLED_TOOLS", v)])
            .unwrap_or_default();
        let server = start_preset("smart-terminal", &envs).await;
        let listed = tools(&server).await;
        assert_eq!(sorted(listed.keys()), sorted(&want), "[{seed}]");
        if listed.contains_key("terminal_extra") {
            let catalog = server.ok("terminal_extra", json!({"list": true})).await;
            let extras: Vec<&str> = catalog["tools"]
                .as_array()
                .unwrap()
                .iter()
                .map(|t| t["name"].as_str().unwrap())
                .collect();
            let direct: Vec<&str> = listed.keys().map(String::as_str).collect();
            let moved: Vec<&str> = all
                .iter()
                .copied()
                .filter(|t| !direct.contains(t))
                .collect();
            assert_eq!(
                sorted(extras),
                sorted(moved),
                "[{seed}] the extras are not removed"
            );
        }
        if env == Some("") {
            check_params(&listed, PARAMS);
        }
        assert_eq!(server_name(&server), "smart-terminal-mcp");
        server.stop().await;
    }
}

#[tokio::test]
async fn shell_variable_and_session_limit() {
    // SMART_TERMINAL_SHELL fixes the shell when terminal_start names none.
    let server = start_preset("smart-terminal", &[("SMART_TERMINAL_SHELL", "bash")]).await;
    let s = server.ok("terminal_start", json!({})).await;
    assert_eq!(s["shellType"], "bash", "[SMART_TERMINAL_SHELL] {s}");
    server.stop().await;
    // "使用できないSMART_TERMINAL_SHELLの値は無視され": an unusable value is ignored.
    let server = start_preset(
        "smart-terminal",
        &[("SMART_TERMINAL_SHELL", "/nonexistent/shell")],
    )
    .await;
    let s = server.ok("terminal_start", json!({})).await;
    assert!(
        s["sessionId"].is_string(),
        "[SMART_TERMINAL_SHELL unusable] {s}"
    );
    // COMPAT.md (UPSTREAM session-manager.js): at most 10 sessions.
    for _ in 1..10 {
        server.ok("terminal_start", json!({})).await;
    }
    let e = server.err("terminal_start", json!({})).await;
    // UPSTREAM src/session-manager.js words it.
    assert_eq!(
        e, "Maximum 10 concurrent sessions reached. Stop an existing session first.",
        "[10 sessions]"
    );
    server.stop().await;
}

#[tokio::test]
async fn repl_write_then_read_and_keys() {
    let server = start_preset("smart-terminal", &[("SMART_TERMINAL_DISABLED_TOOLS", "")]).await;
    let s = server.ok("terminal_start", json!({"name": "repl"})).await;
    let id = s["sessionId"].as_str().unwrap();
    for field in ["sessionId", "shell", "shellType", "cwd", "banner"] {
        assert!(s.get(field).is_some(), "[terminal_start] {field} in {s}");
    }
    // 対話型 Python REPL (with sh): terminal_write is fire-and-forget; terminal_read
    // returns the answer.
    let w = server
        .ok(
            "terminal_write",
            json!({"sessionId": id, "data": "echo $((2 + 2))\r"}),
        )
        .await;
    assert_eq!(
        w,
        json!({"success": true, "sessionId": id}),
        "[terminal_write]"
    );
    let r = server
        .ok(
            "terminal_wait",
            json!({"sessionId": id, "pattern": "^4$", "since": 0, "returnMode": "full"}),
        )
        .await;
    assert_eq!(r["matched"], true, "[terminal_wait] {r}");
    let w = server
        .ok(
            "terminal_write",
            json!({"sessionId": id, "data": "echo answer-$((6 * 7))\r"}),
        )
        .await;
    assert_eq!(w["success"], true);
    let r = server.ok("terminal_read", json!({"sessionId": id})).await;
    assert!(
        r["output"].as_str().unwrap().contains("answer-42"),
        "[terminal_read after terminal_write] {r}"
    );
    for field in ["output", "timedOut", "position"] {
        assert!(r.get(field).is_some(), "[terminal_read] {field}");
    }
    // UPSTREAM src/tools.js: a written `\r` (backslash, r) is Enter too.
    server
        .ok(
            "terminal_write",
            json!({"sessionId": id, "data": "echo escaped-$((3 * 3))\\r"}),
        )
        .await;
    let r = server
        .ok(
            "terminal_wait",
            json!({"sessionId": id, "pattern": "^escaped-9$", "since": 0, "timeout": 20000}),
        )
        .await;
    assert_eq!(r["matched"], true, "[terminal_write \\r] {r}");
    let k = server
        .ok(
            "terminal_send_key",
            json!({"sessionId": id, "key": "ctrl+c"}),
        )
        .await;
    // UPSTREAM src/tools.js: {success, key}.
    assert_eq!(k, json!({"success": true, "key": "ctrl+c"}));
    let e = server
        .err(
            "terminal_send_key",
            json!({"sessionId": id, "key": "hyper+q"}),
        )
        .await;
    assert!(e.contains("hyper+q"), "[terminal_send_key unknown key] {e}");
    // Native parameters the seed does not have are refused.
    let e = server
        .err(
            "terminal_write",
            json!({"sessionId": id, "data": "x", "returnOutput": "screen"}),
        )
        .await;
    assert!(e.contains("returnOutput"), "{e}");

    // ビルドイベントを監視する: a trigger returns context (an array, always).
    // ビルドログを段階的にポーリングする: a position from terminal_read is a `since`.
    let before = server
        .ok(
            "terminal_read",
            json!({"sessionId": id, "idleTimeout": 100}),
        )
        .await;
    let since = before["position"].as_u64().unwrap();
    server
        .ok(
            "terminal_write",
            json!({"sessionId": id, "data": "echo webpack: Compiled successfully\r"}),
        )
        .await;
    let r = server
        .ok(
            "terminal_watch",
            json!({"sessionId": id, "since": since, "contextLines": 0, "timeout": 20000, "triggers": [
                {"id": "success", "pattern": "^webpack: Compiled successfully"},
                {"id": "error", "pattern": "ERROR in"}
            ]}),
        )
        .await;
    assert_eq!(r["reason"], "trigger", "[terminal_watch] {r}");
    assert_eq!(r["triggerId"], "success");
    assert_eq!(r["matchedLine"], "webpack: Compiled successfully");
    assert!(r["context"].is_array(), "[terminal_watch context] {r}");
    assert!(r["position"].is_u64());

    // terminal_exec: output, exitCode, cwd, timedOut.
    let r = server
        .ok(
            "terminal_exec",
            json!({"sessionId": id, "command": "echo hi; false"}),
        )
        .await;
    assert_eq!(
        (r["output"].clone(), r["exitCode"].clone()),
        (json!("hi"), json!(1)),
        "{r}"
    );
    assert!(r["cwd"].is_string() && r["timedOut"] == false);
    // トランスクリプトを保存して停止する.
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("session.log");
    let r = server
        .ok(
            "terminal_stop",
            json!({"sessionId": id, "snapshotLines": 20, "transcriptPath": log}),
        )
        .await;
    assert_eq!(r["success"], true, "[terminal_stop] {r}");
    assert!(r["snapshot"]["text"].is_string() && r["transcript"]["bytes"].is_u64());
    server.stop().await;
}

fn git(dir: &std::path::Path, args: &[&str]) {
    let ok = Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("GIT_AUTHOR_NAME", "t")
        .env("GIT_AUTHOR_EMAIL", "t@example.invalid")
        .env("GIT_COMMITTER_NAME", "t")
        .env("GIT_COMMITTER_EMAIL", "t@example.invalid")
        .status()
        .expect("git is installed")
        .success();
    assert!(ok, "git {args:?}");
}

#[tokio::test]
async fn run_parsers_hint_and_read_only_paging() {
    let repo = tempfile::tempdir().unwrap();
    let r = repo.path();
    git(r, &["init", "-q", "-b", "main"]);
    std::fs::write(r.join("tracked.txt"), "a\n").unwrap();
    git(r, &["add", "tracked.txt"]);
    git(r, &["commit", "-qm", "first"]);
    std::fs::write(r.join("tracked.txt"), "b\n").unwrap();
    std::fs::write(r.join("staged.txt"), "s\n").unwrap();
    git(r, &["add", "staged.txt"]);
    std::fs::write(r.join("new.txt"), "n\n").unwrap();
    let server = start_preset("smart-terminal", &[("SMART_TERMINAL_DISABLED_TOOLS", "")]).await;

    // 構造化パーサーのサポート: git status lists are path strings.
    let s = server
        .ok(
            "terminal_run",
            json!({"cmd": "git", "args": ["status", "--porcelain=v1", "--branch"], "cwd": r}),
        )
        .await;
    let parsed = &s["stdout"]["parsed"];
    assert_eq!(parsed["staged"], json!(["staged.txt"]), "[git status] {s}");
    assert_eq!(parsed["modified"], json!(["tracked.txt"]));
    assert_eq!(parsed["untracked"], json!(["new.txt"]));
    for field in [
        "ok",
        "cmd",
        "args",
        "cwd",
        "exitCode",
        "timedOut",
        "durationMs",
    ] {
        assert!(s.get(field).is_some(), "[terminal_run] {field}");
    }

    // "文言：Structured parser unavailable …": a successful, long, unparsed git output (of
    // a subcommand upstream's hint covers: branch, diff, log, remote, rev-parse, status).
    let long_log = json!(["log", "--stat", "--format=%H%n%H%n%H%n%H%n%H"]);
    let s = server
        .ok(
            "terminal_run",
            json!({"cmd": "git", "args": long_log, "cwd": r}),
        )
        .await;
    assert_eq!(s["stdout"]["parsed"], Value::Null);
    assert_eq!(
        s["hint"],
        "Structured parser unavailable for this command signature. If you need this often, propose one.",
        "[parser hint] {s}"
    );
    let s = server
        .ok(
            "terminal_run",
            json!({"cmd": "git", "args": long_log, "cwd": r, "parse": false}),
        )
        .await;
    assert!(
        s.get("hint").is_none(),
        "[parser hint only when parsing is asked] {s}"
    );
    let s = server
        .ok(
            "terminal_run",
            json!({"cmd": "sh", "args": ["-c", "seq 1 500"]}),
        )
        .await;
    assert!(
        s.get("hint").is_none(),
        "[parser hint: git and where/which only] {s}"
    );

    // terminal_run_paged: read-only commands only; pageInfo.
    let p = server
        .ok(
            "terminal_run_paged",
            json!({"cmd": "git", "args": ["log", "--oneline"], "cwd": r, "pageSize": 1}),
        )
        .await;
    assert_eq!(p["pageInfo"]["totalLines"], 1, "[terminal_run_paged] {p}");
    assert_eq!(p["pageInfo"]["hasNext"], false);
    let e = server
        .err(
            "terminal_run_paged",
            json!({"cmd": "rm", "args": ["-rf", r]}),
        )
        .await;
    assert!(e.contains("read-only"), "[terminal_run_paged refuses] {e}");
    assert!(r.join("tracked.txt").exists());
    let e = server
        .err(
            "terminal_run_paged",
            json!({"cmd": "git", "args": ["push"], "cwd": r}),
        )
        .await;
    assert!(e.contains("read-only"), "{e}");
    // Hidden native parameters are refused, not silently used.
    let e = server
        .err("terminal_run", json!({"cmd": "cat", "stdin": "x"}))
        .await;
    assert!(e.contains("stdin"), "{e}");
    server.stop().await;
}

/// The seed documents no result for list entries, resize, write_file or stop's message;
/// UPSTREAM (src/tools.js, src/pty-session.js getInfo/waitForPattern) settles them.
#[tokio::test]
async fn session_tool_shapes_are_upstreams() {
    let server = start_preset("smart-terminal", &[("SMART_TERMINAL_DISABLED_TOOLS", "")]).await;
    let dir = tempfile::tempdir().unwrap();
    let s = server
        .ok("terminal_start", json!({"name": "m", "cwd": dir.path()}))
        .await;
    let id = s["sessionId"].as_str().unwrap();
    let list = server.ok("terminal_list", json!({})).await;
    let entry = list["sessions"][0].as_object().unwrap();
    let mut keys: Vec<&str> = entry.keys().map(String::as_str).collect();
    keys.sort_unstable();
    assert_eq!(
        keys,
        [
            "alive",
            "busy",
            "cols",
            "createdAt",
            "cwd",
            "id",
            "idleSeconds",
            "lastActivity",
            "name",
            "rows",
            "shell",
            "shellType"
        ],
        "[terminal_list verbose] {list}"
    );
    assert_eq!(entry["shellType"], s["shellType"]);
    assert!(
        entry["createdAt"].as_str().unwrap().ends_with('Z'),
        "ISO 8601: {list}"
    );
    let r = server
        .ok(
            "terminal_resize",
            json!({"sessionId": id, "cols": 100, "rows": 40}),
        )
        .await;
    assert_eq!(r, json!({"success": true, "cols": 100, "rows": 40}));
    let w = server
        .ok(
            "terminal_write_file",
            json!({"sessionId": id, "path": "a.txt", "content": "hi"}),
        )
        .await;
    let path = std::fs::canonicalize(dir.path()).unwrap().join("a.txt");
    assert_eq!(
        w,
        json!({"success": true, "path": path, "size": 2, "append": false})
    );
    let r = server
        .ok(
            "terminal_wait",
            json!({"sessionId": id, "pattern": "never-printed", "timeout": 1000}),
        )
        .await;
    let mut keys: Vec<&str> = r.as_object().unwrap().keys().map(String::as_str).collect();
    keys.sort_unstable();
    assert_eq!(keys, ["matched", "output", "position", "timedOut"], "{r}");
    let r = server.ok("terminal_stop", json!({"sessionId": id})).await;
    assert_eq!(
        r,
        json!({"success": true, "message": format!("Session {id} stopped.")})
    );
    server.stop().await;
}

/// UPSTREAM src/pty-session.js: a session whose command is still running is "busy" in
/// upstream's words.
#[tokio::test]
async fn busy_session_error_is_upstreams() {
    let server = start_preset("smart-terminal", &[]).await;
    let s = server.ok("terminal_start", json!({})).await;
    let id = s["sessionId"].as_str().unwrap();
    let r = server
        .ok(
            "terminal_exec",
            json!({"sessionId": id, "command": "sleep 30", "timeout": 1000}),
        )
        .await;
    assert_eq!(r["timedOut"], true, "{r}");
    let e = server
        .err("terminal_exec", json!({"sessionId": id, "command": "true"}))
        .await;
    assert_eq!(
        e,
        format!(
            "Session {id} is busy with a background command. Wait for it to finish, or use terminal_read to check output, or terminal_send_key(\"ctrl+c\") to abort it."
        )
    );
    server.stop().await;
}

/// UPSTREAM src/command-runner.js: `cwd` is resolved against the server's directory, and
/// the result names it absolute.
#[tokio::test]
async fn run_cwd_is_absolute() {
    let server = start_preset("smart-terminal", &[("SMART_TERMINAL_DISABLED_TOOLS", "")]).await;
    let r = server
        .ok("terminal_run", json!({"cmd": "pwd", "cwd": "tests"}))
        .await;
    server.stop().await;
    let cwd = r["cwd"].as_str().unwrap();
    assert!(
        std::path::Path::new(cwd).is_absolute() && cwd.ends_with("/tests"),
        "{r}"
    );
    assert_eq!(r["stdout"]["raw"].as_str().unwrap().trim_end(), cwd);
}

/// `terminal_run_paged`'s `maxOutputBytes` counts raw bytes, as `terminal_run`'s does and
/// upstream's (one `runCommand` for both): 40 bytes of `mNN\n` keep 10 lines, where a cap on
/// their JSON escaping (`\n` takes two) would keep 8.
#[tokio::test]
async fn paged_runs_cap_raw_bytes_as_upstream() {
    let repo = tempfile::tempdir().unwrap();
    let r = repo.path();
    git(r, &["init", "-q", "-b", "main"]);
    for n in 1..=20 {
        git(
            r,
            &["commit", "-q", "--allow-empty", "-m", &format!("m{n:02}")],
        );
    }
    let server = start_preset("smart-terminal", &[("SMART_TERMINAL_DISABLED_TOOLS", "")]).await;
    let s = server
        .ok(
            "terminal_run_paged",
            json!({"cmd": "git", "args": ["log", "--format=%s"], "cwd": r, "maxOutputBytes": 40}),
        )
        .await;
    let newest_ten: Vec<String> = (11..=20).rev().map(|n| format!("m{n:02}")).collect();
    assert_eq!(s["stdout"]["raw"], newest_ten.join("\n"), "{s}");
    assert_eq!(s["maxOutputExceeded"], true, "{s}");
    server.stop().await;
}
