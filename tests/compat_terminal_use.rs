//! Conformance of `--compat terminal-use` with seed 001 (terminal-use, in Japanese): the 13
//! tools, integer session ids from 1, prose results with the screen as text, waits whose
//! timeout is not an error, command sessions, and the lifecycle (50 sessions, the least
//! recently used evicted, its id answering with a notice). Each case names the seed section
//! it comes from.

mod common;

use common::Server;
use common::compat::{Params, check_params, server_name, start_preset, tools};
use serde_json::{Value, json};

const TOOLS: &[&str] = &[
    "terminal_create",
    "terminal_list",
    "terminal_destroy",
    "terminal_type",
    "terminal_press",
    "terminal_wait",
    "terminal_read",
    "terminal_screenshot",
    "terminal_click",
    "terminal_scroll",
    "terminal_batch",
    "terminal_resize",
    "terminal_reset",
];

const PARAMS: &[Params] = &[
    Params {
        seed: "ツール: terminal_create",
        tool: "terminal_create",
        params: &[
            "label",
            "cols",
            "rows",
            "shell",
            "cwd",
            "env",
            "login",
            "scrollback",
            "theme",
            "command",
        ],
        required: &[],
        defaults: &[],
    },
    Params {
        seed: "ツール: terminal_list",
        tool: "terminal_list",
        params: &[],
        required: &[],
        defaults: &[],
    },
    Params {
        seed: "ツール: terminal_destroy",
        tool: "terminal_destroy",
        params: &["sessionId"],
        required: &["sessionId"],
        defaults: &[],
    },
    Params {
        seed: "入力、貼り付け、バッチ処理: terminal_type",
        tool: "terminal_type",
        params: &["sessionId", "text", "paste", "idleMs", "maxWaitMs"],
        required: &["sessionId", "text"],
        defaults: &[],
    },
    Params {
        seed: "ツール: terminal_press",
        tool: "terminal_press",
        params: &["sessionId", "key", "count", "idleMs", "maxWaitMs"],
        required: &["sessionId", "key"],
        defaults: &[],
    },
    Params {
        seed: "処理の待機",
        tool: "terminal_wait",
        params: &["sessionId", "pattern", "until", "quietMs", "timeoutMs"],
        required: &["sessionId"],
        defaults: &[("quietMs", "1000"), ("timeoutMs", "30000")],
    },
    Params {
        seed: "画面を読み取る",
        tool: "terminal_read",
        params: &[
            "sessionId",
            "page",
            "joinWrapped",
            "highlights",
            "cursor",
            "rows",
        ],
        required: &["sessionId"],
        defaults: &[
            ("page", "0"),
            ("joinWrapped", "true"),
            ("highlights", "true"),
            ("cursor", "true"),
        ],
    },
    Params {
        seed: "クリックとスクロール",
        tool: "terminal_click",
        params: &[
            "sessionId",
            "row",
            "col",
            "preview",
            "filePath",
            "idleMs",
            "maxWaitMs",
        ],
        required: &["sessionId", "row", "col"],
        defaults: &[("preview", "true")],
    },
    Params {
        seed: "ツール: terminal_reset",
        tool: "terminal_reset",
        params: &["sessionId", "hardReset"],
        required: &["sessionId"],
        defaults: &[],
    },
];

/// The prose text of a successful call.
async fn prose(server: &Server, tool: &str, args: Value) -> String {
    let r = server.call(tool, args.clone()).await;
    let text = common::text(&r);
    assert_ne!(r.is_error, Some(true), "{tool}({args}) failed: {text}");
    assert!(r.structured_content.is_none(), "{tool}: prose, not JSON");
    text
}

