//! Sessions, jobs and the skill as MCP resources, end to end over stdio: list, read (text
//! and PNG blob), list-changed after a start and a stop, and reads that change nothing.

mod common;

use std::process::Stdio;

use base64::Engine as _;
use rmcp::model::{ReadResourceRequestParams, ResourceContents};
use rmcp::service::{NotificationContext, RunningService};
use rmcp::transport::TokioChildProcess;
use rmcp::{ClientHandler, RoleClient, ServiceExt};
use serde_json::json;
use tokio::sync::watch;

use common::TEST_TIMEOUT;

/// A client that counts `notifications/resources/list_changed`.
#[derive(Clone)]
struct Counting(watch::Sender<u64>);

impl ClientHandler for Counting {
    async fn on_resource_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.0.send_modify(|n| *n += 1);
    }
}

struct Client {
    service: RunningService<RoleClient, Counting>,
    changes: watch::Receiver<u64>,
    _state: tempfile::TempDir,
}

async fn start() -> Client {
    let state = tempfile::tempdir().unwrap();
    let (transport, _) = TokioChildProcess::builder(common::command(state.path(), &[]))
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    let (tx, changes) = watch::channel(0);
    let service = tokio::time::timeout(TEST_TIMEOUT, Counting(tx).serve(transport))
        .await
        .expect("initialize in time")
        .expect("initialize");
    Client {
        service,
        changes,
        _state: state,
    }
}

impl Client {
    async fn call(&self, name: &str, args: serde_json::Value) -> serde_json::Value {
        let params = rmcp::model::CallToolRequestParams::new(name.to_string())
            .with_arguments(args.as_object().unwrap().clone());
        let result = tokio::time::timeout(TEST_TIMEOUT, self.service.call_tool(params))
            .await
            .unwrap()
            .unwrap();
        assert_ne!(
            result.is_error,
            Some(true),
            "{name}: {}",
            common::text(&result)
        );
        result.structured_content.unwrap()
    }

    async fn uris(&self) -> Vec<String> {
        let listed = tokio::time::timeout(TEST_TIMEOUT, self.service.list_resources(None))
            .await
            .unwrap()
            .unwrap();
        listed.resources.into_iter().map(|r| r.uri).collect()
    }

    async fn read(&self, uri: &str) -> Result<Vec<ResourceContents>, String> {
        tokio::time::timeout(
            TEST_TIMEOUT,
            self.service
                .read_resource(ReadResourceRequestParams::new(uri.to_string())),
        )
        .await
        .unwrap()
        .map(|r| r.contents)
        .map_err(|e| e.to_string())
    }

    /// Waits for the list-changed count to pass `seen`; the new count.
    async fn changed_after(&mut self, seen: u64) -> u64 {
        let n = tokio::time::timeout(TEST_TIMEOUT, self.changes.wait_for(|n| *n > seen))
            .await
            .expect("notifications/resources/list_changed in time")
            .unwrap();
        *n
    }
}

