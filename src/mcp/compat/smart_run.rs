//! `terminal_run` and `terminal_run_paged` as smart-terminal-mcp returns them.
//!
//! The preset asks the native `terminal_run` for the whole raw output (no native parsing) and
//! then applies upstream's rules (`src/command-runner.js`, `src/tools.js`, v1.2.28): the
//! parsers and object summaries of [`super::smart_parse`]; `summary` and `parseOnly` leave
//! `raw: ""` and `parsed: null`; output past `maxOutputBytes` makes the run
//! `ok: false, maxOutputExceeded: true` and is not parsed; `checks` is
//! `{exitCode: {ok, expected, actual}, successFile?: {path, matched, error?}}`, present when
//! `successExitCode` is not 0 or a success file is named; the only hint is the "propose one"
//! parser hint; `successFile` and `successFilePattern` come together or not at all. The paged
//! form pages the same raw stdout as upstream's `pager.js` does.

use std::sync::Arc;

use rmcp::model::JsonObject;
use serde_json::{Value, json};

use super::adapt::Finish;
use super::smart_parse;
use crate::mcp::registry::{BoxFuture, ToolDef};
use crate::mcp::reply::{Reply, ToolError};

/// upstream's parser hint.
pub const PROPOSE_PARSER: &str = "Structured parser unavailable for this command signature. If you need this often, propose one.";
/// Unparsed stdout at least this long (bytes) earns the hint.
const PROPOSE_MIN_BYTES: usize = 200;
const DEFAULT_MAX_OUTPUT_BYTES: u64 = 100 * 1024;

/// upstream's read-only signatures for `terminal_run_paged`, in its words.
const PAGED_READ_ONLY: &str = "terminal_run_paged only supports read-only commands: git (branch, diff, log, ls-files, remote, rev-parse, status), tasklist, where, which.";

fn flag(given: &JsonObject, key: &str, default: bool) -> bool {
    given.get(key).and_then(Value::as_bool).unwrap_or(default)
}

fn strings(given: &JsonObject, key: &str) -> Vec<String> {
    given
        .get(key)
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .map(String::from)
                .collect()
        })
        .unwrap_or_default()
}

fn nonempty<'a>(given: &'a JsonObject, key: &str) -> Option<&'a str> {
    given
        .get(key)
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
}

/// upstream `assertSuccessChecksAreValid`, and its regex compile of `successFilePattern`.
fn check_success_args(given: &JsonObject) -> Result<(), ToolError> {
    let file = nonempty(given, "successFile");
    let pattern = nonempty(given, "successFilePattern");
    if file.is_some() != pattern.is_some() {
        return Err(ToolError::new(
            "successFile and successFilePattern must be provided together.",
        ));
    }
    if let Some(p) = pattern
        && let Err(e) = regex::Regex::new(p)
    {
        let reason = e.to_string();
        let reason = reason
            .lines()
            .rfind(|l| l.trim_start().starts_with("error:"))
            .map_or(reason.as_str(), |l| {
                l.trim_start().trim_start_matches("error:").trim()
            });
        return Err(ToolError::new(format!(
            "Invalid regex pattern in successFilePattern: {reason}"
        )));
    }
    Ok(())
}

/// A signal's name, as node reports it.
fn signal_name(n: i64) -> Value {
    let name = match n {
        1 => "SIGHUP",
        2 => "SIGINT",
        3 => "SIGQUIT",
        4 => "SIGILL",
        6 => "SIGABRT",
        8 => "SIGFPE",
        9 => "SIGKILL",
        11 => "SIGSEGV",
        13 => "SIGPIPE",
        14 => "SIGALRM",
        15 => "SIGTERM",
        _ => return json!(n),
    };
    json!(name)
}

/// `path` made absolute against the server's directory, as upstream's `resolve` does.
fn absolute(path: &str) -> String {
    std::path::absolute(path).map_or_else(|_| path.to_string(), |p| p.display().to_string())
}

/// upstream's `checks.successFile`, from the native check of the same file.
fn success_file_check(native: &Value, max_output_bytes: u64) -> Value {
    let path = absolute(native["path"].as_str().unwrap_or_default());
    let mut check = json!({"path": path, "matched": native["matched"] == true});
    if native["exists"] != true {
        let p = std::path::Path::new(&path);
        check["error"] = json!(if p.exists() {
            "Path is not a file.".to_string()
        } else {
            format!("ENOENT: no such file or directory, stat '{path}' (ENOENT)")
        });
    } else if std::fs::metadata(&path).is_ok_and(|m| m.len() > max_output_bytes) {
        check["matched"] = json!(false);
        check["error"] = json!(format!("File exceeds maxOutputBytes ({max_output_bytes})."));
    }
    check
}

