//! Waiting on a session: `terminal_wait` (a pattern, the command's end, or quiet) and
//! `terminal_watch` (the first of several triggers).

use std::time::Duration;

use regex::Regex;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use termpilot_core::session::{On, Reason, Until};
use termpilot_core::session::{Trigger, WatchReason};

use std::sync::atomic::AtomicUsize;

use super::secret_watch::said_after;
use super::session_call::lock;
use crate::mcp::args::yes;
use crate::mcp::registry::{Hints, ToolCtx, ToolDef};
use crate::mcp::reply::ToolError;
use crate::mcp::wire::read_more::read_more;

pub fn tools() -> Vec<ToolDef> {
    vec![
        ToolDef::new(
            "terminal_wait",
            "Wait on output",
            "Wait for a regex (never your own echo), the command's end (until:exit) or quiet output.",
            Hints::READ_ONLY,
            wait,
        ),
        ToolDef::new(
            "terminal_watch",
            "Watch a terminal",
            "Wait for the first of 1–10 trigger patterns, quiet output, the program's exit or the timeout (≤1 h), in one call; returns the matched line and context.",
            Hints::READ_ONLY,
            watch,
        ),
    ]
}

/// Compiles an agent's pattern; `multi_line` makes ^ and $ match at line ends (screen).
pub fn compile(pattern: &str, field: &str, multi_line: bool) -> Result<Regex, ToolError> {
    let source = if multi_line {
        format!("(?m){pattern}")
    } else {
        pattern.to_string()
    };
    Regex::new(&source).map_err(|e| {
        let detail = e.to_string();
        let last = detail.lines().last().unwrap_or("").trim().to_string();
        ToolError::new(format!(
            "`{field}` is not a valid regular expression ({last}); escape special characters such as ( [ . * with a backslash."
        ))
    })
}

#[derive(Debug, Clone, Copy, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum UntilParam {
    Pattern,
    Exit,
    Quiet,
}

#[derive(Debug, Clone, Copy, Default, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum OnParam {
    #[default]
    Stream,
    Screen,
}

#[derive(Debug, Clone, Copy, Default, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum ReturnMode {
    #[default]
    Tail,
    Full,
    MatchOnly,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct WaitParams {
    pub session_id: String,
    pub pattern: Option<String>,
    pub until: Option<UntilParam>,
    #[serde(default)]
    pub on: OnParam,
    #[serde(default = "thirty_seconds")]
    #[schemars(range(max = 600000))]
    pub timeout: u64,
    #[serde(default)]
    pub return_mode: ReturnMode,
    #[serde(default = "fifty")]
    #[schemars(range(min = 0, max = 10000))]
    pub tail_lines: usize,
    pub since: Option<u64>,
    #[serde(default = "one_second")]
    #[schemars(range(min = 10, max = 600000))]
    pub quiet_ms: u64,
}

fn thirty_seconds() -> u64 {
    30_000
}
fn fifty() -> usize {
    50
}
fn one_second() -> u64 {
    1000
}

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct WaitResult {
    pub output: String,
    pub matched: bool,
    pub timed_out: bool,
    pub position: u64,
    /// pattern, exit, quiet, timeout, cancelled or secretPrompt.
    pub reason: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub matched_text: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub matched_line: Option<String>,
    /// A command session's exit status, once it exited.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i32>,
    /// The program waits at a secret prompt (echo off) a person did not answer.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub secret_prompt: Option<bool>,
    /// What a person did about a secret prompt (URL elicitation), in a sentence.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub person: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hint: Option<String>,
}

