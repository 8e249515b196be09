//! Helpers for the `--compat` conformance suites (`tests/compat_*.rs`): start a preset,
//! read its tool list and schemas, and check a table of cases, each naming the section of
//! the seed document it comes from.

use std::collections::BTreeMap;

use rmcp::model::Tool;
use serde_json::Value;

use super::{Era, Server, TEST_TIMEOUT, start_with};

/// Starts `termpilot --compat <preset>` with `envs`.
pub async fn start_preset(preset: &str, envs: &[(&str, &str)]) -> Server {
    start_with(Era::Initialize, &["--compat", preset], envs).await
}

/// The tools the server lists, by name.
pub async fn tools(server: &Server) -> BTreeMap<String, Tool> {
    let listed = tokio::time::timeout(TEST_TIMEOUT, server.client.list_all_tools())
        .await
        .expect("tools/list in time")
        .expect("tools/list");
    listed
        .into_iter()
        .map(|t| (t.name.to_string(), t))
        .collect()
}

/// One tool's parameters as the seed documents them: names, required ones, defaults.
pub struct Params {
    pub seed: &'static str,
    pub tool: &'static str,
    pub params: &'static [&'static str],
    pub required: &'static [&'static str],
    pub defaults: &'static [(&'static str, &'static str)],
}

/// Checks every row of `table` against the listed schemas: exactly those parameter names,
/// those required, and those defaults (given as JSON text).
pub fn check_params(listed: &BTreeMap<String, Tool>, table: &[Params]) {
    for row in table {
        let tool = listed
            .get(row.tool)
            .unwrap_or_else(|| panic!("[{}] {} is not listed", row.seed, row.tool));
        let schema = &tool.input_schema;
        let mut names: Vec<&str> = schema
            .get("properties")
            .and_then(Value::as_object)
            .map(|p| p.keys().map(String::as_str).collect())
            .unwrap_or_default();
        names.sort_unstable();
        let mut want = row.params.to_vec();
        want.sort_unstable();
        assert_eq!(names, want, "[{}] {} parameters", row.seed, row.tool);
        let mut required: Vec<&str> = schema
            .get("required")
            .and_then(Value::as_array)
            .map(|r| r.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        required.sort_unstable();
        let mut want = row.required.to_vec();
        want.sort_unstable();
        assert_eq!(required, want, "[{}] {} required", row.seed, row.tool);
        for (param, default) in row.defaults {
            let got = schema
                .get("properties")
                .and_then(|p| p.get(*param))
                .and_then(|p| p.get("default"))
                .cloned()
                .unwrap_or(Value::Null);
            let want: Value = serde_json::from_str(default).expect("default is JSON");
            assert_eq!(got, want, "[{}] {}.{} default", row.seed, row.tool, param);
        }
    }
}

/// The server's name in its `initialize` answer.
pub fn server_name(server: &Server) -> String {
    server
        .client
        .peer_info()
        .and_then(|i| i.server_info.as_ref().map(|s| s.name.clone()))
        .unwrap_or_default()
}

/// Starts the server from a prepared command (e.g. with the state dir left unset).
pub async fn start_command(cmd: tokio::process::Command) -> Server {
    use rmcp::ServiceExt;
    let (transport, _stderr) = rmcp::transport::TokioChildProcess::builder(cmd)
        .stderr(std::process::Stdio::inherit())
        .spawn()
        .expect("spawn termpilot");
    let pid = transport.id().expect("server pid");
    let client = tokio::time::timeout(TEST_TIMEOUT, ().serve(transport))
        .await
        .expect("initialize in time")
        .expect("initialize");
    Server {
        client,
        state: tempfile::tempdir().expect("temp dir"),
        pid,
    }
}
