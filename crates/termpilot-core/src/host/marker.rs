//! The marker every process the server starts carries, so what escaped its tree is found.
//!
//! Each one-shot run and each session incarnation gets a value of its own for
//! [`MARKER`] (`<server pid>.<n>` for a run, `<server pid>.s<n>` for a session) in the
//! environment of its first process; everything that process starts inherits it, whatever
//! process group or Unix session it moves to (`setsid -f`, a double fork). When the run or
//! the session ends, [`end`] finds the processes still carrying it in `/proc/<pid>/environ`,
//! kills them and waits (bounded) until they are gone; those that cannot be ended are
//! returned by pid and command line, for the reply to name. When the server itself dies,
//! [`super::undertaker`] ends every process carrying one of its markers.
//!
//! What it cannot catch: a process that cleared or replaced its environment (`env -i`,
//! `sudo`'s reset, a program started by a service manager) or overwrote the memory its
//! environment is read from (`setproctitle`); a process of another user the server may not
//! read or signal; anything on another machine (what runs in a container or a pod is
//! ended through its transport: [`crate::remote::ending`]). Linux only: elsewhere
//! nothing is found.

use std::time::{Duration, Instant};

use crate::platform;

/// The environment variable naming the run or session a process belongs to.
pub(crate) const MARKER: &str = "TERMPILOT_RUN_ID";

/// How long [`end`] waits for killed processes to be gone.
const END_LIMIT: Duration = Duration::from_secs(2);
/// How long after the last kill, once [`END_LIMIT`] is past, a process still running counts
/// as a survivor (a `SIGKILL` takes a moment to land).
const LAST_LOOK: Duration = Duration::from_millis(50);

/// A process that carried a marker and could not be ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Survivor {
    pub pid: i32,
    /// Its command line (arguments joined by spaces), or its name.
    pub command: String,
}

