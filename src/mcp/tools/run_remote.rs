//! `terminal_run` with `host` (one target) or `hosts` (a fleet).
//!
//! Without either, the call is the local `terminal_run`. With `host`, the command runs on
//! the target through its transport and the result is the local one's shape plus `host`
//! and `via`. With `hosts`, one result per target (status, exit code, duration, which
//! output it printed), the outputs grouped so identical ones appear once, and a summary.

use std::collections::BTreeSet;
use std::time::Duration;

use schemars::JsonSchema;
use serde::Serialize;
use termpilot_core::exec::{Outcome, OutputCap, parse_output};
use termpilot_core::remote::{self, OneShot, Ran, RemoteCommand, Target};

use crate::mcp::ctx::ToolCtx;
use crate::mcp::remote::{VIA_TERMINAL, route};
use crate::mcp::reply::ToolError;
use crate::mcp::tools::run::{
    PagedParams, PagedResult, RunParams, RunResult, envelope, paged_result,
};

/// `terminal_run`'s result: one run, or one per fleet target.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(untagged)]
pub enum RunReply {
    One(Box<RunResult>),
    Fleet(FleetResult),
}

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct FleetResult {
    /// Every target ran the command and it succeeded.
    pub ok: bool,
    pub cmd: String,
    pub args: Vec<String>,
    pub via: String,
    pub summary: FleetSummary,
    /// One per target, in the order asked.
    pub results: Vec<HostResult>,
    /// Each distinct output once, with the targets that printed it.
    pub outputs: Vec<OutputGroup>,
}

#[derive(Debug, Default, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct FleetSummary {
    pub total: usize,
    pub succeeded: usize,
    pub failed: usize,
    pub timed_out: usize,
    pub unreachable: usize,
}

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct HostResult {
    pub host: String,
    pub ok: bool,
    /// `ok`, `failed`, `timedOut` or `unreachable`.
    pub status: String,
    pub exit_code: Option<i32>,
    pub duration_ms: u64,
    /// Index into `outputs`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub output: Option<usize>,
    /// Why the target could not be used (unreachable).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// What went wrong, in one word (`unknownHostKey`, `loginRefused`, …).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// The whole streams, when they outgrew the cap.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stdout_path: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stderr_path: Option<String>,
}

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct OutputGroup {
    pub hosts: Vec<String>,
    pub exit_code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub truncated: bool,
}

/// `terminal_run`: local, on one target, or on a fleet.
pub async fn terminal_run(ctx: ToolCtx, p: RunParams) -> Result<RunReply, ToolError> {
    match (p.host.clone(), p.hosts.clone()) {
        (None, None) => {
            if p.concurrency.is_some() {
                return Err(ToolError::new(
                    "concurrency applies only to a fleet run; pass hosts as well, or drop concurrency.",
                ));
            }
            Ok(RunReply::One(Box::new(
                crate::mcp::tools::run::run(ctx, p).await?,
            )))
        }
        (Some(_), Some(_)) => Err(ToolError::new(
            "host and hosts were both given; pass host for one target or hosts for several.",
        )),
        (Some(host), None) => one(ctx, p, &host).await.map(Box::new).map(RunReply::One),
        (None, Some(hosts)) => many(ctx, p, &hosts).await.map(RunReply::Fleet),
    }
}

/// What the remote form refuses, checked before anything runs.
fn check_remote(p: &RunParams) -> Result<(), ToolError> {
    if p.success_file.is_some() || p.success_file_pattern.is_some() {
        return Err(ToolError::new(
            "successFile checks a file on this machine, so it cannot be used with host or hosts; check the file with the command itself (e.g. `test -f FILE`).",
        ));
    }
    Ok(())
}

fn one_shot(p: &RunParams) -> OneShot {
    OneShot {
        command: RemoteCommand {
            cmd: p.cmd.clone(),
            args: p.args.clone(),
            shell: p.shell,
            cwd: p.cwd.clone(),
            env: p.env.clone().unwrap_or_default().into_iter().collect(),
        },
        stdin: p.stdin.as_ref().map(|s| s.as_bytes().to_vec()),
        timeout: Duration::from_millis(p.timeout),
        cap: crate::mcp::tools::run::output_cap(p),
    }
}

/// Runs `job` on one target: the outcome, or the link's failure as an error.
async fn run_on(ctx: &ToolCtx, target: &Target, job: &OneShot) -> Result<Outcome, ToolError> {
    job.command.argv()?;
    match remote::run(
        target,
        &ctx.core.config.remote,
        job,
        &ctx.core.spills,
        &ctx.cancel,
    )
    .await?
    {
        Ran::Done(out) => Ok(*out),
        Ran::LinkFailed(failure) => Err(ToolError::new(failure.sentence(target))),
    }
}

/// The local envelope, told where it ran.
fn remote_envelope(
    cmd: &str,
    args: &[String],
    cwd: Option<&str>,
    target: &Target,
    out: &Outcome,
    timeout: u64,
) -> RunResult {
    let mut result = envelope(cmd.to_string(), args.to_vec(), &None, out, timeout);
    result.cwd = cwd.unwrap_or("~").to_string();
    result.host = Some(target.to_string());
    result.via = Some(VIA_TERMINAL.into());
    result
}

