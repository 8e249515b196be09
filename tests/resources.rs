//! Sessions, jobs and the skill as MCP resources, end to end: list, read (text and PNG blob),
//! list-changed after a start and a stop (over stdio and HTTP, 2025 sessions and 2026-07-28
//! `subscriptions/listen` streams), and reads that change nothing.

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

/// The list-changed announcements one client sees, whichever way it asked for them.
enum Announced {
    /// A 2025 client (stdio or HTTP with `Mcp-Session-Id`): through its handler; the count
    /// of announcements already waited for.
    Session(Client, u64),
    /// A 2026-07-28 client: on its `subscriptions/listen` stream.
    Stream {
        service: RunningService<RoleClient, Counting>,
        subscription: Box<rmcp::service::Subscription>,
    },
}

impl Announced {
    async fn call(&self, name: &str, args: serde_json::Value) -> serde_json::Value {
        let service = match self {
            Announced::Session(c, _) => &c.service,
            Announced::Stream { service, .. } => service,
        };
        let params = rmcp::model::CallToolRequestParams::new(name.to_string())
            .with_arguments(args.as_object().unwrap().clone());
        let result = tokio::time::timeout(TEST_TIMEOUT, service.call_tool(params))
            .await
            .unwrap()
            .unwrap();
        assert_ne!(result.is_error, Some(true), "{}", common::text(&result));
        result.structured_content.unwrap()
    }

    /// Waits (bounded) for the next `notifications/resources/list_changed`.
    async fn next_change(&mut self) {
        match self {
            Announced::Session(client, seen) => *seen = client.changed_after(*seen).await,
            Announced::Stream { subscription, .. } => loop {
                let next = tokio::time::timeout(TEST_TIMEOUT, subscription.next())
                    .await
                    .expect("notifications/resources/list_changed in time")
                    .expect("the stream carries notifications")
                    .expect("the stream stays open");
                if matches!(
                    next,
                    rmcp::model::ServerNotification::ResourceListChangedNotification(_)
                ) {
                    return;
                }
            },
        }
    }

    async fn close(self) {
        match self {
            Announced::Session(c, _) => {
                let _ = c.service.cancel().await;
            }
            Announced::Stream {
                service,
                subscription,
            } => {
                drop(subscription);
                let _ = service.cancel().await;
            }
        }
    }
}

/// A 2026-07-28 client over `transport` with a `subscriptions/listen` stream for resource
/// list changes, acknowledged.
async fn listening<T, E, A>(transport: T) -> Announced
where
    T: rmcp::transport::IntoTransport<RoleClient, E, A>,
    E: std::error::Error + Send + Sync + 'static,
{
    use rmcp::model::{ProtocolVersion, SubscriptionFilter};
    use rmcp::service::{ClientLifecycleMode, ClientServiceExt};
    let (tx, _) = watch::channel(0);
    let service = tokio::time::timeout(
        TEST_TIMEOUT,
        Counting(tx).serve_with_lifecycle(
            transport,
            ClientLifecycleMode::Discover {
                preferred_versions: vec![ProtocolVersion::V_2026_07_28],
            },
        ),
    )
    .await
    .expect("discover in time")
    .expect("discover");
    let subscription = tokio::time::timeout(
        TEST_TIMEOUT,
        service.peer().listen(
            SubscriptionFilter::builder()
                .resources_list_changed()
                .build(),
        ),
    )
    .await
    .expect("subscriptions/listen acknowledged in time")
    .expect("subscriptions/listen");
    assert_eq!(
        subscription.acknowledged().resources_list_changed,
        Some(true),
        "resource list changes are accepted"
    );
    Announced::Stream {
        service,
        subscription: Box::new(subscription),
    }
}

/// A 2025 client over Streamable HTTP that counts list changes (its handler).
async fn http_session(server: &common::http::HttpServer) -> Announced {
    let (tx, changes) = watch::channel(0);
    let service = tokio::time::timeout(TEST_TIMEOUT, Counting(tx).serve(http_transport(server)))
        .await
        .expect("initialize in time")
        .expect("initialize over HTTP");
    Announced::Session(
        Client {
            service,
            changes,
            _state: tempfile::tempdir().unwrap(),
        },
        0,
    )
}

fn http_transport(
    server: &common::http::HttpServer,
) -> rmcp::transport::StreamableHttpClientTransport<reqwest::Client> {
    use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
    let config = StreamableHttpClientTransportConfig::with_uri(format!("{}/mcp", server.url))
        .auth_header(server.token.clone());
    rmcp::transport::StreamableHttpClientTransport::with_client(reqwest::Client::new(), config)
}

/// A start and a stop by `agent` are announced to every client in `watchers` (and to the
/// agent itself).
async fn start_and_stop_are_announced(mut agent: Announced, mut watchers: Vec<Announced>) {
    let id = agent
        .call("terminal_start", json!({"env": {"PS1": "$ "}}))
        .await["sessionId"]
        .as_str()
        .unwrap()
        .to_string();
    agent.next_change().await;
    for w in &mut watchers {
        w.next_change().await;
    }
    agent.call("terminal_stop", json!({"sessionId": id})).await;
    agent.next_change().await;
    for w in &mut watchers {
        w.next_change().await;
    }
    for w in watchers {
        w.close().await;
    }
    agent.close().await;
}

