//! Starting a job: the shell command line, and the detached wrapper that runs it.
//!
//! The wrapper is a few lines of POSIX `sh` in its own session (so its pid is also its
//! process group): it tees the command's stdout and stderr into their own logs and into
//! `combined.log`, waits until the command has exited and its output is closed, then writes
//! `exit_code.txt` with shell builtins only (`set -C`: created exclusively, never replacing
//! one job_kill wrote; complete once it ends in a newline). It needs nothing from the server, so the result survives the
//! server being killed. A background child that keeps the output open keeps the job running.
//!
//! The shell's command line comes from [`crate::exec::shell`], the one place that builds them; the
//! child environment is [`CHILD_ENV`], as for every other child.

use std::path::Path;

use crate::error::{Error, Result};
use crate::exec::shell::{Shell, ShellCommand};
use crate::host::env::CHILD_ENV;

/// The shell a job's command is given to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
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

    /// The one-shot shell that runs a job's command string.
    pub fn shell(self) -> Shell {
        match self {
            JobShell::Bash => Shell::Bash,
            JobShell::Powershell => Shell::PowerShell,
            JobShell::Cmd => Shell::Cmd,
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

/// The program and arguments that run `command` in `shell` (built by [`crate::exec::shell`]),
/// checked to exist now: a detached wrapper could only report a missing shell as exit 127.
pub(crate) fn shell_command(shell: JobShell, command: &str) -> Result<ShellCommand> {
    let c = shell.shell().command(command)?;
    c.require_installed()?;
    Ok(c)
}

/// The wrapper: `$1` is the job directory, the rest is the command's argv.
#[cfg(unix)]
const WRAPPER: &str = r#"d=$1; shift
o="$d/.stdout.pipe"; e="$d/.stderr.pipe"
mkfifo -m 600 "$o" "$e" || exit 1
tee -a "$d/stdout.log" < "$o" >> "$d/combined.log" &
tee -a "$d/stderr.log" < "$e" >> "$d/combined.log" &
"$@" > "$o" 2> "$e" < /dev/null
code=$?
wait
set -C
umask 077
printf '%s\n' "$code" > "$d/exit_code.txt"
rm -f "$o" "$e"
"#;

/// Starts the wrapper for `command` detached (the logs, 0600, are created first) (new session, stdio away from the server) and
/// returns its pid. The server reaps it if it is still running when the wrapper ends.
#[cfg(unix)]
pub(crate) fn spawn(dir: &Path, cwd: &Path, command: &ShellCommand) -> Result<i32> {
    super::store::create_logs(dir).map_err(|e| {
        Error::io(
            format!("Cannot create the job's logs in {}", dir.display()),
            "Check --state-dir points somewhere writable.",
            e,
        )
    })?;
    let prefix = crate::sandbox::job_prefix(dir)?;
    let mut cmd = tokio::process::Command::new("/bin/sh");
    cmd.arg("-c")
        .arg(WRAPPER)
        .arg("termpilot-job")
        .arg(dir)
        .args(prefix)
        .arg(&command.program)
        .args(&command.args)
        .current_dir(cwd)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .envs(CHILD_ENV.iter().copied())
        .kill_on_drop(false);
    crate::sandbox::seal_job(&mut cmd);
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
/// Arguments are quoted unless the shell command carries its own quoting (`verbatim`).
#[cfg(windows)]
pub fn spawn(dir: &Path, cwd: &Path, command: &ShellCommand) -> Result<i32> {
    use std::os::windows::process::CommandExt;
    const DETACHED_PROCESS: u32 = 0x0000_0008;
    const CREATE_NEW_PROCESS_GROUP: u32 = 0x0000_0200;
    const CREATE_NO_WINDOW: u32 = 0x0800_0000;
    let quote = |a: &String| format!("\"{a}\"");
    let quoted: Vec<String> = std::iter::once(quote(&command.program))
        .chain(command.args.iter().map(|a| {
            if command.verbatim {
                a.clone()
            } else {
                quote(a)
            }
        }))
        .collect();
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
        .envs(CHILD_ENV.iter().copied())
        .creation_flags(DETACHED_PROCESS | CREATE_NEW_PROCESS_GROUP | CREATE_NO_WINDOW);
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
        if crate::session::shell::find("bash").is_none() {
            eprintln!("skipped: no bash");
            return;
        }
        let argv = shell_command(JobShell::Bash, "echo hi").unwrap().argv();
        assert!(argv[0].ends_with("bash"));
        assert_eq!(&argv[1..], ["-c", "echo hi"]);
    }

    #[cfg(unix)]
    #[test]
    fn cmd_is_refused_off_windows() {
        let e = shell_command(JobShell::Cmd, "dir").unwrap_err().to_string();
        assert!(e.contains("only on Windows"), "{e}");
    }
}