#[tokio::test]
async fn tools_parameters_and_integer_ids() {
    let server = start_preset("terminal-use", &[]).await;
    let listed = tools(&server).await;
    let mut names: Vec<&str> = listed.keys().map(String::as_str).collect();
    names.sort_unstable();
    let mut want = TOOLS.to_vec();
    want.sort_unstable();
    assert_eq!(names, want, "[ツール] the 13 tools");
    check_params(&listed, PARAMS);
    // "terminal_create と terminal_list 以外のすべてのツールは … sessionId": an integer from 1.
    for (name, tool) in &listed {
        let id = tool
            .input_schema
            .get("properties")
            .and_then(|p| p.get("sessionId"));
        if name == "terminal_create" || name == "terminal_list" {
            assert!(id.is_none(), "{name}");
        } else {
            let id = id.unwrap_or_else(|| panic!("[ツール] {name} takes sessionId"));
            assert_eq!(
                (id["type"].clone(), id["minimum"].clone()),
                (json!("integer"), json!(1)),
                "{name}"
            );
        }
        assert!(tool.output_schema.is_none(), "{name}: prose results");
    }
    assert_eq!(server_name(&server), "terminal-use");
    // "すべてセッション番号を 1 から割り当てます".
    let one = prose(&server, "terminal_create", json!({"label": "first"})).await;
    assert!(one.starts_with("Created session 1 (\"first\")."), "{one}");
    // 画面を見ながら入力する: the attach command.
    assert!(one.contains("attach 1 --socket "), "{one}");
    let two = prose(&server, "terminal_create", json!({})).await;
    assert!(two.starts_with("Created session 2."), "{two}");
    let e = server.err("terminal_read", json!({"sessionId": 0})).await;
    assert!(e.contains("sessionId"), "{e}");
    // terminal_destroy: "その ID は予約されません".
    prose(&server, "terminal_destroy", json!({"sessionId": 2})).await;
    let e = server.err("terminal_read", json!({"sessionId": 2})).await;
    assert!(
        e.contains("terminal_create") && !e.contains("terminal_start"),
        "{e}"
    );
    server.stop().await;
}

