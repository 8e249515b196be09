//! A secret prompt met during a wait (`terminal_wait`): looked for while the wait runs and
//! handed to a person (`mcp::secrets`), as `terminal_exec` and writes do at their end.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use termpilot_core::session::SessionCall;
use termpilot_core::session::{MAX_ASKS, PersonOutcome};

use crate::mcp::registry::ToolCtx;

/// How often a wait looks for a secret prompt (a few `/proc` reads).
const LOOK_EVERY: Duration = Duration::from_millis(200);

/// Resolves with what a person did about a secret prompt unless they answered it (then
/// `answered` is set and the looking goes on); never resolves without `--ask-person` or
/// after [`MAX_ASKS`].
pub async fn person_answers(
    ctx: &ToolCtx,
    session: &SessionCall,
    answered: &AtomicBool,
) -> PersonOutcome {
    let Some(asker) = &ctx.person else {
        return std::future::pending().await;
    };
    let mut asks = 0;
    while asks < MAX_ASKS {
        tokio::time::sleep(LOOK_EVERY).await;
        let Some(prompt) = session.secret_prompt() else {
            continue;
        };
        asks += 1;
        match session
            .ask_person(asker, &prompt, &ctx.cancel, &*ctx.progress)
            .await
        {
            PersonOutcome::Answered => answered.store(true, Ordering::Relaxed),
            PersonOutcome::PromptGone => {}
            other => return other,
        }
    }
    std::future::pending().await
}
