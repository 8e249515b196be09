//! `--compat terminal-use`: terminal-use's 13 tools (seed 001, in Japanese).
//!
//! Session ids are integers from 1 (the core's numeric ids), results are prose with the
//! screen as text (as upstream answers), and the lifecycle is terminal-use's: at most 50
//! sessions, a new one evicting the least recently used (its id reserved, the next call on
//! it told so), 6 hours idle. Each tool is a native one renamed and reshaped: create/destroy/
//! type/press are terminal_start/stop/write/send_key; the others keep their names.

use std::sync::Arc;

use rmcp::model::JsonObject;
use serde_json::{Value, json};
use termpilot_core::Config;
use termpilot_core::config::SessionIds;

use termpilot_core::session::Direction;
use termpilot_core::session::ScreenOptions;

use super::adapt::{Adapt, Finish};
use super::terminal_use_io::{self as io, Input};
use super::terminal_use_text as text;
use super::{ErrorShape, Explicit, Identity, Natives};
use crate::mcp::args;
use crate::mcp::registry::{BoxFuture, Surface, ToolCtx, ToolDef};
use crate::mcp::reply::{Reply, ToolError};

pub fn identity() -> Identity {
    Identity {
        name: "terminal-use",
        title: "terminal-use (termpilot)",
        instructions: "Real terminals you use as a person does: terminal_create returns a sessionId, the integer every other tool but terminal_list takes; type and press keys, wait for a command to finish or text to appear, read the screen as text or take a screenshot, click and scroll.",
        errors: ErrorShape::Sentence,
        tool_names: &[
            ("terminal_start", "terminal_create"),
            ("terminal_stop", "terminal_destroy"),
            ("terminal_write", "terminal_type"),
            ("terminal_send_key", "terminal_press"),
            // A native sentence naming a native field, as this preset calls it (arguments are
            // checked against the preset's own schema first, so no other native field name
            // reaches an error).
            ("pick another name", "pick another label"),
        ],
        skill: Some(crate::skills::TERMINAL_USE_SKILL_MD),
    }
}

/// Numeric ids, eviction at the limit, all tools direct.
pub fn configure(
    config: &mut Config,
    surface: &mut Surface,
    explicit: Explicit,
) -> Result<(), String> {
    config.session_ids = SessionIds::Numbers;
    config.evict_lru = true;
    surface.all_direct = true;
    if !explicit.max_sessions {
        config.max_sessions = 50;
    }
    if !explicit.idle_timeout {
        config.idle_timeout = std::time::Duration::from_secs(6 * 3600);
    }
    Ok(())
}

fn session_id_schema() -> Value {
    json!({"type": "integer", "minimum": 1, "description": "The id terminal_create returned."})
}

/// The integer id as the core's string id.
fn id_to_string(args: &mut JsonObject) {
    if let Some(Value::Number(n)) = args.get("sessionId") {
        let id = n.to_string();
        args.insert("sessionId".into(), Value::String(id));
    }
}

/// A tool over `native` that takes an integer sessionId and answers in prose.
fn prose_tool(
    n: &Natives,
    name: &'static str,
    native: &'static str,
    description: &'static str,
    edit: impl FnOnce(Adapt) -> Adapt,
    finish: Finish,
) -> ToolDef {
    let base = Adapt {
        props: vec![("sessionId", session_id_schema())],
        pre: Some(id_to_string),
        finish: Some(finish),
        ..Adapt::same(name, description)
    };
    edit(base).build(n.get(native))
}

/// Calls the native tool and renders its result with `render` (images kept).
fn render_with(render: fn(&Value, &JsonObject) -> Result<String, ToolError>) -> Finish {
    Arc::new(move |ctx, native, call, given| {
        Box::pin(async move {
            let reply = native.call(ctx, call).await?;
            Ok(Reply {
                images: reply.images,
                ..Reply::prose(render(&reply.value, &given)?)
            })
        }) as BoxFuture
    })
}

