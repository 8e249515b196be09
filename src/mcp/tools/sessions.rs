//! Session lifecycle tools: start, list, resize, reset, stop.

use std::collections::BTreeMap;
use std::path::PathBuf;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use termpilot_core::session::Size;
use termpilot_core::session::describe_exit;
use termpilot_core::{SessionSummary, StartRequest, Stopped};

use super::session_call::lock;
use crate::mcp::args::yes;
use crate::mcp::registry::{Forward, Hints, ToolCtx, ToolDef};
use crate::mcp::reply::ToolError;
use crate::mcp::wire::screen::Theme;

pub fn tools() -> Vec<ToolDef> {
    vec![
        ToolDef::new(
            "terminal_start",
            "Start a terminal",
            "Open a shell, or an interactive `command` ready in one call.",
            Hints::ADDITIVE,
            start,
        )
        .forward(Forward::Start),
        ToolDef::new(
            "terminal_list",
            "List terminals",
            "List the open sessions.",
            Hints::READ_ONLY,
            list,
        )
        .forward(Forward::Merge),
        ToolDef::new(
            "terminal_stop",
            "Stop a terminal",
            "End a session and its process tree; optional snapshot, transcript (.cast).",
            Hints::ENDS,
            stop,
        ),
        ToolDef::new(
            "terminal_resize",
            "Resize a terminal",
            "Change a session's terminal size; the program is told (SIGWINCH).",
            Hints::IDEMPOTENT,
            resize,
        ),
        ToolDef::new(
            "terminal_reset",
            "Reset a terminal",
            "Clear the screen and scrollback, or with hardReset restart the shell (or the command) under the same id.",
            Hints::DESTRUCTIVE,
            reset,
        ),
    ]
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct StartParams {
    pub shell: Option<String>,
    pub command: Option<String>,
    #[schemars(range(min = 2, max = 1000))]
    pub cols: Option<u16>,
    #[schemars(range(min = 1, max = 500))]
    pub rows: Option<u16>,
    pub cwd: Option<PathBuf>,
    #[schemars(length(min = 1, max = 64))]
    pub name: Option<String>,
    pub env: Option<BTreeMap<String, String>>,
    pub login: Option<bool>,
    #[schemars(range(min = 0, max = 100000))]
    pub scrollback: Option<usize>,
    pub theme: Option<Theme>,
    /// A plain-terminal session there (README "Remote machines"); not in the schema, which
    /// would take the default tools/list past its 6 KB budget.
    #[schemars(skip)]
    pub host: Option<String>,
    /// Only tightens the server's sandbox. Kept out of the slim schema (the default tool
    /// surface is at its 6 KB budget); the README documents it.
    #[schemars(skip)]
    pub sandbox: Option<crate::mcp::wire::sandbox::Mode>,
    /// Outlive this server: the session lives in your session host (README "Terminals that
    /// outlive the client"). Kept out of the slim schema (the default tool surface is at its
    /// 6 KB budget). Read before parsing (`keep::start`); here it changes nothing.
    #[schemars(skip)]
    #[allow(dead_code)]
    pub keep: Option<bool>,
}

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct StartResult {
    pub session_id: String,
    pub name: Option<String>,
    pub shell: String,
    pub shell_type: String,
    pub cwd: String,
    pub pid: i32,
    /// What the shell printed first.
    pub banner: String,
    /// How command completion is detected.
    pub integration: String,
    /// The command a person runs to join this session from their own terminal.
    pub attach: Option<String>,
    pub cols: u16,
    pub rows: u16,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub host: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub via: Option<String>,
    /// The sandbox the session runs in: off, read-only or workspace-write.
    pub sandbox: &'static str,
    /// A `command` that waits for input once started (as terminal_exec tells it).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub waiting_for_input: Option<bool>,
    /// The line the command is asking on.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub prompt: Option<String>,
    /// A full-screen `command` (vim, less, htop): its screen as text, in place of `banner`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub screen: Option<crate::mcp::wire::screen::ScreenText>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hint: Option<String>,
}

async fn start(ctx: ToolCtx, p: StartParams) -> Result<StartResult, ToolError> {
    let remote = crate::mcp::remote::session::remote_shell(
        &ctx,
        p.host.as_deref(),
        p.shell.as_deref(),
        p.command.as_deref(),
        p.cwd.as_deref(),
        p.env.as_ref(),
    )?;
    let request = StartRequest {
        shell: p.shell,
        command: p.command,
        cwd: p.cwd,
        env: p.env.unwrap_or_default(),
        cols: p.cols,
        rows: p.rows,
        scrollback: p.scrollback,
        login: p.login,
        name: p.name,
        theme: p
            .theme
            .map(|t| termpilot_core::render::Theme::from(t).to_string()),
        remote,
        sandbox: p.sandbox.map(Into::into),
    };
    // Spawning (PTY, fork/exec, threads, rc files, socket) runs off the async workers.
    let sessions = ctx.core.sessions.clone();
    let session = tokio::task::spawn_blocking(move || sessions.start(request))
        .await
        .map_err(|e| ToolError::new(format!("The session could not be started ({e}).")))??;
    let ready = session.wait_started(&ctx.cancel).await;
    crate::mcp::remote::session::check_started(&ctx, &session).await?;
    let banner = session.take_banner(50, crate::mcp::wire::read_more::read_more);
    let waiting = super::exec::waiting(ready.waiting_for_input, ready.screen);
    Ok(StartResult {
        session_id: session.id().to_string(),
        name: session.shape().name.clone(),
        shell: session.shape().shell.program.display().to_string(),
        shell_type: session.shape().shell.kind.name().to_string(),
        // A remote session's cwd is the target's (as its shell reported it), not this one's.
        cwd: match &session.shape().remote {
            Some(remote) => session
                .reported_cwd()
                .or_else(|| remote.cwd.clone())
                .unwrap_or_else(|| "~".into()),
            None => session.shape().cwd.display().to_string(),
        },
        pid: session.pid(),
        // A full-screen program's output is cursor moves and padding: its screen stands in.
        banner: match waiting.screen {
            Some(_) => String::new(),
            None => banner.output,
        },
        integration: session.mode().as_str().into(),
        attach: session.attach_command(),
        cols: session.shape().size.cols,
        rows: session.shape().size.rows,
        host: session
            .shape()
            .remote
            .as_ref()
            .map(|r| r.target.to_string()),
        via: session
            .shape()
            .remote
            .as_ref()
            .map(|_| crate::mcp::remote::VIA_TERMINAL.to_string()),
        sandbox: termpilot_core::sandbox::session_mode(&session.shape().env).as_str(),
        waiting_for_input: waiting.waiting_for_input,
        prompt: waiting.prompt,
        screen: waiting.screen,
        hint: waiting.hint,
    })
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ListParams {
    #[serde(default = "yes")]
    pub verbose: bool,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct ListResult {
    #[schemars(with = "Vec<serde_json::Value>")]
    pub sessions: Vec<Listed>,
    pub count: usize,
}

/// One session as `terminal_list` shows it: the core's [`SessionSummary`] whole (`verbose`,
/// with `via` for a plain remote session), or its brief form.
#[derive(Debug, Serialize)]
#[serde(untagged)]
pub enum Listed {
    Full {
        #[serde(flatten)]
        summary: SessionSummary,
        #[serde(skip_serializing_if = "Option::is_none")]
        via: Option<&'static str>,
    },
    Brief(Brief),
}

/// `terminal_list`'s entry without `verbose`.
#[derive(Debug, Serialize)]
pub struct Brief {
    pub id: String,
    pub name: Option<String>,
    pub cwd: String,
    pub alive: bool,
    pub busy: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub controller: Option<&'static str>,
}

async fn list(ctx: ToolCtx, p: ListParams) -> Result<ListResult, ToolError> {
    let sessions: Vec<Listed> = ctx
        .core
        .sessions
        .list()
        .into_iter()
        .map(|s| listed(s, p.verbose))
        .collect();
    Ok(ListResult {
        count: sessions.len(),
        sessions,
    })
}

fn listed(s: SessionSummary, verbose: bool) -> Listed {
    if verbose {
        // A session on a target reached the plain way says so, as the remote ones do.
        let via = s.host.is_some().then_some(crate::mcp::remote::VIA_TERMINAL);
        Listed::Full { summary: s, via }
    } else {
        Listed::Brief(Brief {
            id: s.id,
            name: s.name,
            cwd: s.cwd,
            alive: s.alive,
            busy: s.busy,
            controller: s.controller,
        })
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct StopParams {
    pub session_id: String,
    #[serde(default)]
    #[schemars(range(min = 0, max = 10000))]
    pub snapshot_lines: usize,
    pub transcript_path: Option<PathBuf>,
    /// Replace an existing transcript file (a symlink is refused even so). Kept out of the
    /// slim schema (the default tool surface is at its 6 KB budget); the README documents it.
    #[serde(default)]
    #[schemars(skip)]
    pub overwrite: bool,
}

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Snapshot {
    pub text: String,
    pub line_count: usize,
    pub total_lines: usize,
}

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Transcript {
    pub path: String,
    pub bytes: u64,
    pub format: String,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct StopResult {
    pub success: bool,
    pub message: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub snapshot: Option<Snapshot>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub transcript: Option<Transcript>,
}

async fn stop(ctx: ToolCtx, p: StopParams) -> Result<StopResult, ToolError> {
    if let Some(path) = &p.transcript_path {
        termpilot_core::session::check_transcript_path(path, p.overwrite)?;
    }
    let (session, before) = match ctx.core.sessions.stop(&p.session_id).await? {
        Stopped::Live(session, before) => (session, before),
        Stopped::AlreadyEnded(why) => {
            return Ok(StopResult {
                success: true,
                message: format!(
                    "Session {} had already ended ({why}); its id is released.",
                    p.session_id
                ),
                snapshot: None,
                transcript: None,
            });
        }
    };
    let snapshot = (p.snapshot_lines > 0).then(|| {
        let (lines, total, _, _) = session.history(0, p.snapshot_lines);
        Snapshot {
            line_count: lines.len(),
            total_lines: total,
            text: lines.join("\n"),
        }
    });
    // A stop ends a live shell with SIGKILL: that is a stop, not a crash worth naming.
    let how = before
        .map(|exit| format!(" (its shell had already ended: {})", describe_exit(&exit)))
        .unwrap_or_default();
    let gone = processes_gone(&session.survivors());
    let transcript = match &p.transcript_path {
        Some(path) => {
            let body = termpilot_core::session::render_transcript(&session, path);
            if let Err(e) = termpilot_core::session::save_transcript(path, &body, p.overwrite) {
                return Err(ToolError::new(transcript_failed(
                    &ctx.core.spills,
                    session.id(),
                    &format!("{how}; {gone}"),
                    path,
                    &body,
                    &e,
                )));
            }
            if termpilot_core::session::is_cast(path) {
                // The page replays it from there (see `termpilot_core::ended`).
                ctx.core.sessions.ended.note_cast(&session, path.clone());
                ctx.core.sessions.touch_list();
            }
            let bytes = body.len() as u64;
            Some(Transcript {
                path: path.display().to_string(),
                bytes,
                format: if termpilot_core::session::is_cast(path) {
                    "asciicast-v2"
                } else {
                    "text"
                }
                .into(),
            })
        }
        None => None,
    };
    Ok(StopResult {
        success: true,
        message: format!("Session {} stopped{how}; {gone}.", session.id()),
        snapshot,
        transcript,
    })
}

/// What became of a stopped session's processes: all gone, or which could not be ended.
fn processes_gone(survivors: &[termpilot_core::host::Survivor]) -> String {
    if survivors.is_empty() {
        "its processes are gone".into()
    } else {
        format!(
            "its processes are gone except these, which could not be ended and still run: {} (end them yourself, e.g. kill -9 PID)",
            termpilot_core::host::describe_survivors(survivors)
        )
    }
}

/// The most transcript text an error carries when it could be kept nowhere else.
const TRANSCRIPT_IN_REPLY: usize = 256 * 1024;

/// The error of a transcript that could not be written after the session was stopped: it
/// says the session is gone, and where the text went instead — a file in the private
/// runtime folder, or, when that fails too (the same full disk), this very message (whole up
/// to [`TRANSCRIPT_IN_REPLY`], else its end). No short file is left at either place. The
/// file is one of the server's `spills`.
fn transcript_failed(
    spills: &termpilot_core::host::Spills,
    id: &str,
    how: &str,
    path: &std::path::Path,
    body: &[u8],
    e: &std::io::Error,
) -> String {
    let kept = spills.create("transcript").and_then(|(mut file, kept)| {
        use std::io::Write;
        file.write_all(body)
            .and_then(|()| file.sync_all())
            .map(|()| kept.clone())
            .map_err(|e| {
                let _ = std::fs::remove_file(&kept);
                termpilot_core::Error::io(
                    format!("Could not keep the transcript in {}", kept.display()),
                    "free space there",
                    e,
                )
            })
    });
    let instead = match kept {
        Ok(kept) => format!("the transcript was kept in {} instead", kept.display()),
        Err(e2) => {
            let text = String::from_utf8_lossy(body);
            let mut from = text.len().saturating_sub(TRANSCRIPT_IN_REPLY);
            while !text.is_char_boundary(from) {
                from += 1;
            }
            let part = if from == 0 {
                format!("here it is, whole ({} bytes)", text.len())
            } else {
                format!(
                    "here are its last {} of {} bytes (the start is lost)",
                    text.len() - from,
                    text.len()
                )
            };
            format!(
                "it could not be kept in the private runtime folder either ({e2}), so {part}:\n{}",
                &text[from..]
            )
        }
    };
    format!(
        "Session {id} was stopped{how}, but its transcript could not be written to {} ({e}; no partial file was left there); {instead}.",
        path.display()
    )
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ResizeParams {
    pub session_id: String,
    #[schemars(range(min = 2, max = 1000))]
    pub cols: u16,
    #[schemars(range(min = 1, max = 500))]
    pub rows: u16,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct ResizeResult {
    pub cols: u16,
    pub rows: u16,
}

async fn resize(ctx: ToolCtx, p: ResizeParams) -> Result<ResizeResult, ToolError> {
    let session = lock(&ctx, &p.session_id).await?;
    session.resize(Size {
        cols: p.cols,
        rows: p.rows,
    })?;
    Ok(ResizeResult {
        cols: p.cols,
        rows: p.rows,
    })
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ResetParams {
    pub session_id: String,
    /// Restart the shell (or the command) instead of clearing the screen.
    #[serde(default)]
    pub hard_reset: bool,
}

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ResetResult {
    pub success: bool,
    pub message: String,
    pub session_id: String,
    pub pid: i32,
    /// The screen after the reset.
    pub screen: String,
}

async fn reset(ctx: ToolCtx, p: ResetParams) -> Result<ResetResult, ToolError> {
    let session = lock(&ctx, &p.session_id).await?;
    if p.hard_reset {
        let fresh = ctx.core.sessions.restart(&session).await?;
        fresh.wait_ready(&ctx.cancel).await;
        // A remote shell that could not connect again is an error, not a fresh shell.
        crate::mcp::remote::session::check_started(&ctx, &fresh).await?;
        let screen = fresh.skip_to_end();
        return Ok(ResetResult {
            success: true,
            message: format!(
                "Session {} restarted: a fresh {} runs under the same id.",
                fresh.id(),
                if fresh.is_command() {
                    "command"
                } else {
                    "shell"
                }
            ),
            session_id: fresh.id().to_string(),
            pid: fresh.pid(),
            screen,
        });
    }
    let screen = session.clear();
    Ok(ResetResult {
        success: true,
        message: "Screen and scrollback cleared; the program was not told.".into(),
        session_id: session.id().to_string(),
        pid: session.pid(),
        screen,
    })
}
