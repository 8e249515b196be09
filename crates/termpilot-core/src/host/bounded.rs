//! One short command run to its end or its limit: stdin closed, its own process group,
//! killed as a group and reaped on time out, without the server's run marker. What the
//! undertaker runs after the server is gone (the sweeps of containers and pods it was told
//! of, `remote::ending`), so it lives on this floor, below everything that uses it.

use std::io::Read;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use super::marker::MARKER;

/// The longest a sweep may take, the exec into the target included.
pub(crate) const SWEEP_LIMIT: Duration = Duration::from_secs(15);

/// Runs `argv` (stdin closed, in its own process group), waiting at most `limit`; on time
/// out it is killed as a group and reaped. Exit code, stdout and stderr.
pub fn run_bounded(
    argv: &[String],
    limit: Duration,
) -> Result<(Option<i32>, String, String), String> {
    let (program, args) = argv.split_first().ok_or("an empty command line")?;
    let mut command = Command::new(program);
    command
        .args(args)
        .env_remove(MARKER)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    #[cfg(unix)]
    std::os::unix::process::CommandExt::process_group(&mut command, 0);
    let mut child = command
        .spawn()
        .map_err(|e| format!("`{program}` could not start: {e}"))?;
    let mut stdout = child.stdout.take().expect("piped stdout");
    let mut stderr = child.stderr.take().expect("piped stderr");
    let out = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = stdout.read_to_string(&mut s);
        s
    });
    let err = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = stderr.read_to_string(&mut s);
        s
    });
    let deadline = Instant::now() + limit;
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break Some(status),
            Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(10)),
            _ => {
                #[cfg(unix)]
                crate::platform::signal_group(child.id() as i32, libc::SIGKILL);
                let _ = child.kill();
                let _ = child.wait();
                break None;
            }
        }
    };
    let (out, err) = (
        out.join().unwrap_or_default(),
        err.join().unwrap_or_default(),
    );
    match status {
        Some(status) => Ok((status.code(), out, err)),
        None => Err(format!(
            "`{program}` did not answer within {} s",
            limit.as_secs()
        )),
    }
}
