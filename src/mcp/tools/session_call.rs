//! The common start of every call on a session: find it (or be told it was restarted) and
//! take its call lock, so calls on one session run one at a time.

use std::sync::Arc;

use termpilot::session::terminal::Session;
use tokio::sync::OwnedMutexGuard;

use crate::mcp::registry::ToolCtx;
use crate::mcp::reply::ToolError;

/// Finds the session and waits (cancellably) for its call lock.
pub async fn lock(ctx: &ToolCtx, id: &str) -> Result<(Arc<Session>, SessionGuard), ToolError> {
    let session = ctx.core.sessions.get(id)?;
    let guard = tokio::select! {
        guard = session.op.clone().lock_owned() => guard,
        _ = ctx.cancel.cancelled() => {
            return Err(ToolError::new("The call was cancelled while another call on this session was running."));
        }
    };
    session.touch();
    // A remote shell restarted under a reserved id takes a moment to connect: the call
    // waits (bounded) for its first prompt, as terminal_start does.
    if session.shape.remote.is_some() && !session.state().integrated() {
        crate::mcp::remote::session::wait_first_prompt(&session, &ctx.cancel).await;
    }
    Ok((session, SessionGuard(guard)))
}

/// [`lock`] for a call that types into the session: refused while a person holds its
/// keyboard (from the web page), before anything is sent.
pub async fn lock_to_type(
    ctx: &ToolCtx,
    id: &str,
) -> Result<(Arc<Session>, SessionGuard), ToolError> {
    let (session, guard) = lock(ctx, id).await?;
    session.agent_may_type()?;
    Ok((session, guard))
}

/// Holds a session's call lock until dropped.
pub struct SessionGuard(#[allow(dead_code)] OwnedMutexGuard<()>);