/// One of the tools that type, press, click, scroll, read or wait: its schema written out
/// as upstream's, its arguments checked against it, then handed to `run`.
fn io_tool(
    n: &Natives,
    name: &'static str,
    native: &'static str,
    description: &'static str,
    props: Value,
    required: &[&str],
    run: fn(ToolCtx, JsonObject) -> BoxFuture,
) -> ToolDef {
    let native = n.get(native);
    let mut schema = JsonObject::new();
    schema.insert("type".into(), json!("object"));
    let mut props = props;
    if let Value::Object(p) = &mut props {
        p.insert("sessionId".into(), session_id_schema());
    }
    schema.insert("properties".into(), props);
    let mut req = vec!["sessionId"];
    req.extend_from_slice(required);
    schema.insert("required".into(), json!(req));
    let shown = Arc::new(schema.clone());
    let handler = Arc::new(move |ctx: ToolCtx, raw: JsonObject| {
        let shown = shown.clone();
        Box::pin(async move {
            args::validate(name, &shown, &raw).map_err(zod_words)?;
            run(ctx, raw).await
        }) as BoxFuture
    });
    ToolDef::raw(
        name,
        native.title,
        description,
        native.hints,
        schema,
        false,
        handler,
    )
}

/// A range refusal with the words upstream's schema library uses (`too_big`, `less than or
/// equal to`), which its users match on.
fn zod_words(e: ToolError) -> ToolError {
    let m = &e.message;
    if let Some((_, max)) = m.split_once("above the maximum ") {
        let max = max.split(';').next().unwrap_or(max);
        return ToolError::new(format!(
            "{m} (too_big: must be less than or equal to {max})"
        ));
    }
    if let Some((_, min)) = m.split_once("below the minimum ") {
        let min = min.split(';').next().unwrap_or(min);
        return ToolError::new(format!(
            "{m} (too_small: must be greater than or equal to {min})"
        ));
    }
    e
}

