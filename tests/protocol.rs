//! The foundation end to end: handshakes in both eras, the tool surface, terminal_extra,
//! argument validation and a server that survives garbage.

mod common;

use common::{Era, RawClient, start, start_with};
use rmcp::model::ProtocolVersion;
use serde_json::{Value, json};

#[tokio::test]
async fn initialize_handshake_reports_termpilot() {
    let server = start().await;
    let info = server.client.peer_info().expect("server info");
    let implementation = info.server_info.as_ref().expect("implementation");
    assert_eq!(implementation.name, "termpilot");
    assert_eq!(implementation.version, env!("CARGO_PKG_VERSION"));
    assert_eq!(info.protocol_version, ProtocolVersion::V_2025_11_25);
    server.stop().await;
}

#[tokio::test]
async fn older_initialize_versions_are_negotiated() {
    for version in ["2024-11-05", "2025-03-26", "2025-06-18"] {
        let mut raw = RawClient::start(&[]);
        let reply = raw.initialize(version).await;
        assert_eq!(reply["result"]["protocolVersion"], version, "{reply}");
        assert_eq!(reply["result"]["serverInfo"]["name"], "termpilot");
        let tools = raw.request(1, "tools/list", json!({})).await;
        assert!(
            tools["result"]["tools"]
                .as_array()
                .is_some_and(|t| !t.is_empty())
        );
        raw.close().await;
    }
}

#[tokio::test]
async fn discover_era_works_without_initialize() {
    let server = start_with(Era::Discover, &[], &[]).await;
    let info = server.client.peer_info().expect("server info");
    assert_eq!(info.protocol_version, ProtocolVersion::V_2026_07_28);
    let implementation = info.server_info.as_ref().expect("implementation");
    assert_eq!(implementation.name, "termpilot");
    let tools = server.client.list_all_tools().await.expect("tools/list");
    assert!(tools.iter().any(|t| t.name == "terminal_list"));
    let listed = server.ok("terminal_list", json!({})).await;
    assert_eq!(listed["count"], 0);
    server.stop().await;
}

#[tokio::test]
async fn raw_discover_lists_supported_versions() {
    let mut raw = RawClient::start(&[]);
    let reply = raw
        .request(
            1,
            "server/discover",
            json!({"_meta": {
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": {},
                "io.modelcontextprotocol/clientInfo": {"name": "raw-test", "version": "0"}
            }}),
        )
        .await;
    let text = reply.to_string();
    assert!(
        text.contains("2026-07-28") && text.contains("2025-11-25"),
        "{reply}"
    );
    assert!(text.contains("termpilot"), "{reply}");
    raw.close().await;
}

#[tokio::test]
async fn every_listed_tool_has_title_annotations_and_schemas() {
    let server = start().await;
    let tools = server.client.list_all_tools().await.expect("tools/list");
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    assert!(names.contains(&"terminal_list"), "{names:?}");
    for tool in &tools {
        assert!(tool.title.is_some(), "{} has no title", tool.name);
        let a = tool.annotations.as_ref().expect("annotations");
        assert!(
            a.read_only_hint.is_some()
                && a.destructive_hint.is_some()
                && a.idempotent_hint.is_some()
                && a.open_world_hint.is_some(),
            "{} lacks explicit annotations",
            tool.name
        );
        assert!(
            tool.output_schema.is_some(),
            "{} has no outputSchema",
            tool.name
        );
        assert_eq!(tool.input_schema.get("type"), Some(&json!("object")));
        assert!(tool.description.as_ref().is_some_and(|d| d.len() < 400));
    }
    let list = tools.iter().find(|t| t.name == "terminal_list").unwrap();
    assert_eq!(
        list.annotations.as_ref().unwrap().read_only_hint,
        Some(true)
    );
    let verbose = &list.input_schema["properties"]["verbose"];
    assert_eq!(verbose["default"], true);
    server.stop().await;
}

