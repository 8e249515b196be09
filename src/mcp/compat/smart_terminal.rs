//! `--compat smart-terminal`: smart-terminal-mcp's 16 tools (seed 000, in Japanese).
//!
//! The names are native; the preset hides the native parameters the seed does not have,
//! and adds what the seed documents differently: `terminal_write` (and `terminal_send_key`)
//! are fire-and-forget so the program's answer stays for `terminal_read`; git status lists
//! are path strings; `terminal_watch` always returns `context`; `terminal_run_paged` runs
//! only the read-only command signatures it can page; `terminal_run` says "propose one" when
//! a git/where/which output had no parser. `SMART_TERMINAL_DISABLED_TOOLS` moves tools
//! behind `terminal_extra` (an empty value registers all 16 directly), `SMART_TERMINAL_SHELL`
//! picks the shell, and the limits are 10 sessions and 30 minutes idle.

use std::sync::{Arc, LazyLock};
use std::time::Duration;

use regex::Regex;
use rmcp::model::JsonObject;
use serde_json::{Value, json};
use termpilot_core::Config;

use super::adapt::{Adapt, Finish};
use super::smart_run;
use super::{ErrorShape, Explicit, Identity, Natives};
use crate::mcp::registry::{BoxFuture, DEFAULT_CORE, ToolDef};
use crate::mcp::reply::{Reply, ToolError};

/// The 16 tools, core first.
pub const TOOLS: &[&str] = &[
    "terminal_start",
    "terminal_exec",
    "terminal_run",
    "terminal_read",
    "terminal_write",
    "terminal_wait",
    "terminal_stop",
    "terminal_list",
    "terminal_run_paged",
    "terminal_retry",
    "terminal_diff",
    "terminal_resize",
    "terminal_send_key",
    "terminal_get_history",
    "terminal_write_file",
    "terminal_watch",
];
/// Most sessions at once.
pub const MAX_SESSIONS: usize = 10;
/// Sessions idle this long are ended.
pub const IDLE_TIMEOUT: Duration = Duration::from_secs(30 * 60);

pub fn identity() -> Identity {
    Identity {
        name: "smart-terminal-mcp",
        title: "smart-terminal-mcp (termpilot)",
        instructions: "Real terminals for agents. Core tools are listed directly; more sit behind terminal_extra ({list:true} shows their schemas).",
        tool_names: &[],
        errors: ErrorShape::Sentence,
        skill: None,
    }
}

/// Limits, shell and surface from the preset's environment variables.
pub fn configure(config: &mut Config, explicit: Explicit) -> Result<(), String> {
    if !explicit.max_sessions {
        config.max_sessions = MAX_SESSIONS;
    }
    if !explicit.idle_timeout {
        config.idle_timeout = IDLE_TIMEOUT;
    }
    if !explicit.shell_flag
        && let Some(shell) = std::env::var("SMART_TERMINAL_SHELL")
            .ok()
            .filter(|s| !s.trim().is_empty())
    {
        config.shell = Some(shell);
    }
    if !explicit.surface {
        config.surface = surface(
            std::env::var("SMART_TERMINAL_DISABLED_TOOLS")
                .ok()
                .as_deref(),
        );
    }
    Ok(())
}

/// `SMART_TERMINAL_DISABLED_TOOLS` names the tools moved behind `terminal_extra` (unset: the
/// 8 extras); an empty value means every tool is direct. Names it does not know are ignored.
fn surface(disabled: Option<&str>) -> termpilot_core::config::Surface {
    let mut surface = termpilot_core::config::Surface::default();
    match disabled {
        None => {
            surface.core_tools = Some(DEFAULT_CORE.iter().map(|s| s.to_string()).collect());
        }
        Some(list) if list.trim().is_empty() => surface.all_direct = true,
        Some(list) => {
            let off: Vec<&str> = list.split(',').map(str::trim).collect();
            surface.core_tools = Some(
                TOOLS
                    .iter()
                    .filter(|t| !off.contains(t))
                    .map(|s| s.to_string())
                    .collect(),
            );
        }
    }
    surface
}

