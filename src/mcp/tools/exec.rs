//! Commands at a session's prompt: `terminal_exec`, and `terminal_retry` / `terminal_diff`
//! built on it.

use std::time::Duration;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use termpilot_core::session::Mode;
use termpilot_core::session::{ExecOutcome, ExecRequest};

use super::session_call::{lock, lock_to_type};
use super::waits::compile;
use crate::mcp::registry::{Hints, ToolCtx, ToolDef};
use crate::mcp::reply::ToolError;
use termpilot_core::exec;

pub fn tools() -> Vec<ToolDef> {
    vec![
        ToolDef::new(
            "terminal_exec",
            "Run a command",
            "Run a command at a session's prompt: output, exitCode, cwd once it ends.",
            Hints::RUNS_COMMANDS,
            exec,
        ),
        ToolDef::new(
            "terminal_retry",
            "Retry a command",
            "Run a command in a session until it succeeds (exit code, optional output regex) or retries run out, with fixed, linear or exponential backoff.",
            Hints::RUNS_COMMANDS,
            retry,
        ),
        ToolDef::new(
            "terminal_diff",
            "Diff two commands",
            "Run two commands in a session and return a unified diff of their outputs.",
            Hints::RUNS_COMMANDS,
            diff,
        ),
    ]
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ExecParams {
    pub session_id: String,
    pub command: String,
    #[serde(default = "thirty_seconds")]
    #[schemars(range(max = 600000))]
    pub timeout: u64,
    #[serde(default = "two_hundred")]
    #[schemars(range(min = 1, max = 100000))]
    pub max_lines: usize,
    #[schemars(range(min = 10, max = 600000))]
    pub quiet_exit_ms: Option<u64>,
    #[serde(default = "one")]
    #[schemars(range(max = 1000000000))]
    pub min_output_bytes: u64,
    /// Cleans the output as smart-terminal-mcp does (text::Style::Plain); passed by the
    /// `--compat smart-terminal` preset, kept out of the schema.
    #[serde(default)]
    #[schemars(skip)]
    pub plain_output: bool,
}

fn thirty_seconds() -> u64 {
    30_000
}
fn two_hundred() -> usize {
    200
}
fn one() -> u64 {
    1
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ExecResult {
    pub output: String,
    /// null when the command has not ended, or the shell cannot report it.
    pub exit_code: Option<i32>,
    pub cwd: String,
    pub timed_out: bool,
    pub duration_ms: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub quiet_exited: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub waiting_for_input: Option<bool>,
    /// The line the command is asking on.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub prompt: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub truncated: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub full_output_path: Option<String>,
    /// Why there is no fullOutputPath although the output was cut (e.g. a full disk).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub spill_error: Option<String>,
    pub position: u64,
    /// A full-screen program (vim, less, htop) still running: its screen as text, in place
    /// of `output`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub screen: Option<crate::mcp::wire::screen::ScreenText>,
    /// The command waits at a secret prompt (echo off): never ask for it in the chat.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub secret_prompt: Option<bool>,
    /// What a person did about a secret prompt (URL elicitation), in a sentence.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub person: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hint: Option<String>,
}

/// What a running program's wait for input gives a reply, `terminal_exec`'s and a command
/// session's `terminal_start`'s alike: `waitingForInput`, the `prompt` line (not for a
/// full-screen program, whose `screen` stands in for the output) and the hint.
pub(super) struct Waiting {
    pub waiting_for_input: Option<bool>,
    pub prompt: Option<String>,
    pub screen: Option<crate::mcp::wire::screen::ScreenText>,
    pub hint: Option<String>,
}

pub(super) fn waiting(
    waiting_for_input: Option<String>,
    screen: Option<termpilot_core::session::ScreenText>,
) -> Waiting {
    let hint = if screen.is_some() {
        Some("A full-screen program is running; its screen is in `screen`: drive it with terminal_write or terminal_send_key (each returns once it answered), and terminal_wait until:exit after quitting it.".to_string())
    } else if waiting_for_input.is_some() {
        Some("The command is waiting for input: answer with terminal_write (e.g. data \"y\\r\"), then terminal_wait until:exit.".to_string())
    } else {
        None
    };
    Waiting {
        waiting_for_input: waiting_for_input.is_some().then_some(true),
        prompt: waiting_for_input.filter(|_| screen.is_none()),
        screen: screen.map(Into::into),
        hint,
    }
}

fn shape(mut o: ExecOutcome) -> ExecResult {
    let w = waiting(o.waiting_for_input.take(), o.screen.take());
    let secret = o.secret_prompt && w.waiting_for_input.is_some();
    let (person, secret_hint) = crate::mcp::secrets::said(o.person.as_ref(), secret);
    let hint = if secret_hint.is_some() {
        secret_hint
    } else if w.screen.is_some() {
        w.hint.clone()
    } else if o.timed_out {
        Some("The command is still running: wait with terminal_wait (until:exit), read new output with terminal_read, or stop it with terminal_send_key Ctrl+C.".to_string())
    } else if o.quiet_exited {
        Some("Command is still running (its output went quiet): read more with terminal_read, or stop it with terminal_send_key Ctrl+C.".to_string())
    } else if w.waiting_for_input.is_some() {
        w.hint.clone()
    } else if o.cancelled {
        Some("The exec was cancelled: the command was interrupted (Ctrl+C, then its process group killed if it ignored that) and the prompt is back.".to_string())
    } else if o.mode == Mode::ProcessGroup {
        Some("This shell has no integration, so the exit status is unknown; run `echo $?` to see it.".to_string())
    } else {
        let failed = o.exit_code.is_some_and(|c| c != 0);
        termpilot_core::sandbox::denial_hint(
            termpilot_core::sandbox::server_mode(),
            failed,
            &o.output,
        )
    };
    ExecResult {
        output: o.output,
        exit_code: o.exit_code,
        cwd: o.cwd.display().to_string(),
        timed_out: o.timed_out,
        duration_ms: o.duration.as_millis() as u64,
        quiet_exited: o.quiet_exited.then_some(true),
        waiting_for_input: w.waiting_for_input,
        prompt: w.prompt,
        truncated: (o.omitted_lines > 0 || o.cut_lines > 0).then_some(true),
        full_output_path: o.full_output_path.map(|p| p.display().to_string()),
        spill_error: o.spill_error,
        position: o.position,
        screen: w.screen,
        secret_prompt: (secret && crate::mcp::secrets::enabled()).then_some(true),
        person,
        hint,
    }
}

async fn run_one(
    ctx: &ToolCtx,
    session_id: &str,
    req: &ExecRequest,
) -> Result<ExecResult, ToolError> {
    let session = lock_to_type(ctx, session_id).await?;
    // Its spill file (fullOutputPath) is the session's: removed when the session ends.
    let outcome = session.exec(req, &ctx.cancel, &*ctx.progress).await?;
    Ok(shape(outcome))
}

async fn exec(ctx: ToolCtx, p: ExecParams) -> Result<ExecResult, ToolError> {
    let req = ExecRequest {
        command: p.command,
        timeout: Duration::from_millis(p.timeout),
        max_lines: p.max_lines,
        quiet_exit: p.quiet_exit_ms.map(Duration::from_millis),
        min_output_bytes: p.min_output_bytes,
        style: style(p.plain_output),
        person: ctx.person.clone(),
    };
    run_one(&ctx, &p.session_id, &req).await
}

fn style(plain: bool) -> termpilot_core::session::Style {
    if plain {
        termpilot_core::session::Style::Plain
    } else {
        termpilot_core::session::Style::Terminal
    }
}

#[derive(Debug, Clone, Copy, Default, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum Backoff {
    #[default]
    Exponential,
    Linear,
    Fixed,
}

impl From<Backoff> for exec::Backoff {
    fn from(b: Backoff) -> Self {
        match b {
            Backoff::Exponential => exec::Backoff::Exponential,
            Backoff::Linear => exec::Backoff::Linear,
            Backoff::Fixed => exec::Backoff::Fixed,
        }
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct RetryParams {
    pub session_id: String,
    pub command: String,
    /// Runs after the first.
    #[serde(default = "three")]
    #[schemars(range(max = 20))]
    pub max_retries: u32,
    #[serde(default)]
    pub backoff: Backoff,
    /// Base delay between attempts, ms.
    #[serde(default = "one_second")]
    #[schemars(range(max = 600000))]
    pub delay_ms: u64,
    /// Per attempt, ms.
    #[serde(default = "thirty_seconds")]
    #[schemars(range(min = 1, max = 600000))]
    pub timeout: u64,
    #[serde(default = "two_hundred")]
    #[schemars(range(min = 1, max = 100000))]
    pub max_lines: usize,
    /// null = any exit code.
    #[serde(default = "zero")]
    pub success_exit_code: Option<i32>,
    /// Regex the output must match.
    pub success_pattern: Option<String>,
    /// Cleans the output as smart-terminal-mcp does (text::Style::Plain); passed by the
    /// `--compat smart-terminal` preset, kept out of the schema.
    #[serde(default)]
    #[schemars(skip)]
    pub plain_output: bool,
    /// Each history entry carries the attempt's output and cwd (smart-terminal-mcp's
    /// shape); passed by that preset, kept out of the schema.
    #[serde(default)]
    #[schemars(skip)]
    pub history_output: bool,
}

fn three() -> u32 {
    3
}
fn one_second() -> u64 {
    1000
}
fn zero() -> Option<i32> {
    Some(0)
}

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Attempt {
    pub attempt: u32,
    /// With `historyOutput` only.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub output: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cwd: Option<String>,
    pub exit_code: Option<i32>,
    pub timed_out: bool,
    pub duration_ms: u64,
    pub success: bool,
}

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RetryResult {
    pub success: bool,
    pub attempts: u32,
    pub last_result: ExecResult,
    pub history: Vec<Attempt>,
}

async fn retry(ctx: ToolCtx, p: RetryParams) -> Result<RetryResult, ToolError> {
    let pattern = match &p.success_pattern {
        Some(s) => Some(compile(s, "successPattern", false)?),
        None => None,
    };
    let req = ExecRequest {
        command: p.command.clone(),
        timeout: Duration::from_millis(p.timeout),
        max_lines: p.max_lines,
        quiet_exit: None,
        min_output_bytes: 1,
        style: style(p.plain_output),
        person: ctx.person.clone(),
    };
    if p.success_exit_code.is_some() {
        let session = lock(&ctx, &p.session_id).await?;
        if session.mode() == Mode::ProcessGroup {
            return Err(ToolError::new(
                "This session's shell reports no exit codes (no integration), so successExitCode can never match; pass successExitCode: null with a successPattern, or use bash, zsh, fish or sh.",
            ));
        }
    }
    let mut history = Vec::new();
    let mut attempt = 0;
    loop {
        attempt += 1;
        let result = run_one(&ctx, &p.session_id, &req).await?;
        let exit_ok = !result.timed_out
            && result.waiting_for_input.is_none()
            && p.success_exit_code
                .is_none_or(|c| result.exit_code == Some(c));
        let output_ok = pattern
            .as_ref()
            .is_none_or(|re| re.is_match(&result.output));
        let success = exit_ok && output_ok;
        history.push(Attempt {
            attempt,
            output: p.history_output.then(|| result.output.clone()),
            cwd: p.history_output.then(|| result.cwd.clone()),
            exit_code: result.exit_code,
            timed_out: result.timed_out,
            duration_ms: result.duration_ms,
            success,
        });
        // A command left running or waiting cannot be run again on top of itself.
        let stuck = result.timed_out || result.waiting_for_input.is_some();
        if success || attempt > p.max_retries || stuck || ctx.cancel.is_cancelled() {
            return Ok(RetryResult {
                success,
                attempts: attempt,
                last_result: result,
                history,
            });
        }
        let delay =
            exec::backoff_delay(p.backoff.into(), Duration::from_millis(p.delay_ms), attempt);
        tokio::select! {
            _ = tokio::time::sleep(delay) => {}
            _ = ctx.cancel.cancelled() => {}
        }
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct DiffParams {
    pub session_id: String,
    pub command_a: String,
    pub command_b: String,
    /// Per command, ms.
    #[serde(default = "thirty_seconds")]
    #[schemars(range(min = 1, max = 600000))]
    pub timeout: u64,
    #[serde(default = "two_hundred")]
    #[schemars(range(min = 1, max = 100000))]
    pub max_lines: usize,
    #[serde(default = "three_lines")]
    #[schemars(range(max = 100))]
    pub context_lines: usize,
    /// Cleans the output as smart-terminal-mcp does (text::Style::Plain); passed by the
    /// `--compat smart-terminal` preset, kept out of the schema.
    #[serde(default)]
    #[schemars(skip)]
    pub plain_output: bool,
}

fn three_lines() -> usize {
    3
}

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DiffResult {
    pub result_a: ExecResult,
    pub result_b: ExecResult,
    pub diff: String,
    pub identical: bool,
}

async fn diff(ctx: ToolCtx, p: DiffParams) -> Result<DiffResult, ToolError> {
    let req = |command: &str| ExecRequest {
        command: command.to_string(),
        timeout: Duration::from_millis(p.timeout),
        max_lines: p.max_lines,
        quiet_exit: None,
        min_output_bytes: 1,
        style: style(p.plain_output),
        person: ctx.person.clone(),
    };
    let a = run_one(&ctx, &p.session_id, &req(&p.command_a)).await?;
    if a.timed_out || a.waiting_for_input.is_some() {
        return Err(ToolError::new(format!(
            "commandA did not finish ({}); fix or interrupt it before diffing.",
            if a.timed_out {
                "timed out"
            } else {
                "it waits for input"
            }
        )));
    }
    let b = run_one(&ctx, &p.session_id, &req(&p.command_b)).await?;
    let mut left = a.output.clone();
    let mut right = b.output.clone();
    left.push('\n');
    right.push('\n');
    let text_diff = similar::TextDiff::from_lines(&left, &right);
    let diff = text_diff
        .unified_diff()
        .context_radius(p.context_lines)
        .header(&p.command_a, &p.command_b)
        .to_string();
    Ok(DiffResult {
        identical: a.output == b.output,
        result_a: a,
        result_b: b,
        diff,
    })
}