#[tokio::test]
async fn typing_waiting_and_reading_the_screen() {
    let server = start_preset("terminal-use", &[]).await;
    prose(&server, "terminal_create", json!({"cols": 60, "rows": 10})).await;
    // terminal_type: "\n は Enter キーを押します"; the screen comes back.
    let t = prose(
        &server,
        "terminal_type",
        json!({"sessionId": 1, "text": "echo typed-$((40 + 2))\n"}),
    )
    .await;
    assert!(t.contains("typed-42"), "[terminal_type] {t}");
    // 処理の待機 (default): until the command ends.
    prose(
        &server,
        "terminal_type",
        json!({"sessionId": 1, "text": "sleep 0.3; echo slept\n"}),
    )
    .await;
    let w = prose(&server, "terminal_wait", json!({"sessionId": 1})).await;
    assert!(
        w.starts_with("Command finished: the shell is back at its prompt"),
        "[terminal_wait default] {w}"
    );
    assert!(w.contains("slept"), "[terminal_wait shows the screen] {w}");
    // pattern: "^ と $ は行頭と行末に一致します".
    prose(
        &server,
        "terminal_type",
        json!({"sessionId": 1, "text": "sleep 0.2; echo ready\n"}),
    )
    .await;
    let w = prose(
        &server,
        "terminal_wait",
        json!({"sessionId": 1, "pattern": "^ready$"}),
    )
    .await;
    assert!(
        w.starts_with("Pattern /^ready$/ matched after"),
        "[terminal_wait pattern] {w}"
    );
    // "タイムアウトはエラーではありません": still running, say so.
    prose(
        &server,
        "terminal_type",
        json!({"sessionId": 1, "text": "sleep 30\n"}),
    )
    .await;
    let w = prose(
        &server,
        "terminal_wait",
        json!({"sessionId": 1, "timeoutMs": 300}),
    )
    .await;
    assert!(
        w.starts_with("Timed out after ") && w.contains("ms: the command is still running"),
        "[terminal_wait timeout] {w}"
    );
    // terminal_press: key names as the seed writes them.
    let p = prose(
        &server,
        "terminal_press",
        json!({"sessionId": 1, "key": "Ctrl+C"}),
    )
    .await;
    assert!(p.starts_with("Pressed Ctrl+C"), "{p}");
    let w = prose(
        &server,
        "terminal_wait",
        json!({"sessionId": 1, "until": "quiet", "quietMs": 200}),
    )
    .await;
    assert!(
        w.starts_with("Output has been quiet for 200ms"),
        "[until quiet] {w}"
    );
    // 画面を読み取る: the cursor ▌ and the highlighted items with row and columns.
    prose(&server, "terminal_type", json!({"sessionId": 1, "text": "clear; printf 'menu\\n  \\033[7mUnstaged changes\\033[0m\\n'\n"})).await;
    // The printed line, whole: the typed command's echo holds "Unstaged" too, and a wait
    // that matched it read the screen before `clear` ran (a fresh clone's run, once).
    let w = prose(
        &server,
        "terminal_wait",
        json!({"sessionId": 1, "pattern": "^  Unstaged changes$"}),
    )
    .await;
    assert!(
        w.starts_with("Pattern /^  Unstaged changes$/ matched"),
        "{w}"
    );
    let r = prose(&server, "terminal_read", json!({"sessionId": 1})).await;
    assert!(r.contains('▌'), "[cursor ▌] {r}");
    assert!(
        r.contains(
            "Highlighted on screen (reverse video or background color; screen row, columns):"
        ),
        "[highlights] {r}"
    );
    assert!(
        r.contains("cols 3-18: \"Unstaged changes\""),
        "[highlights] {r}"
    );
    let r = prose(
        &server,
        "terminal_read",
        json!({"sessionId": 1, "cursor": false, "highlights": false}),
    )
    .await;
    assert!(
        !r.contains('▌') && !r.contains("Highlighted"),
        "[cursor:false, highlights:false] {r}"
    );
    // スクリーンショット: a PNG image block.
    let shot = server
        .call("terminal_screenshot", json!({"sessionId": 1}))
        .await;
    assert!(
        shot.content.iter().any(|c| c.as_image().is_some()),
        "[terminal_screenshot] PNG"
    );
    // クリックとスクロール: preview by default, nothing sent.
    let click = server
        .call(
            "terminal_click",
            json!({"sessionId": 1, "row": 1, "col": 1}),
        )
        .await;
    assert!(
        common::text(&click).starts_with("PREVIEW: click at (col 1, row 1)"),
        "{}",
        common::text(&click)
    );
    assert!(click.content.iter().any(|c| c.as_image().is_some()));
    // "通常のシェルプロンプトでは … 呼び出しはエラーを返します".
    let e = server
        .err(
            "terminal_click",
            json!({"sessionId": 1, "row": 1, "col": 1, "preview": false}),
        )
        .await;
    assert!(e.contains("mouse"), "{e}");
    // terminal_batch: "最初に失敗したアクションで停止し、どこまで実行できたかが報告されます".
    let e = server
        .err(
            "terminal_batch",
            json!({"sessionId": 1, "actions": [
                {"type": "type", "text": "x"},
                {"type": "click", "row": 1, "col": 1},
                {"type": "type", "text": "never"}
            ]}),
        )
        .await;
    assert!(
        e.contains("Stopped at action 2 of 3") && !e.contains("never▌"),
        "[terminal_batch] {e}"
    );
    let b = prose(
        &server,
        "terminal_batch",
        json!({"sessionId": 1, "actions": [
            {"type": "press", "key": "Ctrl+U"},
            {"type": "type", "text": "echo batched\n"},
            {"type": "wait", "pattern": "^batched$", "timeoutMs": 20000}
        ]}),
    )
    .await;
    assert!(
        b.starts_with("Ran all 3 actions.") && b.contains("batched"),
        "{b}"
    );
    let r = prose(
        &server,
        "terminal_resize",
        json!({"sessionId": 1, "cols": 80, "rows": 20}),
    )
    .await;
    assert!(
        r.starts_with("Resized terminal from 60x10 to 80x20."),
        "{r}"
    );
    let r = prose(&server, "terminal_reset", json!({"sessionId": 1})).await;
    assert!(r.starts_with("Soft reset: buffer wiped"), "{r}");
    server.stop().await;
}

#[tokio::test]
async fn command_sessions_report_their_exit() {
    let server = start_preset("terminal-use", &[]).await;
    // シェルセッションとコマンドセッション.
    let c = prose(
        &server,
        "terminal_create",
        json!({"command": "echo from-command; exit 3", "label": "cmd"}),
    )
    .await;
    assert!(c.contains("command=echo from-command; exit 3"), "{c}");
    let w = prose(&server, "terminal_wait", json!({"sessionId": 1})).await;
    assert!(
        w.starts_with("The command exited (exit code 3)"),
        "[exit status in terminal_wait] {w}"
    );
    assert!(
        w.contains("from-command"),
        "[the last screen stays readable] {w}"
    );
    let l = prose(&server, "terminal_list", json!({})).await;
    assert!(
        l.contains("[1 (\"cmd\")]") && l.contains("EXITED (exit code 3)"),
        "[exit status in terminal_list] {l}"
    );
    let e = server
        .err("terminal_type", json!({"sessionId": 1, "text": "x"}))
        .await;
    assert!(
        e.contains('3'),
        "[input tools return an error with the exit status] {e}"
    );
    server.stop().await;
}

