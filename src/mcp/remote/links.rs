//! The links of this server: at most one remote termpilot per target, shared by every call
//! and session on it, and which way each target is reached.
//!
//! The first call naming a target finds out the way: with `--remote-bin` the link is started
//! at once; otherwise `command -v termpilot` is run there through the transport, and a target
//! without it is remembered as plain (`via: "terminal"`). A link that dropped is replaced on
//! the next call (a new generation). Each target has its own connect lock, so a slow or
//! dead host holds only the calls that name it.
//!
//! The pool is process-wide: it holds rmcp values, which the core never sees, and one
//! process serves one [`termpilot_core::Core`] (stdio, or every HTTP client alike).

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, LazyLock, Mutex};
use std::time::Duration;

use termpilot_core::exec::OutputCap;
use termpilot_core::remote::{self, OneShot, Ran, RemoteCommand, Target};

use super::link::Link;
use crate::mcp::ctx::ToolCtx;
use crate::mcp::reply::ToolError;

/// Longest wait for the `command -v termpilot` probe.
const PROBE_TIMEOUT: Duration = Duration::from_secs(20);

/// How a target is reached.
#[derive(Clone)]
pub enum Way {
    /// termpilot runs there: calls are forwarded over this link.
    Termpilot(Arc<Link>),
    /// Nothing installed: the plain-terminal way, for the tools that have one.
    Plain,
}

#[derive(Default)]
struct Slot {
    /// The target has no termpilot on PATH (and no `--remote-bin` was given).
    plain: bool,
    link: Option<Arc<Link>>,
}

/// Every target's way and link.
#[derive(Default)]
pub struct Links {
    slots: Mutex<HashMap<String, Arc<tokio::sync::Mutex<Slot>>>>,
    /// The live links, readable without a target's connect lock (for `terminal_list`).
    live: Mutex<HashMap<String, Arc<Link>>>,
    generation: AtomicU64,
}

static LINKS: LazyLock<Links> = LazyLock::new(Links::default);

/// This process's links.
pub fn links() -> &'static Links {
    &LINKS
}

impl Links {
    fn slot(&self, key: &str) -> Arc<tokio::sync::Mutex<Slot>> {
        self.slots
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .entry(key.to_string())
            .or_default()
            .clone()
    }

    /// The way `target` is reached, connecting (or reconnecting) its link when termpilot
    /// runs there. A probe that could not reach the target is an error (not remembered).
    pub async fn way(&self, ctx: &ToolCtx, target: &Target) -> Result<Way, ToolError> {
        let key = target.to_string();
        let slot = self.slot(&key);
        let mut slot = slot.lock().await;
        if let Some(link) = &slot.link
            && !link.is_ended()
        {
            return Ok(Way::Termpilot(link.clone()));
        }
        if slot.plain {
            return Ok(Way::Plain);
        }
        let options = &ctx.core.config.remote;
        let bin = match &options.remote_bin {
            Some(bin) => bin.clone(),
            None => match probe(ctx, target).await? {
                Some(bin) => bin,
                None => {
                    slot.plain = true;
                    return Ok(Way::Plain);
                }
            },
        };
        let generation = self.generation.fetch_add(1, Ordering::Relaxed) + 1;
        let link = Link::connect(target, options, &bin, generation).await?;
        slot.link = Some(link.clone());
        self.live
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(key, link.clone());
        Ok(Way::Termpilot(link))
    }

    /// The links alive now.
    pub fn live(&self) -> Vec<Arc<Link>> {
        let mut live = self.live.lock().unwrap_or_else(|e| e.into_inner());
        live.retain(|_, l| !l.is_ended());
        live.values().cloned().collect()
    }

    /// Ends every link (the server is stopping).
    pub async fn shutdown(&self) {
        let all: Vec<Arc<Link>> = self
            .live
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .drain()
            .map(|(_, l)| l)
            .collect();
        let ending: Vec<_> = all
            .into_iter()
            .map(|l| tokio::spawn(async move { l.shutdown().await }))
            .collect();
        for end in ending {
            let _ = end.await;
        }
    }
}

/// `command -v termpilot` on the target: its path there, or `None` when it has none.
async fn probe(ctx: &ToolCtx, target: &Target) -> Result<Option<String>, ToolError> {
    let job = OneShot {
        command: RemoteCommand {
            cmd: "command -v termpilot".into(),
            args: Vec::new(),
            shell: true,
            cwd: None,
            env: Vec::new(),
        },
        stdin: None,
        timeout: PROBE_TIMEOUT,
        cap: OutputCap::Total(4096),
    };
    match remote::run(
        target,
        &ctx.core.config.remote,
        &job,
        &ctx.core.spills,
        &ctx.cancel,
    )
    .await?
    {
        Ran::LinkFailed(failure) => Err(ToolError::new(failure.sentence(target))),
        Ran::Done(out) if out.timed_out => Err(ToolError::new(format!(
            "`{target}` did not answer within {} s; check that it is up, or retry.",
            PROBE_TIMEOUT.as_secs()
        ))),
        Ran::Done(out) => {
            let path = out.stdout.text();
            let path = path.lines().next().unwrap_or("").trim();
            Ok((out.exit_code == Some(0) && path.starts_with('/')).then(|| path.to_string()))
        }
    }
}
