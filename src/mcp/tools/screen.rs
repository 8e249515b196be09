//! Pixels and pointer: `terminal_screenshot`, `terminal_click`, `terminal_scroll` and
//! `terminal_batch` (seed 001). Parameters in, core calls (`session::ops`, `session::batch`),
//! results out; a PNG travels as an image block after the JSON.

use std::sync::Arc;
use std::time::Duration;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use termpilot_core::render::{self, Png};

use crate::mcp::wire::screen::ScreenText;
use crate::mcp::wire::screen::Theme;
use termpilot_core::session::Session;
use termpilot_core::session::{Action, MAX_ACTIONS};
use termpilot_core::session::{Direction, MAX_SCROLL};

use super::session_call::{lock, lock_to_type};
use super::system::blocking;
use super::terminal_io::{ReturnOutput, answer, answer_once};
use super::waits::compile;
use crate::mcp::args::yes;
use crate::mcp::registry::{Hints, ToolCtx, ToolDef, WithImages};
use crate::mcp::reply::ToolError;

/// How long a batch `wait` for a pattern lasts unless it says otherwise.
const DEFAULT_PATTERN_WAIT_MS: u64 = 10_000;

pub fn tools() -> Vec<ToolDef> {
    vec![
        ToolDef::with_images(
            "terminal_screenshot",
            "Screenshot a terminal",
            "The session's screen as a PNG image (colours, cursor, box drawing); theme dark|light|solarized-dark|solarized-light.",
            Hints::READ_ONLY,
            screenshot,
        ),
        ToolDef::with_images(
            "terminal_click",
            "Click a terminal cell",
            "Left-click a 1-based cell. preview (default true) returns a screenshot with a ring at the cell and sends nothing; preview:false clicks, in the mouse protocol the program enabled (an error if none did).",
            Hints::RUNS_COMMANDS,
            click,
        ),
        ToolDef::new(
            "terminal_scroll",
            "Scroll a terminal",
            "Turn the mouse wheel over a 1-based cell: wheel events to mouse-aware programs, arrow keys to full-screen ones (less, man); at a shell prompt use terminal_read pages instead.",
            Hints::RUNS_COMMANDS,
            scroll,
        ),
        ToolDef::new(
            "terminal_batch",
            "Send several inputs",
            "Up to 50 actions in order: type {text}, paste {text}, press {key, count}, click {row, col}, scroll {row, col, direction, amount}, wait {ms} or {pattern, timeout}. All checked first; stops at the first failure; returns the screen once.",
            Hints::RUNS_COMMANDS,
            batch_call,
        ),
    ]
}

fn three() -> usize {
    3
}

/// What a screenshot result says besides the image.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ImageInfo {
    /// Pixels.
    pub width: u32,
    pub height: u32,
    pub cols: u32,
    pub rows: u32,
    pub theme: Theme,
    /// Size of the PNG file.
    pub bytes: usize,
}

impl ImageInfo {
    fn of(png: &Png, theme: Theme) -> Self {
        ImageInfo {
            width: png.width,
            height: png.height,
            cols: png.columns,
            rows: png.rows,
            theme,
            bytes: png.bytes.len(),
        }
    }
}

