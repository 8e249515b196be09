//! `--compat terminal-use`: the tools that type, press, click, scroll, read and wait, as
//! upstream terminal-use runs them.
//!
//! Each one takes the session's turn once and calls the same core functions the native
//! handlers call (`SessionCall::type_text`, `press`, `click`, `scroll`, `wait`,
//! `read_screen`); only the waiting rule and the words differ. Input settles as upstream's
//! does: the call returns once output has been quiet for `idleMs` (default 200 ms), at most
//! `maxWaitMs` (default 5 s, capped at 10 s), with the time it took and the bytes that came.
//! A command session's exit and a shell's exit during the call are reported, not errors.

use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use rmcp::model::JsonObject;
use serde_json::Value;
use termpilot_core::NoProgress;
use termpilot_core::session::Direction;
use termpilot_core::session::SessionCall;
use termpilot_core::session::{On, Reason, Until};
use termpilot_core::session::{ScreenOptions, ScreenText};

use super::terminal_use_text::{
    Settled, exit_phrase, respawn_notice, screen_block, settle_note, shell_exited, tag,
    unknown_session,
};
use crate::mcp::registry::ToolCtx;
use crate::mcp::reply::{Reply, ToolError};
use crate::mcp::tools::session_call::{lock, lock_to_type};

/// The longest an input call waits for output to settle, whatever `maxWaitMs` says.
pub const HARD_CAP_MS: u64 = 10_000;

/// The session id the preset got (an integer), as the core's string id.
pub fn session_id(given: &JsonObject) -> String {
    match given.get("sessionId") {
        Some(Value::String(s)) => s.clone(),
        Some(v) => v.to_string(),
        None => String::new(),
    }
}

fn uint(given: &JsonObject, key: &str) -> Option<u64> {
    given.get(key).and_then(Value::as_u64)
}

fn flag(given: &JsonObject, key: &str, default: bool) -> bool {
    given.get(key).and_then(Value::as_bool).unwrap_or(default)
}

/// A core error in upstream's words: an unknown id, or the notice that an id was started
/// afresh (with its label).
pub fn reword(ctx: &ToolCtx, id: &str, e: ToolError) -> ToolError {
    let known: Vec<String> = ctx.core.sessions.list().into_iter().map(|s| s.id).collect();
    if let Some(text) = unknown_session(&e.message, &known) {
        return ToolError::new(text);
    }
    let label = ctx
        .core
        .sessions
        .peek(id)
        .and_then(|s| s.shape().name.clone());
    match respawn_notice(&e.message, label.as_deref()) {
        Some(text) => ToolError::new(text),
        None => e,
    }
}

/// The session's turn, with upstream's words for an unknown or restarted id.
async fn turn(ctx: &ToolCtx, id: &str, typing: bool) -> Result<SessionCall, ToolError> {
    let got = if typing {
        lock_to_type(ctx, id).await
    } else {
        lock(ctx, id).await
    };
    match got {
        Ok(call) => Ok(call),
        Err(e) => {
            let e = reword(ctx, id, e);
            // A fresh shell was started under the id: like upstream, answer once it is ready,
            // so the next call's input reaches its prompt (a login shell reads its profile
            // first).
            if e.message.contains("A fresh shell has been spawned")
                && let Ok(fresh) = lock(ctx, id).await
            {
                fresh.wait_ready(&ctx.cancel).await;
            }
            Err(e)
        }
    }
}

/// `tag` of the session: `1 ("label")`.
fn tag_of(call: &SessionCall, id: &str) -> String {
    tag(id, call.session().shape().name.as_deref())
}

/// `at 2026-12-06T12:00:00Z` for a program that exited, when the core knows when.
fn exited_at(call: &SessionCall) -> String {
    call.session()
        .exited_at()
        .and_then(|at| SystemTime::now().checked_sub(at.elapsed()))
        .map(|t| format!(" at {}", termpilot_core::jobs::rfc3339(t)))
        .unwrap_or_default()
}

/// Refuses input to a command session whose program has exited, as upstream does.
fn refuse_if_ended(call: &SessionCall, id: &str) -> Result<(), ToolError> {
    let session = call.session();
    if let (Some(command), Some(exit)) = (session.shape().command.as_ref(), session.exit_now()) {
        return Err(ToolError::new(format!(
            "Session {} ran `{command}`, which exited ({}){}. Input is not sent to a finished command: read its final screen with terminal_read, or call terminal_reset with hardReset: true runs the command again.",
            tag_of(call, id),
            exit_phrase(&exit),
            exited_at(call)
        )));
    }
    Ok(())
}

fn current(call: &SessionCall) -> ScreenText {
    call.read_screen(ScreenOptions::CURRENT).0
}

