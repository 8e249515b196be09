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

    recorder.0.lock().unwrap().clear();
    call(
        &client,
        "terminal_exec",
        json!({"sessionId": id, "command": "sleep 2.5"}),
        None,
    )
    .await;
    assert!(
        recorder.0.lock().unwrap().is_empty(),
        "no token, no progress"
    );
    client.cancel().await.unwrap();
}
