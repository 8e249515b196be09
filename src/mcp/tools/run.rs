//! One-shot command tools: `terminal_run`, `terminal_run_paged` and `run_python`.
//!
//! Parameters in, one call to the core's runner (`termpilot_core::exec`), results shaped out; the
//! rules (success, parser choice, success-file check) are the core's `exec::Rules` and `exec::judge`.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use termpilot_core::exec::{self, Captured, FileCheck, Outcome, OutputCap, Rules, Shell, Spec};
use termpilot_core::sandbox;

use crate::mcp::args::yes;
use crate::mcp::registry::{Forward, Hints, ToolCtx, ToolDef};
use crate::mcp::reply::ToolError;

pub fn tools() -> Vec<ToolDef> {
    vec![
        ToolDef::new(
            "terminal_run",
            "Run a program",
            "Run cmd+args (shell:true for pipes; host/hosts: remote): exit code, capped output, git parsed.",
            Hints::RUNS_COMMANDS,
            crate::mcp::tools::run_remote::terminal_run,
        )
        .forward(Forward::Plain),
        ToolDef::new(
            "terminal_run_paged",
            "Run a read-only command, paged",
            "Run a read-only program (cmd + args, no shell) and return one page of its stdout lines with pageInfo {page, pageSize, totalLines, hasNext}.",
            Hints::RUNS_COMMANDS,
            run_paged,
        )
        .forward(Forward::Plain),
        ToolDef::new(
            "run_python",
            "Run Python code",
            "Run Python code (python3, else python) to completion; args become sys.argv[1:]. Output capped, full streams spilled to files.",
            Hints::RUNS_COMMANDS,
            run_python,
        )
        .forward(Forward::Termpilot),
    ]
}

fn default_timeout() -> u64 {
    30_000
}
fn default_max_output() -> u64 {
    102_400
}
fn default_python_timeout() -> u64 {
    60_000
}
fn default_exit_code() -> Option<i32> {
    Some(0)
}
fn default_page_size() -> usize {
    100
}
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct RunParams {
    #[schemars(length(min = 1))]
    pub cmd: String,
    #[serde(default)]
    pub args: Vec<String>,
    #[serde(default)]
    pub shell: bool,
    pub cwd: Option<String>,
    pub env: Option<BTreeMap<String, String>>,
    pub stdin: Option<String>,
    #[serde(default = "default_timeout")]
    #[schemars(range(min = 1, max = 600000))]
    pub timeout: u64,
    #[serde(default = "default_max_output")]
    #[schemars(range(min = 1, max = 16777216))]
    pub max_output_bytes: u64,
    #[serde(default = "yes")]
    pub parse: bool,
    #[serde(default)]
    pub parse_only: bool,
    #[serde(default)]
    pub summary: bool,
    /// null = any.
    #[serde(default = "default_exit_code")]
    pub success_exit_code: Option<i32>,
    pub success_file: Option<String>,
    pub success_file_pattern: Option<String>,
    // The remote parameters (README "Remote machines"): not in the schema, which would
    // take the default tools/list past its 6 KB budget; the description names them.
    /// user@box, an ssh alias, ssh://u@h:port, docker://NAME, podman://NAME, k8s://ns/pod.
    #[schemars(skip)]
    pub host: Option<String>,
    /// A fleet: one result per host, outputs grouped.
    #[schemars(skip)]
    pub hosts: Option<Vec<String>>,
    /// Fleet hosts run at once (1–100, default 16).
    #[schemars(skip)]
    pub concurrency: Option<usize>,
    /// maxOutputBytes counts raw bytes, not the reply's escaped text: a preset's meaning
    /// (smart-terminal's, as upstream), passed by the preset, never shown.
    #[serde(default)]
    #[schemars(skip)]
    pub raw_output_cap: bool,
}