#[tokio::test]
async fn fifty_sessions_and_the_least_recently_used_is_evicted() {
    let server = start_preset("terminal-use", &[]).await;
    // セッションのライフサイクル: "50セッションの上限に達した場合 … ID は30日間予約".
    for n in 1..=50 {
        let c = prose(&server, "terminal_create", json!({"cols": 20, "rows": 5})).await;
        assert!(c.starts_with(&format!("Created session {n}.")), "{c}");
    }
    // Use every session but 1, so 1 is the least recently used.
    for n in 2..=50 {
        prose(&server, "terminal_read", json!({"sessionId": n})).await;
    }
    let c = prose(&server, "terminal_create", json!({})).await;
    assert!(c.starts_with("Created session 51."), "{c}");
    let l = prose(&server, "terminal_list", json!({})).await;
    assert!(l.starts_with("50 live session(s):"), "[50 sessions] {l}");
    assert!(
        l.contains("[1] tombstoned: evicted"),
        "[session 1 evicted] {l}"
    );
    // "その ID への次の呼び出しでは … 新しいシェルが起動し、何が起きたかを示す通知".
    let e = server.err("terminal_read", json!({"sessionId": 1})).await;
    assert!(e.contains("evicted"), "[eviction notice] {e}");
    let r = prose(&server, "terminal_read", json!({"sessionId": 1})).await;
    assert!(r.starts_with("Terminal: "), "[the id works again] {r}");
    server.stop().await;
}

/// スキル: "cp -r "$(npx -y terminal-use skills-dir)/terminal-use" ~/.claude/skills/".
#[test]
fn skills_dir_holds_a_terminal_use_skill() {
    let data = tempfile::tempdir().unwrap();
    let out = std::process::Command::new(common::BIN)
        .args(["--compat", "terminal-use", "skills-dir"])
        .env("XDG_DATA_HOME", data.path())
        .env_remove("TERMPILOT_COMPAT")
        .output()
        .unwrap();
    assert!(out.status.success());
    let dir = String::from_utf8(out.stdout).unwrap();
    let skill = std::path::Path::new(dir.trim()).join("terminal-use/SKILL.md");
    let text = std::fs::read_to_string(&skill).unwrap();
    assert!(text.starts_with("---\nname: terminal-use\n"), "{text}");
    assert!(text.contains("terminal_create") && !text.contains("terminal_start"));
}

/// `terminal_type` with `paste: true`: text carrying the paste's end marker stays one paste
/// (the markers inside it are removed), so nothing after the marker arrives as typed keys.
#[tokio::test]
async fn a_paste_cannot_end_itself_early() {
    assert!(common::procs::has("python3"), "this test needs python3");
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("reader.py");
    std::fs::write(
        &script,
        "import os, sys, termios, tty\nold = termios.tcgetattr(0)\ntty.setraw(0)\n\
         sys.stdout.write('\\x1b[?2004hREADY\\r\\n'); sys.stdout.flush()\nbuf = b''\n\
         while not buf.endswith(b'!'):\n    buf += os.read(0, 1024)\n\
         sys.stdout.write('\\x1b[?2004l'); sys.stdout.flush()\n\
         termios.tcsetattr(0, termios.TCSADRAIN, old)\nprint('GOT ' + buf.hex())\n",
    )
    .unwrap();
    let server = start_preset("terminal-use", &[]).await;
    prose(&server, "terminal_create", json!({"cols": 120, "rows": 10})).await;
    prose(
        &server,
        "terminal_type",
        json!({"sessionId": 1, "text": format!("python3 -u {}\n", script.display())}),
    )
    .await;
    let w = prose(
        &server,
        "terminal_wait",
        json!({"sessionId": 1, "pattern": "^READY", "timeoutMs": 20000}),
    )
    .await;
    assert!(w.contains("READY"), "{w}");
    prose(
        &server,
        "terminal_type",
        json!({"sessionId": 1, "text": "safe\u{1b}[201~injected", "paste": true}),
    )
    .await;
    prose(
        &server,
        "terminal_type",
        json!({"sessionId": 1, "text": "!"}),
    )
    .await;
    let w = prose(
        &server,
        "terminal_wait",
        json!({"sessionId": 1, "pattern": "^GOT ", "timeoutMs": 20000}),
    )
    .await;
    let want: String = b"\x1b[200~safeinjected\x1b[201~!"
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    assert!(w.contains(&format!("GOT {want}")), "wanted {want} in {w}");
    server.stop().await;
}

