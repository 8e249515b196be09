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

use super::adapt::{Adapt, Finish};
use super::{ErrorShape, Explicit, Identity, Natives};
use crate::mcp::registry::{BoxFuture, ToolDef};
use crate::mcp::reply::{Reply, ToolError};

pub fn identity() -> Identity {
    Identity {
        name: "terminal-use",
        title: "terminal-use (termpilot)",
        instructions: "Real terminals you use as a person does: create a session, type and press keys, wait for a command to finish or text to appear, read the screen as text or take a screenshot, click and scroll. Every tool but terminal_create and terminal_list takes the integer sessionId that terminal_create returns.",
        errors: ErrorShape::Sentence,
        tool_names: &[
            ("terminal_start", "terminal_create"),
            ("terminal_stop", "terminal_destroy"),
            ("terminal_write", "terminal_type"),
            ("terminal_send_key", "terminal_press"),
        ],
        skill: Some(crate::skills::TERMINAL_USE_SKILL_MD),
    }
}

/// Numeric ids, eviction at the limit, all tools direct.
pub fn configure(config: &mut Config, explicit: Explicit) -> Result<(), String> {
    config.session_ids = SessionIds::Numbers;
    config.evict_lru = true;
    config.surface.all_direct = true;
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

fn id_of(given: &JsonObject) -> String {
    match given.get("sessionId") {
        Some(Value::String(s)) => s.clone(),
        Some(v) => v.to_string(),
        None => "?".into(),
    }
}

pub fn tools(n: &Natives) -> Vec<ToolDef> {
    let read = n.get("terminal_read");
    let wait_finish: Finish = Arc::new(move |ctx, native, call, given| {
        let read = read.clone();
        Box::pin(async move {
            let outcome = native.call(ctx.clone(), call.clone()).await?;
            let mut screen_args = JsonObject::new();
            screen_args.insert("sessionId".into(), call["sessionId"].clone());
            screen_args.insert("view".into(), json!("screen"));
            let screen = read.call(ctx, screen_args).await?;
            Ok(Reply::prose(format!(
                "{}\n\n{}",
                wait_outcome(&outcome.value, &given),
                screen_prose(&screen.value)
            )))
        }) as BoxFuture
    });
    vec![
        Adapt {
            rename: &[("label", "name")],
            finish: Some(render_with(created)),
            ..Adapt::same(
                "terminal_create",
                "Start a session: an interactive shell, or one program when command is given (it runs through the session's shell; its exit status is reported and the last screen stays readable). Optional label, cols, rows, shell, cwd, env, login (read profile files), scrollback, theme (dark, light, solarized-dark, solarized-light). Returns the session id and the command a person runs to watch and type along.",
            )
        }
        .build(n.get("terminal_start")),
        Adapt {
            hide: &["verbose"],
            finish: Some(render_with(listed)),
            ..Adapt::same("terminal_list", "List the sessions: id, label, size, cwd, theme, how long idle, and how an ended command session exited.")
        }
        .build(n.get("terminal_list")),
        prose_tool(
            n,
            "terminal_destroy",
            "terminal_stop",
            "End a session and everything it runs. Its id is not kept.",
            |a| Adapt { hide: &["snapshotLines", "transcriptPath", "overwrite"], ..a },
            render_with(|v, given| {
                Ok(format!(
                    "Destroyed session {}. {}",
                    id_of(given),
                    v["message"].as_str().unwrap_or_default()
                ))
            }),
        ),
        prose_tool(
            n,
            "terminal_type",
            "terminal_write",
            "Type text as keystrokes (\\n presses Enter) and return the screen once output settles (up to 10 s). paste: true sends it as one bracketed paste, for multi-line text in editors and REPLs. For long work follow with terminal_wait.",
            |a| Adapt {
                rename: &[("text", "data")],
                hide: &["returnOutput"],
                fixed: vec![("returnOutput", json!("screen"))],
                ..a
            },
            render_with(|v, given| {
                Ok(format!(
                    "Typed into session {}; the screen settled.\n\n{}",
                    id_of(given),
                    screen_prose(&v["screen"])
                ))
            }),
        ),
        prose_tool(
            n,
            "terminal_press",
            "terminal_send_key",
            "Press a key or combination (Enter, Tab, Escape, Backspace, ArrowUp, Ctrl+C, Shift+Tab, Alt+Enter, F5, …), count times, and return the screen once output settles.",
            |a| Adapt {
                hide: &["returnOutput"],
                fixed: vec![("returnOutput", json!("screen"))],
                ..a
            },
            render_with(|v, given| {
                let count = given.get("count").and_then(Value::as_u64).unwrap_or(1);
                let times = if count > 1 { format!(" ×{count}") } else { String::new() };
                Ok(format!(
                    "Pressed {}{times}; the screen settled.\n\n{}",
                    given.get("key").and_then(Value::as_str).unwrap_or_default(),
                    screen_prose(&v["screen"])
                ))
            }),
        ),
        prose_tool(
            n,
            "terminal_wait",
            "terminal_wait",
            "Wait, then show the screen. By default until the running command ends (the shell owns the terminal again; a command session reports its exit status); with pattern until a regex appears on the screen (^ and $ per line, leading (?i) or (?s) for flags); with until: \"quiet\" until output stops for quietMs. timeoutMs defaults to 30 s (max 10 min); a timeout is not an error: the command is still running, wait again.",
            |a| Adapt {
                hide: &["on", "returnMode", "since", "tailLines"],
                rename: &[("timeoutMs", "timeout")],
                props: vec![
                    ("sessionId", session_id_schema()),
                    ("until", json!({"type": "string", "enum": ["quiet"]})),
                    ("timeoutMs", json!({"type": "integer", "minimum": 1, "maximum": 600000, "default": 30000})),
                ],
                pre: Some(|call| {
                    id_to_string(call);
                    if call.contains_key("pattern") {
                        call.insert("on".into(), json!("screen"));
                    } else if !call.contains_key("until") {
                        call.insert("until".into(), json!("exit"));
                    }
                }),
                ..a
            },
            wait_finish,
        ),
        prose_tool(
            n,
            "terminal_read",
            "terminal_read",
            "Read the screen as text: page 0 is the current screen, 1 the one before it in the scrollback, and so on. Wrapped lines are joined (joinWrapped: false keeps screen rows); the cursor shows as ▌ (cursor: false leaves the text as it is); reverse-video or coloured items (a selected menu entry) are listed with their row and columns for terminal_click (highlights: false turns it off).",
            |a| Adapt {
                hide: &["since", "timeout", "idleTimeout", "maxLines", "raw", "view"],
                fixed: vec![("view", json!("screen"))],
                ..a
            },
            render_with(|v, _| Ok(screen_prose(v))),
        ),
        prose_tool(
            n,
            "terminal_screenshot",
            "terminal_screenshot",
            "Render the screen as a PNG, in the session's theme: for layout and colour that text cannot show.",
            |a| Adapt { hide: &["theme"], ..a },
            render_with(|v, given| {
                Ok(format!(
                    "Screenshot of session {} ({}×{} cells, {}×{} px).",
                    id_of(given), v["cols"], v["rows"], v["width"], v["height"]
                ))
            }),
        ),
        prose_tool(
            n,
            "terminal_click",
            "terminal_click",
            "Left-click a cell (row and col from 1; (1, 1) is the top left). preview is on by default: it returns a screenshot with a ring around the cell and sends nothing; call again with preview: false to click. The program must have mouse reporting on (vim with set mouse=a, fzf, htop, lazygit); at a shell prompt this is an error.",
            |a| Adapt { hide: &["theme"], ..a },
            render_with(|v, given| {
                let at = format!("row {}, col {}", v["row"], v["col"]);
                if v["preview"] == true {
                    Ok(format!("Preview of a click on session {} at {at} (the ring marks the cell); nothing was sent. Call again with preview: false to click.", id_of(given)))
                } else {
                    let screen = v.get("screen").map(screen_prose).unwrap_or_default();
                    Ok(format!("Clicked {at}.\n\n{screen}"))
                }
            }),
        ),
        prose_tool(
            n,
            "terminal_scroll",
            "terminal_scroll",
            "Turn the mouse wheel over a cell: wheel events for programs that track the mouse, arrow keys in full-screen programs that do not (less, man). At a shell prompt there is nothing to scroll: read earlier output with terminal_read and page.",
            |a| a,
            render_with(|v, given| {
                let screen = v.get("screen").filter(|s| !s.is_null()).map(screen_prose).unwrap_or_default();
                Ok(format!(
                    "Scrolled {} {} (sent as {}).\n\n{screen}",
                    given.get("direction").and_then(Value::as_str).unwrap_or("down"),
                    given.get("amount").and_then(Value::as_u64).unwrap_or(3),
                    v["sentAs"].as_str().unwrap_or("wheel"),
                ))
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
            render_with(|v, _| {
                let screen = screen_prose(&v["screen"]);
                if v["ok"] == false {
                    return Err(ToolError::new(format!(
                        "{}\n\n{screen}",
                        v["error"].as_str().unwrap_or("An action failed.")
                    )));
                }
                Ok(format!("Ran all {} actions.\n\n{screen}", v["total"]))
            }),
        ),
        prose_tool(
            n,
            "terminal_resize",
            "terminal_resize",
            "Resize a session's terminal.",
            |a| a,
            render_with(|v, given| {
                Ok(format!("Session {} is now {}×{}.", id_of(given), v["cols"], v["rows"]))
            }),
        ),
        prose_tool(
            n,
            "terminal_reset",
            "terminal_reset",
            "Clear the screen and scrollback, or with hardReset: true restart the shell (a command session reruns its command).",
            |a| a,
            render_with(|v, given| {
                Ok(format!(
                    "Reset session {}: {}",
                    id_of(given),
                    v["message"].as_str().unwrap_or_default()
                ))
            }),
        ),
    ]
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
    let label = given
        .get("label")
        .and_then(Value::as_str)
        .map(|l| format!(" \"{l}\""))
        .unwrap_or_default();
    let theme = given.get("theme").and_then(Value::as_str).unwrap_or("dark");
    let running = given
        .get("command")
        .and_then(Value::as_str)
        .map(|c| format!(", running `{c}`"))
        .unwrap_or_default();
    let mut out = format!(
        "Created session {id}.\nSession {id}{label}: {} {}×{}, cwd {}, theme {theme}{running}.",
        v["shell"].as_str().unwrap_or_default(),
        v["cols"],
        v["rows"],
        v["cwd"].as_str().unwrap_or_default(),
    );
    if let Some(attach) = v["attach"].as_str() {
        out.push_str(&format!(
            "\nTo watch and type along from your own terminal: {attach}"
        ));
    }
    Ok(out)
}

fn listed(v: &Value, _: &JsonObject) -> Result<String, ToolError> {
    let sessions = v["sessions"].as_array().cloned().unwrap_or_default();
    if sessions.is_empty() {
        return Ok("No sessions.".into());
    }
    let lines: Vec<String> = sessions
        .iter()
        .map(|s| {
            let label = s["name"]
                .as_str()
                .map(|l| format!(" \"{l}\""))
                .unwrap_or_default();
            let mut line = format!(
                "Session {}{label}: {}×{}, {}, cwd {}, theme {}, idle {}s",
                s["id"].as_str().unwrap_or_default(),
                s["cols"],
                s["rows"],
                s["shell"].as_str().unwrap_or_default(),
                s["cwd"].as_str().unwrap_or_default(),
                s["theme"].as_str().unwrap_or("dark"),
                s["idleMs"].as_u64().unwrap_or(0) / 1000
            );
            if let Some(fg) = s["foreground"].as_str() {
                line.push_str(&format!(", running {fg}"));
            }
            if let Some(exited) = s["exited"].as_str() {
                line.push_str(&format!(", ended ({exited})"));
            }
            line
        })
        .collect();
    Ok(lines.join("\n"))
}

/// The first line of a wait's answer: what happened.
fn wait_outcome(v: &Value, given: &JsonObject) -> String {
    let timeout = given
        .get("timeoutMs")
        .and_then(Value::as_u64)
        .unwrap_or(30_000);
    if v["timedOut"] == true {
        return if given.contains_key("pattern") {
            format!("Timed out after {timeout}ms: the pattern did not appear on the screen")
        } else if given.contains_key("until") {
            format!("Timed out after {timeout}ms: the output did not go quiet")
        } else {
            format!("Timed out after {timeout}ms: the command is still running")
        };
    }
    match v["reason"].as_str().unwrap_or_default() {
        "pattern" => format!(
            "Matched {:?} on the screen.",
            v["matchedText"].as_str().unwrap_or_default()
        ),
        "quiet" => format!(
            "The output was quiet for {} ms.",
            given.get("quietMs").and_then(Value::as_u64).unwrap_or(1000)
        ),
        "exit" => match v["exitCode"].as_i64() {
            Some(code) => format!("The command exited (exit code {code})."),
            None => "The command finished: the shell has the terminal again.".into(),
        },
        other => format!("The wait ended ({other})."),
    }
}

/// A screen as terminal-use shows it: a header, the text, and the highlighted items.
fn screen_prose(v: &Value) -> String {
    if v.is_null() {
        return String::new();
    }
    let cursor = &v["cursor"];
    let under = cursor["char"]
        .as_str()
        .map(|c| format!(" on {c:?}"))
        .unwrap_or_default();
    let cursor_note = if cursor["visible"] == true {
        format!(
            ", cursor at row {}, col {}{under}",
            cursor["row"], cursor["col"]
        )
    } else {
        String::new()
    };
    let page = match v["page"].as_u64() {
        Some(0) | None => String::new(),
        Some(p) => format!(", page {p} of {}", v["pagesBack"]),
    };
    let alt = if v["altScreen"] == true {
        ", alternate screen"
    } else {
        ""
    };
    let mut out = format!(
        "Screen ({}×{}{alt}{page}{cursor_note}):\n{}",
        v["cols"],
        v["rows"],
        v["text"].as_str().unwrap_or_default()
    );
    let highlights = v["highlights"].as_array().cloned().unwrap_or_default();
    if !highlights.is_empty() {
        out.push_str(
            "\n\nHighlighted on screen (reverse video or background color; screen row, columns):",
        );
        for h in highlights {
            out.push_str(&format!(
                "\n  row {}, cols {}-{}: {:?}",
                h["row"],
                h["startCol"],
                h["endCol"],
                h["text"].as_str().unwrap_or_default()
            ));
        }
    } else if let Some(hint) = v["highlightsHint"].as_str() {
        out.push_str(&format!("\n\n{hint}"));
    }
    if let Some(exit) = v["exited"].as_str() {
        out.push_str(&format!("\n\nThe command exited ({exit})."));
    }
    out
}