#[tokio::test]
async fn sessions_are_resources_and_their_coming_and_going_is_announced() {
    let mut client = start().await;
    let caps = client.service.peer_info().unwrap().capabilities.clone();
    let resources = caps.resources.expect("the resources capability");
    assert_eq!(resources.list_changed, Some(true));

    let before = client.uris().await;
    assert!(
        before.contains(&"skill://termpilot/SKILL.md".to_string()),
        "{before:?}"
    );
    let skill = client.read("skill://termpilot/SKILL.md").await.unwrap();
    match &skill[0] {
        ResourceContents::TextResourceContents {
            text, mime_type, ..
        } => {
            assert!(text.contains("termpilot"));
            assert_eq!(mime_type.as_deref(), Some("text/markdown"));
        }
        other => panic!("the skill is text: {other:?}"),
    }

    let seen = *client.changes.borrow();
    let id = client
        .call("terminal_start", json!({"env": {"PS1": "$ "}}))
        .await["sessionId"]
        .as_str()
        .unwrap()
        .to_string();
    let seen = client.changed_after(seen).await;
    let screen_uri = format!("termpilot://sessions/{id}/screen");
    let shot_uri = format!("termpilot://sessions/{id}/screenshot");
    let now = client.uris().await;
    assert!(
        now.contains(&screen_uri) && now.contains(&shot_uri),
        "{now:?}"
    );

    client
        .call(
            "terminal_exec",
            json!({"sessionId": id, "command": "echo resource-$((6*7))", "timeout": 20000}),
        )
        .await;
    // A read of output since the last cursor, before and after the resource reads, sees the
    // same thing: resource reads move no cursor.
    match &client.read(&screen_uri).await.unwrap()[0] {
        ResourceContents::TextResourceContents { text, .. } => {
            assert!(text.contains("resource-42"), "{text}")
        }
        other => panic!("the screen is text: {other:?}"),
    }
    match &client.read(&shot_uri).await.unwrap()[0] {
        ResourceContents::BlobResourceContents {
            blob, mime_type, ..
        } => {
            assert_eq!(mime_type.as_deref(), Some("image/png"));
            let png = base64::engine::general_purpose::STANDARD
                .decode(blob)
                .unwrap();
            assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
        }
        other => panic!("the screenshot is a blob: {other:?}"),
    }

    client.call("terminal_stop", json!({"sessionId": id})).await;
    client.changed_after(seen).await;
    let after = client.uris().await;
    assert!(!after.contains(&screen_uri), "{after:?}");
    let gone = client.read(&screen_uri).await.unwrap_err();
    assert!(gone.contains("No live session"), "{gone}");
    let unknown = client.read("termpilot://nothing").await.unwrap_err();
    assert!(unknown.contains("resources/list"), "{unknown}");
    let _ = client.service.cancel().await;
}

#[tokio::test]
async fn a_resource_read_moves_no_read_cursor() {
    let client = start().await;
    let id = client
        .call("terminal_start", json!({"env": {"PS1": "$ "}}))
        .await["sessionId"]
        .as_str()
        .unwrap()
        .to_string();
    client
        .call(
            "terminal_write",
            json!({"sessionId": id, "data": "echo cursor-$((1+1)); echo after-$((3+3))\r", "returnOutput": "none"}),
        )
        .await;
    client
        .call(
            "terminal_wait",
            json!({"sessionId": id, "pattern": "cursor-2"}),
        )
        .await;
    let uri = format!("termpilot://sessions/{id}/screen");
    // The wait left the cursor just after `cursor-2`; the resource read must not move it.
    client.read(&uri).await.unwrap();
    let read = client
        .call("terminal_read", json!({"sessionId": id, "timeout": 2000}))
        .await;
    assert!(
        read["output"].as_str().unwrap().contains("after-6"),
        "the unread output is still unread: {read}"
    );
    let _ = client.service.cancel().await;
}

#[tokio::test]
async fn job_logs_are_resources() {
    let mut client = start().await;
    let seen = *client.changes.borrow();
    let started = client
        .call(
            "terminal_extra",
            json!({"tool": "job_start", "args": {"command": "echo job-log-line"}}),
        )
        .await;
    let job = started["jobId"]
        .as_str()
        .or(started["jobId"].as_str())
        .unwrap_or_else(|| panic!("{started}"))
        .to_string();
    client.changed_after(seen).await;
    let uri = format!("termpilot://jobs/{job}/log");
    assert!(client.uris().await.contains(&uri));
    client
        .call(
            "terminal_extra",
            json!({"tool": "job_wait", "args": {"jobId": job, "timeoutMs": 20000}}),
        )
        .await;
    match &client.read(&uri).await.unwrap()[0] {
        ResourceContents::TextResourceContents { text, .. } => {
            assert!(text.contains("job-log-line"), "{text}")
        }
        other => panic!("a log is text: {other:?}"),
    }
    let _ = client.service.cancel().await;
}
