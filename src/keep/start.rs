//! `terminal_start` with `keep: true` (or any native start under `--keep-sessions`): the
//! session starts in the session host, which this server starts first when none runs.
//!
//! The host is started detached: in its own Unix session (`setsid`), not in the server's
//! process group, without the server's run marker (so neither the server's undertaker nor a
//! signal to the server's group reaches it) and without a parent-death signal. It says
//! `ready` on a pipe once it listens, or `busy` when another host of the same policy holds
//! the lock (then that one is used); the wait for it is bounded.

use std::process::Stdio;
use std::time::Duration;

use rmcp::model::JsonObject;
use serde_json::Value;
use tokio::io::AsyncBufReadExt;

use super::paths::Files;
use crate::mcp::ctx::ToolCtx;
use crate::mcp::reply::{Reply, ToolError};

/// Longest wait for a new host to listen.
const READY_MAX: Duration = Duration::from_secs(15);

/// True when this start goes to the host.
pub fn wanted(raw: &JsonObject) -> bool {
    match raw.get("keep") {
        Some(Value::Bool(keep)) => *keep,
        _ => super::settings::settings().keep_all && !raw.contains_key("host"),
    }
}

/// Starts the session in the host: its shell and working directory are this server's
/// defaults when the call names none (the host is shared by servers with other defaults).
pub async fn call(ctx: &ToolCtx, mut args: JsonObject) -> Result<Reply, ToolError> {
    if args.contains_key("host") {
        return Err(ToolError::new(
            "terminal_start: keep cannot be combined with host; a kept session runs on this machine, so drop one of them.",
        ));
    }
    args.remove("keep");
    let config = &ctx.core.config;
    if !args.contains_key("shell")
        && let Some(shell) = &config.shell
    {
        args.insert("shell".into(), Value::String(shell.clone()));
    }
    let here = config
        .cwd
        .clone()
        .or_else(|| std::env::current_dir().ok())
        .unwrap_or_default();
    let cwd = match args.get("cwd").and_then(Value::as_str) {
        Some(c) => here.join(c),
        None => here,
    };
    args.insert("cwd".into(), Value::String(cwd.display().to_string()));
    let Some(link) = super::link::current(true).await? else {
        return Err(ToolError::new(
            "The session host could not be started; retry the call.",
        ));
    };
    let result = link.call("terminal_start", args, &ctx.cancel).await?;
    let mut reply = super::forward::reply_of(result)?;
    if let Some(obj) = reply.value.as_object_mut() {
        obj.insert("kept".into(), Value::Bool(true));
    }
    Ok(reply)
}

/// Starts a host for `files` and waits (bounded) until one listens there.
pub async fn spawn_host(files: &Files) -> Result<(), ToolError> {
    let exe = std::env::current_exe().map_err(|e| {
        ToolError::new(format!(
            "The session host could not be started: this program's path is unknown ({e})."
        ))
    })?;
    let settings = super::settings::settings();
    let idle = settings
        .keep_idle
        .unwrap_or(super::settings::DEFAULT_KEEP_IDLE);
    let log = std::fs::File::create(&files.log).map_err(|e| {
        ToolError::new(format!(
            "The session host could not be started: its log {} could not be created ({e}).",
            files.log.display()
        ))
    })?;
    let mut cmd = tokio::process::Command::new(exe);
    cmd.arg(super::settings::SUBCOMMAND)
        .arg("--keep-idle")
        .arg(idle.as_secs().to_string())
        .args(&settings.policy)
        .env_remove(termpilot_core::exec::RUN_MARKER)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::from(log))
        .kill_on_drop(false);
    // SAFETY: setsid(2) is async-signal-safe; nothing else runs between fork and exec.
    unsafe {
        cmd.pre_exec(|| {
            if libc::setsid() < 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let mut child = cmd
        .spawn()
        .map_err(|e| ToolError::new(format!("The session host could not be started ({e}).")))?;
    let stdout = child.stdout.take();
    // Reaped when it ends (it outlives this server when the server ends first).
    tokio::spawn(async move {
        let _ = child.wait().await;
    });
    let Some(stdout) = stdout else {
        return Err(ToolError::new(
            "The session host could not be started (no pipe to it).",
        ));
    };
    let mut line = String::new();
    let mut reader = tokio::io::BufReader::new(stdout);
    match tokio::time::timeout(READY_MAX, reader.read_line(&mut line)).await {
        Ok(Ok(_)) if matches!(line.trim(), "ready" | "busy") => Ok(()),
        Ok(_) => {
            let said = std::fs::read_to_string(&files.log).unwrap_or_default();
            let said = said.lines().last().unwrap_or("").trim().to_string();
            Err(ToolError::new(format!(
                "The session host ended at start{}; see {}.",
                if said.is_empty() {
                    String::new()
                } else {
                    format!(" ({said})")
                },
                files.log.display()
            )))
        }
        Err(_) => Err(ToolError::new(format!(
            "The session host did not start listening within {} s; see {}, then retry.",
            READY_MAX.as_secs(),
            files.log.display()
        ))),
    }
}