#[tokio::test]
async fn list_changes_reach_a_stdio_client_of_the_stateless_revision_that_listens() {
    let state = tempfile::tempdir().unwrap();
    let (transport, _) = TokioChildProcess::builder(common::command(state.path(), &[]))
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    let client = listening(transport).await;
    start_and_stop_are_announced(client, Vec::new()).await;
}

#[tokio::test]
async fn list_changes_reach_http_clients_of_both_eras() {
    let server = common::http::start().await;
    let agent = http_session(&server).await;
    let watchers = vec![
        http_session(&server).await,
        listening(http_transport(&server)).await,
    ];
    start_and_stop_are_announced(agent, watchers).await;
    server.terminate().await;
}

/// Reads a skill through the Skills extension and checks its manifest against the bytes that
/// `resources/read` returns (what a host does before it loads a skill).
async fn verified_skill(
    client: &rmcp::Peer<RoleClient>,
    want_name: &str,
) -> (rmcp::model::Skill, String) {
    use rmcp::model::{GetSkillRequestParams, SkillResources};
    let caps = client.peer_info().unwrap().capabilities.clone();
    assert!(
        caps.supports_skills(),
        "the skills extension is declared: {caps:?}"
    );
    let listed = client.list_skills(None).await.expect("skills/list");
    assert_eq!(listed.skills.len(), 1, "{listed:?}");
    let skill = listed.skills[0].clone();
    assert_eq!(skill.name(), want_name);
    assert_eq!(skill.uri, format!("skill://{want_name}/SKILL.md"));
    assert!(!skill.frontmatter.description.is_empty());
    let got = client
        .get_skill(GetSkillRequestParams::new(skill.uri.clone()))
        .await
        .expect("skills/get");
    assert_eq!(got.skill, skill);
    let read = client
        .read_resource(ReadResourceRequestParams::new(skill.uri.clone()))
        .await
        .expect("resources/read");
    let text = match &read.contents[0] {
        ResourceContents::TextResourceContents { text, .. } => text.clone(),
        other => panic!("the skill is text: {other:?}"),
    };
    let SkillResources::Files(files) = &skill.resources else {
        panic!("a fixed skill lists its files: {skill:?}");
    };
    assert_eq!(files[0].uri, skill.uri, "SKILL.md first");
    files[0]
        .verify(text.as_bytes())
        .expect("digest and size match the read");
    // Every other file of the skill (its references) is served with its manifest's digest.
    for file in &files[1..] {
        let read = client
            .read_resource(ReadResourceRequestParams::new(file.uri.clone()))
            .await
            .expect("resources/read of a skill file");
        let ResourceContents::TextResourceContents {
            text, mime_type, ..
        } = &read.contents[0]
        else {
            panic!("a skill file is text: {read:?}");
        };
        assert_eq!(mime_type.as_deref(), Some("text/markdown"), "{}", file.uri);
        file.verify(text.as_bytes())
            .unwrap_or_else(|e| panic!("{}: {e}", file.uri));
    }
    let missing = client
        .get_skill(GetSkillRequestParams::new("skill://nowhere/SKILL.md"))
        .await
        .expect_err("an unknown skill is an error");
    assert!(missing.to_string().contains("skills/list"), "{missing}");
    (skill, text)
}

#[tokio::test]
async fn termpilots_skill_is_served_through_the_skills_extension_with_its_digest() {
    let server = common::start().await;
    let (_, text) = verified_skill(&server.client, "termpilot").await;
    assert!(text.starts_with("---\nname: termpilot\n"));
    server.stop().await;
}

#[tokio::test]
async fn the_terminal_use_preset_serves_only_its_seeds_skill() {
    let server =
        common::start_with(common::Era::Initialize, &["--compat", "terminal-use"], &[]).await;
    let (_, text) = verified_skill(&server.client, "terminal-use").await;
    assert!(text.contains("terminal_create"));
    let listed = server.client.list_resources(None).await.unwrap();
    let uris: Vec<&str> = listed.resources.iter().map(|r| r.uri.as_str()).collect();
    // upstream's skill: SKILL.md and the references it links to; no sessions or jobs.
    assert_eq!(
        uris,
        [
            "skill://terminal-use/SKILL.md",
            "skill://terminal-use/references/keys.md",
            "skill://terminal-use/references/recipes.md",
            "skill://terminal-use/references/troubleshooting.md"
        ],
        "{uris:?}"
    );
    server.stop().await;
    // The presets whose seeds have no skill serve tools only.
    for preset in ["smart-terminal", "cowork", "director-shell"] {
        let server = common::start_with(common::Era::Initialize, &["--compat", preset], &[]).await;
        let caps = server.client.peer_info().unwrap().capabilities.clone();
        assert!(
            caps.resources.is_none() && !caps.supports_skills(),
            "{preset}: {caps:?}"
        );
        server.stop().await;
    }
}
