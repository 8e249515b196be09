//! One command on many targets: bounded concurrency, results in the order asked, and
//! identical outputs grouped so fifty equal answers cost one.
//!
//! The fleet's verdicts are decided here, as `exec::verdict` decides a local run's: each
//! target's status ([`Status`]), the summary's counts and the grouped outputs ([`judge`]);
//! the face only puts the [`Report`] into its reply's shape.

use std::collections::HashMap;
use std::hash::Hash;
use std::path::PathBuf;
use std::sync::Arc;

use tokio::sync::Semaphore;
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;

use super::{OneShot, Ran, RemoteOptions, Target};
use crate::error::{Error, Result};
use crate::exec::{Captured, Outcome};

/// Most targets one fleet call may name.
pub const MAX_TARGETS: usize = 100;
/// Targets run at once when the call names no concurrency.
pub const DEFAULT_CONCURRENCY: usize = 16;

/// Runs `job` on every target, at most `concurrency` at a time, each with the job's own
/// timeout; one result per target, in the order of `targets`. A slow or dead target holds
/// only its own slot.
pub async fn run(
    targets: &[Target],
    options: &RemoteOptions,
    job: &OneShot,
    concurrency: usize,
    spills: &Arc<crate::host::Spills>,
    cancel: &CancellationToken,
) -> Vec<Result<Ran>> {
    let slots = Arc::new(Semaphore::new(concurrency.max(1)));
    let mut tasks = JoinSet::new();
    for (index, target) in targets.iter().cloned().enumerate() {
        let (slots, options, job, spills, cancel) = (
            slots.clone(),
            options.clone(),
            job.clone(),
            spills.clone(),
            cancel.clone(),
        );
        tasks.spawn(async move {
            let _slot = slots.acquire_owned().await;
            (
                index,
                super::run(&target, &options, &job, &spills, &cancel).await,
            )
        });
    }
    let mut results: Vec<Option<Result<Ran>>> = targets.iter().map(|_| None).collect();
    while let Some(joined) = tasks.join_next().await {
        if let Ok((index, result)) = joined {
            results[index] = Some(result);
        }
    }
    results
        .into_iter()
        .map(|r| r.unwrap_or_else(|| Err(Error::Other("The run on this target panicked.".into()))))
        .collect()
}

/// Indices of equal keys, grouped in the order each key first appears.
pub(crate) fn group<K: Eq + Hash + Clone>(keys: &[K]) -> Vec<(K, Vec<usize>)> {
    let mut groups: Vec<(K, Vec<usize>)> = Vec::new();
    let mut seen: HashMap<K, usize> = HashMap::new();
    for (i, key) in keys.iter().enumerate() {
        match seen.get(key) {
            Some(&g) => groups[g].1.push(i),
            None => {
                seen.insert(key.clone(), groups.len());
                groups.push((key.clone(), vec![i]));
            }
        }
    }
    groups
}

/// Whether a run's exit code is the one asked for (`None`: any exit code will do).
pub fn exit_ok(out: &Outcome, success_exit_code: Option<i32>) -> bool {
    success_exit_code.is_none_or(|c| out.exit_code == Some(c))
}

/// How one target's run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    /// It ran and exited with the code asked for.
    Ok,
    /// It ran and exited otherwise.
    Failed,
    /// It ran out of time and was killed.
    TimedOut,
    /// The target could not be used (the link failed, or the run could not start).
    Unreachable,
}

impl Status {
    /// The status as the reply says it: `ok`, `failed`, `timedOut`, `unreachable`.
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Ok => "ok",
            Status::Failed => "failed",
            Status::TimedOut => "timedOut",
            Status::Unreachable => "unreachable",
        }
    }
}

/// One target's verdict.
#[derive(Debug, Clone)]
pub struct HostVerdict {
    /// The target as the reply names it.
    pub host: String,
    pub ok: bool,
    pub status: Status,
    pub exit_code: Option<i32>,
    pub duration_ms: u64,
    /// Index into [`Report::outputs`] (targets that ran).
    pub output: Option<usize>,
    /// Why the target could not be used (unreachable).
    pub error: Option<String>,
    /// What went wrong, in one word (`unknownHostKey`, `loginRefused`, …, `error`).
    pub reason: Option<&'static str>,
    /// The whole streams, when they outgrew the cap.
    pub stdout_path: Option<PathBuf>,
    pub stderr_path: Option<PathBuf>,
}

/// The counts over every target.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Summary {
    pub total: usize,
    pub succeeded: usize,
    pub failed: usize,
    pub timed_out: usize,
    pub unreachable: usize,
}

/// One distinct output, with the targets that printed it.
#[derive(Debug, Clone)]
pub struct OutputGroup {
    pub hosts: Vec<String>,
    pub exit_code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
    pub truncated: bool,
}

/// A fleet run's verdicts.
#[derive(Debug, Clone)]
pub struct Report {
    /// Every target ran the command and it succeeded.
    pub ok: bool,
    pub summary: Summary,
    /// One per target, in the order asked.
    pub results: Vec<HostVerdict>,
    /// Each distinct output once.
    pub outputs: Vec<OutputGroup>,
}

fn spilled(c: &Captured) -> Option<PathBuf> {
    c.full_output_path.clone()
}

