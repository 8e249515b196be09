//! `--compat smart-terminal`: smart-terminal-mcp's 16 tools (seed 000, in Japanese).
//!
//! The names are native; the preset hides the native parameters the seed does not have,
//! and adds what the seed documents differently: `terminal_write` (and `terminal_send_key`)
//! are fire-and-forget so the program's answer stays for `terminal_read`; `terminal_watch`
//! always returns `context`. Where the seed is silent, upstream (`pungggi/smart-terminal-mcp`
//! v1.2.28, its code and tests) settles it: `terminal_run`/`terminal_run_paged` results come
//! from [`super::smart_run`] (upstream's parsers, summaries, checks and hint); exec output is
//! cleaned as upstream cleans it (`plainOutput`); results drop native-only fields; errors read
//! as upstream's where its tests quote them ([`upstream_error`]); schemas carry upstream's
//! defaults and short descriptions. `SMART_TERMINAL_DISABLED_TOOLS` moves tools behind
//! `terminal_extra` (an empty value registers all 16 directly), `SMART_TERMINAL_SHELL` picks
//! the shell, and the limits are 10 sessions and 30 minutes idle. `docs/compat.md` lists each
//! point where upstream or the seed decided.

use std::sync::{Arc, LazyLock};
use std::time::Duration;

use regex::Regex;
use rmcp::model::JsonObject;
use serde_json::{Value, json};
use termpilot_core::Config;

use super::adapt::{Adapt, Finish};
use super::{ErrorShape, Explicit, Identity, Natives};
use super::{smart_run, smart_shapes};
use crate::mcp::registry::{BoxFuture, DEFAULT_CORE, Surface, ToolDef};
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
pub fn configure(
    config: &mut Config,
    surface: &mut Surface,
    explicit: Explicit,
) -> Result<(), String> {
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
        *surface = surface_of(
            std::env::var("SMART_TERMINAL_DISABLED_TOOLS")
                .ok()
                .as_deref(),
        );
    }
    Ok(())
}

/// `SMART_TERMINAL_DISABLED_TOOLS` names the tools moved behind `terminal_extra` (unset: the
/// 8 extras); an empty value means every tool is direct. Names it does not know are ignored.
fn surface_of(disabled: Option<&str>) -> Surface {
    let mut surface = Surface::default();
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
            // upstream: write → {success, sessionId}, send_key → {success, key}.
            reshape: Some(Arc::new(move |_, given: &JsonObject| {
                Ok(if name == "terminal_send_key" {
                    json!({"success": true, "key": given.get("key")})
                } else {
                    json!({"success": true, "sessionId": given.get("sessionId")})
                })
            })),
            pre: (name == "terminal_write").then_some(unescape_data as fn(&mut JsonObject)),
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
                let banner = v["banner"]
                    .as_str()
                    .filter(|b| !b.is_empty())
                    .unwrap_or("(no banner)");
                smart_shapes::note_start(&v);
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
                "Start a shell session (PTY); returns its id, shell, cwd and banner.",
            )
        }
        .upstream(n.get("terminal_start")),
        Adapt {
            fixed: vec![("plainOutput", json!(true))],
            reshape: Some(Arc::new(|v, _| Ok(exec_result(v)))),
            defaults: defaults(&[("timeout", json!(30000)), ("maxLines", json!(200))]),
            ..Adapt::same(
                "terminal_exec",
                "Run a command in a session and wait for it to finish.",
            )
        }
        .upstream(n.get("terminal_exec")),
        Adapt {
            hide: &["env", "stdin"],
            // maxOutputBytes caps raw bytes here, as upstream does (smart_run::native_call).
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
                "Run a program directly (cmd + args, no shell quoting); parse output.",
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
                "Read a session's new output once it goes idle.",
            )
        }
        .upstream(n.get("terminal_read")),
        fire_and_forget(
            "terminal_write",
            &["paste", "returnOutput"],
            "Write raw data to a session (\\r is Enter, \\t is Tab).",
        ),
        Adapt {
            hide: &["until", "on", "quietMs"],
            require: &["pattern"],
            defaults: defaults(&[
                ("timeout", json!(30000)),
                ("returnMode", json!("tail")),
                ("tailLines", json!(50)),
            ]),
            reshape: Some(Arc::new(|v, _| {
                Ok(smart_shapes::only(
                    v,
                    &["output", "matched", "timedOut", "position"],
                ))
            })),
            ..Adapt::same(
                "terminal_wait",
                "Wait for a pattern in a session's new output.",
            )
        }
        .upstream(n.get("terminal_wait")),
        Adapt {
            hide: &["overwrite"],
            reshape: Some(Arc::new(|v, given| Ok(smart_shapes::stopped(v, given)))),
            ..Adapt::same(
                "terminal_stop",
                "Stop a session and its processes; optional snapshot and transcript.",
            )
        }
        .upstream(n.get("terminal_stop")),
        Adapt {
            defaults: defaults(&[("verbose", json!(true))]),
            reshape: Some(Arc::new(|v, given| Ok(smart_shapes::listed(v, given)))),
            ..Adapt::same("terminal_list", "List the open sessions.")
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
                "Run a read-only command and return one page of its output.",
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
                "Run a command until it succeeds, with backoff between attempts.",
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
                "Run two commands and return a unified diff of their outputs.",
            )
        }
        .upstream(n.get("terminal_diff")),
        Adapt {
            reshape: Some(Arc::new(|v, _| {
                Ok(json!({"success": true, "cols": v["cols"], "rows": v["rows"]}))
            })),
            ..Adapt::same(
                "terminal_resize",
                "Resize a session's terminal to cols × rows.",
            )
        }
        .upstream(n.get("terminal_resize")),
        fire_and_forget(
            "terminal_send_key",
            &["count", "returnOutput"],
            "Send a named key (ctrl+c, enter, up, f1, …) to a session.",
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
                "Read a session's earlier output, newest lines by default.",
            )
        }
        .upstream(n.get("terminal_get_history")),
        Adapt {
            hide: &["createDirs", "breakLinks"],
            require: &["sessionId"],
            defaults: defaults(&[("encoding", json!("utf-8")), ("append", json!(false))]),
            reshape: Some(Arc::new(|v, _| {
                Ok(smart_shapes::only(
                    v,
                    &["success", "path", "size", "append"],
                ))
            })),
            ..Adapt::same(
                "terminal_write_file",
                "Write a file directly, without shell escaping.",
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
                "Wait for the first of several triggers, quiet output or exit.",
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
        let mut def = self.build(native);
        def.input_schema = Arc::new(concise_fields((*def.input_schema).clone()));
        def
    }
}

