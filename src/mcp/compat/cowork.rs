//! `--compat cowork`: cowork-terminal-mcp's one tool, `execute_command` (seed 003).
//!
//! A bash script run to completion without a terminal (stdin at end of file, no colours),
//! in the user's home folder unless `cwd` says otherwise, with `env` laid over the
//! inherited environment. The result is the flat `{stdout, stderr, exitCode, timedOut}`;
//! a timeout kills the tree and returns `exitCode: null, timedOut: true` with the output so
//! far. Each stream keeps its first 1 MiB (cut at a character boundary: the seed's "1,048,576
//! bytes" is a JavaScript string length) and then says `[stdout truncated at 1MB]`; the
//! command keeps running and the rest of its output is read and dropped.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use termpilot_core::exec::{Captured, OutputCap, Shell, Spec};

use super::{ErrorShape, Identity, Natives};
use crate::mcp::registry::{Hints, ToolCtx, ToolDef};
use crate::mcp::reply::ToolError;

/// Bytes kept per stream.
pub const MAX_OUTPUT_SIZE: u64 = 1_048_576;

pub fn identity() -> Identity {
    Identity {
        name: "cowork-terminal-mcp",
        title: "cowork-terminal-mcp (termpilot)",
        instructions: "One tool, execute_command: runs a bash script on the host and returns its stdout, stderr, exit code and whether it timed out.",
        tool_names: &[],
        errors: ErrorShape::Sentence,
        skill: None,
    }
}

pub fn tools(_: &Natives) -> Vec<ToolDef> {
    vec![ToolDef::new(
        "execute_command",
        "Execute a command",
        "Run a bash script on the host machine and wait for it to finish. Returns JSON {stdout, stderr, exitCode, timedOut}. There is no terminal: stdin is empty and nothing is interactive, so pass non-interactive flags. Runs in the user's home folder unless cwd is given; env adds variables to the inherited environment. Each stream keeps its first 1 MB, then says [stdout truncated at 1MB]. On timeout the process tree is killed: exitCode null, timedOut true, output so far. For multi-line text (commit messages, PR bodies, files) use a quoted heredoc so nothing is expanded or cut: gh pr create --title \"T\" --body \"$(cat <<'EOF'\n## Summary\n- item\nEOF\n)\"",
        Hints::RUNS_COMMANDS,
        execute_command,
    )]
}

fn default_timeout() -> u64 {
    30_000
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ExecuteParams {
    /// The bash script to run.
    pub command: String,
    /// Working directory (default: the user's home).
    pub cwd: Option<String>,
    /// Milliseconds before the process tree is killed.
    #[serde(default = "default_timeout")]
    #[schemars(range(min = 1, max = 3600000))]
    pub timeout: u64,
    /// Variables added to the inherited environment.
    pub env: Option<BTreeMap<String, String>>,
}

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ExecuteResult {
    pub stdout: String,
    pub stderr: String,
    pub exit_code: Option<i32>,
    pub timed_out: bool,
}

async fn execute_command(ctx: ToolCtx, p: ExecuteParams) -> Result<ExecuteResult, ToolError> {
    if p.command.trim().is_empty() {
        return Err(ToolError::new(
            "command is empty; pass the bash script to run.",
        ));
    }
    let mut spec = Spec::shell(Shell::Bash, &p.command)?;
    spec.cwd = p
        .cwd
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(PathBuf::from))
        .or_else(|| ctx.core.config.cwd.clone());
    spec.env = p.env.unwrap_or_default().into_iter().collect();
    spec.timeout = Duration::from_millis(p.timeout);
    spec.cap = OutputCap::EachHeadOnly(MAX_OUTPUT_SIZE);
    let out = termpilot_core::exec::run(spec, &ctx.core.spills, &ctx.cancel).await?;
    Ok(ExecuteResult {
        stdout: with_suffix(&out.stdout, "stdout"),
        stderr: with_suffix(&out.stderr, "stderr"),
        exit_code: if out.timed_out { None } else { out.exit_code },
        timed_out: out.timed_out,
    })
}

/// The stream's text, with `[<name> truncated at 1MB]` after it when it was cut.
fn with_suffix(stream: &Captured, name: &str) -> String {
    let mut text = stream.text();
    if stream.truncated {
        if !text.ends_with('\n') {
            text.push('\n');
        }
        text.push_str(&format!("[{name} truncated at 1MB]"));
    }
    text
}