#[tokio::test]
async fn core_tools_flag_moves_tools_behind_terminal_extra() {
    // Nothing but terminal_list exists in the direct set when it is not named core.
    let server = start_with(Era::Initialize, &["--core-tools", ""], &[]).await;
    let tools = server.client.list_all_tools().await.unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    assert!(!names.contains(&"terminal_list"), "{names:?}");
    let extra = tools
        .iter()
        .find(|t| t.name == "terminal_extra")
        .expect("meta-tool");
    // Names are grouped by prefix: terminal_{start,…,list,…}.
    let description = extra.description.as_ref().unwrap();
    assert!(
        description.contains("terminal_{") && description.contains("list"),
        "{description}"
    );

    let listing = server.ok("terminal_extra", json!({"list": true})).await;
    let entry = listing["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "terminal_list")
        .expect("terminal_list among the extras");
    assert_eq!(entry["inputSchema"]["type"], "object");
    assert!(entry["description"].as_str().is_some());

    let called = server
        .extra("terminal_list", json!({"verbose": false}))
        .await;
    assert_eq!(called, json!({"sessions": [], "count": 0}));

    // The same validation as a direct call.
    let e = server
        .err(
            "terminal_extra",
            json!({"tool": "terminal_list", "args": {"verbose": "yes"}}),
        )
        .await;
    assert!(e.contains("`verbose`"), "{e}");
    let e = server
        .err(
            "terminal_extra",
            json!({"tool": "no_such_tool", "args": {}}),
        )
        .await;
    assert!(
        e.contains("no_such_tool") && e.contains("terminal_list"),
        "{e}"
    );
    let e = server.err("terminal_extra", json!({})).await;
    assert!(e.contains("list:true"), "{e}");
    server.stop().await;
}

#[tokio::test]
async fn disabled_tools_are_gone_and_empty_means_all_direct() {
    let server = start_with(
        Era::Initialize,
        &[],
        &[("TERMPILOT_DISABLED_TOOLS", "terminal_list")],
    )
    .await;
    let tools = server.client.list_all_tools().await.unwrap();
    assert!(tools.iter().all(|t| t.name != "terminal_list"));
    let e = server.err("terminal_list", json!({})).await;
    assert!(e.contains("disabled"), "{e}");
    server.stop().await;

    let server = start_with(Era::Initialize, &["--disabled-tools", ""], &[]).await;
    let tools = server.client.list_all_tools().await.unwrap();
    assert!(tools.iter().any(|t| t.name == "terminal_list"));
    assert!(tools.iter().all(|t| t.name != "terminal_extra"));
    server.stop().await;
}

#[tokio::test]
async fn unknown_tool_in_config_is_refused_at_start() {
    let state = tempfile::tempdir().unwrap();
    let out = common::command(state.path(), &["--core-tools", "terminal_nope"])
        .stdin(std::process::Stdio::null())
        .output()
        .await
        .unwrap();
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("terminal_nope") && stderr.contains("terminal_list"),
        "{stderr}"
    );
    assert!(out.stdout.is_empty(), "nothing but protocol on stdout");
}

#[tokio::test]
async fn unknown_tool_is_a_protocol_error_naming_it() {
    let mut raw = RawClient::start(&[]);
    raw.initialize("2025-11-25").await;
    let reply = raw
        .request(
            1,
            "tools/call",
            json!({"name": "terminal_teleport", "arguments": {}}),
        )
        .await;
    assert_eq!(reply["error"]["code"], -32602, "{reply}");
    assert!(
        reply["error"]["message"]
            .as_str()
            .unwrap()
            .contains("terminal_teleport")
    );
    raw.close().await;
}

#[tokio::test]
async fn invalid_arguments_name_the_field() {
    let server = start().await;
    let e = server.err("terminal_list", json!({"verbose": 3})).await;
    assert!(
        e.contains("`verbose`") && e.contains("terminal_list"),
        "{e}"
    );
    let e = server.err("terminal_list", json!({"verbos": true})).await;
    assert!(e.contains("unknown field `verbos`"), "{e}");
    // The server is unharmed.
    let ok = server.ok("terminal_list", json!({})).await;
    assert_eq!(ok["count"], 0);
    server.stop().await;
}

#[tokio::test]
async fn garbage_on_stdin_gets_a_parse_error_and_the_server_goes_on() {
    let mut raw = RawClient::start(&[]);
    raw.initialize("2025-11-25").await;
    raw.send("{this is not json").await;
    let reply = raw.recv().await;
    assert_eq!(reply["error"]["code"], -32700, "{reply}");
    assert_eq!(reply["id"], Value::Null);
    raw.send("\u{1b}[A binary-ish \u{7f} junk").await;
    assert_eq!(raw.recv().await["error"]["code"], -32700);
    // Well-formed JSON that is not a JSON-RPC message is an invalid request.
    raw.send(r#"{"hello": "world"}"#).await;
    assert_eq!(raw.recv().await["error"]["code"], -32600);

    let reply = raw
        .request(
            7,
            "tools/call",
            json!({"name": "terminal_list", "arguments": {}}),
        )
        .await;
    assert_eq!(reply["result"]["structuredContent"]["count"], 0, "{reply}");
    raw.close().await;
}

#[tokio::test]
async fn tools_list_payload_is_small() {
    let mut raw = RawClient::start(&[]);
    raw.initialize("2025-11-25").await;
    let reply = raw.request(1, "tools/list", json!({})).await;
    let bytes = reply["result"].to_string().len();
    assert!(
        bytes <= 6000,
        "tools/list is {bytes} bytes, above the 6 KB budget"
    );
    raw.close().await;
}