/// What `maxOutputBytes` caps: natively the text the agent receives — stdout and stderr as
/// JSON strings in the reply, escaping included (`yes` keeps 51,200 lines of `y`, which
/// take 102,400 bytes as `y\\n`) — the rest being in the spill file; under a preset that
/// asks for it, raw bytes.
pub(crate) fn output_cap(p: &RunParams) -> OutputCap {
    if p.raw_output_cap {
        OutputCap::Total(p.max_output_bytes)
    } else {
        OutputCap::TotalJson(p.max_output_bytes)
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct PagedParams {
    /// Read-only program to run.
    #[schemars(length(min = 1))]
    pub cmd: String,
    #[serde(default)]
    pub args: Vec<String>,
    pub cwd: Option<String>,
    #[serde(default = "default_timeout")]
    #[schemars(range(min = 1, max = 600000))]
    pub timeout: u64,
    /// Bytes of stdout+stderr kept inline (pages always cover the whole stdout).
    #[serde(default = "default_max_output")]
    #[schemars(range(min = 1, max = 16777216))]
    pub max_output_bytes: u64,
    /// 0-based page.
    #[serde(default)]
    #[schemars(range(min = 0, max = 10000000))]
    pub page: usize,
    /// Lines per page.
    #[serde(default = "default_page_size")]
    #[schemars(range(min = 1, max = 10000))]
    pub page_size: usize,
    #[serde(default)]
    pub summary: bool,
    /// Run there: user@box, an ssh alias, ssh://u@h:port, docker://NAME, podman://NAME,
    /// k8s://ns/pod. Kept out of the schema like terminal_run's (README "Remote machines").
    #[schemars(skip)]
    pub host: Option<String>,
}

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct StdoutOut {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub raw: Option<String>,
    pub parsed: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub summary: Option<String>,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub truncated: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub total_bytes: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub full_output_path: Option<String>,
    #[serde(flatten)]
    pub spill: SpillOut,
}

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct StderrOut {
    pub raw: String,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub truncated: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub total_bytes: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub full_output_path: Option<String>,
    #[serde(flatten)]
    pub spill: SpillOut,
}

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SuccessFileOut {
    pub path: String,
    pub exists: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub matched: Option<bool>,
    pub ok: bool,
}

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ChecksOut {
    pub success_file: SuccessFileOut,
}

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RunResult {
    pub ok: bool,
    pub cmd: String,
    pub args: Vec<String>,
    pub cwd: String,
    pub exit_code: Option<i32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub signal: Option<i32>,
    pub timed_out: bool,
    pub duration_ms: u64,
    pub stdout: StdoutOut,
    pub stderr: StderrOut,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub checks: Option<ChecksOut>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hint: Option<String>,
    /// The target it ran on (`host`), and how it was reached.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub host: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub via: Option<String>,
    /// The sandbox the command ran in: off, read-only or workspace-write.
    pub sandbox: &'static str,
}

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PageInfo {
    pub page: usize,
    pub page_size: usize,
    pub total_lines: usize,
    pub has_next: bool,
}

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PagedResult {
    #[serde(flatten)]
    pub run: RunResult,
    pub page_info: PageInfo,
}

/// The directory a run happens in: the call's, else the server's configured one.
fn run_dir(ctx: &ToolCtx, cwd: Option<String>) -> Option<PathBuf> {
    cwd.map(PathBuf::from)
        .or_else(|| ctx.core.config.cwd.clone())
}

fn shown_dir(dir: &Option<PathBuf>) -> PathBuf {
    dir.clone()
        .or_else(|| std::env::current_dir().ok())
        .unwrap_or_default()
}

/// How complete a stream's spill file is: said only when it is not the whole stream.
#[derive(Debug, Default, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SpillOut {
    // The spill file reached its cap and the rest of the stream was dropped.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub spill_truncated: bool,
    // Bytes in fullOutputPath, when fewer than totalBytes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub spill_bytes: Option<u64>,
    // Why fullOutputPath is short or missing (e.g. disk full).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub spill_error: Option<String>,
}

impl From<&Captured> for SpillOut {
    fn from(s: &Captured) -> Self {
        let short = s.spill_truncated || s.spill_error.is_some();
        SpillOut {
            spill_truncated: s.spill_truncated,
            spill_bytes: (short && s.full_output_path.is_some()).then_some(s.spill_bytes),
            spill_error: s.spill_error.clone(),
        }
    }
}

fn timeout_hint(ms: u64) -> String {
    format!(
        "The command timed out after {ms} ms and its process tree was killed; raise timeout (max 600000) or start it with job_start."
    )
}

/// Says which processes the run started are still running (they could not be ended), so no
/// reply claims its tree is gone when it is not.
pub(crate) fn survivors_hint(out: &Outcome) -> Option<String> {
    (!out.survivors.is_empty()).then(|| {
        format!(
            "{}Processes this command started could not be ended and still run: {}; end them yourself (kill -9 PID).",
            if out.timed_out {
                "The command timed out; its process tree was killed, except what follows. "
            } else {
                ""
            },
            termpilot_core::host::describe_survivors(&out.survivors)
        )
    })
}

fn stderr_out(s: &Captured) -> StderrOut {
    StderrOut {
        raw: s.text(),
        truncated: s.truncated,
        total_bytes: s.truncated.then_some(s.total_bytes),
        full_output_path: s.full_output_path.as_ref().map(|p| p.display().to_string()),
        spill: SpillOut::from(s),
    }
}

fn stdout_out(s: &Captured, raw: Option<String>) -> StdoutOut {
    StdoutOut {
        raw,
        parsed: None,
        summary: None,
        truncated: s.truncated,
        total_bytes: s.truncated.then_some(s.total_bytes),
        full_output_path: s.full_output_path.as_ref().map(|p| p.display().to_string()),
        spill: SpillOut::from(s),
    }
}

/// The envelope shared by `terminal_run` and `terminal_run_paged`, before parsing.
pub(crate) fn envelope(
    cmd: String,
    args: Vec<String>,
    dir: &Option<PathBuf>,
    out: &Outcome,
    timeout: u64,
) -> RunResult {
    RunResult {
        ok: !out.timed_out,
        cmd,
        args,
        cwd: shown_dir(dir).display().to_string(),
        exit_code: out.exit_code,
        signal: out.signal,
        timed_out: out.timed_out,
        duration_ms: out.duration.as_millis() as u64,
        stdout: stdout_out(&out.stdout, Some(out.stdout.text())),
        stderr: stderr_out(&out.stderr),
        checks: None,
        host: None,
        via: None,
        hint: survivors_hint(out)
            .or_else(|| out.timed_out.then(|| timeout_hint(timeout)))
            .or_else(|| {
                let failed = out.exit_code.is_some_and(|c| c != 0);
                sandbox::denial_hint(sandbox::server_mode(), failed, &out.stderr.text())
            }),
        sandbox: sandbox::server_mode().as_str(),
    }
}

pub(crate) async fn run(ctx: ToolCtx, p: RunParams) -> Result<RunResult, ToolError> {
    // Everything that can be wrong with the call is found before anything runs.
    let pattern = match (&p.success_file, &p.success_file_pattern) {
        (None, Some(_)) => {
            return Err(ToolError::new(
                "successFilePattern needs successFile; pass the file the pattern applies to.",
            ));
        }
        (_, Some(re)) => Some(exec::user_regex(re)?),
        _ => None,
    };
    let dir = run_dir(&ctx, p.cwd.clone());
    if let Some(file) = &p.success_file {
        // The server reads it for the agent: a deny-read path is refused before anything runs
        // (and the read itself is judged again on the file opened).
        termpilot_core::sandbox::check_read(&shown_dir(&dir).join(file))?;
    }
    let mut spec = if p.shell {
        // `cmd` is shell text; each of `args` is one word, quoted for the shell.
        let shell = Shell::one_shot();
        let mut line = p.cmd.clone();
        for a in &p.args {
            line.push(' ');
            line.push_str(&shell.quote(a));
        }
        Spec::shell(shell, &line)?
    } else {
        Spec::direct(p.cmd.clone(), p.args.clone())
    };
    spec.cwd = dir.clone();
    spec.env = p.env.clone().unwrap_or_default().into_iter().collect();
    spec.stdin = p.stdin.as_ref().map(|s| s.as_bytes().to_vec());
    spec.timeout = Duration::from_millis(p.timeout);
    spec.cap = output_cap(&p);
    let out = termpilot_core::exec::run(spec, &ctx.core.spills, &ctx.cancel).await?;

    let mut result = envelope(p.cmd.clone(), p.args.clone(), &dir, &out, p.timeout);
    let rules = Rules {
        success_exit_code: p.success_exit_code,
        success_file: p.success_file.as_ref().map(|f| shown_dir(&dir).join(f)),
        success_file_pattern: pattern,
        shell: p.shell,
        parse: p.parse,
        summary: p.summary,
        parse_only: p.parse_only,
    };
    let v = exec::judge(&p.cmd, &p.args, &out, &rules);
    result.ok = v.ok;
    result.stdout.summary = v.summary;
    result.stdout.parsed = v.parsed;
    if v.drop_raw {
        result.stdout.raw = None;
    }
    if let Some(hint) = v.hint {
        result.hint = Some(hint.to_string());
    }
    if let Some(FileCheck {
        path,
        exists,
        matched,
        ok,
    }) = v.file
    {
        result.checks = Some(ChecksOut {
            success_file: SuccessFileOut {
                path: path.display().to_string(),
                exists,
                matched,
                ok,
            },
        });
    }
    Ok(result)
}

async fn run_paged(ctx: ToolCtx, p: PagedParams) -> Result<PagedResult, ToolError> {
    if let Some(host) = &p.host {
        return crate::mcp::tools::run_remote::paged(ctx, host.clone(), p).await;
    }
    let dir = run_dir(&ctx, p.cwd.clone());
    let mut spec = Spec::direct(p.cmd.clone(), p.args.clone());
    spec.cwd = dir.clone();
    spec.timeout = Duration::from_millis(p.timeout);
    spec.cap = OutputCap::Total(p.max_output_bytes);
    let out = termpilot_core::exec::run(spec, &ctx.core.spills, &ctx.cancel).await?;
    Ok(paged_result(
        &p,
        envelope(p.cmd.clone(), p.args.clone(), &dir, &out, p.timeout),
        &out,
    ))
}

/// Pages `out`'s stdout into the envelope `run` (shared with the remote form).
pub(crate) fn paged_result(p: &PagedParams, mut run: RunResult, out: &Outcome) -> PagedResult {
    run.ok = exec::paged_ok(out);
    let page = exec::page_captured(&out.stdout, p.page, p.page_size);
    run.stdout.raw = Some(page.lines.join("\n"));
    if p.summary {
        run.stdout.summary = exec::paged_summary(&p.cmd, &p.args, out);
    }
    PagedResult {
        run,
        page_info: PageInfo {
            page: page.page,
            page_size: page.page_size,
            total_lines: page.total_lines,
            has_next: page.has_next,
        },
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PythonParams {
    /// Python source.
    pub code: String,
    pub cwd: Option<String>,
    #[serde(default = "default_python_timeout")]
    #[schemars(range(min = 1, max = 600000))]
    pub timeout_ms: u64,
    /// sys.argv[1:]
    #[serde(default)]
    pub args: Vec<String>,
}

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct StreamOut {
    pub text: String,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub truncated: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub total_bytes: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub full_output_path: Option<String>,
    #[serde(flatten)]
    pub spill: SpillOut,
}

impl From<&Captured> for StreamOut {
    fn from(s: &Captured) -> Self {
        StreamOut {
            text: s.text(),
            truncated: s.truncated,
            total_bytes: s.truncated.then_some(s.total_bytes),
            full_output_path: s.full_output_path.as_ref().map(|p| p.display().to_string()),
            spill: SpillOut::from(s),
        }
    }
}

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PythonResult {
    pub exit_code: Option<i32>,
    pub duration_ms: u64,
    pub stdout: StreamOut,
    pub stderr: StreamOut,
    pub python_executable: String,
    /// The code ran out of time and its process tree was killed; the streams hold what it
    /// printed until then. (snake_case like the rest of this director-shell-shaped result.)
    pub timed_out: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hint: Option<String>,
    /// The sandbox the code ran in: off, read-only or workspace-write.
    pub sandbox: &'static str,
}

async fn run_python(ctx: ToolCtx, p: PythonParams) -> Result<PythonResult, ToolError> {
    let dir = run_dir(&ctx, p.cwd);
    let timeout = Duration::from_millis(p.timeout_ms);
    let (out, exe) = exec::run_python(
        &p.code,
        &p.args,
        dir,
        timeout,
        &ctx.core.spills,
        &ctx.cancel,
    )
    .await?;
    let result = PythonResult {
        exit_code: out.exit_code,
        duration_ms: out.duration.as_millis() as u64,
        stdout: (&out.stdout).into(),
        stderr: (&out.stderr).into(),
        python_executable: exe,
        timed_out: out.timed_out,
        // A timeout is a normal result, as for every other tool.
        hint: survivors_hint(&out).or_else(|| out.timed_out.then(|| {
            format!(
                "Python timed out after {} ms and its process tree was killed; raise timeoutMs (max 600000) if it needs longer, or start it with job_start.",
                p.timeout_ms
            )
        })),
        sandbox: sandbox::server_mode().as_str(),
    };
    Ok(result)
}