/// Renders off the async workers (a screenshot is tens of milliseconds of CPU).
async fn render(
    session: &Arc<Session>,
    theme: Option<Theme>,
    ring: Option<(usize, usize)>,
) -> Result<(Png, Theme), ToolError> {
    let session = session.clone();
    let theme = theme
        .map(render::Theme::from)
        .unwrap_or_else(|| render::Theme::parse(&session.shape().theme).unwrap_or_default());
    let png = blocking(move || session.screenshot(Some(theme), ring)).await?;
    Ok((png, theme.into()))
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ScreenshotParams {
    pub session_id: String,
    /// Default: the session's theme.
    pub theme: Option<Theme>,
}

async fn screenshot(ctx: ToolCtx, p: ScreenshotParams) -> Result<WithImages<ImageInfo>, ToolError> {
    let session = lock(&ctx, &p.session_id).await?;
    let (png, theme) = render(session.session(), p.theme, None).await?;
    Ok(WithImages {
        value: ImageInfo::of(&png, theme),
        images: vec![png.bytes],
    })
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ClickParams {
    pub session_id: String,
    /// 1-based, from the top.
    #[schemars(range(min = 1, max = 500))]
    pub row: usize,
    /// 1-based, from the left.
    #[schemars(range(min = 1, max = 1000))]
    pub col: usize,
    /// Only show where the click would land (a ring on a screenshot); send nothing.
    #[serde(default = "yes")]
    pub preview: bool,
    pub theme: Option<Theme>,
}

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ClickResult {
    pub row: usize,
    pub col: usize,
    /// True when nothing was sent.
    pub preview: bool,
    /// The preview's image.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub image: Option<ImageInfo>,
    /// The mouse encoding used (sgr, utf8, x10).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub encoding: Option<String>,
    /// The screen once the program answered the click.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub screen: Option<ScreenText>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hint: Option<String>,
}

async fn click(ctx: ToolCtx, p: ClickParams) -> Result<WithImages<ClickResult>, ToolError> {
    let session = lock_to_type(&ctx, &p.session_id).await?;
    if p.preview {
        let (png, theme) = render(session.session(), p.theme, Some((p.row, p.col))).await?;
        return Ok(WithImages {
            value: ClickResult {
                row: p.row,
                col: p.col,
                preview: true,
                image: Some(ImageInfo::of(&png, theme)),
                encoding: None,
                screen: None,
                hint: Some(
                    "Nothing was sent; call again with preview:false to click the ringed cell."
                        .into(),
                ),
            },
            images: vec![png.bytes],
        });
    }
    let (position, encoding) = session.click(p.row, p.col).await?;
    let after = answer_once(&ctx, &session, position, ReturnOutput::Screen).await;
    Ok(WithImages {
        value: ClickResult {
            row: p.row,
            col: p.col,
            preview: false,
            image: None,
            encoding: Some(encoding.name().into()),
            screen: after.screen,
            hint: None,
        },
        images: Vec::new(),
    })
}

#[derive(Debug, Clone, Copy, Default, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum DirectionParam {
    Up,
    #[default]
    Down,
}

impl From<DirectionParam> for Direction {
    fn from(d: DirectionParam) -> Self {
        match d {
            DirectionParam::Up => Direction::Up,
            DirectionParam::Down => Direction::Down,
        }
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ScrollParams {
    pub session_id: String,
    #[schemars(range(min = 1, max = 500))]
    pub row: usize,
    #[schemars(range(min = 1, max = 1000))]
    pub col: usize,
    #[serde(default)]
    pub direction: DirectionParam,
    /// Wheel steps (each is usually three lines, or one arrow key).
    #[serde(default = "three")]
    #[schemars(range(min = 1, max = MAX_SCROLL))]
    pub amount: usize,
}

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ScrollResult {
    /// `wheel` (mouse reports) or `keys` (arrow keys).
    pub sent_as: String,
    pub position: u64,
    pub screen: Option<ScreenText>,
}

async fn scroll(ctx: ToolCtx, p: ScrollParams) -> Result<ScrollResult, ToolError> {
    let session = lock_to_type(&ctx, &p.session_id).await?;
    let (position, via) = session
        .scroll(p.row, p.col, p.direction.into(), p.amount)
        .await?;
    let after = answer_once(&ctx, &session, position, ReturnOutput::Screen).await;
    Ok(ScrollResult {
        sent_as: via.into(),
        position,
        screen: after.screen,
    })
}

#[derive(Debug, Clone, Copy, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum ActionType {
    Type,
    Paste,
    Press,
    Click,
    Scroll,
    Wait,
}

/// One action; which fields apply depends on `type`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ActionParam {
    #[serde(rename = "type")]
    pub kind: ActionType,
    /// type, paste.
    pub text: Option<String>,
    /// press.
    pub key: Option<String>,
    /// press.
    #[schemars(range(min = 1, max = 100))]
    pub count: Option<usize>,
    /// click, scroll.
    #[schemars(range(min = 1, max = 500))]
    pub row: Option<usize>,
    #[schemars(range(min = 1, max = 1000))]
    pub col: Option<usize>,
    /// scroll.
    pub direction: Option<DirectionParam>,
    #[schemars(range(min = 1, max = MAX_SCROLL))]
    pub amount: Option<usize>,
    /// wait: a fixed pause…
    #[schemars(range(min = 0, max = 60000))]
    pub ms: Option<u64>,
    /// …or until this regex is on the screen, at most `timeout` ms (default 10000).
    pub pattern: Option<String>,
    #[schemars(range(min = 1, max = 600000))]
    pub timeout: Option<u64>,
}

impl ActionParam {
    /// The core action, or why this one is malformed.
    fn to_action(&self) -> Result<Action, String> {
        let need =
            |v: &Option<String>, field: &str| v.clone().ok_or_else(|| format!("needs `{field}`"));
        let cell = || match (self.row, self.col) {
            (Some(r), Some(c)) => Ok((r, c)),
            _ => Err("needs `row` and `col` (1-based)".to_string()),
        };
        Ok(match self.kind {
            ActionType::Type => Action::Type(need(&self.text, "text")?),
            ActionType::Paste => Action::Paste(need(&self.text, "text")?),
            ActionType::Press => Action::Press {
                key: need(&self.key, "key")?,
                count: self.count.unwrap_or(1),
            },
            ActionType::Click => {
                let (row, col) = cell()?;
                Action::Click { row, col }
            }
            ActionType::Scroll => {
                let (row, col) = cell()?;
                Action::Scroll {
                    row,
                    col,
                    direction: self.direction.unwrap_or_default().into(),
                    amount: self.amount.unwrap_or(3),
                }
            }
            ActionType::Wait => match (self.ms, &self.pattern) {
                (Some(ms), None) => Action::Sleep(Duration::from_millis(ms)),
                (None, Some(pattern)) => {
                    let re = compile(pattern, "pattern", true).map_err(|e| e.message)?;
                    let ms = self.timeout.unwrap_or(DEFAULT_PATTERN_WAIT_MS);
                    Action::WaitFor {
                        pattern: pattern.clone(),
                        re,
                        timeout: Duration::from_millis(ms),
                    }
                }
                _ => return Err("needs either `ms` or `pattern`".into()),
            },
        })
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct BatchParams {
    pub session_id: String,
    #[schemars(length(min = 1, max = MAX_ACTIONS))]
    pub actions: Vec<ActionParam>,
}

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct BatchResult {
    /// True when every action was done.
    pub ok: bool,
    /// Actions done, from the first.
    pub completed: usize,
    pub total: usize,
    /// The 1-based number of the action that failed (the ones before it took effect).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub failed_action: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// The screen at the end, once output was idle.
    pub screen: Option<ScreenText>,
    /// The program waits at a secret prompt (echo off): never ask for it in the chat.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub secret_prompt: Option<bool>,
    /// What a person did about a secret prompt (URL elicitation), in a sentence.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub person: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hint: Option<String>,
}

async fn batch_call(ctx: ToolCtx, p: BatchParams) -> Result<BatchResult, ToolError> {
    let mut actions = Vec::with_capacity(p.actions.len());
    for (i, a) in p.actions.iter().enumerate() {
        let action = a.to_action().map_err(|problem| {
            ToolError::new(format!(
                "Action {} ({}) {}; nothing was sent.",
                i + 1,
                format!("{:?}", a.kind).to_lowercase(),
                problem.trim_end_matches('.')
            ))
        })?;
        actions.push(action);
    }
    let session = lock_to_type(&ctx, &p.session_id).await?;
    let position = session.position();
    let person = termpilot_core::session::BatchPerson {
        asker: ctx.person.as_ref(),
        progress: &*ctx.progress,
    };
    let outcome = session.run_batch(&actions, &ctx.cancel, person).await?;
    // A person who did not answer a prompt met during a wait is not asked again at the end.
    let unanswered = outcome
        .person
        .as_ref()
        .filter(|o| **o != termpilot_core::session::PersonOutcome::Answered);
    let mut after = match unanswered {
        Some(_) => {
            let mut quiet = ctx.clone();
            quiet.person = None;
            answer(&quiet, &session, position, ReturnOutput::Screen).await
        }
        None => answer(&ctx, &session, position, ReturnOutput::Screen).await,
    };
    if after.person.is_none() && outcome.person.is_some() {
        let secret = after.secret_prompt.unwrap_or(false);
        let (person, hint) = crate::mcp::secrets::said(outcome.person.as_ref(), secret);
        after.person = person;
        after.hint = hint.or(after.hint);
    }
    let (failed_action, error) = match outcome.failure {
        Some((n, why)) => (
            Some(n),
            Some(format!(
                "Action {n} ({}) failed: {}; actions 1–{} were sent, the rest were not.",
                actions[n - 1].describe(),
                why.trim_end_matches('.'),
                outcome.completed
            )),
        ),
        None => (None, None),
    };
    Ok(BatchResult {
        ok: failed_action.is_none(),
        completed: outcome.completed,
        total: actions.len(),
        failed_action,
        error,
        screen: after.screen,
        secret_prompt: after.secret_prompt,
        person: after.person,
        hint: after.hint,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(v: serde_json::Value) -> ActionParam {
        serde_json::from_value(v).unwrap()
    }

    #[test]
    fn actions_need_their_fields() {
        let e = parse(serde_json::json!({"type": "press"}))
            .to_action()
            .unwrap_err();
        assert!(e.contains("`key`"), "{e}");
        let e = parse(serde_json::json!({"type": "wait", "ms": 5, "pattern": "x"}))
            .to_action()
            .unwrap_err();
        assert!(e.contains("either"), "{e}");
        let e = parse(serde_json::json!({"type": "wait", "pattern": "("}))
            .to_action()
            .unwrap_err();
        assert!(e.contains("not a valid regular expression"), "{e}");
        let a = parse(serde_json::json!({"type": "scroll", "row": 2, "col": 3}))
            .to_action()
            .unwrap();
        assert!(matches!(
            a,
            Action::Scroll {
                amount: 3,
                direction: Direction::Down,
                ..
            }
        ));
    }
}