/// `terminal_run_paged` with `host`.
pub async fn paged(ctx: ToolCtx, host: String, p: PagedParams) -> Result<PagedResult, ToolError> {
    let target = route(&host)?;
    let job = OneShot {
        command: RemoteCommand {
            cmd: p.cmd.clone(),
            args: p.args.clone(),
            shell: false,
            cwd: p.cwd.clone(),
            env: Vec::new(),
        },
        stdin: None,
        timeout: Duration::from_millis(p.timeout),
        cap: OutputCap::Total(p.max_output_bytes),
    };
    let out = run_on(&ctx, &target, &job).await?;
    let run = remote_envelope(&p.cmd, &p.args, p.cwd.as_deref(), &target, &out, p.timeout);
    Ok(paged_result(&p, run, &out))
}

async fn one(ctx: ToolCtx, p: RunParams, host: &str) -> Result<RunResult, ToolError> {
    if p.concurrency.is_some() {
        return Err(ToolError::new(
            "concurrency applies only to a fleet run (hosts); drop it for one host.",
        ));
    }
    let target = route(host)?;
    check_remote(&p)?;
    let out = run_on(&ctx, &target, &one_shot(&p)).await?;
    let mut result = remote_envelope(&p.cmd, &p.args, p.cwd.as_deref(), &target, &out, p.timeout);
    result.ok = !out.timed_out && remote::exit_ok(&out, p.success_exit_code);
    if p.parse
        && !p.shell
        && !out.timed_out
        && !out.stdout.truncated
        && let Some(parsed) = parse_output(&p.cmd, &p.args, &out.stdout.text())
    {
        if p.summary {
            result.stdout.summary = Some(parsed.summary);
            result.stdout.raw = None;
        }
        result.stdout.parsed = Some(parsed.value);
        if p.parse_only {
            result.stdout.raw = None;
        }
    }
    Ok(result)
}

/// Parses every fleet target, refusing an empty, oversized or repeating list.
fn targets(hosts: &[String]) -> Result<Vec<Target>, ToolError> {
    if hosts.is_empty() || hosts.len() > remote::MAX_TARGETS {
        return Err(ToolError::new(format!(
            "hosts names {} targets; pass 1 to {} (split a bigger fleet into several calls).",
            hosts.len(),
            remote::MAX_TARGETS
        )));
    }
    let mut seen = BTreeSet::new();
    let mut targets = Vec::with_capacity(hosts.len());
    for host in hosts {
        let target = route(host)?;
        if !seen.insert(target.to_string()) {
            return Err(ToolError::new(format!(
                "hosts names `{target}` twice; name each target once."
            )));
        }
        targets.push(target);
    }
    Ok(targets)
}

async fn many(ctx: ToolCtx, p: RunParams, hosts: &[String]) -> Result<FleetResult, ToolError> {
    let targets = targets(hosts)?;
    check_remote(&p)?;
    let job = one_shot(&p);
    job.command.argv()?;
    let concurrency = p.concurrency.unwrap_or(remote::DEFAULT_CONCURRENCY);
    if !(1..=remote::MAX_TARGETS).contains(&concurrency) {
        return Err(ToolError::new(format!(
            "concurrency is {concurrency}; pass 1 to {} (default {}).",
            remote::MAX_TARGETS,
            remote::DEFAULT_CONCURRENCY
        )));
    }
    let runs = remote::run_fleet(
        &targets,
        &ctx.core.config.remote,
        &job,
        concurrency,
        &ctx.core.spills,
        &ctx.cancel,
    )
    .await;
    if ctx.cancel.is_cancelled() {
        return Err(ToolError::new(
            "The fleet run was cancelled; every target's process was killed.",
        ));
    }

    let report = remote::judge_fleet(&targets, runs, p.success_exit_code);
    let path = |p: Option<std::path::PathBuf>| p.map(|p| p.display().to_string());
    let s = report.summary;
    let summary = FleetSummary {
        total: s.total,
        succeeded: s.succeeded,
        failed: s.failed,
        timed_out: s.timed_out,
        unreachable: s.unreachable,
    };
    let results = report
        .results
        .into_iter()
        .map(|r| HostResult {
            host: r.host,
            ok: r.ok,
            status: r.status.as_str().into(),
            exit_code: r.exit_code,
            duration_ms: r.duration_ms,
            output: r.output,
            error: r.error,
            reason: r.reason.map(String::from),
            stdout_path: path(r.stdout_path),
            stderr_path: path(r.stderr_path),
        })
        .collect();
    let outputs = report
        .outputs
        .into_iter()
        .map(|o| OutputGroup {
            hosts: o.hosts,
            exit_code: o.exit_code,
            stdout: o.stdout,
            stderr: o.stderr,
            truncated: o.truncated,
        })
        .collect();
    Ok(FleetResult {
        ok: report.ok,
        cmd: p.cmd,
        args: p.args,
        via: VIA_TERMINAL.into(),
        summary,
        results,
        outputs,
    })
}