/// `pid 123 (sleep 1000), pid 124 (…)`: survivors as a reply names them (pid 0 stands for
/// what could not be checked, and its `command` says so).
pub fn describe(survivors: &[Survivor]) -> String {
    survivors
        .iter()
        .map(|s| match s.pid {
            0 => s.command.clone(),
            pid => format!("pid {pid} ({})", s.command),
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// A fresh marker value for a one-shot run.
pub(crate) fn for_run() -> String {
    next("")
}

/// A fresh marker value for a session's incarnation.
pub(crate) fn for_session() -> String {
    next("s")
}

fn next(kind: &str) -> String {
    static SEQ: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let seq = SEQ.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    format!("{}.{kind}{seq}", std::process::id())
}

/// Living processes (zombies do not count) whose environment holds `MARKER=<value>`
/// exactly, or, with `prefix`, a value starting with `value`. Never this process.
pub(crate) fn marked(value: &str, prefix: bool) -> Vec<i32> {
    #[cfg(target_os = "linux")]
    {
        let needle = format!("{MARKER}={value}").into_bytes();
        let me = std::process::id() as i32;
        let Ok(dir) = std::fs::read_dir("/proc") else {
            return Vec::new();
        };
        dir.flatten()
            .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
            .filter(|&pid| pid != me)
            .filter(|&pid| {
                std::fs::read(format!("/proc/{pid}/environ"))
                    .is_ok_and(|env| holds(&env, &needle, !prefix))
            })
            .filter(|&pid| running(pid))
            .collect()
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = (value, prefix);
        Vec::new()
    }
}

/// `env` (NUL-separated entries) has the entry `needle` (`exact`), or one starting with it.
#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
fn holds(env: &[u8], needle: &[u8], exact: bool) -> bool {
    env.split(|&b| b == 0).any(|entry| {
        if exact {
            entry == needle
        } else {
            entry.starts_with(needle)
        }
    })
}

#[cfg(target_os = "linux")]
fn running(pid: i32) -> bool {
    platform::process_state(pid).is_some_and(|s| s != 'Z' && s != 'X')
}

#[cfg(not(target_os = "linux"))]
fn running(_pid: i32) -> bool {
    false
}

/// Kills every living process carrying `MARKER=<value>` (again, while new ones appear) and
/// waits, at most [`END_LIMIT`], until they are gone. Returns those still running then.
pub(crate) async fn end(value: &str) -> Vec<Survivor> {
    let mut sweep = Sweep::new(value, false, END_LIMIT);
    loop {
        match sweep.round() {
            Round::Done => return Vec::new(),
            Round::Again => tokio::time::sleep(Duration::from_millis(5)).await,
            Round::LastLook => {
                tokio::time::sleep(LAST_LOOK).await;
                return sweep.survivors();
            }
        }
    }
}

/// [`end`] on a thread that may block, for every value starting with `value` when `prefix`.
pub(crate) fn end_blocking(value: &str, prefix: bool) -> Vec<Survivor> {
    end_blocking_within(value, prefix, END_LIMIT)
}

/// [`end_blocking`], waiting at most `limit`.
fn end_blocking_within(value: &str, prefix: bool, limit: Duration) -> Vec<Survivor> {
    let mut sweep = Sweep::new(value, prefix, limit);
    loop {
        match sweep.round() {
            Round::Done => return Vec::new(),
            Round::Again => std::thread::sleep(Duration::from_millis(5)),
            Round::LastLook => {
                std::thread::sleep(LAST_LOOK);
                return sweep.survivors();
            }
        }
    }
}

/// One ending of the processes carrying a marker: what it killed, and when it gives up.
struct Sweep<'a> {
    value: &'a str,
    prefix: bool,
    deadline: Instant,
    /// Killed and not seen gone yet.
    killed: Vec<i32>,
}

/// What a round of a [`Sweep`] left.
enum Round {
    /// None is left: nothing carries the marker, and all it killed are gone.
    Done,
    /// Look again in a moment.
    Again,
    /// The time is up: those still running a moment after this last kill survived it.
    LastLook,
}

impl<'a> Sweep<'a> {
    fn new(value: &'a str, prefix: bool, limit: Duration) -> Self {
        Sweep {
            value,
            prefix,
            deadline: Instant::now() + limit,
            killed: Vec::new(),
        }
    }

    /// Scans, kills what it found, and says what is left. What it found is killed before
    /// the time is looked at: a scan that outlasted the limit (a loaded machine, reads of
    /// `/proc/PID/environ` waiting on busy processes) ended nothing. A killed process is
    /// not gone when its environment can no longer be read (it is exiting) but once it is
    /// not running.
    fn round(&mut self) -> Round {
        let found = marked(self.value, self.prefix);
        self.killed.retain(|&pid| running(pid));
        if found.is_empty() && self.killed.is_empty() {
            return Round::Done;
        }
        kill(&found);
        for pid in found {
            if !self.killed.contains(&pid) {
                self.killed.push(pid);
            }
        }
        if Instant::now() >= self.deadline {
            Round::LastLook
        } else {
            Round::Again
        }
    }

    /// Those it killed that still run.
    fn survivors(self) -> Vec<Survivor> {
        let left: Vec<i32> = self
            .killed
            .into_iter()
            .filter(|&pid| running(pid))
            .collect();
        survivors(&left)
    }
}

#[cfg(unix)]
fn kill(pids: &[i32]) {
    for &pid in pids {
        platform::signal_pid(pid, libc::SIGKILL);
    }
}

#[cfg(not(unix))]
fn kill(_pids: &[i32]) {}

fn survivors(pids: &[i32]) -> Vec<Survivor> {
    pids.iter()
        .map(|&pid| Survivor {
            pid,
            command: command_line(pid),
        })
        .collect()
}

/// A process's command line, arguments joined by spaces (its name when that is empty).
fn command_line(pid: i32) -> String {
    let line = std::fs::read(format!("/proc/{pid}/cmdline"))
        .map(|c| {
            String::from_utf8_lossy(&c)
                .split('\0')
                .filter(|a| !a.is_empty())
                .collect::<Vec<_>>()
                .join(" ")
        })
        .unwrap_or_default();
    if line.is_empty() {
        platform::process_name(pid).unwrap_or_else(|| "?".into())
    } else {
        line
    }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    #[test]
    fn an_entry_matches_exactly_or_by_prefix() {
        let env = b"A=1\0TERMPILOT_RUN_ID=12.s3\0B=2\0";
        assert!(holds(env, b"TERMPILOT_RUN_ID=12.s3", true));
        assert!(!holds(env, b"TERMPILOT_RUN_ID=12.s", true));
        assert!(holds(env, b"TERMPILOT_RUN_ID=12.", false));
        assert!(!holds(env, b"TERMPILOT_RUN_ID=1.", false));
        assert!(!holds(
            b"XTERMPILOT_RUN_ID=12.s3\0",
            b"TERMPILOT_RUN_ID=12.s3",
            true
        ));
    }

    #[tokio::test]
    async fn a_process_that_left_its_session_is_found_and_ended() {
        let value = for_run();
        let mut child = std::process::Command::new("setsid")
            .args(["-f", "sleep", "1000"])
            .env(MARKER, &value)
            .spawn()
            .unwrap();
        child.wait().unwrap();
        let deadline = Instant::now() + Duration::from_secs(10);
        while marked(&value, false).is_empty() {
            assert!(Instant::now() < deadline, "the escapee never showed");
            std::thread::sleep(Duration::from_millis(5));
        }
        let escapee = marked(&value, false)[0];
        assert!(end(&value).await.is_empty());
        assert!(!running(escapee));
    }

    /// A scan of `/proc` can outlast the whole limit on a loaded machine (reading a busy
    /// process's environment waits for its memory lock): what it found is still killed, and
    /// nothing it killed is called a survivor. (The time was looked at before the kill: a
    /// killed server's session host once left its sessions running, under a full test run.)
    #[test]
    fn what_a_scan_past_the_limit_found_is_killed_still() {
        let value = for_run();
        let mut child = std::process::Command::new("sleep")
            .arg("1000")
            .env(MARKER, &value)
            .spawn()
            .unwrap();
        let deadline = Instant::now() + Duration::from_secs(10);
        while marked(&value, false).is_empty() {
            assert!(Instant::now() < deadline, "the child never showed");
            std::thread::sleep(Duration::from_millis(5));
        }
        let survivors = end_blocking_within(&value, false, Duration::ZERO);
        if !survivors.is_empty() {
            let _ = child.kill();
        }
        assert_eq!(survivors, vec![]);
        use std::os::unix::process::ExitStatusExt;
        assert_eq!(child.wait().unwrap().signal(), Some(libc::SIGKILL));
    }
}
