//! The job tools' results and the `shell` parameter, as JSON (`termpilot_core::jobs` in, camelCase out).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use termpilot_core::jobs as core;

/// The shell a job's command is given to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum JobShell {
    Bash,
    Powershell,
    Cmd,
}

impl From<JobShell> for core::JobShell {
    fn from(s: JobShell) -> Self {
        match s {
            JobShell::Bash => core::JobShell::Bash,
            JobShell::Powershell => core::JobShell::Powershell,
            JobShell::Cmd => core::JobShell::Cmd,
        }
    }
}

/// Where a job's output goes.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct LogPaths {
    pub stdout: String,
    pub stderr: String,
    pub combined: String,
}

impl From<core::LogPaths> for LogPaths {
    fn from(l: core::LogPaths) -> Self {
        LogPaths {
            stdout: l.stdout,
            stderr: l.stderr,
            combined: l.combined,
        }
    }
}

/// A job just started.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Started {
    pub job_id: String,
    pub name: Option<String>,
    /// The wrapper's pid; it leads the job's process group.
    pub pid: i32,
    pub started_at: String,
    pub log_paths: LogPaths,
    /// The file holding the exit code once the job has ended.
    pub exit_marker: String,
}

impl From<core::Started> for Started {
    fn from(s: core::Started) -> Self {
        Started {
            job_id: s.job_id,
            name: s.name,
            pid: s.pid,
            started_at: s.started_at,
            log_paths: s.log_paths.into(),
            exit_marker: s.exit_marker,
        }
    }
}

/// Where a job stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum JobState {
    Running,
    /// Ended by itself; `exit_code` says how.
    Exited,
    /// Ended by job_kill.
    Killed,
    /// The wrapper is gone without recording an exit code (killed from outside, reboot).
    Lost,
}

impl From<core::JobState> for JobState {
    fn from(s: core::JobState) -> Self {
        match s {
            core::JobState::Running => JobState::Running,
            core::JobState::Exited => JobState::Exited,
            core::JobState::Killed => JobState::Killed,
            core::JobState::Lost => JobState::Lost,
        }
    }
}

/// A job's state and the end of its output.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct JobStatus {
    pub job_id: String,
    pub name: Option<String>,
    pub command: String,
    pub state: JobState,
    pub running: bool,
    pub exit_code: Option<i32>,
    pub pid: i32,
    pub started_at: String,
    pub ended_at: Option<String>,
    pub runtime_ms: u64,
    /// The last `tail_lines` lines of the combined log.
    pub output_tail: String,
    pub log_paths: LogPaths,
}

impl From<core::JobStatus> for JobStatus {
    fn from(s: core::JobStatus) -> Self {
        JobStatus {
            job_id: s.job_id,
            name: s.name,
            command: s.command,
            state: s.state.into(),
            running: s.running,
            exit_code: s.exit_code,
            pid: s.pid,
            started_at: s.started_at,
            ended_at: s.ended_at,
            runtime_ms: s.runtime_ms,
            output_tail: s.output_tail,
            log_paths: s.log_paths.into(),
        }
    }
}

/// What `job_wait` returns: the status, and whether the wait ran out first.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct JobWaited {
    #[serde(flatten)]
    pub status: JobStatus,
    pub timed_out: bool,
    pub waited_ms: u64,
}

impl From<core::JobWaited> for JobWaited {
    fn from(w: core::JobWaited) -> Self {
        JobWaited {
            status: w.status.into(),
            timed_out: w.timed_out,
            waited_ms: w.waited_ms,
        }
    }
}

/// What `job_kill` did.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct JobKilled {
    /// False when the job had already ended (it is left as it was).
    pub killed: bool,
    #[serde(flatten)]
    pub status: JobStatus,
}

impl From<core::JobKilled> for JobKilled {
    fn from(k: core::JobKilled) -> Self {
        JobKilled {
            killed: k.killed,
            status: k.status.into(),
        }
    }
}

/// One line of `job_list`.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct JobSummary {
    pub job_id: String,
    pub name: Option<String>,
    pub command: String,
    pub pid: i32,
    pub state: JobState,
    pub running: bool,
    pub exit_code: Option<i32>,
    pub started_at: String,
    pub ended_at: Option<String>,
}

impl From<core::JobSummary> for JobSummary {
    fn from(s: core::JobSummary) -> Self {
        JobSummary {
            job_id: s.job_id,
            name: s.name,
            command: s.command,
            pid: s.pid,
            state: s.state.into(),
            running: s.running,
            exit_code: s.exit_code,
            started_at: s.started_at,
            ended_at: s.ended_at,
        }
    }
}

/// A job directory that could not be read.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct InvalidJob {
    pub job_id: String,
    pub problem: String,
}

/// Every job on disk, oldest first.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct JobList {
    pub jobs: Vec<JobSummary>,
    pub count: usize,
    /// Job directories that are corrupt or half-written; reported, not fatal.
    pub invalid: Vec<InvalidJob>,
}

impl From<core::JobList> for JobList {
    fn from(l: core::JobList) -> Self {
        JobList {
            jobs: l.jobs.into_iter().map(Into::into).collect(),
            count: l.count,
            invalid: l
                .invalid
                .into_iter()
                .map(|i| InvalidJob {
                    job_id: i.job_id,
                    problem: i.problem,
                })
                .collect(),
        }
    }
}
