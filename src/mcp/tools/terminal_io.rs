//! Talking to a session: write text, press keys, read output or the screen, read history.

use std::time::Duration;

use crate::mcp::wire::screen::ScreenText;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use termpilot_core::session::ScreenOptions;
use termpilot_core::session::SessionCall;
use termpilot_core::session::describe_exit;

use super::session_call::{lock, lock_to_type};
use crate::mcp::args::yes;
use crate::mcp::registry::{Hints, ToolCtx, ToolDef};
use crate::mcp::reply::ToolError;

pub fn tools() -> Vec<ToolDef> {
    vec![
        ToolDef::new(
            "terminal_write",
            "Type into a terminal",
            "Type into a session (\\r = Enter); returns output once idle.",
            Hints::RUNS_COMMANDS,
            write,
        ),
        ToolDef::new(
            "terminal_send_key",
            "Press a key",
            "Press a key or combo in a session: Enter, Tab, Escape, Up/Down/Left/Right, Home, End, PageUp, PageDown, Backspace, Delete, F1–F12, Ctrl+C, Shift+Tab, Alt+Enter…; count repeats it.",
            Hints::RUNS_COMMANDS,
            send_key,
        ),
        ToolDef::new(
            "terminal_read",
            "Read a terminal",
            "Output since `since` (default: last read), once idle; view:screen for the screen.",
            Hints::READ_ONLY,
            read,
        ),
        ToolDef::new(
            "terminal_get_history",
            "Terminal history",
            "Earlier output of a session (last ~10,000 rendered lines), without consuming it: offset lines back from the newest, maxLines at most.",
            Hints::READ_ONLY,
            history,
        ),
    ]
}

// What a write or key press returns besides its position.
#[derive(Debug, Clone, Copy, Default, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum ReturnOutput {
    /// Wait until the program took the input and waits for more (else 200 ms of quiet; at
    /// most 10 s) and return its output.
    #[default]
    New,
    /// Return at once.
    None,
    /// Wait as for `new`, then return the screen.
    Screen,
}

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct WriteResult {
    /// Output position before the write (a `since` for later reads).
    pub position: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub output: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub screen: Option<ScreenText>,
    /// Output position after what is returned.
    pub end_position: u64,
    /// The exit status of a command that ended while answering (e.g. vim quit by `:q!`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i32>,
    /// The program waits at a secret prompt (echo off): never ask for it in the chat.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub secret_prompt: Option<bool>,
    /// What a person did about a secret prompt (URL elicitation), in a sentence.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub person: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hint: Option<String>,
}

/// Waits for the program's answer to input written at `position`, as asked.
pub(super) async fn answer(
    ctx: &ToolCtx,
    session: &SessionCall,
    position: u64,
    mode: ReturnOutput,
) -> WriteResult {
    if mode == ReturnOutput::None {
        return WriteResult {
            position,
            output: None,
            screen: None,
            end_position: position,
            exit_code: None,
            secret_prompt: None,
            person: None,
            hint: None,
        };
    }
    // A secret prompt goes to a person (`mcp::secrets`); once answered, the program's answer
    // to it is awaited as the input's was, from the same position.
    let mut asks = 0;
    let mut outcome = None;
    let (mut result, secret) = loop {
        let result = answer_once(ctx, session, position, mode).await;
        let prompt = session.secret_prompt();
        let (Some(prompt), Some(asker)) = (&prompt, &ctx.person) else {
            break (result, prompt.is_some());
        };
        if asks == termpilot_core::session::MAX_ASKS || ctx.cancel.is_cancelled() {
            break (result, true);
        }
        asks += 1;
        let said = session
            .ask_person(asker, prompt, &ctx.cancel, &*ctx.progress)
            .await;
        let go_on = said == termpilot_core::session::PersonOutcome::Answered;
        outcome = Some(said);
        if !go_on {
            break (
                answer_once(ctx, session, position, mode).await,
                session.secret_prompt().is_some(),
            );
        }
    };
    let (person, hint) = crate::mcp::secrets::said(outcome.as_ref(), secret);
    result.secret_prompt = (secret && crate::mcp::secrets::enabled()).then_some(true);
    result.person = person;
    result.hint = hint;
    result
}

