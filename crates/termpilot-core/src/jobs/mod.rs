//! Detached jobs that outlive the server: start, status, wait, kill, list.
//!
//! A job is a directory under `<state-dir>/jobs/` (see [`store`]) and a wrapper process in a
//! session of its own (see [`launch`]). Everything the server knows about a job is on disk,
//! so a new server finds every job again. A job is *running* while no exit code is recorded
//! and its wrapper is alive — the same pid with the same start time, so a reused pid is never
//! taken for the job.
//!
//! Waiting is event-driven: `wait` watches the job directory (inotify) for `exit_code.txt`
//! being linked into place and the wrapper's pidfd for its exit, and re-checks on every
//! wake-up. There is no polling interval on Linux.

pub(crate) mod launch;
pub(crate) mod store;
pub(crate) mod tail;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime};

use tokio_util::sync::CancellationToken;

use crate::error::{Error, Fault, Result};
use crate::platform;
use crate::progress::Progress;

pub use launch::JobShell;
use store::JobMeta;
pub use store::{LogPaths, rfc3339};

/// Default and maximum `tail_lines`.
pub const DEFAULT_TAIL_LINES: usize = 40;
pub const MAX_TAIL_LINES: usize = 1000;
/// Default and maximum `job_wait` timeout.
pub const DEFAULT_WAIT_MS: u64 = 60_000;
pub const MAX_WAIT_MS: u64 = 600_000;
/// The exit code recorded for a job that `job_kill` ended (128 + SIGKILL, as shells say).
pub const KILLED_EXIT_CODE: i32 = 137;
/// How long `job_kill` waits for the wrapper to be gone.
const KILL_GRACE: Duration = Duration::from_secs(5);
/// How often a long wait reports progress.
const PROGRESS_EVERY: Duration = Duration::from_secs(5);

/// What `job_start` is asked to run.
#[derive(Debug, Clone)]
pub struct StartRequest {
    pub command: String,
    pub cwd: Option<PathBuf>,
    pub shell: Option<JobShell>,
    pub name: Option<String>,
}

/// A job just started.
#[derive(Debug, Clone)]
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

/// Where a job stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JobState {
    Running,
    /// Ended by itself; `exit_code` says how.
    Exited,
    /// Ended by job_kill.
    Killed,
    /// The wrapper is gone without recording an exit code (killed from outside, reboot).
    Lost,
}

/// A job's state and the end of its output.
#[derive(Debug, Clone)]
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

/// What `job_wait` returns: the status, and whether the wait ran out first.
#[derive(Debug, Clone)]
pub struct JobWaited {
    pub status: JobStatus,
    pub timed_out: bool,
    pub waited_ms: u64,
}

/// What `job_kill` did.
#[derive(Debug, Clone)]
pub struct JobKilled {
    /// False when the job had already ended (it is left as it was).
    pub killed: bool,
    pub status: JobStatus,
}

/// One line of `job_list`.
#[derive(Debug, Clone)]
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

/// A job directory that could not be read.
#[derive(Debug, Clone)]
pub struct InvalidJob {
    pub job_id: String,
    pub problem: String,
}

/// Every job on disk, oldest first.
#[derive(Debug, Clone)]
pub struct JobList {
    pub jobs: Vec<JobSummary>,
    pub count: usize,
    /// Job directories that are corrupt or half-written; reported, not fatal.
    pub invalid: Vec<InvalidJob>,
}

/// The jobs under one state directory.
pub struct Jobs {
    root: PathBuf,
    default_cwd: Option<PathBuf>,
}

/// What the files of a job say right now.
struct Facts {
    meta: JobMeta,
    state: JobState,
    exit_code: Option<i32>,
    ended: Option<SystemTime>,
}

impl Jobs {
    pub fn new(state_dir: &Path, default_cwd: Option<PathBuf>) -> Self {
        Jobs {
            root: state_dir.join("jobs"),
            default_cwd,
        }
    }

    fn dir(&self, id: &str) -> Result<PathBuf> {
        store::check_id(id)?;
        let dir = self.root.join(id);
        if !dir.is_dir() {
            return Err(Fault::UnknownJob { id: id.into() }.into());
        }
        Ok(dir)
    }