/// Short field descriptions (upstream keeps each to 30 characters, with no defaults or
/// examples in them): a native description that is longer is replaced, or dropped.
fn concise_fields(mut schema: JsonObject) -> JsonObject {
    const SHORT: &[(&str, &str)] = &[
        ("offset", "Lines back from the newest"),
        ("delayMs", "Base delay in ms"),
        ("maxOutputBytes", "Max output bytes"),
        ("key", "Key name"),
        ("quietExitMs", "Quiet time in ms"),
        ("since", "Start at this output position"),
        ("encoding", "File encoding"),
        ("sessionId", "Session ID"),
    ];
    static BANNED: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r"(?i)\(default:|e\.g\.|Defaults to|such as").unwrap());
    if let Some(Value::Object(props)) = schema.get_mut("properties") {
        for (name, prop) in props.iter_mut() {
            let Value::Object(prop) = prop else { continue };
            let long = prop
                .get("description")
                .and_then(Value::as_str)
                .is_some_and(|d| d.chars().count() > 30 || BANNED.is_match(d));
            if long {
                match SHORT.iter().find(|(n, _)| n == name) {
                    Some((_, short)) => {
                        prop.insert("description".into(), json!(short));
                    }
                    None => {
                        prop.remove("description");
                    }
                }
            }
        }
    }
    schema
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
    static FULL: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"^(\d+) sessions are open, the most this server allows").unwrap()
    });
    static BUSY: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"^(?:A command is still running in session (\S+)\.|`.*` is running in session (\S+), so there is no prompt)").unwrap()
    });
    static GONE: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r"^The program in session (\S+) has exited").unwrap());
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
    } else if let Some(c) = FULL.captures(message) {
        format!(
            "Maximum {} concurrent sessions reached. Stop an existing session first.",
            &c[1]
        )
    } else if let Some(c) = BUSY.captures(message) {
        let id = c.get(1).or_else(|| c.get(2)).map_or("", |m| m.as_str());
        format!(
            "Session {id} is busy with a background command. Wait for it to finish, or use terminal_read to check output, or terminal_send_key(\"ctrl+c\") to abort it."
        )
    } else if let Some(c) = GONE.captures(message) {
        format!("Session {} is no longer alive.", &c[1])
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

/// upstream `terminal_write`: the two-character sequences `\r`, `\n` and `\t` in `data`
/// are Enter, newline and Tab (an agent that escapes its backslash still presses Enter).
fn unescape_data(call: &mut JsonObject) {
    if let Some(Value::String(data)) = call.get_mut("data") {
        *data = data
            .replace("\\r", "\r")
            .replace("\\n", "\n")
            .replace("\\t", "\t");
    }
}