/// Judges each target's run (`runs` in the order of `targets`): its status against
/// `success_exit_code`, the summary's counts, and identical outputs grouped.
pub fn judge(targets: &[Target], runs: Vec<Result<Ran>>, success_exit_code: Option<i32>) -> Report {
    let mut summary = Summary {
        total: targets.len(),
        ..Default::default()
    };
    let mut results = Vec::with_capacity(targets.len());
    // (exit code, stdout, stderr, truncated) of each target that ran, for grouping.
    let mut keys = Vec::new();
    let mut key_of = Vec::new();
    for (target, run) in targets.iter().zip(runs) {
        let mut r = HostVerdict {
            host: target.to_string(),
            ok: false,
            status: Status::Unreachable,
            exit_code: None,
            duration_ms: 0,
            output: None,
            error: None,
            reason: None,
            stdout_path: None,
            stderr_path: None,
        };
        match run {
            Ok(Ran::Done(out)) => {
                r.exit_code = out.exit_code;
                r.duration_ms = out.duration.as_millis() as u64;
                r.ok = !out.timed_out && exit_ok(&out, success_exit_code);
                r.status = if out.timed_out {
                    summary.timed_out += 1;
                    Status::TimedOut
                } else if r.ok {
                    summary.succeeded += 1;
                    Status::Ok
                } else {
                    summary.failed += 1;
                    Status::Failed
                };
                r.stdout_path = spilled(&out.stdout);
                r.stderr_path = spilled(&out.stderr);
                key_of.push(Some(keys.len()));
                keys.push((
                    out.exit_code,
                    out.stdout.text(),
                    out.stderr.text(),
                    out.stdout.truncated || out.stderr.truncated,
                ));
            }
            Ok(Ran::LinkFailed(failure)) => {
                summary.unreachable += 1;
                r.reason = Some(failure.kind());
                r.error = Some(failure.sentence(target));
                key_of.push(None);
            }
            Err(e) => {
                summary.unreachable += 1;
                r.reason = Some("error");
                r.error = Some(e.to_string());
                key_of.push(None);
            }
        }
        results.push(r);
    }
    let groups = group(&keys);
    let mut group_of_key = vec![0; keys.len()];
    let mut outputs = Vec::with_capacity(groups.len());
    for (g, ((exit_code, stdout, stderr, truncated), members)) in groups.into_iter().enumerate() {
        for &k in &members {
            group_of_key[k] = g;
        }
        outputs.push(OutputGroup {
            hosts: Vec::new(),
            exit_code,
            stdout,
            stderr,
            truncated,
        });
    }
    for (r, k) in results.iter_mut().zip(&key_of) {
        if let Some(k) = k {
            let g = group_of_key[*k];
            r.output = Some(g);
            outputs[g].hosts.push(r.host.clone());
        }
    }
    Report {
        ok: summary.succeeded == summary.total,
        summary,
        results,
        outputs,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn groups_keep_first_appearance_order() {
        let g = group(&["a", "b", "a", "c", "b"]);
        assert_eq!(
            g,
            vec![("a", vec![0, 2]), ("b", vec![1, 4]), ("c", vec![3])]
        );
    }

    fn ran(exit_code: Option<i32>, timed_out: bool, stdout: &str) -> Result<Ran> {
        Ok(Ran::Done(Box::new(Outcome {
            exit_code,
            signal: None,
            timed_out,
            duration: std::time::Duration::from_millis(7),
            stdout: Captured {
                preview: stdout.as_bytes().to_vec(),
                total_bytes: stdout.len() as u64,
                ..Default::default()
            },
            stderr: Captured::default(),
            program: "ssh".into(),
            survivors: Vec::new(),
        })))
    }

    #[test]
    fn each_target_gets_its_status_and_equal_outputs_one_group() {
        let targets: Vec<Target> = ["a", "b", "c", "d", "e", "f"]
            .iter()
            .map(|h| Target::parse(h).unwrap())
            .collect();
        let runs = vec![
            ran(Some(0), false, "same\n"),
            ran(Some(1), false, "other\n"),
            ran(None, true, ""),
            Ok(Ran::LinkFailed(super::super::LinkFailure::LoginRefused)),
            Err(Error::Other("no way there".into())),
            ran(Some(0), false, "same\n"),
        ];
        let report = judge(&targets, runs, Some(0));
        // host, status, ok, output group, reason
        type Row<'a> = (&'a str, Status, bool, Option<usize>, Option<&'a str>);
        let table: Vec<Row> = report
            .results
            .iter()
            .map(|r| (r.host.as_str(), r.status, r.ok, r.output, r.reason))
            .collect();
        assert_eq!(
            table,
            vec![
                ("a", Status::Ok, true, Some(0), None),
                ("b", Status::Failed, false, Some(1), None),
                ("c", Status::TimedOut, false, Some(2), None),
                ("d", Status::Unreachable, false, None, Some("loginRefused")),
                ("e", Status::Unreachable, false, None, Some("error")),
                ("f", Status::Ok, true, Some(0), None),
            ]
        );
        assert_eq!(
            report.summary,
            Summary {
                total: 6,
                succeeded: 2,
                failed: 1,
                timed_out: 1,
                unreachable: 2,
            }
        );
        assert!(!report.ok);
        assert_eq!(report.outputs[0].hosts, ["a", "f"]);
        assert_eq!(report.outputs[0].stdout, "same\n");
        assert_eq!(report.results[4].error.as_deref(), Some("no way there"));
        // Any exit code will do when none is asked for.
        let any = judge(&targets[1..2], vec![ran(Some(1), false, "")], None);
        assert!(any.ok && any.results[0].status == Status::Ok);
    }
}
