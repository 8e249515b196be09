//! Ending what a session or a run started inside a container or a pod.
//!
//! Killing the local `podman exec` / `docker exec` / `kubectl exec` client does not end what
//! it started in the target: the engine keeps the exec session (and, for podman, one conmon
//! on this machine) until the program there ends by itself. So what termpilot starts in a
//! target carries the same marker as on this machine ([`crate::host::marker`]:
//! `TERMPILOT_RUN_ID=<value>` in its environment, inherited by everything it starts, whatever
//! process group or session it moves to), and ending it is a second, short exec into the
//! target: a POSIX `sh` program ([`sweep_script`]) that finds the living processes carrying
//! the marker in the target's `/proc`, kills them (again, while new ones appear, for about
//! two seconds) and prints those it could not end. That needs `sh`, `tr` and `grep` in the
//! target (Debian, Alpine/busybox and most images have them) and its `/proc`.
//!
//! A target that cannot be reached any more (a stopped container, a deleted pod) runs
//! nothing, so that counts as ended; a paused container (which refuses an exec too) does
//! not. Any other failure of the sweep is returned as a
//! survivor that says what could not be checked, so no reply claims the processes are gone
//! when that is not known. SSH targets are not swept here: sshd hangs up a session's
//! processes when its connection ends.
//!
//! When the server dies without ending its sessions (`kill -9`), the undertaker
//! ([`crate::host::undertaker`]) runs the sweep for every target the server reached, with
//! the server's marker prefix: [`remember_for_undertaker`] tells it the command line.

use std::time::Duration;

use super::failure;
use super::target::Target;
use super::transport::{self, RemoteOptions, Tty};
use crate::host::bounded::{SWEEP_LIMIT, run_bounded};
use crate::host::marker::{MARKER, Survivor};

/// Whether processes started on `target` outlive the local transport, so they need a sweep.
pub(crate) fn reaches_inside(target: &Target) -> bool {
    !target.is_ssh()
}

/// The regular expression of the marker's environment entry: `value` exactly, or any value
/// starting with it (`prefix`). Values are digits, `.` and letters (see the marker module).
fn pattern(value: &str, prefix: bool) -> String {
    let escaped: String = value
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || *c == '.')
        .map(|c| {
            if c == '.' {
                "\\.".to_string()
            } else {
                c.to_string()
            }
        })
        .collect();
    format!("^{MARKER}={escaped}{}", if prefix { "" } else { "$" })
}

/// The `sh` program that kills every living process in the target carrying the marker and
/// prints `survivor PID COMMAND` for each one still there after about two seconds.
pub(crate) fn sweep_script(value: &str, prefix: bool) -> String {
    sweep(
        value,
        prefix,
        "exit 0",
        "printf 'survivor %s %s\\n' \"$q\" \"$c\"",
    )
}

/// The sweep's text: `done` ends it, `report` tells of survivor `$q` (command line `$c`).
fn sweep(value: &str, prefix: bool, done: &str, report: &str) -> String {
    format!(
        r#"p='{}'
marked() {{
  for d in /proc/[0-9]*; do
    [ "${{d#/proc/}}" = "$$" ] && continue
    tr '\0' '\n' 2>/dev/null <"$d/environ" | grep -q "$p" && printf '%s\n' "${{d#/proc/}}"
  done
}}
n=0
while :; do
  pids=$(marked)
  [ -z "$pids" ] && {done}
  n=$((n+1))
  if [ "$n" -gt 40 ]; then
    for q in $pids; do c=$(tr '\0' ' ' 2>/dev/null <"/proc/$q/cmdline"); {report}; done
    {done}
  fi
  kill -9 $pids 2>/dev/null
  sleep 0.05 2>/dev/null || sleep 1
done"#,
        pattern(value, prefix)
    )
}

/// What a one-shot's in-exec sweep writes to stderr for a process it could not end.
pub(crate) fn left_behind_tag(value: &str) -> String {
    format!("left behind by {MARKER}={value}")
}

/// The local command line that sweeps `target` for the marker `value`.
pub fn sweep_argv(
    target: &Target,
    options: &RemoteOptions,
    value: &str,
    prefix: bool,
) -> Vec<String> {
    transport::argv(
        target,
        options,
        Tty::No,
        &["sh".into(), "-c".into(), sweep_script(value, prefix)],
    )
}

/// Wraps a one-shot's `sh -c SCRIPT` so that the script runs carrying the marker and, when
/// it ends by itself, what it left in the background is swept in the same exec; the
/// script's exit status is kept.
pub(crate) fn marked_run(script: &str, value: &str) -> Vec<String> {
    let outer = format!(
        "{MARKER}={value} sh -c {}\n__tp_rc=$?\n{}\nexit $__tp_rc",
        super::script::quote(script),
        sweep(
            value,
            false,
            "break",
            &format!(
                "printf 'termpilot could not end pid %s (%s), {}\\n' \"$q\" \"$c\" >&2",
                left_behind_tag(value)
            )
        )
    );
    vec!["sh".into(), "-c".into(), outer]
}

