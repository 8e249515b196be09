//! A secret prompt met during a wait (`terminal_wait`, `terminal_watch`; a batch's waits go
//! through the core's [`SessionCall::answer_secrets`] directly): looked for while the wait
//! runs and handed to a person (`mcp::secrets`), as `terminal_exec` and writes do at their
//! end.

use std::sync::atomic::AtomicUsize;

use termpilot_core::session::PersonOutcome;
use termpilot_core::session::SessionCall;

use crate::mcp::registry::ToolCtx;

/// Resolves with what a person did about a secret prompt unless they answered it (then
/// `answered` counts it and the looking goes on); never resolves without `--ask-person` or
/// after [`termpilot_core::session::MAX_ASKS`].
pub async fn person_answers(
    ctx: &ToolCtx,
    session: &SessionCall,
    answered: &AtomicUsize,
) -> PersonOutcome {
    let Some(asker) = &ctx.person else {
        return std::future::pending().await;
    };
    session
        .answer_secrets(asker, &ctx.cancel, &*ctx.progress, answered)
        .await
}

/// A wait's result fields after a person was asked: `person` (what they did) and, when the
/// program still waits at a secret prompt, `secretPrompt` and the hint.
pub fn said_after(
    session: &SessionCall,
    outcome: Option<&PersonOutcome>,
    answered: &AtomicUsize,
) -> (Option<bool>, Option<String>, Option<String>) {
    let answered = answered.load(std::sync::atomic::Ordering::Relaxed) > 0;
    let outcome = outcome
        .cloned()
        .or(answered.then_some(PersonOutcome::Answered));
    let secret = outcome
        .as_ref()
        .is_some_and(|o| o != &PersonOutcome::Answered)
        && session.secret_prompt().is_some();
    let (person, hint) = crate::mcp::secrets::said(outcome.as_ref(), secret);
    (
        (secret && crate::mcp::secrets::enabled()).then_some(true),
        person,
        hint,
    )
}