    /// Starts `req` detached and records it.
    pub async fn start(&self, req: StartRequest) -> Result<Started> {
        if req.command.trim().is_empty() {
            return Err(Error::InvalidInput(
                "`command` is empty; pass the command line to run.".into(),
            ));
        }
        let cwd = match req.cwd.or_else(|| self.default_cwd.clone()) {
            Some(c) => c,
            None => std::env::current_dir()
                .map_err(|e| Error::io("Cannot read the current directory", "Pass cwd.", e))?,
        };
        if !cwd.is_dir() {
            return Err(Error::InvalidInput(format!(
                "cwd `{}` is not an existing directory; pass a directory that exists.",
                cwd.display()
            )));
        }
        let shell = req.shell.unwrap_or_else(JobShell::platform_default);
        let command = launch::shell_command(shell, &req.command)?;
        let (job_id, dir) = store::create(&self.root)?;
        let started = SystemTime::now();
        let pid = match launch::spawn(&dir, &cwd, &command) {
            Ok(pid) => pid,
            Err(e) => {
                let _ = std::fs::remove_dir_all(&dir);
                return Err(e);
            }
        };
        let meta = JobMeta {
            job_id: job_id.clone(),
            name: req.name.clone(),
            command: req.command,
            shell: shell.as_str().into(),
            cwd: cwd.display().to_string(),
            pid,
            pid_start_time: platform::process_start_time(pid),
            started_at: store::rfc3339(started),
            started_at_ms: store::epoch_ms(started),
        };
        store::write_meta(&dir, &meta)?;
        tracing::info!(job_id, pid, "job started");
        Ok(Started {
            job_id,
            name: req.name,
            pid,
            started_at: meta.started_at,
            log_paths: LogPaths::of(&dir),
            exit_marker: dir.join(store::EXIT).display().to_string(),
        })
    }

    fn facts(dir: &Path) -> std::result::Result<Facts, String> {
        let meta = store::read_meta(dir)?;
        let (state, exit_code, ended) = match store::read_exit(dir) {
            Some((code, when)) if store::was_killed(dir) => (JobState::Killed, code, Some(when)),
            Some((code, when)) => (JobState::Exited, code, Some(when)),
            None if platform::is_same_process(meta.pid, meta.pid_start_time) => {
                (JobState::Running, None, None)
            }
            None => {
                // The wrapper may have written its exit code just before it went.
                match store::read_exit(dir) {
                    Some((code, when)) => (JobState::Exited, code, Some(when)),
                    None => (JobState::Lost, None, store::last_output(dir)),
                }
            }
        };
        Ok(Facts {
            meta,
            state,
            exit_code,
            ended,
        })
    }

    fn status_of(dir: &Path, facts: Facts, tail_lines: usize) -> JobStatus {
        let end_ms = facts
            .ended
            .map(store::epoch_ms)
            .unwrap_or_else(|| store::epoch_ms(SystemTime::now()));
        JobStatus {
            job_id: facts.meta.job_id,
            name: facts.meta.name,
            command: facts.meta.command,
            state: facts.state,
            running: facts.state == JobState::Running,
            exit_code: facts.exit_code,
            pid: facts.meta.pid,
            started_at: facts.meta.started_at,
            ended_at: facts.ended.map(store::rfc3339),
            runtime_ms: end_ms.saturating_sub(facts.meta.started_at_ms),
            output_tail: tail::last_lines(&dir.join(store::COMBINED), tail_lines),
            log_paths: LogPaths::of(dir),
        }
    }

    fn read(&self, id: &str) -> Result<(PathBuf, Facts)> {
        let dir = self.dir(id)?;
        let facts = Self::facts(&dir).map_err(|problem| {
            Error::Other(format!(
                "Job `{id}` cannot be read ({problem}); remove its directory or start a new job."
            ))
        })?;
        Ok((dir, facts))
    }

    /// The job's state and the last `tail_lines` lines of its combined output.
    pub fn status(&self, id: &str, tail_lines: usize) -> Result<JobStatus> {
        let (dir, facts) = self.read(id)?;
        Ok(Self::status_of(&dir, facts, tail_lines))
    }

