//! Job tools: job_start, job_status, job_wait, job_kill, job_list (seed 004's names).

use std::path::PathBuf;
use std::time::Duration;

use schemars::JsonSchema;
use serde::Deserialize;
use termpilot_core::jobs::{
    DEFAULT_TAIL_LINES, DEFAULT_WAIT_MS, MAX_TAIL_LINES, MAX_WAIT_MS, StartRequest,
};

use crate::mcp::registry::{Forward, Hints, ToolCtx, ToolDef};
use crate::mcp::reply::ToolError;
use crate::mcp::wire::jobs::{JobKilled, JobList, JobShell, JobStatus, JobWaited, Started};

pub fn tools() -> Vec<ToolDef> {
    vec![
        ToolDef::new(
            "job_start",
            "Start a detached job",
            "Start a command detached from the server (it survives restarts); logs and exit code are kept on disk. Returns jobId, pid, logPaths, exitMarker.",
            Hints::RUNS_COMMANDS,
            start,
        )
        .forward(Forward::Termpilot),
        ToolDef::new(
            "job_status",
            "Job status",
            "A job's state (running, exitCode, runtimeMs, startedAt) and the last tailLines of its combined output.",
            Hints::READ_ONLY,
            status,
        )
        .forward(Forward::Termpilot),
        ToolDef::new(
            "job_wait",
            "Wait for a job",
            "Wait until a job ends (returns the moment it does) or timeoutMs passes (timedOut: true); same fields as job_status.",
            Hints::READ_ONLY,
            wait,
        )
        .forward(Forward::Termpilot),
        ToolDef::new(
            "job_kill",
            "Kill a job",
            "End a job's whole process tree; a job that already ended is left as it is (killed: false).",
            Hints::ENDS,
            kill,
        )
        .forward(Forward::Termpilot),
        ToolDef::new(
            "job_list",
            "List jobs",
            "Every job on disk, oldest first: jobId, name, pid, running, exit code, start time; unreadable job directories are listed under invalid.",
            Hints::READ_ONLY,
            list,
        )
        .forward(Forward::Termpilot),
    ]
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct StartParams {
    /// The command line.
    pub command: String,
    /// Working directory (default: the server's).
    pub cwd: Option<PathBuf>,
    /// Default bash (PowerShell on Windows).
    pub shell: Option<JobShell>,
    /// A readable label.
    pub name: Option<String>,
}

async fn start(ctx: ToolCtx, p: StartParams) -> Result<Started, ToolError> {
    Ok(ctx
        .core
        .jobs
        .start(StartRequest {
            command: p.command,
            cwd: p.cwd,
            shell: p.shell.map(Into::into),
            name: p.name,
        })
        .await?
        .into())
}

fn default_tail() -> usize {
    DEFAULT_TAIL_LINES
}

fn default_wait() -> u64 {
    DEFAULT_WAIT_MS
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct StatusParams {
    pub job_id: String,
    /// Lines of combined output to return.
    #[serde(default = "default_tail")]
    #[schemars(range(max = MAX_TAIL_LINES))]
    pub tail_lines: usize,
}

async fn status(ctx: ToolCtx, p: StatusParams) -> Result<JobStatus, ToolError> {
    Ok(ctx.core.jobs.status(&p.job_id, p.tail_lines)?.into())
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct WaitParams {
    pub job_id: String,
    #[serde(default = "default_wait")]
    #[schemars(range(max = MAX_WAIT_MS))]
    pub timeout_ms: u64,
    #[serde(default = "default_tail")]
    #[schemars(range(max = MAX_TAIL_LINES))]
    pub tail_lines: usize,
}

async fn wait(ctx: ToolCtx, p: WaitParams) -> Result<JobWaited, ToolError> {
    Ok(ctx
        .core
        .jobs
        .wait(
            &p.job_id,
            Duration::from_millis(p.timeout_ms),
            p.tail_lines,
            &ctx.cancel,
            ctx.progress.as_ref(),
        )
        .await?
        .into())
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct KillParams {
    pub job_id: String,
    #[serde(default = "default_tail")]
    #[schemars(range(max = MAX_TAIL_LINES))]
    pub tail_lines: usize,
}

async fn kill(ctx: ToolCtx, p: KillParams) -> Result<JobKilled, ToolError> {
    Ok(ctx.core.jobs.kill(&p.job_id, p.tail_lines).await?.into())
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ListParams {}

async fn list(ctx: ToolCtx, _p: ListParams) -> Result<JobList, ToolError> {
    Ok(ctx.core.jobs.list().into())
}