/// [`answer`] without the person: the program's answer to the input at `position`.
pub(super) async fn answer_once(
    ctx: &ToolCtx,
    session: &SessionCall,
    position: u64,
    mode: ReturnOutput,
) -> WriteResult {
    let answer = session
        .answer(
            position,
            mode == ReturnOutput::Screen,
            crate::mcp::wire::read_more::read_more,
            &ctx.cancel,
        )
        .await;
    let exited = answer.exited.as_ref().map(describe_exit);
    WriteResult {
        position,
        output: (mode == ReturnOutput::New).then_some(answer.output),
        screen: answer.screen.map(|screen| ScreenText {
            exited,
            ..screen.into()
        }),
        end_position: answer.end_position,
        exit_code: answer.exit_code,
        secret_prompt: None,
        person: None,
        hint: None,
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct WriteParams {
    pub session_id: String,
    pub data: String,
    #[serde(default)]
    pub paste: bool,
    #[serde(default)]
    pub return_output: ReturnOutput,
}

async fn write(ctx: ToolCtx, p: WriteParams) -> Result<WriteResult, ToolError> {
    let session = lock_to_type(&ctx, &p.session_id).await?;
    let position = session.type_text(&p.data, p.paste).await?;
    Ok(answer(&ctx, &session, position, p.return_output).await)
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct KeyParams {
    pub session_id: String,
    /// Key or combo, e.g. Enter, Ctrl+C, ArrowUp, Shift+Tab, F5.
    pub key: String,
    #[serde(default = "one")]
    #[schemars(range(min = 1, max = 100))]
    pub count: usize,
    #[serde(default)]
    pub return_output: ReturnOutput,
}

fn one() -> usize {
    1
}

async fn send_key(ctx: ToolCtx, p: KeyParams) -> Result<WriteResult, ToolError> {
    let session = lock_to_type(&ctx, &p.session_id).await?;
    let position = session.press(&p.key, p.count).await?;
    Ok(answer(&ctx, &session, position, p.return_output).await)
}

#[derive(Debug, Clone, Copy, Default, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum View {
    #[default]
    Output,
    Screen,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ReadParams {
    pub session_id: String,
    pub since: Option<u64>,
    #[serde(default = "thirty_seconds")]
    #[schemars(range(min = 0, max = 600000))]
    pub timeout: u64,
    #[serde(default = "half_second")]
    #[schemars(range(min = 0, max = 60000))]
    pub idle_timeout: u64,
    #[serde(default = "two_hundred")]
    #[schemars(range(min = 1, max = 10000))]
    pub max_lines: usize,
    #[serde(default)]
    pub view: View,
    #[serde(default)]
    pub raw: bool,
    // Pages back from the current screen; past the oldest is the oldest.
    #[serde(default)]
    pub page: usize,
    #[serde(default = "yes")]
    pub join_wrapped: bool,
    #[serde(default = "yes")]
    pub cursor: bool,
    #[serde(default = "yes")]
    pub highlights: bool,
}

fn thirty_seconds() -> u64 {
    30_000
}
fn half_second() -> u64 {
    500
}
fn two_hundred() -> usize {
    200
}
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ReadResult {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub output: Option<String>,
    pub position: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timed_out: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub truncated: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hint: Option<String>,
    #[serde(flatten)]
    pub screen: Option<ScreenText>,
    /// `"person"` while someone holds the keyboard from the web page.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub controller: Option<&'static str>,
    /// How the session's program ended (`exit status 3`), when it has.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub exited: Option<String>,
}

async fn read(ctx: ToolCtx, p: ReadParams) -> Result<ReadResult, ToolError> {
    let session = lock(&ctx, &p.session_id).await?;
    if p.view == View::Screen {
        let (screen, position) = session.read_screen(ScreenOptions {
            page: p.page,
            join_wrapped: p.join_wrapped,
            cursor: p.cursor,
            highlights: p.highlights,
        });
        return Ok(ReadResult {
            output: None,
            position,
            timed_out: None,
            truncated: None,
            hint: None,
            screen: Some(screen.into()),
            controller: person(&session),
            exited: session.exited().await.as_ref().map(describe_exit),
        });
    }
    let (read, timed_out) = session
        .read(
            p.since,
            Duration::from_millis(p.idle_timeout),
            Duration::from_millis(p.timeout),
            p.max_lines,
            p.raw,
            crate::mcp::wire::read_more::read_more,
            &ctx.cancel,
        )
        .await;
    let truncated = read.omitted_lines > 0 || read.dropped_bytes > 0;
    let hint = (read.dropped_bytes > 0).then(|| {
        format!(
            "{} older bytes are no longer kept; terminal_get_history has the last 10,000 lines.",
            read.dropped_bytes
        )
    });
    Ok(ReadResult {
        output: Some(read.output),
        position: read.position,
        timed_out: Some(timed_out),
        truncated: truncated.then_some(true),
        hint,
        screen: None,
        controller: person(&session),
        exited: session.exited().await.as_ref().map(describe_exit),
    })
}

/// `Some("person")` while a person holds the session's keyboard.
fn person(session: &termpilot_core::session::Session) -> Option<&'static str> {
    (session.controller() == termpilot_core::session::Controller::Person).then_some("person")
}

#[derive(Debug, Clone, Copy, Default, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum HistoryFormat {
    #[default]
    Lines,
    Text,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct HistoryParams {
    pub session_id: String,
    /// Lines to skip back from the newest (0 = newest).
    #[serde(default)]
    #[schemars(range(min = 0, max = 1000000))]
    pub offset: usize,
    #[serde(default = "two_hundred")]
    #[schemars(range(min = 1, max = 10000))]
    pub max_lines: usize,
    #[serde(default)]
    pub format: HistoryFormat,
}

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct HistoryResult {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lines: Option<Vec<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    pub total_lines: usize,
    /// 0-based index of the first line returned…
    pub returned_from: usize,
    /// …and one past the last.
    pub returned_to: usize,
}

async fn history(ctx: ToolCtx, p: HistoryParams) -> Result<HistoryResult, ToolError> {
    let session = lock(&ctx, &p.session_id).await?;
    let (lines, total, from, to) = session.history(p.offset, p.max_lines);
    let (lines, text) = match p.format {
        HistoryFormat::Lines => (Some(lines), None),
        HistoryFormat::Text => (None, Some(lines.join("\n"))),
    };
    Ok(HistoryResult {
        lines,
        text,
        total_lines: total,
        returned_from: from,
        returned_to: to,
    })
}