    /// Waits until the job ends or `timeout` passes (a normal result with `timed_out`).
    pub async fn wait(
        &self,
        id: &str,
        timeout: Duration,
        tail_lines: usize,
        cancel: &CancellationToken,
        progress: &dyn Progress,
    ) -> Result<JobWaited> {
        let begun = Instant::now();
        let dir = self.dir(id)?;
        // Watch first, then look: an exit between the two still wakes us.
        let watch = platform::watch_dir(&dir);
        let (_, first) = self.read(id)?;
        let exit = (first.state == JobState::Running)
            .then(|| platform::ExitWatch::new(first.meta.pid).ok())
            .flatten();
        let deadline = tokio::time::Instant::now() + timeout;
        let mut ticks =
            tokio::time::interval_at(tokio::time::Instant::now() + PROGRESS_EVERY, PROGRESS_EVERY);
        let mut exit_seen = false;
        loop {
            let (dir, facts) = self.read(id)?;
            if facts.state != JobState::Running {
                return Ok(JobWaited {
                    status: Self::status_of(&dir, facts, tail_lines),
                    timed_out: false,
                    waited_ms: begun.elapsed().as_millis() as u64,
                });
            }
            tokio::select! {
                _ = async { match &watch { Some(w) => w.changed().await,
                    None => tokio::time::sleep(platform::FALLBACK_TICK).await } } => {}
                _ = async { match &exit { Some(e) if !exit_seen => e.exited().await,
                    _ => std::future::pending().await } } => exit_seen = true,
                _ = tokio::time::sleep_until(deadline) => {
                    let (dir, facts) = self.read(id)?;
                    let timed_out = facts.state == JobState::Running;
                    return Ok(JobWaited {
                        status: Self::status_of(&dir, facts, tail_lines),
                        timed_out,
                        waited_ms: begun.elapsed().as_millis() as u64,
                    });
                }
                _ = cancel.cancelled() => {
                    return Err(Error::Other(format!(
                        "The wait for job `{id}` was cancelled; the job keeps running."
                    )));
                }
                _ = ticks.tick() => {
                    let last = tail::last_lines(&dir.join(store::COMBINED), 1);
                    progress.report(begun.elapsed(), &last);
                }
            }
        }
    }

    /// Ends the job's whole process tree; a job that has ended is left as it is.
    pub async fn kill(&self, id: &str, tail_lines: usize) -> Result<JobKilled> {
        let (dir, facts) = self.read(id)?;
        if facts.state != JobState::Running {
            return Ok(JobKilled {
                killed: false,
                status: Self::status_of(&dir, facts, tail_lines),
            });
        }
        let pid = facts.meta.pid;
        let exit = platform::ExitWatch::new(pid).ok();
        // Checked again right before the signal: never signal a reused pid.
        if platform::is_same_process(pid, facts.meta.pid_start_time) {
            platform::kill_tree(pid);
        }
        if let Some(exit) = exit {
            let _ = tokio::time::timeout(KILL_GRACE, exit.exited()).await;
        }
        let now = store::rfc3339(SystemTime::now());
        let recorded = store::write_once(
            &dir,
            store::EXIT,
            format!("{KILLED_EXIT_CODE}\n").as_bytes(),
        )
        .map_err(|e| {
            Error::io(
                "Cannot record the killed job's exit",
                "Check the state dir.",
                e,
            )
        })?;
        if recorded {
            let _ = store::write_atomic(&dir, store::KILLED, now.as_bytes());
        }
        tracing::info!(job_id = id, pid, "job killed");
        let (dir, facts) = self.read(id)?;
        Ok(JobKilled {
            killed: recorded,
            status: Self::status_of(&dir, facts, tail_lines),
        })
    }

    /// Every job on disk; directories that cannot be read are listed in `invalid`.
    pub fn list(&self) -> JobList {
        let mut jobs = Vec::new();
        let mut invalid = Vec::new();
        let entries = match std::fs::read_dir(&self.root) {
            Ok(e) => e,
            Err(_) => {
                return JobList {
                    jobs,
                    count: 0,
                    invalid,
                };
            }
        };
        let mut found: Vec<(u64, JobSummary)> = Vec::new();
        for entry in entries.flatten() {
            let dir = entry.path();
            let job_id = entry.file_name().to_string_lossy().into_owned();
            if !dir.is_dir() || job_id.starts_with('.') {
                continue;
            }
            match Self::facts(&dir) {
                Ok(f) => found.push((
                    f.meta.started_at_ms,
                    JobSummary {
                        job_id: f.meta.job_id,
                        name: f.meta.name,
                        command: f.meta.command,
                        pid: f.meta.pid,
                        running: f.state == JobState::Running,
                        state: f.state,
                        exit_code: f.exit_code,
                        started_at: f.meta.started_at,
                        ended_at: f.ended.map(store::rfc3339),
                    },
                )),
                Err(problem) => invalid.push(InvalidJob { job_id, problem }),
            }
        }
        found.sort_by(|a, b| a.0.cmp(&b.0).then_with(|| a.1.job_id.cmp(&b.1.job_id)));
        jobs.extend(found.into_iter().map(|(_, j)| j));
        invalid.sort_by(|a, b| a.job_id.cmp(&b.job_id));
        JobList {
            count: jobs.len(),
            jobs,
            invalid,
        }
    }
}
