//! Clear errors with the right blame: numbers out of range in words, NUL bytes and bad `env`
//! keys named by field, duplicate trigger ids, and patterns over the 64 KiB limit — each
//! refused before anything runs, through the real binary.

mod common;

use common::start;
use serde_json::json;

#[tokio::test]
async fn numbers_serde_refuses_say_the_range_not_the_rust_type() {
    let server = start().await;
    for bad in [json!(-1), json!(1.5), json!("5")] {
        let e = server
            .err(
                "terminal_wait",
                json!({"sessionId": "nobody", "timeout": bad}),
            )
            .await;
        assert!(
            e.contains("`timeout`") && e.contains("a whole number from 0 to 600000"),
            "{bad}: {e}"
        );
        assert!(!e.contains("u64"), "{e}");
    }
    let e = server
        .err("terminal_run", json!({"cmd": "true", "timeout": 0.5}))
        .await;
    assert!(e.contains("a whole number from 1 to 600000"), "{e}");
    server.stop().await;
}

#[tokio::test]
async fn nul_bytes_in_args_and_env_name_the_field() {
    let server = start().await;
    let e = server
        .err(
            "terminal_run",
            json!({"cmd": "echo", "args": ["ok", "a\u{0}b"]}),
        )
        .await;
    assert!(e.contains("`args[1]`") && e.contains("NUL"), "{e}");
    let e = server
        .err(
            "terminal_run",
            json!({"cmd": "env", "env": {"A": "x\u{0}y"}}),
        )
        .await;
    assert!(e.contains("`env.A`") && e.contains("NUL"), "{e}");
    let e = server
        .err("terminal_start", json!({"env": {"A": "x\u{0}y"}}))
        .await;
    assert!(
        e.contains("`env.A`") && !e.contains("check the shell"),
        "{e}"
    );
    let e = server
        .err("terminal_run", json!({"cmd": "ec\u{0}ho"}))
        .await;
    assert!(e.contains("`cmd`") && e.contains("NUL"), "{e}");
    // Nothing was started.
    let listed = server.ok("terminal_list", json!({})).await;
    assert_eq!(listed["count"], 0);
    server.stop().await;
}

#[tokio::test]
async fn env_keys_with_equals_or_empty_are_refused() {
    let server = start().await;
    for key in ["A=B", ""] {
        let e = server
            .err("terminal_run", json!({"cmd": "env", "env": {key: "x"}}))
            .await;
        assert!(e.contains("`env` key") && e.contains("NAME"), "{e}");
        let e = server
            .err("terminal_start", json!({"env": {key: "x"}}))
            .await;
        assert!(e.contains("`env` key"), "{e}");
    }
    let listed = server.ok("terminal_list", json!({})).await;
    assert_eq!(listed["count"], 0);
    server.stop().await;
}

#[tokio::test]
async fn duplicate_trigger_ids_are_refused() {
    let server = start().await;
    let id = server.ok("terminal_start", json!({})).await["sessionId"]
        .as_str()
        .unwrap()
        .to_string();
    let e = server
        .extra_err(
            "terminal_watch",
            json!({"sessionId": id, "timeout": 100, "triggers": [
                {"id": "done", "pattern": "x"}, {"id": "done", "pattern": "y"}
            ]}),
        )
        .await;
    assert!(
        e.contains("`triggers[1].id`") && e.contains("triggers[0]"),
        "{e}"
    );
    server.stop().await;
}

#[tokio::test]
async fn patterns_over_64_kib_are_refused() {
    let server = start().await;
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.txt"), "needle\n").unwrap();
    let huge = "n".repeat(1 << 20);
    let e = server
        .extra_err(
            "grep_files",
            json!({"pattern": huge, "path": dir.path().to_str().unwrap()}),
        )
        .await;
    assert!(e.contains("pattern`") && e.contains("65536 bytes"), "{e}");
    let long = "n".repeat((64 << 10) + 1);
    let e = server
        .err(
            "terminal_wait",
            json!({"sessionId": "nobody", "pattern": long}),
        )
        .await;
    assert!(e.contains("`pattern`") && e.contains("64 KiB"), "{e}");
    let e = server
        .extra_err(
            "terminal_watch",
            json!({"sessionId": "nobody", "triggers": [{"id": "a", "pattern": long}]}),
        )
        .await;
    assert!(e.contains("triggers[0].pattern`"), "{e}");
    // A pattern within the limit still works.
    let found = server
        .extra(
            "grep_files",
            json!({"pattern": "needle", "path": dir.path().to_str().unwrap()}),
        )
        .await;
    assert!(found.to_string().contains("needle"), "{found}");
    server.stop().await;
}
