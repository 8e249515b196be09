//! The common start of every call on a session: the core's turn on it
//! ([`SessionCall`]: found, or told it was restarted; one call at a time), refused before
//! anything is typed while a person holds the keyboard.

use termpilot_core::session::SessionCall;

use crate::mcp::registry::ToolCtx;
use crate::mcp::reply::ToolError;

/// Takes the session's turn, waiting (cancellably) while another call holds it. A remote
/// shell restarted under a reserved id takes a moment to connect: the call waits (bounded)
/// for its first prompt, as terminal_start does.
pub async fn lock(ctx: &ToolCtx, id: &str) -> Result<SessionCall, ToolError> {
    let call = ctx.core.sessions.call(id, &ctx.cancel).await?;
    if call.shape().remote.is_some() && !call.integrated() {
        call.wait_ready(&ctx.cancel).await;
    }
    Ok(call)
}

/// [`lock`] for a call that types into the session: refused while a person holds its
/// keyboard (from the web page), before anything is sent.
pub async fn lock_to_type(ctx: &ToolCtx, id: &str) -> Result<SessionCall, ToolError> {
    let call = lock(ctx, id).await?;
    call.agent_may_type()?;
    Ok(call)
}
