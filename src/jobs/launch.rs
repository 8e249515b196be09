//! Starting a job: the shell's argv, and the detached wrapper that runs it.
//!
//! The wrapper is a few lines of POSIX `sh` in its own session (so its pid is also its
//! process group): it tees the command's stdout and stderr into their own logs and into
//! `combined.log`, waits until the command has exited and its output is closed, then writes
//! `exit_code.txt` with shell builtins only (`set -C`: created exclusively, never replacing
//! one job_kill wrote; complete once it ends in a newline). It needs nothing from the server, so the result survives the
//! server being killed. A background child that keeps the output open keeps the job running.
//!
//! The shell argv (`bash -c`, `pwsh -Command`, `cmd /c`) is small and local for now; it should
//! fold into the one-shot runner's `exec/shell.rs` once that lands.

use std::path::{Path, PathBuf};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

/// The shell a job's command is given to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum JobShell {
    Bash,
    Powershell,
    Cmd,
}

impl JobShell {
    /// PowerShell on Windows, bash elsewhere.
    pub fn platform_default() -> Self {
        if cfg!(windows) {
            JobShell::Powershell
        } else {
            JobShell::Bash
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            JobShell::Bash => "bash",
            JobShell::Powershell => "powershell",
            JobShell::Cmd => "cmd",
        }
    }
}

/// Environment every job gets (SPEC §4): no pagers, no interactive installers.
pub const CHILD_ENV: &[(&str, &str)] = &[
    ("TERM", "xterm-256color"),
    ("GIT_PAGER", "cat"),
    ("PAGER", "cat"),
    ("LESS", "-FRX"),
    ("DEBIAN_FRONTEND", "noninteractive"),
];

/// The first of `names` found on `PATH`.
fn on_path(names: &[&str]) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    for dir in std::env::split_paths(&path) {
        for name in names {
            let candidate = dir.join(name);
            if candidate.is_file() {
                return Some(candidate);
            }
        }
    }
    None
}

/// The argv that runs `command` in `shell`.
pub fn shell_argv(shell: JobShell, command: &str) -> Result<Vec<String>> {
    let c = command.to_string();
    match shell {
        JobShell::Bash if cfg!(windows) => {
            let git_bash = [
                r"C:\Program Files\Git\bin\bash.exe",
                r"C:\Program Files (x86)\Git\bin\bash.exe",
            ]
            .into_iter()
            .find(|p| Path::new(p).is_file())
            .ok_or_else(|| {
                Error::InvalidInput(
                    "Git Bash was not found; install Git for Windows or use shell powershell or cmd."
                        .into(),
                )
            })?;
            Ok(vec![git_bash.into(), "-c".into(), c])
        }
        JobShell::Bash => {
            let bash = on_path(&["bash"]).ok_or_else(|| {
                Error::InvalidInput(
                    "bash was not found on PATH; install it or run the command through `sh -c` yourself."
                        .into(),
                )
            })?;
            Ok(vec![bash.display().to_string(), "-c".into(), c])
        }
        JobShell::Powershell => {
            let exe = on_path(&["pwsh", "pwsh.exe", "powershell.exe"]).ok_or_else(|| {
                Error::InvalidInput(
                    "PowerShell (pwsh) was not found on PATH; install it or use shell bash.".into(),
                )
            })?;
            Ok(vec![
                exe.display().to_string(),
                "-NoLogo".into(),
                "-NoProfile".into(),
                "-NonInteractive".into(),
                "-Command".into(),
                c,
            ])
        }
        JobShell::Cmd if cfg!(windows) => Ok(vec![
            "cmd.exe".into(),
            "/d".into(),
            "/s".into(),
            "/c".into(),
            c,
        ]),
        JobShell::Cmd => Err(Error::InvalidInput(
            "shell cmd exists only on Windows; use shell bash here.".into(),
        )),
    }
}