pub fn tools(n: &Natives) -> Vec<ToolDef> {
    let fire_and_forget = |name: &'static str, hide: &'static [&'static str], description| {
        Adapt {
            hide,
            fixed: vec![("returnOutput", json!("none"))],
            reshape: Some(Arc::new(move |_, given: &JsonObject| {
                let mut out = json!({"success": true, "sessionId": given.get("sessionId")});
                if name == "terminal_send_key" {
                    out["key"] = given.get("key").cloned().unwrap_or(Value::Null);
                }
                Ok(out)
            })),
            ..Adapt::same(name, description)
        }
        .upstream(n.get(name))
    };
    vec![
        Adapt {
            hide: &["command", "login", "scrollback", "theme"],
            defaults: defaults(&[("cols", json!(120)), ("rows", json!(30))]),
            pre: Some(force_anti_blocking_env),
            reshape: Some(Arc::new(|v, _| {
                let banner = v["banner"].as_str().filter(|b| !b.is_empty()).unwrap_or("(no banner)");
                Ok(json!({
                    "sessionId": v["sessionId"],
                    "shell": v["shell"],
                    "shellType": v["shellType"],
                    "cwd": v["cwd"],
                    "banner": banner,
                }))
            })),
            ..Adapt::same(
                "terminal_start",
                "Start a persistent shell session (PTY). Returns sessionId, shell, shellType, cwd and the startup banner.",
            )
        }
        .upstream(n.get("terminal_start")),
        Adapt {
            fixed: vec![("plainOutput", json!(true))],
            reshape: Some(Arc::new(|v, _| Ok(exec_result(v)))),
            defaults: defaults(&[("timeout", json!(30000)), ("maxLines", json!(200))]),
            ..Adapt::same(
                "terminal_exec",
                "Run a command in a session and wait until it really finishes (prompt marks, not guesses). Returns output (head and tail kept past maxLines), exitCode, cwd, timedOut; quietExitMs returns early once output stops after minOutputBytes bytes of output.",
            )
        }
        .upstream(n.get("terminal_exec")),
        Adapt {
            hide: &["env", "stdin"],
            defaults: defaults(&[
                ("args", json!([])),
                ("timeout", json!(30000)),
                ("maxOutputBytes", json!(102400)),
                ("parse", json!(true)),
                ("parseOnly", json!(false)),
                ("summary", json!(false)),
                ("successExitCode", json!(0)),
            ]),
            finish: Some(smart_run::run()),
            ..Adapt::same(
                "terminal_run",
                "Run one non-interactive command as cmd + args, without a shell unless shell is true (then /bin/sh; cmd.exe on Windows). Output is capped at maxOutputBytes (stdout and stderr together). Parses supported read-only commands (git status/log/branch/diff/…, where, which) into stdout.parsed; successExitCode, successFile and successFilePattern check the outcome.",
            )
        }
        .upstream(n.get("terminal_run")),
        Adapt {
            hide: &["view", "raw", "page", "joinWrapped", "cursor", "highlights"],
            check: Some(read_timeouts),
            defaults: defaults(&[
                ("timeout", json!(30000)),
                ("idleTimeout", json!(500)),
                ("maxLines", json!(200)),
            ]),
            ..Adapt::same(
                "terminal_read",
                "Read a session's buffered output, returning once it has been idle for idleTimeout ms. since (a position from an earlier call) returns only what came after it.",
            )
        }
        .upstream(n.get("terminal_read")),
        fire_and_forget(
            "terminal_write",
            &["paste", "returnOutput"],
            "Write raw data to a session (\\r is Enter, \\t is Tab) for interactive programs; read the answer with terminal_read.",
        ),
        Adapt {
            hide: &["until", "on", "quietMs"],
            require: &["pattern"],
            defaults: defaults(&[
                ("timeout", json!(30000)),
                ("returnMode", json!("tail")),
                ("tailLines", json!(50)),
            ]),
            ..Adapt::same(
                "terminal_wait",
                "Wait for a pattern (text or regex) in output produced after the call (or after since). The echo of typed input never matches. returnMode tail (last tailLines lines), full or match-only.",
            )
        }
        .upstream(n.get("terminal_wait")),
        Adapt {
            hide: &["overwrite"],
            ..Adapt::same(
            "terminal_stop",
            "Stop a session and kill its whole process group; optionally return the last snapshotLines lines and write the full transcript to transcriptPath.",
        )}
        .upstream(n.get("terminal_stop")),
        Adapt {
            defaults: defaults(&[("verbose", json!(true))]),
            ..Adapt::same(
                "terminal_list",
                "List the open sessions (verbose:false: id, name, cwd, alive, busy only).",
            )
        }
        .upstream(n.get("terminal_list")),
        Adapt {
            defaults: defaults(&[
                ("args", json!([])),
                ("timeout", json!(30000)),
                ("maxOutputBytes", json!(102400)),
                ("page", json!(0)),
                ("pageSize", json!(100)),
                ("summary", json!(false)),
            ]),
            finish: Some(smart_run::paged(n.get("terminal_run"))),
            ..Adapt::same(
                "terminal_run_paged",
                "Run a read-only command (git branch/diff/log/ls-files/remote/rev-parse/status, tasklist, where, which) as cmd + args and return one page of stdout lines with pageInfo {page, pageSize, totalLines, hasNext}; summary:true gives a short summary where supported.",
            )
        }
        .upstream(n.get("terminal_run_paged")),
        Adapt {
            fixed: vec![("plainOutput", json!(true)), ("historyOutput", json!(true))],
            reshape: Some(Arc::new(|mut v, _| {
                v["lastResult"] = exec_result(v["lastResult"].take());
                if let Some(history) = v["history"].as_array_mut() {
                    for h in history.iter_mut() {
                        if let Value::Object(map) = h {
                            map.remove("durationMs");
                            map.remove("success");
                        }
                    }
                }
                Ok(v)
            })),
            defaults: defaults(&[
                ("maxRetries", json!(3)),
                ("backoff", json!("exponential")),
                ("delayMs", json!(1000)),
                ("timeout", json!(30000)),
                ("maxLines", json!(200)),
                ("successExitCode", json!(0)),
            ]),
            ..Adapt::same(
                "terminal_retry",
                "Run a command in a session until it succeeds (exit code, or successPattern), up to maxRetries more times with exponential, linear or fixed backoff.",
            )
        }
        .upstream(n.get("terminal_retry")),
        Adapt {
            fixed: vec![("plainOutput", json!(true))],
            reshape: Some(Arc::new(|mut v, _| {
                for key in ["resultA", "resultB"] {
                    v[key] = exec_result(v[key].take());
                }
                Ok(v)
            })),
            defaults: defaults(&[
                ("timeout", json!(30000)),
                ("maxLines", json!(200)),
                ("contextLines", json!(3)),
            ]),
            ..Adapt::same(
                "terminal_diff",
                "Run two commands in a session and return a unified diff of their outputs, and whether they are identical.",
            )
        }
        .upstream(n.get("terminal_diff")),
        Adapt::same(
            "terminal_resize",
            "Resize a session's terminal to cols × rows.",
        )
        .upstream(n.get("terminal_resize")),
        fire_and_forget(
            "terminal_send_key",
            &["count", "returnOutput"],
            "Send a named key to a session: ctrl+c/d/z/l/a/e/u/k/w, tab, enter, escape, up, down, left, right, home, end, pageup, pagedown, backspace, delete, f1–f12.",
        ),
        Adapt {
            defaults: defaults(&[
                ("offset", json!(0)),
                ("maxLines", json!(200)),
                ("format", json!("lines")),
            ]),
            reshape: Some(Arc::new(|mut v, given| {
                if let Value::Object(map) = &mut v {
                    map.insert(
                        "sessionId".into(),
                        given.get("sessionId").cloned().unwrap_or(Value::Null),
                    );
                }
                Ok(v)
            })),
            ..Adapt::same(
                "terminal_get_history",
                "Read a session's output history by line: offset lines back from the newest (0 = newest), up to maxLines, as lines or text.",
            )
        }
        .upstream(n.get("terminal_get_history")),
        Adapt {
            hide: &["createDirs", "breakLinks"],
            require: &["sessionId"],
            defaults: defaults(&[("encoding", json!("utf-8")), ("append", json!(false))]),
            ..Adapt::same(
                "terminal_write_file",
                "Write content to a file directly, without shell escaping: path absolute or relative to the session's cwd; encoding utf-8, ascii, base64, hex or latin1; append to add to the end.",
            )
        }
        .upstream(n.get("terminal_write_file")),
        Adapt {
            reshape: Some(Arc::new(|mut v, _| {
                if let Value::Object(map) = &mut v {
                    map.entry("context").or_insert_with(|| json!([]));
                }
                Ok(v)
            })),
            ..Adapt::same(
                "terminal_watch",
                "Wait for the first of several triggers (1–10 patterns with ids), quiet output (quietExitMs), the program's exit or the timeout. Returns reason, triggerId, matchedLine, context and position.",
            )
        }
        .upstream(n.get("terminal_watch")),
    ]
}

