//! `--compat director-shell`: director-shell-mcp's 15 tools (seed 004, in Russian).
//!
//! Thirteen of them are native tools under the same names and parameters; `shell_run` and
//! `write_file` map onto the core runner and the native `terminal_write_file`. Every field
//! is snake_case (the native camelCase converted by `case.rs`), every error is a tool error
//! whose text is `{"error": "…"}` (a timeout carries the partial result beside it), and jobs
//! and locks live under a `director-shell-mcp` state folder, as the seed's
//! `%LOCALAPPDATA%/director-shell-mcp/`.

use std::path::PathBuf;
use std::time::Duration;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use termpilot_core::Config;
use termpilot_core::exec::{DEFAULT_PREVIEW_BYTES, OutputCap, Shell, Spec};

use super::adapt::{Adapt, rename_field};
use super::case;
use super::{ErrorShape, Explicit, Identity, Natives};
use crate::mcp::registry::{Hints, Surface, ToolCtx, ToolDef};
use crate::mcp::reply::ToolError;
use crate::mcp::tools::run::StreamOut;

pub fn identity() -> Identity {
    Identity {
        name: "director-shell-mcp",
        title: "director-shell-mcp (termpilot)",
        instructions: "Run shell commands and Python, write and edit files, search files, run detached jobs and share named locks between agents. Every result is a JSON object; every error is a JSON object with an `error` sentence.",
        // Native sentences name the native tools these two stand for.
        tool_names: &[
            ("terminal_write_file", "write_file"),
            ("terminal_run", "shell_run"),
        ],
        errors: ErrorShape::JsonObject,
        skill: None,
    }
}

/// All tools direct; jobs and locks under `…/director-shell-mcp` unless a state dir was given.
pub fn configure(
    config: &mut Config,
    surface: &mut Surface,
    explicit: Explicit,
) -> Result<(), String> {
    surface.all_direct = true;
    if !explicit.state_dir {
        config.state_dir = state_dir();
    }
    Ok(())
}

/// `$LOCALAPPDATA/director-shell-mcp`, else `$XDG_STATE_HOME/director-shell-mcp`, else
/// `~/.local/state/director-shell-mcp`.
fn state_dir() -> PathBuf {
    let var = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty());
    if let Some(dir) = var("LOCALAPPDATA").or_else(|| var("XDG_STATE_HOME")) {
        return PathBuf::from(dir).join("director-shell-mcp");
    }
    if let Some(home) = var("HOME") {
        return PathBuf::from(home).join(".local/state/director-shell-mcp");
    }
    std::env::temp_dir().join("director-shell-mcp")
}

pub fn tools(n: &Natives) -> Vec<ToolDef> {
    vec![
        ToolDef::new(
            "shell_run",
            "Run a shell command",
            "Run a command to completion in bash (powershell/cmd on Windows) and return exit_code, duration_ms and stdout/stderr objects. Each stream keeps about 50 KiB of text; a longer stream adds truncated: true and full_output_path, a temp file with all of it. A timeout kills the process tree and is an error carrying the partial result. For long-running work use job_start.",
            Hints::RUNS_COMMANDS,
            shell_run,
        ),
        Adapt {
            hide: &["sessionId", "encoding", "breakLinks"],
            check: Some(absolute_path),
            snake: true,
            reshape: Some(std::sync::Arc::new(|mut v, _| {
                rename_field(&mut v, "append", "appended");
                super::adapt::drop_fields(&mut v, &["success", "size"]);
                Ok(v)
            })),
            ..Adapt::same(
                "write_file",
                "Write UTF-8 text to an absolute file path, replacing it atomically or appending (append). Missing parent folders are created unless create_dirs is false. Returns path, bytes_written, created (the call created the file) and appended.",
            )
        }
        .build(n.get("terminal_write_file")),
        Adapt {
            hide: &["breakLinks"],
            snake: true,
            ..Adapt::same("edit_file", n.get("edit_file").description)
        }
        .build(n.get("edit_file")),
        Adapt {
            // The seed: a timeout is a tool error carrying the partial result (as shell_run).
            reshape: Some(std::sync::Arc::new(|mut v, _| {
                let timed_out = v.get("timed_out") == Some(&Value::Bool(true));
                let hint = v.get("hint").and_then(Value::as_str).map(str::to_owned);
                super::adapt::drop_fields(&mut v, &["timed_out", "hint", "sandbox"]);
                if timed_out {
                    let partial = match v {
                        Value::Object(map) => map,
                        _ => Default::default(),
                    };
                    return Err(ToolError::new(hint.unwrap_or_else(|| {
                        "The code timed out and its process tree was killed; raise timeout_ms (max 600000) or start it with job_start.".into()
                    }))
                    .with_partial(partial));
                }
                Ok(v)
            })),
            snake: true,
            ..Adapt::same("run_python", n.get("run_python").description)
        }
        .build(n.get("run_python")),
        same(n, "job_start"),
        same(n, "job_status"),
        Adapt {
            hide: &["tailLines"],
            snake: true,
            ..Adapt::same(
                "job_kill",
                "Kill a job started by this server, with its whole process tree. A job that already ended is left as it is.",
            )
        }
        .build(n.get("job_kill")),
        same(n, "job_list"),
        same(n, "grep_files"),
        same(n, "job_wait"),
        same(n, "lock_acquire"),
        same(n, "lock_release"),
        same(n, "screenshot"),
        same(n, "process_list"),
        same(n, "file_lockers"),
    ]
}

