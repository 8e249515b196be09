//! Conformance of `--compat cowork` with seed 003 (cowork-terminal-mcp, in Japanese; its
//! parameter table from the English original of the same article): one tool,
//! `execute_command`, a bash script with no terminal, the flat result, the per-stream 1 MB
//! cap and its exact suffix. Each case names the seed section it comes from.

mod common;

use common::compat::{Params, check_params, server_name, start_preset, tools};
use serde_json::{Value, json};

/// A table row: the seed section, the script (and extra arguments), what must come back.
struct Case {
    seed: &'static str,
    args: Value,
    stdout: &'static str,
    stderr: &'static str,
    exit_code: Value,
    timed_out: bool,
}

fn cases() -> Vec<Case> {
    vec![
        Case {
            seed: "サーバーが公開する唯一のツール: stdout, stderr, exitCode, timedOut",
            args: json!({"command": "echo out; echo err >&2; exit 3"}),
            stdout: "out\n",
            stderr: "err\n",
            exit_code: json!(3),
            timed_out: false,
        },
        Case {
            seed: "shell は bash 一択",
            args: json!({"command": "[[ -n $BASH_VERSION ]] && echo bash"}),
            stdout: "bash\n",
            stderr: "",
            exit_code: json!(0),
            timed_out: false,
        },
        Case {
            seed: "PTY なし: stdio [ignore, pipe, pipe] (stdin at end of file, not a terminal)",
            args: json!({"command": "cat; [ -t 1 ] && echo tty || echo pipe"}),
            stdout: "pipe\n",
            stderr: "",
            exit_code: json!(0),
            timed_out: false,
        },
        Case {
            seed: "env overlaid on the inherited environment (English original)",
            args: json!({"command": "echo \"$GREETING\"; command -v sh >/dev/null && echo path-kept", "env": {"GREETING": "hello"}}),
            stdout: "hello\npath-kept\n",
            stderr: "",
            exit_code: json!(0),
            timed_out: false,
        },
        Case {
            seed: "heredoc: \\n in the JSON string becomes a real newline before bash sees it",
            args: json!({"command": "cat <<'EOF'\n## Summary\n\n- First item\n- $HOME stays literal\nEOF"}),
            stdout: "## Summary\n\n- First item\n- $HOME stays literal\n",
            stderr: "",
            exit_code: json!(0),
            timed_out: false,
        },
        Case {
            seed: "タイムアウト: exitCode null and timedOut true, with the output so far",
            args: json!({"command": "echo started; sleep 30", "timeout": 400}),
            stdout: "started\n",
            stderr: "",
            exit_code: Value::Null,
            timed_out: true,
        },
    ]
}

#[tokio::test]
async fn one_tool_its_parameters_and_name() {
    let server = start_preset("cowork", &[]).await;
    let listed = tools(&server).await;
    assert_eq!(
        listed.keys().collect::<Vec<_>>(),
        vec!["execute_command"],
        "[サーバーが公開する唯一のツール] exactly one tool"
    );
    check_params(
        &listed,
        &[Params {
            seed: "English original: command, cwd, timeout (30000 ms), env",
            tool: "execute_command",
            params: &["command", "cwd", "timeout", "env"],
            required: &["command"],
            defaults: &[("timeout", "30000")],
        }],
    );
    let description = listed["execute_command"]
        .description
        .as_deref()
        .unwrap_or_default();
    assert!(
        description.contains("heredoc") && description.contains("<<'EOF'"),
        "[shell は bash 一択] the description coaches heredocs: {description}"
    );
    assert_eq!(server_name(&server), "cowork-terminal-mcp");
    server.stop().await;
}

#[tokio::test]
async fn table_of_behaviours() {
    let server = start_preset("cowork", &[]).await;
    for case in cases() {
        let r = server.ok("execute_command", case.args.clone()).await;
        let mut keys: Vec<&str> = r.as_object().unwrap().keys().map(String::as_str).collect();
        keys.sort_unstable();
        assert_eq!(
            keys,
            vec!["exitCode", "stderr", "stdout", "timedOut"],
            "[{}] the flat result",
            case.seed
        );
        assert_eq!(r["stdout"], case.stdout, "[{}] stdout", case.seed);
        assert_eq!(r["stderr"], case.stderr, "[{}] stderr", case.seed);
        assert_eq!(r["exitCode"], case.exit_code, "[{}] exitCode", case.seed);
        assert_eq!(r["timedOut"], case.timed_out, "[{}] timedOut", case.seed);
    }
    // Bad input is a clear error: the removed `shell` parameter (v0.4.0), no command.
    let e = server
        .err(
            "execute_command",
            json!({"command": "true", "shell": "cmd"}),
        )
        .await;
    assert!(e.contains("shell"), "[shell は bash 一択] {e}");
    let e = server.err("execute_command", json!({})).await;
    assert!(e.contains("command"), "{e}");
    server.stop().await;
}

#[tokio::test]
async fn cwd_defaults_to_the_home_folder() {
    let home = tempfile::tempdir().unwrap();
    let home_path = home.path().canonicalize().unwrap();
    let server = start_preset("cowork", &[("HOME", home_path.to_str().unwrap())]).await;
    // English original: cwd defaults to the user's home.
    let r = server
        .ok("execute_command", json!({"command": "pwd -P"}))
        .await;
    assert_eq!(r["stdout"], format!("{}\n", home_path.display()));
    let other = tempfile::tempdir().unwrap();
    let other_path = other.path().canonicalize().unwrap();
    let r = server
        .ok(
            "execute_command",
            json!({"command": "pwd -P", "cwd": other_path}),
        )
        .await;
    assert_eq!(r["stdout"], format!("{}\n", other_path.display()));
    server.stop().await;
}

#[tokio::test]
async fn each_stream_is_capped_at_1mb_with_the_suffix_and_the_command_keeps_running() {
    let server = start_preset("cowork", &[]).await;
    let dir = tempfile::tempdir().unwrap();
    let marker = dir.path().join("finished");
    // ストリームごとに 1MB: stdout over the cap, stderr small (not marked).
    let script = format!(
        "head -c 3000000 /dev/zero | tr '\\0' x; echo small >&2; echo done > '{}'",
        marker.display()
    );
    let r = server
        .ok("execute_command", json!({"command": script}))
        .await;
    let stdout = r["stdout"].as_str().unwrap();
    let (kept, suffix) = stdout.split_at(1_048_576);
    assert!(
        kept.bytes().all(|b| b == b'x'),
        "[1MB 上限] the first 1,048,576 bytes"
    );
    assert_eq!(
        suffix, "\n[stdout truncated at 1MB]",
        "[1MB 上限] the exact suffix"
    );
    assert_eq!(
        r["stderr"], "small\n",
        "[1MB 上限] per stream: stderr untouched"
    );
    assert_eq!(r["exitCode"], 0);
    // "上限に達すると追加のデータは捨てられ": the command was not killed at the cap.
    assert_eq!(std::fs::read_to_string(&marker).unwrap(), "done\n");
    // The same for stderr.
    let r = server
        .ok(
            "execute_command",
            json!({"command": "head -c 1500000 /dev/zero | tr '\\0' e >&2"}),
        )
        .await;
    assert!(
        r["stderr"]
            .as_str()
            .unwrap()
            .ends_with("e\n[stderr truncated at 1MB]")
    );
    assert_eq!(r["stdout"], "");
    server.stop().await;
}