/// What an input call does, once the session is its own.
pub enum Input {
    Type {
        text: String,
        paste: bool,
    },
    Press {
        key: String,
        count: usize,
    },
    Click {
        row: usize,
        col: usize,
    },
    Scroll {
        direction: Direction,
        amount: usize,
        row: Option<usize>,
        col: Option<usize>,
    },
}

/// Sends `input`, waits for the output to settle as upstream does, and answers with the
/// first line, the settle note and the screen.
pub async fn run_input(ctx: ToolCtx, given: JsonObject, input: Input) -> Result<Reply, ToolError> {
    let id = session_id(&given);
    let call = turn(&ctx, &id, true).await?;
    refuse_if_ended(&call, &id)?;
    let asked_max = uint(&given, "maxWaitMs").unwrap_or(5000);
    let idle = Duration::from_millis(uint(&given, "idleMs").unwrap_or(200).max(1));
    let max = Duration::from_millis(asked_max.min(HARD_CAP_MS));
    let started = Instant::now();
    let (position, first) = match input {
        Input::Type { text, paste } => {
            let bracketed = paste && bracketed_paste_on(&call);
            let position = call.type_text(&text, paste).await?;
            let how = match (paste, bracketed) {
                (false, _) => String::new(),
                (true, true) => " as a bracketed paste".into(),
                (true, false) => {
                    " as plain input (the program has not turned on bracketed paste)".into()
                }
            };
            (
                position,
                format!("Typed {} chars{how}.", text.encode_utf16().count()),
            )
        }
        Input::Press { key, count } => {
            refuse_plain_key(&key)?;
            let position = call.press(&key, count).await.map_err(key_error)?;
            let line = if count == 1 {
                format!("Pressed {key}.")
            } else {
                format!("Pressed {key} x {count}.")
            };
            (position, line)
        }
        Input::Click { row, col } => {
            outside_viewport(&call, row, col)?;
            let (position, _) = call
                .click(row, col)
                .await
                .map_err(|e| no_mouse(e, row, col))?;
            (position, format!("Clicked at (col {col}, row {row})."))
        }
        Input::Scroll {
            direction,
            amount,
            row,
            col,
        } => {
            let (rows, cols) = call.session().screen_size();
            let row = row.unwrap_or(rows.div_ceil(2));
            let col = col.unwrap_or(cols.div_ceil(2));
            outside_viewport(&call, row, col)?;
            let (position, sent_as) = call
                .scroll(row, col, direction, amount)
                .await
                .map_err(nothing_to_scroll)?;
            let dir = match direction {
                Direction::Up => "up",
                Direction::Down => "down",
            };
            let line = if sent_as == "wheel" {
                format!(
                    "Scrolled {dir} {amount} notch{} at (col {col}, row {row}).",
                    if amount == 1 { "" } else { "es" }
                )
            } else {
                format!(
                    "Sent {amount} Arrow{} key{}: the program does not track the mouse, so the wheel acts as arrow keys.",
                    if dir == "up" { "Up" } else { "Down" },
                    if amount == 1 { "" } else { "s" }
                )
            };
            (position, line)
        }
    };
    let outcome = call
        .wait(&Until::Quiet(idle), position, max, &ctx.cancel, &NoProgress)
        .await;
    await_exit_record(&call).await;
    // The last screen comes after the last byte: the exit can be reaped before the reader
    // has the program's last output (a child holding the terminal open bounds the wait).
    if call.session().exit_now().is_some() {
        call.wait_output_end(OUTPUT_END_GRACE).await;
    }
    let settled = Settled {
        elapsed_ms: started.elapsed().as_millis(),
        bytes: call.session().position().saturating_sub(position),
        timed_out: outcome.reason == Reason::Timeout,
        capped: asked_max > HARD_CAP_MS,
    };
    let mut text = format!("{first}\n{}", settle_note(&settled));
    text.push_str("\n\n");
    text.push_str(&ending(&call));
    Ok(Reply::prose(text))
}

/// How long an exited program's output may take to reach its end before the screen is taken.
const OUTPUT_END_GRACE: Duration = Duration::from_millis(500);

/// Once the program's output has ended, waits (at most a second, on the session's events)
/// for its exit to be recorded, so that a shell that ended during the call is reported as
/// ended, and the next call on its id is told so.
async fn await_exit_record(call: &SessionCall) {
    let session = call.session();
    if !session.ending() || session.exit().is_some() {
        return;
    }
    let mut events = session.subscribe();
    let _ = tokio::time::timeout(Duration::from_secs(1), async {
        while session.exit_now().is_none() {
            if events.changed().await.is_err() {
                break;
            }
        }
    })
    .await;
}