/// Upstream's schema defaults (`src/tools.js`), shown in the schema and passed when absent.
fn defaults(list: &[(&'static str, Value)]) -> Vec<(&'static str, Value)> {
    list.to_vec()
}

/// A native `terminal_exec` result in upstream's shape: output, exitCode, cwd, timedOut and
/// the seed's optional fields (no durationMs or position, which neither has).
fn exec_result(mut v: Value) -> Value {
    if let Value::Object(map) = &mut v {
        map.remove("durationMs");
        map.remove("position");
    }
    v
}

/// Builds a preset tool whose errors read as upstream's (see [`upstream_error`]).
trait Upstream {
    fn upstream(self, native: Arc<ToolDef>) -> ToolDef;
}

impl Upstream for Adapt {
    fn upstream(mut self, native: Arc<ToolDef>) -> ToolDef {
        let name = self.name;
        let reshape = self.reshape.take();
        let inner = self.finish.take();
        let finish: Finish = Arc::new(move |ctx, native, call, given| {
            let (reshape, inner) = (reshape.clone(), inner.clone());
            Box::pin(async move {
                let result = match inner {
                    Some(finish) => finish(ctx, native, call, given.clone()).await,
                    None => match native.call(ctx, call).await {
                        Ok(reply) => match &reshape {
                            Some(reshape) => reshape(reply.value, &given).map(|value| Reply {
                                value,
                                images: reply.images,
                            }),
                            None => Ok(reply),
                        },
                        Err(e) => Err(e),
                    },
                };
                result.map_err(|mut e| {
                    e.message = upstream_error(name, &given, &e.message);
                    e
                })
            }) as BoxFuture
        });
        self.finish = Some(finish);
        self.build(native)
    }
}

/// A native error sentence in upstream's words where its tests quote them
/// (`src/session-manager.js`, `src/regex-utils.js`, `src/tools.js`); others unchanged.
fn upstream_error(tool: &str, given: &JsonObject, message: &str) -> String {
    static REGEX: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"^`([^`]+)` is not a valid regular expression \((?:error: )?(.*)\); escape")
            .unwrap()
    });
    static CWD: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"^The working directory `(.*)` does not exist or is not a folder").unwrap()
    });
    static SHELL: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r"^The shell `(.*)` was not found").unwrap());
    static SESSION: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r"^No session is called `(.*)`\.").unwrap());
    let mut out = if let Some(c) = REGEX.captures(message) {
        format!("Invalid regex pattern in {}: {}", &c[1], &c[2])
    } else if let Some(c) = CWD.captures(message) {
        let path = std::path::absolute(&c[1]).unwrap_or_else(|_| c[1].into());
        if path.exists() {
            format!(
                "Invalid cwd \"{}\": Path is not a directory.",
                path.display()
            )
        } else {
            format!(
                "Invalid cwd \"{}\": Path does not exist (ENOENT)",
                path.display()
            )
        }
    } else if let Some(c) = SHELL.captures(message) {
        format!(
            "Shell \"{}\" not found. Omit the shell parameter to use auto-detection, or provide the full path to the shell executable.",
            &c[1]
        )
    } else if let Some(c) = SESSION.captures(message) {
        format!(
            "Session \"{}\" not found. Use terminal_list to see active sessions.",
            &c[1]
        )
    } else {
        message.to_string()
    };
    if tool == "terminal_start" && given.get("shell").is_some_and(|s| !s.is_null()) {
        out.push_str(
            "\n\nHint: call terminal_start with NO shell parameter to auto-detect the best available shell.",
        );
    }
    out
}

/// upstream `assertReadTimeouts`: idleTimeout below timeout (both with their defaults).
fn read_timeouts(given: &JsonObject) -> Result<(), ToolError> {
    let get = |k: &str, d: u64| given.get(k).and_then(Value::as_u64).unwrap_or(d);
    if get("idleTimeout", 500) >= get("timeout", 30000) {
        return Err(ToolError::new("idleTimeout must be less than timeout."));
    }
    Ok(())
}

/// upstream `buildSessionEnv`: the pager and terminal settings win over a session's `env`.
fn force_anti_blocking_env(call: &mut JsonObject) {
    if let Some(Value::Object(env)) = call.get_mut("env") {
        for key in ["GIT_PAGER", "PAGER", "LESS", "TERM", "DEBIAN_FRONTEND"] {
            env.remove(key);
        }
    }
}