/// The native run's result in upstream's envelope, before parsing (`raw` is all of stdout
/// that was kept).
fn envelope(native: &Value, given: &JsonObject) -> Value {
    let exceeded = native["stdout"]["truncated"] == true || native["stderr"]["truncated"] == true;
    let exit = native["exitCode"].clone();
    let expected = match given.get("successExitCode") {
        Some(v) => v.clone(),
        None => json!(0),
    };
    let exit_ok = expected.is_null() || expected == exit;
    let mut checks = json!({"exitCode": {"ok": exit_ok, "expected": expected, "actual": exit}});
    let max_bytes = given
        .get("maxOutputBytes")
        .and_then(Value::as_u64)
        .unwrap_or(DEFAULT_MAX_OUTPUT_BYTES);
    let mut file_ok = true;
    if let Some(file) = native.pointer("/checks/successFile") {
        let check = success_file_check(file, max_bytes);
        file_ok = check["matched"] == true;
        checks["successFile"] = check;
    }
    let timed_out = native["timedOut"] == true;
    let mut out = json!({
        "ok": exit_ok && file_ok && !timed_out && !exceeded,
        "cmd": native["cmd"],
        "args": native["args"],
        "cwd": absolute(native["cwd"].as_str().unwrap_or_default()),
        "exitCode": exit,
        "timedOut": timed_out,
        "durationMs": native["durationMs"],
        "stdout": {"raw": native["stdout"]["raw"].as_str().unwrap_or_default(), "parsed": null},
        "stderr": {"raw": native["stderr"]["raw"].as_str().unwrap_or_default()},
    });
    if let Some(sig) = native["signal"].as_i64() {
        out["signal"] = signal_name(sig);
    }
    if exceeded {
        out["maxOutputExceeded"] = json!(true);
    }
    if expected.is_null() && exit.as_i64().is_some_and(|c| c != 0) {
        out["exitCodeIgnored"] = json!(true);
    }
    if expected != json!(0) || given.contains_key("successFile") {
        out["checks"] = checks;
    }
    out
}

/// upstream `getStructuredParserHint`.
fn hint(out: &mut Value, cmd: &str, args: &[String], parse_requested: bool, stdout: &str) {
    if out["ok"] == true
        && parse_requested
        && out["stdout"]["parsed"].is_null()
        && stdout.len() >= PROPOSE_MIN_BYTES
        && smart_parse::hint_eligible(cmd, args)
    {
        out["hint"] = json!(PROPOSE_PARSER);
    }
}

/// The native arguments for a run whose output the preset reads itself: `keep`'s
/// arguments as given, no native parsing, and `maxOutputBytes` counting raw bytes, as
/// upstream counts them (natively it caps the reply's escaped text).
fn native_call(given: &JsonObject, keep: &[&str]) -> JsonObject {
    let mut call: JsonObject = given
        .iter()
        .filter(|(k, _)| keep.contains(&k.as_str()))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    call.insert("parse".into(), json!(false));
    call.insert("rawOutputCap".into(), json!(true));
    call
}

/// One native run as upstream's envelope, with what both run tools read from it.
struct Ran {
    cmd: String,
    args: Vec<String>,
    /// Upstream's result shape ([`envelope`]), for the caller to finish.
    out: Value,
    /// The run's stdout as text.
    stdout: String,
}