/// Upstream `tests/mcp/command.test.ts` ("run the command, report its exit status, and keep
/// the final screen readable"), with a program whose output ends a second before it exits:
/// the wait waits for the exit, and the wait, the read and the list all give its status
/// (issue 33, terminal-use).
#[tokio::test]
async fn a_command_sessions_wait_read_and_list_give_its_exit_status() {
    let server = start_preset("terminal-use", &[]).await;
    prose(
        &server,
        "terminal_create",
        json!({"command": "echo 'failed: 2 errors'; exec </dev/null >/dev/null 2>&1; sleep 1; exit 3"}),
    )
    .await;
    let w = prose(
        &server,
        "terminal_wait",
        json!({"sessionId": 1, "timeoutMs": 20000}),
    )
    .await;
    assert!(
        w.starts_with("The command exited (exit code 3)"),
        "[exit status in terminal_wait] {w}"
    );
    let r = prose(&server, "terminal_read", json!({"sessionId": 1})).await;
    assert!(
        r.contains("The command exited (exit code 3)") && r.contains("failed: 2 errors"),
        "[exit status in terminal_read] {r}"
    );
    let l = prose(&server, "terminal_list", json!({})).await;
    assert!(
        l.contains("EXITED (exit code 3)"),
        "[exit status in terminal_list] {l}"
    );
    server.stop().await;
}

/// Upstream `tests/mcp/command.test.ts` ("talk to the program directly") and
/// `tests/mcp/batch.test.ts` ("stops when the process exits partway through"): Ctrl+D ends
/// `cat`, and the press and the batch notice it at once (issue 33, terminal-use).
#[tokio::test]
async fn an_exit_during_a_press_or_a_batch_is_reported() {
    let server = start_preset("terminal-use", &[]).await;
    prose(&server, "terminal_create", json!({"command": "cat -n"})).await;
    let t = prose(
        &server,
        "terminal_type",
        json!({"sessionId": 1, "text": "hello\n"}),
    )
    .await;
    assert!(t.contains("1\thello") || t.contains("1  hello"), "{t}");
    let p = prose(
        &server,
        "terminal_press",
        json!({"sessionId": 1, "key": "Ctrl+D"}),
    )
    .await;
    assert!(
        p.contains("The command exited (exit code 0)"),
        "[the press reports the exit] {p}"
    );
    prose(&server, "terminal_create", json!({"command": "cat"})).await;
    let b = server
        .call(
            "terminal_batch",
            json!({"sessionId": 2, "actions": [
                {"type": "type", "text": "line\n"},
                {"type": "press", "key": "Ctrl+D"},
                {"type": "type", "text": "too late\n"},
            ]}),
        )
        .await;
    let b = common::text(&b);
    assert!(
        b.contains("Stopped after action 2 of 3 (press Ctrl+D): the process exited"),
        "[stopped after the exit] {b}"
    );
    assert!(
        b.contains("The command exited (exit code 0)"),
        "[reported] {b}"
    );
    let screen = &b[b.find("Screen (").unwrap_or(0)..];
    assert!(
        !screen.contains("too late"),
        "[nothing typed after the exit] {b}"
    );
    server.stop().await;
}

/// Issue 36: the shell-exit notice's "last screen" is taken after the last byte the shell
/// printed, even when a flood of output right before the exit keeps the reader behind.
#[tokio::test]
async fn the_shell_exit_notice_shows_the_screen_after_the_last_byte() {
    let server = start_preset("terminal-use", &[]).await;
    for round in 0..3 {
        prose(&server, "terminal_create", json!({"cols": 80, "rows": 10})).await;
        let id = round + 1;
        let t = prose(
            &server,
            "terminal_type",
            json!({"sessionId": id, "maxWaitMs": 10000, "text": format!(
                "head -c 300000 /dev/zero | tr '\\0' y; echo; echo last-$((40+{round})); exit\n"
            )}),
        )
        .await;
        assert!(
            t.contains("The shell exited during this call"),
            "[round {round}] {}",
            &t[t.len().saturating_sub(600)..]
        );
        let screen = t
            .split_once("Last screen before the shell exited:")
            .map(|(_, s)| s)
            .unwrap_or("");
        assert!(
            screen.contains(&format!("last-{}", 40 + round)),
            "[round {round}] the last line is missing: {}",
            &t[t.len().saturating_sub(600)..]
        );
    }
    server.stop().await;
}