async fn wait(ctx: ToolCtx, p: WaitParams) -> Result<WaitResult, ToolError> {
    let mode = p.until.unwrap_or(if p.pattern.is_some() {
        UntilParam::Pattern
    } else {
        UntilParam::Exit
    });
    let until = match mode {
        UntilParam::Pattern => {
            let Some(pattern) = &p.pattern else {
                return Err(ToolError::new(
                    "until:pattern needs a pattern; pass pattern, or use until:exit or until:quiet.",
                ));
            };
            let on = match p.on {
                OnParam::Stream => On::Stream,
                OnParam::Screen => On::Screen,
            };
            Until::Pattern(compile(pattern, "pattern", on == On::Screen)?, on)
        }
        UntilParam::Exit => Until::Exit,
        UntilParam::Quiet => Until::Quiet(Duration::from_millis(p.quiet_ms)),
    };
    let session = lock(&ctx, &p.session_id).await?;
    let start = session.position();
    let since = p.since.unwrap_or_else(|| session.wait_start());
    // A secret prompt met while waiting goes to a person (`mcp::secrets`); an answer lets
    // the wait go on, anything else ends it.
    let answered = AtomicUsize::new(0);
    let waited = tokio::select! {
        outcome = session.wait(
            &until,
            since,
            Duration::from_millis(p.timeout),
            &ctx.cancel,
            &*ctx.progress,
        ) => Ok(outcome),
        said = super::secret_watch::person_answers(&ctx, &session, &answered) => Err(said),
    };
    let outcome = match waited {
        Ok(outcome) => outcome,
        Err(said) => {
            let (secret_prompt, person, hint) = said_after(&session, Some(&said), &answered);
            let read = session.output_since(since.min(start), 2000, false, read_more);
            return Ok(WaitResult {
                output: read.output,
                matched: false,
                timed_out: false,
                position: read.position,
                reason: "secretPrompt".into(),
                matched_text: None,
                matched_line: None,
                exit_code: None,
                secret_prompt,
                person,
                hint,
            });
        }
    };
    let (_, person, _) = said_after(&session, None, &answered);
    let output = match p.return_mode {
        ReturnMode::MatchOnly => String::new(),
        ReturnMode::Full => {
            session
                .output_since(since.min(start), 2000, false, read_more)
                .output
        }
        ReturnMode::Tail => {
            let read = session.output_since(since.min(start), usize::MAX, false, read_more);
            let lines: Vec<&str> = read.output.lines().collect();
            let from = lines.len().saturating_sub(p.tail_lines);
            lines[from..].join("\n")
        }
    };
    let timed_out = outcome.reason == Reason::Timeout;
    let hint = timed_out.then(|| {
        "Nothing matched in time; the program is still running: call terminal_wait again, or terminal_read to see its output.".to_string()
    });
    Ok(WaitResult {
        output,
        matched: outcome.reason == Reason::Matched,
        timed_out,
        position: outcome.position,
        reason: outcome.reason.as_str().into(),
        matched_text: outcome.matched,
        matched_line: outcome.matched_line,
        exit_code: if session.is_command() {
            outcome.exit.and_then(|e| e.code)
        } else {
            None
        },
        secret_prompt: None,
        person,
        hint,
    })
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct TriggerParam {
    /// Label returned when it fires.
    #[schemars(length(min = 1, max = 64))]
    pub id: String,
    pub pattern: String,
    /// false = literal text.
    #[serde(default = "yes")]
    pub is_regex: bool,
    /// Minimum ms between two firings of this trigger.
    #[serde(default)]
    #[schemars(range(min = 0, max = 3600000))]
    pub cooldown_ms: u64,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct WatchParams {
    pub session_id: String,
    #[schemars(length(min = 1, max = 10))]
    pub triggers: Vec<TriggerParam>,
    #[serde(default = "sixty_seconds")]
    #[schemars(range(min = 1, max = 3600000))]
    pub timeout: u64,
    /// Return after this many ms without output.
    #[schemars(range(min = 10, max = 3600000))]
    pub quiet_exit_ms: Option<u64>,
    #[serde(default = "three")]
    #[schemars(range(min = 0, max = 50))]
    pub context_lines: usize,
    /// Match output from this position (default: the later of the last read and the last write).
    pub since: Option<u64>,
}

fn sixty_seconds() -> u64 {
    60_000
}
fn three() -> usize {
    3
}

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct WatchResult {
    /// trigger, quiet, timeout, exit, cancelled or secretPrompt.
    pub reason: String,
    pub timed_out: bool,
    pub position: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub trigger_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub matched_line: Option<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub context: Vec<String>,
    /// The program waits at a secret prompt (echo off) a person did not answer.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub secret_prompt: Option<bool>,
    /// What a person did about a secret prompt (URL elicitation), in a sentence.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub person: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hint: Option<String>,
}

async fn watch(ctx: ToolCtx, p: WatchParams) -> Result<WatchResult, ToolError> {
    let mut triggers = Vec::with_capacity(p.triggers.len());
    for (i, t) in p.triggers.iter().enumerate() {
        if let Some(first) = p.triggers[..i].iter().position(|o| o.id == t.id) {
            return Err(ToolError::new(format!(
                "Invalid argument `triggers[{i}].id` for terminal_watch: `{}` is already the id of triggers[{first}]; give each trigger its own id.",
                t.id
            )));
        }
        let source = if t.is_regex {
            t.pattern.clone()
        } else {
            regex::escape(&t.pattern)
        };
        triggers.push(Trigger {
            id: t.id.clone(),
            regex: compile(&source, &format!("triggers[{i}].pattern"), false)?,
            cooldown: Duration::from_millis(t.cooldown_ms),
        });
    }
    let session = lock(&ctx, &p.session_id).await?;
    // A secret prompt met while watching goes to a person, as in `terminal_wait`.
    let answered = AtomicUsize::new(0);
    let watched = tokio::select! {
        outcome = session.watch(
            &triggers,
            p.quiet_exit_ms.map(Duration::from_millis),
            p.since,
            Duration::from_millis(p.timeout),
            p.context_lines,
            &ctx.cancel,
            &*ctx.progress,
        ) => Ok(outcome),
        said = super::secret_watch::person_answers(&ctx, &session, &answered) => Err(said),
    };
    let outcome = match watched {
        Ok(outcome) => outcome,
        Err(said) => {
            let (secret_prompt, person, hint) = said_after(&session, Some(&said), &answered);
            return Ok(WatchResult {
                reason: "secretPrompt".into(),
                timed_out: false,
                position: session.position(),
                trigger_id: None,
                matched_line: None,
                context: Vec::new(),
                secret_prompt,
                person,
                hint,
            });
        }
    };
    let (_, person, _) = said_after(&session, None, &answered);
    Ok(WatchResult {
        reason: outcome.reason.as_str().into(),
        timed_out: outcome.reason == WatchReason::Timeout,
        position: outcome.position,
        trigger_id: outcome.trigger_id,
        matched_line: outcome.matched_line,
        context: outcome.context,
        secret_prompt: None,
        person,
        hint: None,
    })
}