/// Runs `given`'s `cmd`/`args` through the native `terminal_run` with `keep`'s arguments.
async fn run_native(
    native: &ToolDef,
    ctx: crate::mcp::registry::ToolCtx,
    given: &JsonObject,
    keep: &[&str],
) -> Result<Ran, ToolError> {
    let cmd = given
        .get("cmd")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    let args = strings(given, "args");
    let value = native
        .call(ctx, native_call(given, keep))
        .await
        .map(|r| r.value)
        .map_err(|e| ToolError::new(format!("Failed to start command \"{cmd}\": {}", e.message)))?;
    let out = envelope(&value, given);
    let stdout = out["stdout"]["raw"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    Ok(Ran {
        cmd,
        args,
        out,
        stdout,
    })
}

/// `terminal_run`: the native run, read by upstream's rules.
pub fn run() -> Finish {
    Arc::new(|ctx, native, _call, given| {
        Box::pin(async move {
            check_success_args(&given)?;
            let Ran {
                cmd,
                args,
                mut out,
                stdout,
            } = run_native(
                &native,
                ctx,
                &given,
                &[
                    "cmd",
                    "args",
                    "shell",
                    "cwd",
                    "timeout",
                    "maxOutputBytes",
                    "successExitCode",
                    "successFile",
                    "successFilePattern",
                ],
            )
            .await?;
            let (parse, parse_only, summary) = (
                flag(&given, "parse", true),
                flag(&given, "parseOnly", false),
                flag(&given, "summary", false),
            );
            // A shell line's stdout is not one command's (the seed's `shell`, which
            // upstream v1.2.28 does not have): it is never parsed.
            let parse_requested = (parse || parse_only || summary) && !flag(&given, "shell", false);
            if parse_requested && out["timedOut"] == false && out.get("maxOutputExceeded").is_none()
            {
                let parsed = smart_parse::parse(&cmd, &args, &stdout);
                out["stdout"]["parsed"] = parsed.clone().unwrap_or(Value::Null);
                if summary
                    && let Some(parsed) = &parsed
                    && let Some(s) = smart_parse::summarize(&cmd, &args, parsed)
                {
                    out["stdout"]["summary"] = s;
                    out["stdout"]["parsed"] = Value::Null;
                    out["stdout"]["raw"] = json!("");
                }
                if parse_only && !out["stdout"]["parsed"].is_null() {
                    out["stdout"]["raw"] = json!("");
                }
            }
            hint(&mut out, &cmd, &args, parse_requested, &stdout);
            Ok(Reply {
                value: out,
                images: Vec::new(),
            })
        }) as BoxFuture
    })
}

/// upstream `assertPagedCommandIsReadOnly`.
pub fn paged_read_only(given: &JsonObject) -> Result<(), ToolError> {
    let cmd = given.get("cmd").and_then(Value::as_str).unwrap_or_default();
    let args = strings(given, "args");
    let allowed = match smart_parse::command_name(cmd).as_str() {
        "tasklist" | "where" | "which" => true,
        "git" => args.first().is_some_and(|a| {
            [
                "branch",
                "diff",
                "log",
                "ls-files",
                "remote",
                "rev-parse",
                "status",
            ]
            .contains(&a.to_lowercase().as_str())
        }),
        _ => false,
    };
    if allowed {
        Ok(())
    } else {
        Err(ToolError::new(PAGED_READ_ONLY))
    }
}

/// upstream `paginateOutput`: one page of `text`'s lines.
fn paginate(text: &str, page: u64, page_size: u64) -> (String, Value) {
    let page_size = page_size.max(1);
    let mut lines: Vec<&str> = if text.is_empty() {
        Vec::new()
    } else {
        text.split('\n')
            .map(|l| l.strip_suffix('\r').unwrap_or(l))
            .collect()
    };
    if lines.last() == Some(&"") {
        lines.pop();
    }
    let start = (page.saturating_mul(page_size)).min(lines.len() as u64) as usize;
    let end =
        (page.saturating_mul(page_size).saturating_add(page_size)).min(lines.len() as u64) as usize;
    let info = json!({
        "page": page,
        "pageSize": page_size,
        "totalLines": lines.len(),
        "hasNext": (page.saturating_mul(page_size).saturating_add(page_size)) < lines.len() as u64,
    });
    (lines[start..end].join("\n"), info)
}

/// `terminal_run_paged`: upstream's run with `parse: summary`, then one page of stdout.
pub fn paged(run_tool: Arc<ToolDef>) -> Finish {
    Arc::new(move |ctx, _native, _call, given| {
        let run_tool = run_tool.clone();
        Box::pin(async move {
            paged_read_only(&given)?;
            let Ran {
                cmd,
                args,
                mut out,
                stdout,
            } = run_native(
                &run_tool,
                ctx,
                &given,
                &["cmd", "args", "cwd", "timeout", "maxOutputBytes"],
            )
            .await?;
            let summary = flag(&given, "summary", false);
            let mut parsed = None;
            if summary && out["timedOut"] == false && out.get("maxOutputExceeded").is_none() {
                parsed = smart_parse::parse(&cmd, &args, &stdout);
                out["stdout"]["parsed"] = parsed.clone().unwrap_or(Value::Null);
            }
            hint(&mut out, &cmd, &args, summary, &stdout);
            let page = given.get("page").and_then(Value::as_u64).unwrap_or(0);
            let size = given.get("pageSize").and_then(Value::as_u64).unwrap_or(100);
            let (text, info) = paginate(&stdout, page, size);
            let stdout_summary = parsed
                .as_ref()
                .and_then(|p| smart_parse::summarize(&cmd, &args, p));
            out["stdout"] = match stdout_summary {
                Some(s) => json!({"raw": "", "parsed": null, "summary": s}),
                None => json!({"raw": text, "parsed": null}),
            };
            out["pageInfo"] = info;
            Ok(Reply {
                value: out,
                images: Vec::new(),
            })
        }) as BoxFuture
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pages_as_upstream() {
        assert_eq!(paginate("a\nb\nc\nd", 0, 2).0, "a\nb");
        assert_eq!(paginate("a\nb\nc\nd", 1, 2).1["hasNext"], false);
        assert_eq!(paginate("a\nb", 4, 2).0, "");
        assert_eq!(paginate("", 0, 5).1["totalLines"], 0);
    }
}