/// Ends what carries `value` in `target` (blocking, at most [`SWEEP_LIMIT`]): nothing when
/// everything ended or the target is gone, else what still runs or what could not be checked.
pub(crate) fn end_blocking(target: &Target, options: &RemoteOptions, value: &str) -> Vec<Survivor> {
    if !reaches_inside(target) {
        return Vec::new();
    }
    let argv = sweep_argv(target, options, value, false);
    match run_bounded(&argv, SWEEP_LIMIT) {
        Ok((code, stdout, stderr)) => {
            if code != Some(0)
                && let Some(why) = failure::classify(target, code, &stderr)
            {
                // A paused container refuses an exec as a stopped one does, yet its
                // processes are all still there.
                if paused(target) {
                    return vec![unchecked(
                        target,
                        "the container is paused, so nothing in it could be ended",
                    )];
                }
                // A stopped container or a deleted pod runs nothing any more.
                tracing::debug!(%target, ?why, "sweep: the target is gone");
                return Vec::new();
            }
            let mut survivors = parse_survivors(target, &stdout);
            if code != Some(0) && survivors.is_empty() {
                survivors.push(unchecked(
                    target,
                    &format!(
                        "the check exited with {}: {}",
                        code.map_or("a signal".into(), |c| format!("status {c}")),
                        stderr.trim().lines().next().unwrap_or("no message")
                    ),
                ));
            }
            survivors
        }
        Err(why) => vec![unchecked(target, &why)],
    }
}

/// Whether `target` is a container its engine reports as paused.
fn paused(target: &Target) -> bool {
    let Target::Container { engine, name } = target else {
        return false;
    };
    let argv = [
        engine.program().to_string(),
        "inspect".into(),
        "--format".into(),
        "{{.State.Status}}".into(),
        name.clone(),
    ];
    run_bounded(&argv, Duration::from_secs(10))
        .is_ok_and(|(code, out, _)| code == Some(0) && out.trim() == "paused")
}

/// [`end_blocking`] off the async workers.
pub async fn end(target: &Target, options: &RemoteOptions, value: &str) -> Vec<Survivor> {
    if !reaches_inside(target) {
        return Vec::new();
    }
    let (target, options, value) = (target.clone(), options.clone(), value.to_string());
    let shown = target.to_string();
    tokio::task::spawn_blocking(move || end_blocking(&target, &options, &value))
        .await
        .unwrap_or_else(|e| {
            vec![Survivor {
                pid: 0,
                command: format!("whatever still runs in `{shown}` (the check failed: {e})"),
            }]
        })
}

/// A survivor standing for what could not be checked in `target`.
fn unchecked(target: &Target, why: &str) -> Survivor {
    Survivor {
        pid: 0,
        command: format!("whatever still runs in `{target}` (the check failed: {why})"),
    }
}

/// `survivor PID COMMAND` lines → survivors named with the target.
fn parse_survivors(target: &Target, stdout: &str) -> Vec<Survivor> {
    stdout
        .lines()
        .filter_map(|l| l.strip_prefix("survivor "))
        .filter_map(|rest| {
            let (pid, command) = rest.split_once(' ').unwrap_or((rest, ""));
            Some(Survivor {
                pid: pid.trim().parse().ok()?,
                command: format!("{} inside `{target}`", command.trim()),
            })
        })
        .collect()
}

/// Tells the undertaker how to sweep `target` for everything this server started there,
/// should the server die without doing it itself. Once per target and transport.
pub(crate) fn remember_for_undertaker(target: &Target, options: &RemoteOptions) {
    if !reaches_inside(target) {
        return;
    }
    let prefix = format!("{}.", std::process::id());
    crate::host::undertaker::remember(&sweep_argv(target, options, &prefix, true));
}

/// Why a remote shell ended as soon as it started, in one sentence: the link's failure
/// (a stopped container reads as unreachable), or its exit and last line.
pub fn start_failed(
    shape: &crate::session::Shape,
    exit: Option<crate::session::Exit>,
    output: &str,
) -> String {
    let code = exit.and_then(|e| e.code);
    let Some(remote) = &shape.remote else {
        return format!(
            "it ended at once (exit code {})",
            code.map_or("unknown".into(), |c| c.to_string())
        );
    };
    let target = &remote.target;
    if let Some(failure) = failure::classify(target, code, output) {
        return failure.sentence(target);
    }
    let last = output.trim().lines().last().unwrap_or("").trim();
    format!(
        "The session on `{target}` ended at once (exit code {}){}; check that {} runs there, or pass shell \"sh\".",
        code.map_or("unknown".to_string(), |c| c.to_string()),
        if last.is_empty() {
            String::new()
        } else {
            format!(": {last}")
        },
        shape.shell.kind.name()
    )
}

#[cfg(test)]
mod tests {
    use std::process::Command;

    use super::*;

    #[test]
    fn the_pattern_is_exact_or_a_prefix_and_escapes_dots() {
        assert_eq!(pattern("12.s3", false), "^TERMPILOT_RUN_ID=12\\.s3$");
        assert_eq!(pattern("12.", true), "^TERMPILOT_RUN_ID=12\\.");
        assert_eq!(pattern("1'$(x)", false), "^TERMPILOT_RUN_ID=1x$");
    }

    #[test]
    fn survivors_are_read_back_with_the_target() {
        let t = Target::parse("podman://box").unwrap();
        let s = parse_survivors(&t, "noise\nsurvivor 12 sleep 1000 \nsurvivor x y\n");
        assert_eq!(
            s,
            vec![Survivor {
                pid: 12,
                command: "sleep 1000 inside `podman://box`".into()
            }]
        );
    }

    #[test]
    fn the_sweep_ends_a_marked_process_here_in_sh() {
        // The script is plain sh over /proc: run it on this machine against a marked sleep.
        let value = crate::host::marker::for_run();
        let mut child = Command::new("sleep")
            .arg("1000")
            .env(MARKER, &value)
            .spawn()
            .unwrap();
        let argv = vec!["sh".into(), "-c".into(), sweep_script(&value, false)];
        let (code, out, _) = run_bounded(&argv, Duration::from_secs(20)).unwrap();
        assert_eq!(code, Some(0));
        assert!(out.is_empty(), "{out}");
        let status = child.wait().unwrap();
        assert!(!status.success(), "sleep was killed");
    }
}