fn settle_props() -> [(&'static str, Value); 2] {
    [
        (
            "idleMs",
            json!({"type": "integer", "minimum": 0, "maximum": io::HARD_CAP_MS, "default": 200, "description": "Settle window: silence this long after the last byte counts as settled."}),
        ),
        (
            "maxWaitMs",
            json!({"type": "integer", "minimum": 0, "default": 5000, "description": "Overall cap on the settle wait, clamped to 10000. Use terminal_wait for longer."}),
        ),
    ]
}

fn with_settle(mut props: Value) -> Value {
    if let Value::Object(p) = &mut props {
        for (k, v) in settle_props() {
            p.insert(k.into(), v);
        }
    }
    props
}

fn direction(given: &JsonObject) -> Direction {
    match given.get("direction").and_then(Value::as_str) {
        Some("up") => Direction::Up,
        _ => Direction::Down,
    }
}

fn usize_of(given: &JsonObject, key: &str) -> Option<usize> {
    given.get(key).and_then(Value::as_u64).map(|v| v as usize)
}

pub fn tools(n: &Natives) -> Vec<ToolDef> {
    let click_native = n.get("terminal_click");
    let click_finish: Finish = Arc::new(move |ctx, native, call, given| {
        let _ = &native;
        let click_native = click_native.clone();
        Box::pin(async move {
            let (row, col) = (
                usize_of(&given, "row").unwrap_or(1),
                usize_of(&given, "col").unwrap_or(1),
            );
            if given.get("preview").and_then(Value::as_bool) == Some(false) {
                return io::run_input(ctx, given, Input::Click { row, col }).await;
            }
            let id = io::session_id(&given);
            if let Some(s) = ctx.core.sessions.peek(&id) {
                let (rows, cols) = s.screen_size();
                if row > rows || col > cols {
                    return Err(ToolError::new(format!(
                        "(col {col}, row {row}) is outside the {cols}x{rows} viewport. Check terminal_read for the current size."
                    )));
                }
            }
            let mut native_call = call.clone();
            native_call.remove("filePath");
            native_call.remove("idleMs");
            native_call.remove("maxWaitMs");
            let reply = click_native
                .call(ctx.clone(), native_call)
                .await
                .map_err(|e| io::reword(&ctx, &id, e))?;
            let state = ctx
                .core
                .sessions
                .peek(&id)
                .map(|s| {
                    let screen = s.read_screen(ScreenOptions::CURRENT);
                    text::state_line(&screen)
                })
                .unwrap_or_default();
            let png = reply.images.first().cloned().unwrap_or_default();
            let mut out = format!(
                "PREVIEW: click at (col {col}, row {row}). No click was sent. Set `preview: false` to execute.\n\n{state}\n\nRendered preview PNG ({} bytes).",
                png.len()
            );
            save_or_attach(&given, png, &mut out).map(|images| Reply {
                images,
                ..Reply::prose(out)
            })
        }) as BoxFuture
    });
    let screenshot_finish: Finish = Arc::new(move |ctx, native, call, given| {
        Box::pin(async move {
            let id = io::session_id(&given);
            let page = given.get("page").and_then(Value::as_u64).unwrap_or(0);
            let mut native_call = call.clone();
            native_call.remove("filePath");
            native_call.remove("page");
            if page > 0 {
                return Err(ToolError::new(format!(
                    "page {page}: only the current screen (page 0) is rendered as a PNG here; read earlier pages as text with terminal_read and page."
                )));
            }
            let reply = native
                .call(ctx.clone(), native_call)
                .await
                .map_err(|e| io::reword(&ctx, &id, e))?;
            let v = &reply.value;
            let state = ctx
                .core
                .sessions
                .peek(&id)
                .map(|s| text::state_line(&s.read_screen(ScreenOptions::CURRENT)))
                .unwrap_or_default();
            let png = reply.images.first().cloned().unwrap_or_default();
            let mut out = format!(
                "{state}\n\nRendered {}x{} PNG ({} bytes) for page {page}.",
                v["width"],
                v["height"],
                png.len()
            );
            save_or_attach(&given, png, &mut out).map(|images| Reply {
                images,
                ..Reply::prose(out)
            })
        }) as BoxFuture
    });
    vec![
        Adapt {
            rename: &[("label", "name")],
            finish: Some(render_with(created)),
            props: vec![
                ("label", json!({"type": "string", "minLength": 1, "maxLength": 64, "description": "Optional human-readable name shown in terminal_list output (e.g. \"dev-server\")."})),
            ],
            ..Adapt::same(
                "terminal_create",
                "Start a session: an interactive shell, or one program when command is given (it runs through the session's shell; its exit status is reported and the last screen stays readable). Optional label, cols, rows, shell, cwd, env, login (read profile files), scrollback, theme (dark, light, solarized-dark, solarized-light). Returns the session id and the command a person runs to watch and type along.",
            )
        }
        .build(n.get("terminal_start")),
        Adapt {
            hide: &["verbose"],
            finish: Some(Arc::new(|ctx, native, call, _given| {
                Box::pin(async move {
                    let reply = native.call(ctx.clone(), call).await?;
                    Ok(Reply::prose(listed(&ctx, &reply.value)))
                }) as BoxFuture
            })),
            ..Adapt::same("terminal_list", "List the sessions: id, label, size, pid, shell, cwd, theme, how long idle, how an ended command session exited, and the ids of sessions that ended (a call on one starts it again).")
        }
        .build(n.get("terminal_list")),
        prose_tool(
            n,
            "terminal_destroy",
            "terminal_stop",
            "End a session and everything it runs. Its id is not kept.",
            |a| Adapt { hide: &["snapshotLines", "transcriptPath", "overwrite"], ..a },
            Arc::new(|ctx, native, call, given| {
                Box::pin(async move {
                    let id = io::session_id(&given);
                    let before = ctx.core.sessions.peek(&id);
                    let reply = native
                        .call(ctx.clone(), call)
                        .await
                        .map_err(|e| io::reword(&ctx, &id, e))?;
                    let what = match before {
                        Some(s) => format!(
                            "Destroyed session {}{} (was pid {}).",
                            id,
                            s.shape().name.as_ref().map(|l| format!(" \"{l}\"")).unwrap_or_default(),
                            s.pid()
                        ),
                        None => format!(
                            "Destroyed session {id}. {}",
                            reply.value["message"].as_str().unwrap_or_default()
                        ),
                    };
                    let left = ctx.core.sessions.count();
                    Ok(Reply::prose(if left == 0 {
                        format!("{what}\nNo sessions remain.")
                    } else {
                        format!("{what}\n{left} session(s) remaining.")
                    }))
                }) as BoxFuture
            }),
        ),
        io_tool(
            n,
            "terminal_type",
            "terminal_write",
            "Type literal characters into the terminal as if a person were pressing keys; \\n presses Enter. paste: true sends the text as one bracketed paste where the program supports it (multi-line text in editors and REPLs). Returns once output has been quiet for idleMs (default 200), at most maxWaitMs (default 5000, capped at 10 s); for builds and other long work follow with terminal_wait.",
            with_settle(json!({
                "text": {"type": "string", "description": "Characters to type. Embedded \\n becomes Enter."},
                "paste": {"type": "boolean", "default": false, "description": "Deliver the text as one bracketed paste when the program has turned it on."}
            })),
            &["text"],
            |ctx, given| Box::pin(async move {
                let text = given.get("text").and_then(Value::as_str).unwrap_or_default().to_string();
                let paste = given.get("paste").and_then(Value::as_bool).unwrap_or(false);
                io::run_input(ctx, given, Input::Type { text, paste }).await
            }),
        ),
        io_tool(
            n,
            "terminal_press",
            "terminal_send_key",
            "Press a named key or combination, count times: Enter, Tab, Escape, Backspace, Space, ArrowUp/Down/Left/Right, Home, End, PageUp, PageDown, Delete, Insert, F1..F12, Ctrl+C, Ctrl+D, Ctrl+A..Ctrl+Z, Shift+Tab, Alt+B, Alt+Enter, Ctrl+ArrowLeft, Ctrl+Shift+ArrowRight… Plain characters are text: send them with terminal_type. Same settle rule as terminal_type.",
            with_settle(json!({
                "key": {"type": "string", "minLength": 1, "description": "Key spec like \"Enter\", \"Ctrl+C\", \"Shift+Tab\", \"ArrowUp\", \"F5\"."},
                "count": {"type": "integer", "minimum": 1, "maximum": 100, "default": 1, "description": "Press the key this many times in a row."}
            })),
            &["key"],
            |ctx, given| Box::pin(async move {
                let key = given.get("key").and_then(Value::as_str).unwrap_or_default().to_string();
                let count = usize_of(&given, "count").unwrap_or(1);
                io::run_input(ctx, given, Input::Press { key, count }).await
            }),
        ),
        io_tool(
            n,
            "terminal_wait",
            "terminal_wait",
            "Wait, then show the screen. By default until the running command ends (the shell owns the terminal again; a command session reports its exit status); with pattern until a regex appears on the screen (^ and $ per line, leading (?i) or (?s) for flags); with until: \"quiet\" until output stops for quietMs. timeoutMs defaults to 30 s (max 10 min); a timeout is not an error: the command is still running, wait again. Reports progress about every second.",
            json!({
                "pattern": {"type": "string", "minLength": 1, "description": "Regular expression matched against the screen text."},
                "until": {"type": "string", "enum": ["command", "quiet"], "default": "command"},
                "timeoutMs": {"type": "integer", "minimum": 0, "maximum": 600000, "default": 30000},
                "quietMs": {"type": "integer", "minimum": 0, "maximum": 600000, "default": 1000, "description": "How long output must stay silent: with until \"quiet\" the whole condition (default 1000); for the command's end, once the shell has the terminal back (default 300)."}
            }),
            &[],
            |ctx, given| Box::pin(io::wait(ctx, given)),
        ),
        io_tool(
            n,
            "terminal_read",
            "terminal_read",
            "Read the screen as text: page 0 is the current screen, 1 the one before it in the scrollback, and so on. Wrapped lines are joined (joinWrapped: false keeps screen rows); the cursor shows as ▌ (cursor: false leaves the text as it is); reverse-video or coloured items (a selected menu entry) are listed with their row and columns for terminal_click (highlights: false turns it off).",
            json!({
                "page": {"type": "integer", "minimum": 0, "default": 0},
                "rows": {"type": "integer", "minimum": 1, "maximum": 1000, "description": "Window height; the screen's height (the only height read here)."},
                "joinWrapped": {"type": "boolean", "default": true},
                "highlights": {"type": "boolean", "default": true},
                "cursor": {"type": "boolean", "default": true}
            }),
            &[],
            |ctx, given| Box::pin(io::read(ctx, given)),
        ),
        prose_tool(
            n,
            "terminal_screenshot",
            "terminal_screenshot",
            "Render the screen as a PNG, in the session's theme: for layout and colour that text cannot show. filePath writes the PNG there instead of returning it.",
            |a| Adapt {
                hide: &["theme"],
                props: vec![
                    ("sessionId", session_id_schema()),
                    ("page", json!({"type": "integer", "minimum": 0, "default": 0})),
                    ("filePath", json!({"type": "string", "description": "Absolute path to write the PNG to."})),
                ],
                ..a
            },
            screenshot_finish,
        ),
        Adapt {
            hide: &["theme"],
            props: vec![
                ("sessionId", session_id_schema()),
                ("filePath", json!({"type": "string", "description": "Preview only: absolute path to write the PNG to."})),
                settle_props()[0].clone(),
                settle_props()[1].clone(),
            ],
            pre: Some(id_to_string),
            finish: Some(click_finish),
            ..Adapt::same(
                "terminal_click",
                "Left-click a cell (row and col from 1; (1, 1) is the top left). preview is on by default: it returns a screenshot with a ring around the cell and sends nothing; call again with preview: false to click. The program must have mouse reporting on (vim with set mouse=a, fzf, htop, lazygit); at a shell prompt this is an error.",
            )
        }
        .build(n.get("terminal_click")),
        io_tool(
            n,
            "terminal_scroll",
            "terminal_scroll",
            "Turn the mouse wheel over a cell (default: the screen's centre): wheel events for programs that track the mouse, arrow keys in full-screen programs that do not (less, man). At a shell prompt there is nothing to scroll: read earlier output with terminal_read and page.",
            with_settle(json!({
                "direction": {"type": "string", "enum": ["up", "down"]},
                "amount": {"type": "integer", "minimum": 1, "maximum": 100, "default": 3},
                "col": {"type": "integer", "minimum": 1, "maximum": 1000},
                "row": {"type": "integer", "minimum": 1, "maximum": 1000}
            })),
            &["direction"],
            |ctx, given| Box::pin(async move {
                let input = Input::Scroll {
                    direction: direction(&given),
                    amount: usize_of(&given, "amount").unwrap_or(3),
                    row: usize_of(&given, "row"),
                    col: usize_of(&given, "col"),
                };
                io::run_input(ctx, given, input).await
            }),
        ),
        prose_tool(
            n,
            "terminal_batch",
            "terminal_batch",
            "Send up to 50 inputs in one call and get the screen once: actions of type type {text}, paste {text}, press {key, count}, click {row, col}, scroll, wait {ms} or {pattern, timeoutMs}. Everything is checked before anything is sent; the batch stops at the first failing action and says how far it got.",
            |a| Adapt {
                props: vec![
                    ("sessionId", session_id_schema()),
                    ("actions", batch_actions_schema(&n.get("terminal_batch").input_schema)),
                ],
                pre: Some(|call| {
                    id_to_string(call);
                    if let Some(Value::Array(actions)) = call.get_mut("actions") {
                        for action in actions.iter_mut().filter_map(Value::as_object_mut) {
                            if let Some(ms) = action.remove("timeoutMs") {
                                action.insert("timeout".into(), ms);
                            }
                        }
                    }
                }),
                ..a
            },
            Arc::new(|ctx, native, call, given| {
                Box::pin(async move {
                    let id = io::session_id(&given);
                    let reply = native
                        .call(ctx.clone(), call)
                        .await
                        .map_err(|e| io::reword(&ctx, &id, batch_error(e)))?;
                    batched(&ctx, &id, &reply.value, &given)
                }) as BoxFuture
            }),
        ),
        prose_tool(
            n,
            "terminal_resize",
            "terminal_resize",
            "Resize a session's terminal (programs inside see the change).",
            |a| a,
            Arc::new(|ctx, native, call, given| {
                Box::pin(async move {
                    let id = io::session_id(&given);
                    let before = ctx.core.sessions.peek(&id).map(|s| s.status().size);
                    let reply = native
                        .call(ctx.clone(), call)
                        .await
                        .map_err(|e| io::reword(&ctx, &id, e))?;
                    let (cols, rows) = (&reply.value["cols"], &reply.value["rows"]);
                    let first = match before {
                        Some(b) if json!(b.cols) == *cols && json!(b.rows) == *rows => {
                            format!("Terminal already {cols}x{rows}; no change.")
                        }
                        Some(b) => format!("Resized terminal from {}x{} to {cols}x{rows}.", b.cols, b.rows),
                        None => format!("Resized terminal to {cols}x{rows}."),
                    };
                    Ok(Reply::prose(format!("{first}\n\n{}", state_of(&ctx, &id))))
                }) as BoxFuture
            }),
        ),
        prose_tool(
            n,
            "terminal_reset",
            "terminal_reset",
            "Clear the screen and scrollback, or with hardReset: true restart the shell (a command session reruns its command).",
            |a| a,
            Arc::new(|ctx, native, call, given| {
                Box::pin(async move {
                    let id = io::session_id(&given);
                    let hard = given.get("hardReset").and_then(Value::as_bool) == Some(true);
                    let reply = native
                        .call(ctx.clone(), call)
                        .await
                        .map_err(|e| io::reword(&ctx, &id, e))?;
                    let pid = &reply.value["pid"];
                    let first = match ctx.core.sessions.peek(&id) {
                        Some(s) if hard => {
                            let size = s.status().size;
                            let what = match &s.shape().command {
                                Some(c) => format!("running `{c}` again"),
                                None => format!("spawned a fresh {}", s.shape().shell.program.display()),
                            };
                            format!(
                                "Hard reset: {what} (pid {pid}) at {}, {}x{}.",
                                s.shape().cwd.display(),
                                size.cols,
                                size.rows
                            )
                        }
                        _ if hard => format!("Hard reset: restarted (pid {pid})."),
                        _ => format!("Soft reset: buffer wiped, shell process (pid {pid}) preserved."),
                    };
                    Ok(Reply::prose(format!("{first}\n\n{}", state_of(&ctx, &id))))
                }) as BoxFuture
            }),
        ),
    ]
}

/// The state line of session `id` now.
fn state_of(ctx: &ToolCtx, id: &str) -> String {
    ctx.core
        .sessions
        .peek(id)
        .map(|s| text::state_line(&s.read_screen(ScreenOptions::CURRENT)))
        .unwrap_or_default()
}

/// Writes the PNG to `filePath` (saying so) or returns it as the image to attach.
fn save_or_attach(
    given: &JsonObject,
    png: Vec<u8>,
    out: &mut String,
) -> Result<Vec<Vec<u8>>, ToolError> {
    match given.get("filePath").and_then(Value::as_str) {
        Some(path) => {
            if !std::path::Path::new(path).is_absolute() {
                return Err(ToolError::new(format!(
                    "filePath `{path}` is not an absolute path; pass an absolute path to write the PNG to."
                )));
            }
            std::fs::write(path, &png).map_err(|e| {
                ToolError::new(format!(
                    "The PNG could not be written to {path} ({e}); pass a filePath in a writable folder."
                ))
            })?;
            out.push_str(&format!("\nSaved to {path}."));
            Ok(Vec::new())
        }
        None => Ok(vec![png]),
    }
}

/// The native batch's refusal in upstream's words (`Action 2 (press): … Nothing was sent.`).
fn batch_error(e: ToolError) -> ToolError {
    let Some(head) = e.message.strip_suffix("; nothing was sent.") else {
        return e;
    };
    // "Action 2 (press NoSuchKey) is invalid: why" → "Action 2 (press): why".
    let parsed = head.strip_prefix("Action ").and_then(|rest| {
        let (n, rest) = rest.split_once(" (")?;
        let (inside, why) = rest.split_once(')')?;
        let kind = inside.split(' ').next()?;
        let why = why.trim_start();
        let why = why.strip_prefix("is invalid: ").unwrap_or(why);
        Some(format!("Action {n} ({kind}): {why}"))
    });
    ToolError::new(format!(
        "{}. Nothing was sent.",
        parsed.unwrap_or_else(|| head.to_string())
    ))
}

/// The batch's answer: all ran, stopped at a failure (an error), or the process exited.
fn batched(ctx: &ToolCtx, id: &str, v: &Value, given: &JsonObject) -> Result<Reply, ToolError> {
    let actions = given
        .get("actions")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let total = actions.len();
    let done = v["completed"].as_u64().unwrap_or(0) as usize;
    let session = ctx.core.sessions.peek(id);
    let exit = session.as_ref().and_then(|s| s.exit_now());
    let screen = session
        .as_ref()
        .map(|s| {
            let screen = s.read_screen(ScreenOptions::CURRENT);
            text::screen_block(&screen, true, 0)
        })
        .unwrap_or_default();
    let plural = |n: usize| if n == 1 { "" } else { "s" };
    // The program exited partway: the native batch stops there (as a failed action); upstream
    // says the process exited, not that the next action failed.
    let exited_partway = exit.is_some() && done < total;
    if v["ok"] == false && !exited_partway {
        let at = v["failedAction"]
            .as_u64()
            .map(|a| a as usize)
            .unwrap_or(done + 1);
        // The native sentence is "Action N (…) failed: WHY; actions 1–k were sent, …".
        let native = v["error"].as_str().unwrap_or("the action failed");
        let why = native
            .split_once(" failed: ")
            .map_or(native, |(_, why)| why)
            .split("; actions ")
            .next()
            .unwrap_or(native)
            .replace("`timeout`", "`timeoutMs`");
        return Err(ToolError::new(format!(
            "Stopped at action {at} of {total} ({}): {}. {done} action{} before it {} sent; the rest were not.\n\n{screen}",
            describe_action(actions.get(at.saturating_sub(1))),
            why.trim_end_matches('.'),
            plural(done),
            if done == 1 { "was" } else { "were" }
        )));
    }
    if let Some(exit) =
        exit.filter(|_| done < total || session.as_ref().is_some_and(|s| s.is_command()))
    {
        let head = if done < total {
            format!(
                "Stopped after action {done} of {total} ({}): the process exited. The remaining actions were not sent.\n",
                describe_action(actions.get(done.saturating_sub(1)))
            )
        } else {
            format!("Ran all {total} action{}.\n", plural(total))
        };
        return Ok(Reply::prose(format!(
            "{head}The command exited ({}).\n\n{screen}",
            text::exit_phrase(&exit)
        )));
    }
    Ok(Reply::prose(format!(
        "Ran all {total} action{}.\n\n{screen}",
        plural(total)
    )))
}

/// `press Ctrl+D`, `wait for /x/`, `type "echo hi"`: how upstream names an action.
fn describe_action(a: Option<&Value>) -> String {
    let Some(a) = a else { return "?".into() };
    let s = |k: &str| {
        a.get(k)
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string()
    };
    match s("type").as_str() {
        "type" => format!(
            "type {}",
            serde_json::to_string(&s("text")).unwrap_or_default()
        ),
        "paste" => format!("paste {} chars", s("text").encode_utf16().count()),
        "press" => match a.get("count").and_then(Value::as_u64) {
            Some(c) if c > 1 => format!("press {} x {c}", s("key")),
            _ => format!("press {}", s("key")),
        },
        "click" => format!("click (col {}, row {})", a["col"], a["row"]),
        "scroll" => format!(
            "scroll {} {}",
            s("direction"),
            a.get("amount").and_then(Value::as_u64).unwrap_or(3)
        ),
        "wait" => match a.get("pattern").and_then(Value::as_str) {
            Some(p) => format!("wait for /{p}/"),
            None => format!("wait {}ms", a["ms"]),
        },
        other => other.to_string(),
    }
}

/// The native batch's `actions` schema with a wait's `timeout` called `timeoutMs`.
fn batch_actions_schema(native: &JsonObject) -> Value {
    let mut actions = native
        .get("properties")
        .and_then(|p| p.get("actions"))
        .cloned()
        .unwrap_or(Value::Null);
    if let Some(Value::Object(props)) = actions.pointer_mut("/items/properties")
        && let Some(timeout) = props.remove("timeout")
    {
        props.insert("timeoutMs".into(), timeout);
    }
    actions
}

fn created(v: &Value, given: &JsonObject) -> Result<String, ToolError> {
    let id = v["sessionId"].as_str().unwrap_or_default();
    let label = given.get("label").and_then(Value::as_str);
    let theme = given.get("theme").and_then(Value::as_str).unwrap_or("dark");
    let mut line = format!(
        "[{}] {}x{} pid={} shell={} cwd={} theme={theme} idle=0s",
        text::tag(id, label),
        v["cols"],
        v["rows"],
        v["pid"],
        v["shell"].as_str().unwrap_or("?"),
        v["cwd"].as_str().unwrap_or("?"),
    );
    if let Some(c) = given.get("command").and_then(Value::as_str) {
        line.push_str(&format!(" command={c}"));
    }
    let mut out = format!(
        "Created session {id}{}.\n{line}",
        label.map(|l| format!(" (\"{l}\")")).unwrap_or_default()
    );
    if let Some(attach) = v["attach"].as_str() {
        out.push_str(&format!(
            "\n\nFOR THE HUMAN USER (not for you, the agent): if the user wants to look in on this session or type into it from their own terminal alongside you, share this command for them to run in their own terminal:\n    {attach}\n(They press Ctrl+] to detach. They can pass --resize to make their terminal size override the session's. The socket survives shell exits and auto-respawns. Do NOT run this command yourself — you already drive this session through the terminal_* tools; the attach command is a separate CLI for the human user.)"
        ));
    }
    Ok(out)
}

/// `2 live session(s):` with a line each, then the reserved ids.
fn listed(ctx: &ToolCtx, v: &Value) -> String {
    let sessions = v["sessions"].as_array().cloned().unwrap_or_default();
    let reserved = ctx.core.sessions.reserved();
    if sessions.is_empty() && reserved.is_empty() {
        return "No sessions. Call terminal_create to spawn one.".into();
    }
    let mut out = if sessions.is_empty() {
        "0 live sessions.".to_string()
    } else {
        format!("{} live session(s):", sessions.len())
    };
    for s in &sessions {
        let id = s["id"].as_str().unwrap_or_default();
        let live = ctx.core.sessions.peek(id);
        let pid = live
            .as_ref()
            .map(|l| l.pid().to_string())
            .unwrap_or_else(|| "?".into());
        out.push_str(&format!(
            "\n[{}] {}x{} pid={pid} shell={} cwd={} theme={} idle={}s",
            text::tag(id, s["name"].as_str()),
            s["cols"],
            s["rows"],
            s["shell"].as_str().unwrap_or("?"),
            s["cwd"].as_str().unwrap_or("?"),
            s["theme"].as_str().unwrap_or("dark"),
            (s["idleMs"].as_u64().unwrap_or(0) + 500) / 1000
        ));
        let command = live.as_ref().and_then(|l| l.shape().command.clone());
        if let Some(exit) = live
            .as_ref()
            .and_then(|l| l.exit())
            .filter(|_| command.is_some())
        {
            out.push_str(&format!(" EXITED ({})", text::exit_phrase(&exit)));
        }
        if let Some(c) = command {
            out.push_str(&format!(" command={c}"));
        }
    }
    if !reserved.is_empty() {
        out.push_str(&format!(
            "\n\n{} tombstoned id(s) (call against them to respawn):",
            reserved.len()
        ));
        for r in &reserved {
            let at = termpilot_core::jobs::rfc3339(r.at);
            let reason = if let Some(how) = r.why.strip_prefix("its shell exited (") {
                let how = how.trim_end_matches(')');
                let how = how
                    .strip_prefix("exit status ")
                    .map(|c| format!("exit code {c}"))
                    .unwrap_or_else(|| how.replace("killed by ", "signal "));
                format!("shell-exit ({how})")
            } else if r.why.starts_with("it was idle") {
                "idle-killed".into()
            } else if r.why.starts_with("it was evicted") {
                "evicted".into()
            } else {
                r.why.clone()
            };
            let tag = text::tag(&r.id, r.name.as_deref());
            match &r.command {
                Some(c) => out.push_str(&format!(
                    "\n[{tag}] closed: {reason} at {at}; command={c} is not run again (the next call on the id is told so, then the id is released)"
                )),
                None => out.push_str(&format!("\n[{tag}] tombstoned: {reason} at {at}")),
            }
        }
    }
    out
}