/// The wrapper: `$1` is the job directory, the rest is the command's argv.
#[cfg(unix)]
const WRAPPER: &str = r#"d=$1; shift
o="$d/.stdout.pipe"; e="$d/.stderr.pipe"
mkfifo "$o" "$e" || exit 1
tee -a "$d/stdout.log" < "$o" >> "$d/combined.log" &
tee -a "$d/stderr.log" < "$e" >> "$d/combined.log" &
"$@" > "$o" 2> "$e" < /dev/null
code=$?
wait
set -C
printf '%s\n' "$code" > "$d/exit_code.txt"
rm -f "$o" "$e"
"#;

/// Starts the wrapper for `argv` detached (new session, stdio away from the server) and
/// returns its pid. The server reaps it if it is still running when the wrapper ends.
#[cfg(unix)]
pub fn spawn(dir: &Path, cwd: &Path, argv: &[String]) -> Result<i32> {
    let mut cmd = tokio::process::Command::new("/bin/sh");
    cmd.arg("-c")
        .arg(WRAPPER)
        .arg("termpilot-job")
        .arg(dir)
        .args(argv)
        .current_dir(cwd)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(false);
    for (k, v) in CHILD_ENV {
        cmd.env(k, v);
    }
    // SAFETY: setsid(2) is async-signal-safe; nothing else runs between fork and exec.
    unsafe {
        cmd.pre_exec(|| {
            if libc::setsid() < 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let mut child = cmd.spawn().map_err(|e| {
        Error::io(
            "Cannot start the job's wrapper (/bin/sh)",
            "Check that /bin/sh exists and the cwd is readable.",
            e,
        )
    })?;
    let pid = child.id().map(|p| p as i32).unwrap_or(0);
    tokio::spawn(async move {
        let _ = child.wait().await;
    });
    Ok(pid)
}

/// Windows (not compiled here): cmd runs the command with both streams into
/// `combined.log` (stdout.log and stderr.log stay empty), then records `%errorlevel%`.
#[cfg(windows)]
pub fn spawn(dir: &Path, cwd: &Path, argv: &[String]) -> Result<i32> {
    use std::os::windows::process::CommandExt;
    const DETACHED_PROCESS: u32 = 0x0000_0008;
    const CREATE_NEW_PROCESS_GROUP: u32 = 0x0000_0200;
    const CREATE_NO_WINDOW: u32 = 0x0800_0000;
    let quoted: Vec<String> = argv.iter().map(|a| format!("\"{a}\"")).collect();
    let d = dir.display();
    let script = format!(
        "{} > \"{d}\\combined.log\" 2>&1 & call echo %^errorlevel% > \"{d}\\.exit_code.tmp\" & move /y \"{d}\\.exit_code.tmp\" \"{d}\\exit_code.txt\" > nul",
        quoted.join(" ")
    );
    for f in [super::store::STDOUT, super::store::STDERR] {
        let _ = std::fs::write(dir.join(f), b"");
    }
    let mut cmd = std::process::Command::new("cmd.exe");
    cmd.args(["/d", "/s", "/c"])
        .raw_arg(format!("\"{script}\""))
        .current_dir(cwd)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .creation_flags(DETACHED_PROCESS | CREATE_NEW_PROCESS_GROUP | CREATE_NO_WINDOW);
    for (k, v) in CHILD_ENV {
        cmd.env(k, v);
    }
    let child = cmd.spawn().map_err(|e| {
        Error::io(
            "Cannot start the job's wrapper (cmd.exe)",
            "Check the cwd exists.",
            e,
        )
    })?;
    Ok(child.id() as i32)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bash_argv_runs_the_command() {
        if on_path(&["bash"]).is_none() {
            eprintln!("skipped: no bash");
            return;
        }
        let argv = shell_argv(JobShell::Bash, "echo hi").unwrap();
        assert!(argv[0].ends_with("bash"));
        assert_eq!(&argv[1..], ["-c", "echo hi"]);
    }

    #[cfg(unix)]
    #[test]
    fn cmd_is_refused_off_windows() {
        let e = shell_argv(JobShell::Cmd, "dir").unwrap_err().to_string();
        assert!(e.contains("only on Windows"), "{e}");
    }
}