/// What every input call ends with: the screen, or how the program or shell ended.
fn ending(call: &SessionCall) -> String {
    let session = call.session();
    match (session.is_command(), session.exit_now()) {
        (true, Some(exit)) => format!(
            "The command exited ({}){}.\n\n{}",
            exit_phrase(&exit),
            exited_at(call),
            screen_block(&current(call), true, 0)
        ),
        (false, Some(exit)) => shell_exited(Some(&exit), &session.screen_text()),
        _ => screen_block(&current(call), true, 0),
    }
}

/// Whether the program asked for bracketed paste (`ESC [?2004h`).
fn bracketed_paste_on(call: &SessionCall) -> bool {
    call.session().bracketed_paste()
}

/// Upstream refuses a plain character: it is text, for terminal_type.
fn refuse_plain_key(key: &str) -> Result<(), ToolError> {
    let mut chars = key.chars();
    if let (Some(c), None) = (chars.next(), chars.next())
        && c.is_ascii_alphabetic()
    {
        return Err(ToolError::new(format!(
            "Plain letter keys should be sent via terminal_type, not terminal_press: {key}"
        )));
    }
    Ok(())
}

/// The core's "no such key" sentence, led by upstream's `Unknown key: X`.
fn key_error(e: termpilot_core::Error) -> ToolError {
    let message = crate::mcp::wire::errors::message(&e);
    if message.contains("key") && !message.starts_with("Unknown key") {
        return ToolError::new(format!("Unknown key: {message}"));
    }
    ToolError::new(message)
}

fn outside_viewport(call: &SessionCall, row: usize, col: usize) -> Result<(), ToolError> {
    let (rows, cols) = call.session().screen_size();
    if row > rows || col > cols {
        return Err(ToolError::new(format!(
            "(col {col}, row {row}) is outside the {cols}x{rows} viewport. Check terminal_read for the current size."
        )));
    }
    Ok(())
}

fn no_mouse(e: termpilot_core::Error, row: usize, col: usize) -> ToolError {
    match e {
        termpilot_core::Error::Fault(termpilot_core::Fault::NoMouse) => ToolError::new(format!(
            "(col {col}, row {row}): the foreground program has not enabled mouse tracking, so a click would just print escape sequences as visible text. This is usually the case at a plain shell prompt. Inside a TUI (vim with `set mouse=a`, fzf, lazygit, less, etc.) mouse mode is auto-enabled on startup. If you genuinely want to print the click sequence (e.g. testing), use terminal_type directly."
        )),
        other => ToolError::new(crate::mcp::wire::errors::message(&other)),
    }
}

fn nothing_to_scroll(e: termpilot_core::Error) -> ToolError {
    match e {
        termpilot_core::Error::Fault(termpilot_core::Fault::NothingScrolls) => ToolError::new(
            "Nothing to scroll: the program on screen neither tracks the mouse nor uses the alternate screen (a plain shell prompt). Earlier output is read with terminal_read and its page argument, not by scrolling.",
        ),
        other => ToolError::new(crate::mcp::wire::errors::message(&other)),
    }
}

/// `terminal_read`: the state line and the window, with the final-screen note of an ended
/// command session.
pub async fn read(ctx: ToolCtx, given: JsonObject) -> Result<Reply, ToolError> {
    let id = session_id(&given);
    let call = turn(&ctx, &id, false).await?;
    let page = uint(&given, "page").unwrap_or(0) as usize;
    let join = flag(&given, "joinWrapped", true);
    let cursor = flag(&given, "cursor", true);
    let highlights = flag(&given, "highlights", true);
    let options = ScreenOptions {
        page,
        join_wrapped: join,
        cursor,
        highlights,
    };
    let (screen, _) = call.read_screen(options);
    let joined = if join {
        let (rows, _) = call.read_screen(ScreenOptions {
            join_wrapped: false,
            cursor: false,
            highlights: false,
            ..options
        });
        lines(&rows.text).saturating_sub(lines(&screen.text))
    } else {
        0
    };
    let mut text = String::new();
    if let (true, Some(exit)) = (call.session().is_command(), call.session().exit_now()) {
        text.push_str(&format!(
            "The command exited ({}){}; this is its final screen.\n",
            exit_phrase(&exit),
            exited_at(&call)
        ));
    }
    text.push_str(&screen_block(&screen, cursor, joined));
    Ok(Reply::prose(text))
}

fn lines(text: &str) -> usize {
    if text.is_empty() {
        0
    } else {
        text.split('\n').count()
    }
}

