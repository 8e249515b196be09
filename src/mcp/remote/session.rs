//! `terminal_start` with `host`: a plain-terminal session on a target.
//!
//! The session is the transport on a local PTY with the hooks delivered in band
//! ([`termpilot_core::session::remote_shell`]); here the parameter is turned into that shape, and a start
//! that failed on the link (unknown host key, refused login, unreachable) becomes the same
//! one-sentence error as a one-shot run gives, with the dead session removed.

use std::time::Duration;

use termpilot_core::remote::failure;
use termpilot_core::session::call::SessionCall;
use termpilot_core::session::remote_shell::RemoteShell;

use super::route;
use crate::mcp::ctx::ToolCtx;
use crate::mcp::reply::ToolError;

/// How long a failed transport may take to report its exit status after its output ended.
const EXIT_GRACE: Duration = Duration::from_secs(2);

/// The remote shape a `terminal_start` names, or `None` for this machine.
pub fn remote_shell(
    ctx: &ToolCtx,
    host: Option<&str>,
    shell: Option<&str>,
    command: Option<&str>,
    cwd: Option<&std::path::Path>,
    env: Option<&std::collections::BTreeMap<String, String>>,
) -> Result<Option<RemoteShell>, ToolError> {
    let Some(host) = host else {
        return Ok(None);
    };
    let target = route(host)?;
    if command.is_some() {
        return Err(ToolError::new(
            "command cannot be combined with host yet; start the remote shell and run the program in it with terminal_write or terminal_exec.",
        ));
    }
    let env: Vec<(String, String)> = env
        .map(|e| e.iter().map(|(k, v)| (k.clone(), v.clone())).collect())
        .unwrap_or_default();
    RemoteShell::check_env(&env)?;
    Ok(Some(RemoteShell {
        env,
        target,
        options: ctx.core.config.remote.clone(),
        kind: RemoteShell::kind_of(shell)?,
        cwd: cwd.map(|c| c.display().to_string()),
    }))
}

/// After the first prompt (or the transport's end): a link that failed is an error, and the
/// session is removed; a live one is returned as it is.
pub async fn check_started(ctx: &ToolCtx, session: &SessionCall) -> Result<(), ToolError> {
    let Some(remote) = &session.shape().remote else {
        return Ok(());
    };
    if !session.ending() {
        return Ok(());
    }
    // Both the exit and the end of output: ssh's last words (why it failed) are read by
    // the reader, which can trail the reaping of the process on a loaded machine.
    session.wait_output_end(EXIT_GRACE).await;
    let code = session.exit().and_then(|e| e.code);
    let output = session
        .output_since(0, 50, false, crate::mcp::wire::read_more::read_more)
        .output;
    let _ = ctx.core.sessions.stop(session.id()).await;
    let target = &remote.target;
    if let Some(failure) = failure::classify(target, code, &output) {
        return Err(ToolError::new(failure.sentence(target)));
    }
    let last = output.trim();
    Err(ToolError::new(format!(
        "The session on `{target}` ended at once (exit code {}){}; check that {} runs there, or pass shell \"sh\".",
        code.map_or("unknown".to_string(), |c| c.to_string()),
        if last.is_empty() {
            String::new()
        } else {
            format!(": {}", last.lines().last().unwrap_or(last))
        },
        session.shape().shell.kind.name()
    )))
}
