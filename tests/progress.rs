//! Progress notifications: a long terminal_exec / terminal_wait sends them every few
//! seconds when the client sent a progress token, and none when it did not.

mod common;

use std::sync::{Arc, Mutex};

use rmcp::model::{
    CallToolRequestParams, NumberOrString, ProgressNotificationParam, ProgressToken,
    RequestMetaObject,
};
use rmcp::service::{NotificationContext, RunningService};
use rmcp::transport::TokioChildProcess;
use rmcp::{ClientHandler, RoleClient, ServiceExt};
use serde_json::json;

/// A client that records the progress notifications it receives.
#[derive(Clone, Default)]
struct Recorder(Arc<Mutex<Vec<ProgressNotificationParam>>>);

impl ClientHandler for Recorder {
    async fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _: NotificationContext<RoleClient>,
    ) {
        self.0.lock().unwrap().push(params);
    }
}

async fn call(
    client: &RunningService<RoleClient, Recorder>,
    name: &str,
    args: serde_json::Value,
    token: Option<i64>,
) -> serde_json::Value {
    let mut params = CallToolRequestParams::new(name.to_string())
        .with_arguments(args.as_object().unwrap().clone());
    if let Some(t) = token {
        let mut meta = RequestMetaObject::default();
        meta.set_progress_token(ProgressToken(NumberOrString::Number(t)));
        params.meta = Some(meta);
    }
    let result = tokio::time::timeout(common::TEST_TIMEOUT, client.call_tool(params))
        .await
        .expect("answered in time")
        .expect("call");
    assert_ne!(result.is_error, Some(true), "{result:?}");
    result.structured_content.unwrap()
}

#[tokio::test]
async fn long_calls_report_progress_when_asked() {
    let state = tempfile::tempdir().unwrap();
    let recorder = Recorder::default();
    let transport = TokioChildProcess::new(common::command(state.path(), &[])).unwrap();
    let client = recorder.clone().serve(transport).await.unwrap();
    let started = call(&client, "terminal_start", json!({"shell": "bash"}), None).await;
    let id = started["sessionId"].as_str().unwrap();

    let r = call(
        &client,
        "terminal_exec",
        json!({"sessionId": id, "command": "echo tick; sleep 4.5"}),
        Some(7),
    )
    .await;
    assert_eq!(r["exitCode"], 0);
    let seen = recorder.0.lock().unwrap().clone();
    assert!(seen.len() >= 2, "one report every 2 s: {seen:?}");
    // rmcp's client sends a token of its own; every report carries the one it sent.
    assert!(
        seen.iter()
            .all(|p| p.progress_token == seen[0].progress_token),
        "{seen:?}"
    );
    assert!(
        seen.windows(2).all(|w| w[1].progress > w[0].progress),
        "progress only grows"
    );
    let message = seen[0].message.clone().unwrap_or_default();
    assert!(
        message.contains("elapsed") && message.contains("tick"),
        "{message}"
    );

    client.cancel().await.unwrap();
}

#[tokio::test]
async fn no_progress_without_a_token() {
    // rmcp's client always sends a token, so this speaks raw JSON-RPC.
    let mut raw = common::RawClient::start(&[]);
    raw.initialize("2025-11-25").await;
    let started = raw
        .request(
            1,
            "tools/call",
            json!({"name": "terminal_start", "arguments": {"shell": "bash"}}),
        )
        .await;
    let id = started["result"]["structuredContent"]["sessionId"].clone();
    let call = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": "terminal_exec", "arguments": {"sessionId": id, "command": "sleep 2.5"}}});
    raw.send(&call.to_string()).await;
    loop {
        let line = raw.recv().await;
        assert_ne!(line["method"], "notifications/progress", "{line}");
        if line["id"] == 2 {
            assert_eq!(line["result"]["structuredContent"]["exitCode"], 0, "{line}");
            break;
        }
    }
    raw.close().await;
}