/// `terminal_wait`: the command's end, a pattern on the screen, or quiet, reporting
/// progress about every second.
pub async fn wait(ctx: ToolCtx, given: JsonObject) -> Result<Reply, ToolError> {
    let id = session_id(&given);
    let timeout_ms = uint(&given, "timeoutMs").unwrap_or(30_000);
    let pattern = given
        .get("pattern")
        .and_then(Value::as_str)
        .map(str::to_string);
    let quiet_mode = given.get("until").and_then(Value::as_str) == Some("quiet");
    let quiet_ms = uint(&given, "quietMs").unwrap_or(1000);
    let until = match &pattern {
        Some(p) => {
            let re = regex::Regex::new(&format!("(?m){p}")).map_err(|e| {
                let detail = e.to_string();
                let last = detail.lines().last().unwrap_or("").trim().to_string();
                ToolError::new(format!("Invalid pattern: /{p}/: {last}"))
            })?;
            Until::Pattern(re, On::Screen)
        }
        None if quiet_mode => Until::Quiet(Duration::from_millis(quiet_ms.max(1))),
        None => Until::Exit,
    };
    let call = turn(&ctx, &id, false).await?;
    let what = match (&pattern, quiet_mode) {
        (Some(p), _) => format!("/{p}/"),
        (None, true) => "output to go quiet".into(),
        (None, false) => "the command to finish".into(),
    };
    let ticker = tick_progress(&ctx, what);
    let started = Instant::now();
    let since = call.wait_start();
    let outcome = call
        .wait(
            &until,
            since,
            Duration::from_millis(timeout_ms),
            &ctx.cancel,
            &NoProgress,
        )
        .await;
    // Upstream's rule for the command's end: the shell has the terminal back and its output
    // has been quiet for quietMs (default 300 ms), so a shell about to exit is seen exiting.
    let outcome = if outcome.reason == Reason::Exit
        && pattern.is_none()
        && !quiet_mode
        && !call.session().is_command()
    {
        let quiet = Duration::from_millis(uint(&given, "quietMs").unwrap_or(300).max(1));
        let left = Duration::from_millis(timeout_ms).saturating_sub(started.elapsed());
        let again = call
            .wait(
                &Until::Quiet(quiet),
                outcome.position,
                left,
                &ctx.cancel,
                &NoProgress,
            )
            .await;
        if again.reason == Reason::Timeout {
            again
        } else {
            outcome
        }
    } else {
        outcome
    };
    ticker.abort();
    await_exit_record(&call).await;
    let elapsed = started.elapsed().as_millis();
    let session = call.session();
    let first = match outcome.reason {
        Reason::Matched => format!(
            "Pattern /{}/ matched after {elapsed}ms.",
            pattern.as_deref().unwrap_or_default()
        ),
        Reason::Quiet => {
            format!("Output has been quiet for {quiet_ms}ms, {elapsed}ms after the call started.")
        }
        Reason::Exit => match (session.is_command(), session.exit_now()) {
            (true, Some(exit)) => {
                format!(
                    "The command exited ({}){}.",
                    exit_phrase(&exit),
                    exited_at(&call)
                )
            }
            (false, Some(exit)) => {
                return Ok(Reply::prose(shell_exited(
                    Some(&exit),
                    &session.screen_text(),
                )));
            }
            _ => format!("Command finished: the shell is back at its prompt after {elapsed}ms."),
        },
        Reason::Timeout => match (&pattern, quiet_mode) {
            (Some(p), _) => format!("Timed out after {elapsed}ms: pattern /{p}/ has not appeared."),
            (None, true) => {
                format!("Timed out after {elapsed}ms: output never stayed quiet for {quiet_ms}ms.")
            }
            (None, false) => format!(
                "Timed out after {elapsed}ms: the command is still running. Call terminal_wait again to keep waiting, or terminal_press Ctrl+C to interrupt it."
            ),
        },
        Reason::Cancelled => return Ok(Reply::prose(format!("Wait cancelled after {elapsed}ms."))),
    };
    Ok(Reply::prose(format!(
        "{first}\n\n{}",
        screen_block(&current(&call), true, 0)
    )))
}

/// Reports `Waiting for … (Ns)` about every second until aborted (nothing is sent when the
/// client asked for no progress).
fn tick_progress(ctx: &ToolCtx, what: String) -> tokio::task::JoinHandle<()> {
    let progress = Arc::clone(&ctx.progress);
    tokio::spawn(async move {
        let started = Instant::now();
        let mut tick = tokio::time::interval_at(
            tokio::time::Instant::now() + Duration::from_millis(900),
            Duration::from_secs(1),
        );
        loop {
            tick.tick().await;
            let elapsed = started.elapsed();
            progress.report(
                elapsed,
                &format!("Waiting for {what} ({}s)", elapsed.as_secs_f64().round()),
            );
        }
    })
}