/// A native tool under the same name, with its parameters and fields in snake_case.
fn same(n: &Natives, name: &'static str) -> ToolDef {
    let native = n.get(name);
    Adapt {
        snake: true,
        ..Adapt::same(name, native.description)
    }
    .build(native)
}

fn absolute_path(args: &rmcp::model::JsonObject) -> Result<(), ToolError> {
    match args.get("path").and_then(Value::as_str) {
        Some(p) if !std::path::Path::new(p).is_absolute() => Err(ToolError::new(format!(
            "`{p}` is a relative path; pass an absolute file path."
        ))),
        _ => Ok(()),
    }
}

fn default_timeout_ms() -> u64 {
    60_000
}

/// The shells `shell_run` accepts.
#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ShellName {
    Powershell,
    Cmd,
    Bash,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ShellRunParams {
    /// The command text.
    pub command: String,
    /// Working directory.
    pub cwd: Option<String>,
    #[serde(default = "default_timeout_ms")]
    #[schemars(range(min = 1, max = 600000))]
    pub timeout_ms: u64,
    /// Default: powershell on Windows, bash elsewhere.
    pub shell: Option<ShellName>,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct ShellRunResult {
    pub exit_code: Option<i32>,
    pub duration_ms: u64,
    pub stdout: StreamOut,
    pub stderr: StreamOut,
}

async fn shell_run(ctx: ToolCtx, p: ShellRunParams) -> Result<Value, ToolError> {
    let shell = match p.shell {
        None => Shell::scripting(),
        Some(ShellName::Bash) => Shell::Bash,
        Some(ShellName::Cmd) => Shell::Cmd,
        Some(ShellName::Powershell) => Shell::PowerShell,
    };
    let mut spec = Spec::shell(shell, &p.command)?;
    spec.cwd = p
        .cwd
        .map(PathBuf::from)
        .or_else(|| ctx.core.config.cwd.clone());
    spec.timeout = Duration::from_millis(p.timeout_ms);
    spec.cap = OutputCap::Each(DEFAULT_PREVIEW_BYTES);
    let out = termpilot_core::exec::run(spec, &ctx.core.spills, &ctx.cancel).await?;
    let result = ShellRunResult {
        exit_code: out.exit_code,
        duration_ms: out.duration.as_millis() as u64,
        stdout: (&out.stdout).into(),
        stderr: (&out.stderr).into(),
    };
    // The streams' native fields are camelCase; the seed's are snake_case.
    let result = case::snake_keys(json!(result));
    if out.timed_out {
        let partial = match result {
            Value::Object(map) => map,
            _ => Default::default(),
        };
        let survivors = if out.survivors.is_empty() {
            String::new()
        } else {
            format!(
                " (except these, which could not be ended and still run: {})",
                termpilot_core::host::describe_survivors(&out.survivors)
            )
        };
        return Err(ToolError::new(format!(
            "The command timed out after {} ms and its process tree was killed{survivors}; raise timeout_ms (max 600000) or start it with job_start.",
            p.timeout_ms
        ))
        .with_partial(partial));
    }
    Ok(result)
}
