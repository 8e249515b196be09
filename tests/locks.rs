//! Locks end to end between two real servers sharing one state dir: contention and a
//! prompt hand-over, recovery of a dead owner's lock, wrong tokens that change nothing.
#![cfg(unix)]

mod common;

use std::sync::Arc;
use std::time::{Duration, Instant};

use common::start_in;
use serde_json::json;

fn call(tool: &str, args: serde_json::Value) -> serde_json::Value {
    json!({"tool": tool, "args": args})
}

#[tokio::test]
async fn two_servers_contend_and_the_waiter_gets_the_lock_on_release() {
    let state = tempfile::tempdir().unwrap();
    let a = start_in(state.path(), &[]).await;
    let b = Arc::new(start_in(state.path(), &[]).await);

    let held = a
        .extra(
            "lock_acquire",
            json!({"name": "build", "note": "agent A builds"}),
        )
        .await;
    let token_a = held["token"].as_str().unwrap().to_string();
    assert_eq!(held["name"], "build");
    assert_eq!(token_a.len(), 36, "a UUID: {token_a}");

    let e = b
        .err(
            "terminal_extra",
            call("lock_acquire", json!({"name": "build"})),
        )
        .await;
    assert!(
        e.contains(&format!("pid {}", a.pid)) && e.contains("agent A builds") && e.contains(" s;"),
        "{e}"
    );

    let waiter = {
        let b = b.clone();
        tokio::spawn(async move {
            let got = b
                .extra(
                    "lock_acquire",
                    json!({"name": "build", "waitMs": 20000, "note": "B"}),
                )
                .await;
            (got, Instant::now())
        })
    };
    // Give B's wait a head start; correctness does not depend on it.
    tokio::time::sleep(Duration::from_millis(300)).await;
    let released = a
        .extra("lock_release", json!({"name": "build", "token": token_a}))
        .await;
    let released_at = Instant::now();
    assert_eq!(released["released"], true);
    let (got, got_at) = waiter.await.unwrap();
    assert_ne!(got["token"], token_a.as_str());
    assert!(got["waitedMs"].as_u64().unwrap() > 0, "{got}");
    eprintln!(
        "lock hand-over: the waiting server answered {:.1} ms after the release returned",
        got_at.saturating_duration_since(released_at).as_secs_f64() * 1000.0
    );
    // A's old token no longer releases B's lock.
    let e = a
        .err(
            "terminal_extra",
            call("lock_release", json!({"name": "build", "token": token_a})),
        )
        .await;
    assert!(e.contains("does not hold"), "{e}");
    a.stop().await;
    Arc::into_inner(b).expect("only owner").stop().await;
}

#[tokio::test]
async fn a_lock_whose_owner_died_is_recovered() {
    let state = tempfile::tempdir().unwrap();
    let a = start_in(state.path(), &[]).await;
    let b = start_in(state.path(), &[]).await;
    let dead_pid = a.pid;
    a.extra("lock_acquire", json!({"name": "deploy", "note": "crashes"}))
        .await;
    a.crash().await;
    let got = b
        .extra("lock_acquire", json!({"name": "deploy", "waitMs": 10000}))
        .await;
    assert_eq!(got["recovered"]["pid"], dead_pid, "{got}");
    assert_eq!(got["recovered"]["note"], "crashes");
    b.extra(
        "lock_release",
        json!({"name": "deploy", "token": got["token"]}),
    )
    .await;
    b.stop().await;
}

#[tokio::test]
async fn wrong_tokens_and_bad_names_change_nothing() {
    let state = tempfile::tempdir().unwrap();
    let server = start_in(state.path(), &[]).await;
    let held = server
        .extra("lock_acquire", json!({"name": "db.migrate-1"}))
        .await;
    let token = held["token"].as_str().unwrap();
    let e = server
        .err(
            "terminal_extra",
            call(
                "lock_release",
                json!({"name": "db.migrate-1", "token": "wrong"}),
            ),
        )
        .await;
    assert!(e.contains("does not hold"), "{e}");
    // Still held: another acquire fails, and the right token still releases it.
    server
        .err(
            "terminal_extra",
            call("lock_acquire", json!({"name": "db.migrate-1"})),
        )
        .await;
    server
        .extra(
            "lock_release",
            json!({"name": "db.migrate-1", "token": token}),
        )
        .await;
    let e = server
        .err(
            "terminal_extra",
            call(
                "lock_release",
                json!({"name": "db.migrate-1", "token": token}),
            ),
        )
        .await;
    assert!(e.contains("not held"), "{e}");
    for bad in ["a/b", "..", "has space"] {
        let e = server
            .err("terminal_extra", call("lock_acquire", json!({"name": bad})))
            .await;
        assert!(e.contains("not a valid lock name"), "{bad}: {e}");
    }
    let e = server
        .err(
            "terminal_extra",
            call("lock_acquire", json!({"name": "x", "waitMs": 600001})),
        )
        .await;
    assert!(e.contains("waitMs"), "{e}");
    let e = server
        .err(
            "terminal_extra",
            call("lock_acquire", json!({"name": "x".repeat(65)})),
        )
        .await;
    assert!(e.contains("name"), "{e}");
    server.stop().await;
}
