//! `terminal_start` with `host`: a plain-terminal session on a target.
//!
//! The session is the transport on a local PTY with the hooks delivered in band
//! ([`termpilot_core::session::remote_shell`]); here the parameter is turned into that shape, and a start
//! that failed on the link (unknown host key, refused login, unreachable) becomes the same
//! one-sentence error as a one-shot run gives, with the dead session removed.

use std::time::Duration;

use termpilot_core::session::RemoteShell;
use termpilot_core::session::SessionCall;

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
    if session.shape().remote.is_none() || !session.ending() {
        return Ok(());
    }
    // Both the exit and the end of output: ssh's last words (why it failed) are read by
    // the reader, which can trail the reaping of the process on a loaded machine.
    session.wait_output_end(EXIT_GRACE).await;
    let output = session
        .output_since(0, 50, false, crate::mcp::wire::read_more::read_more)
        .output;
    let _ = ctx.core.sessions.stop(session.id()).await;
    Err(ToolError::new(termpilot_core::remote::start_failed(
        session.shape(),
        session.exit(),
        &output,
    )))
}
