//! Container targets (`host: "podman://NAME"`), end to end against a real Podman (issue 36,
//! item 7): nothing started inside the container outlives `terminal_stop`, a timed-out or
//! finished `terminal_run`, or a server killed with SIGKILL; a stopped container reads as
//! unreachable, and a respawn into one says it could not start.
//!
//! On this machine the server (root, host pid namespace) also sees the container's processes
//! in its own `/proc`, so its local marker sweep reaches them too; the sweep through the
//! transport, which is what reaches a remote engine, a pod or a VM, is tested on its own
//! against the real container (`the_sweep_through_the_transport_…`).
//!
//! The image needs no registry: a Debian minbase root file system made with `debootstrap`
//! from the Debian mirror and `podman import`ed once (`scripts/container-image`, cached as
//! `tp-minbase:test`, its root under /var/tmp/tp-podman). Each test runs its own container (`runc`, with `--ulimit`s: crun
//! cannot set rlimits on some hosts) under a unique name and removes it when it ends, passed
//! or failed. docker:// and k8s:// go through the same code (an exec into the target), with
//! no engine to test against here.

mod common;

use std::time::Duration;

use serde_json::{Value, json};

const IMAGE: &str = "tp-minbase:test";

/// Runs a program to its end (bounded), returning success, stdout and stderr.
fn run(program: &str, args: &[&str], limit: Duration) -> (bool, String, String) {
    let mut child = std::process::Command::new(program)
        .args(args)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("{program} could not start: {e}"));
    let deadline = std::time::Instant::now() + limit;
    while child.try_wait().unwrap().is_none() {
        if std::time::Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{program} {args:?} did not end within {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let out = child.wait_with_output().unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// The image, built when missing by `scripts/container-image` (which `.ci/run` runs before
/// the tests). `None` (a visible skip; a failure in CI) when podman or runc is missing.
fn image() -> Option<&'static str> {
    for program in ["podman", "runc"] {
        if !common::procs::has(program) {
            return None;
        }
    }
    if run(
        "podman",
        &["image", "exists", IMAGE],
        Duration::from_secs(60),
    )
    .0
    {
        return Some(IMAGE);
    }
    if !common::procs::has("debootstrap") {
        return None;
    }
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/scripts/container-image");
    let (ok, _, err) = run(script, &[IMAGE], Duration::from_secs(900));
    assert!(ok, "building the image failed: {err}");
    Some(IMAGE)
}

/// A running container of its own, removed when dropped (a failed test included).
struct Container {
    name: String,
}

/// Removes the container of this name when dropped.
struct Removal(String);

impl Drop for Removal {
    fn drop(&mut self) {
        let _ = std::process::Command::new("podman")
            .args(["rm", "-f", "-t", "0", &self.0])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .status();
    }
}

impl Container {
    fn start(tag: &str) -> Option<Container> {
        let image = image()?;
        let name = format!("tp-test-{tag}-{}", std::process::id());
        let container = Container { name };
        let (ok, _, err) = run(
            "podman",
            &[
                "run",
                "-d",
                "--name",
                &container.name,
                "--runtime",
                "runc",
                "--ulimit",
                "nofile=1024:1024",
                "--ulimit",
                "nproc=1000:1000",
                image,
                "sleep",
                "infinity",
            ],
            Duration::from_secs(120),
        );
        assert!(ok, "podman run failed: {err}");
        Some(container)
    }

    fn host(&self) -> String {
        format!("podman://{}", self.name)
    }

    /// The living processes in the container other than its first (`sleep infinity`) and
    /// this look itself, as `pid command line`.
    fn others(&self) -> Vec<String> {
        let look = r#"for d in /proc/[0-9]*; do
  p=${d#/proc/}
  [ "$p" = 1 ] || [ "$p" = $$ ] && continue
  read -r stat < "$d/stat" 2>/dev/null || continue
  case "${stat##*) }" in Z*) continue;; esac
  printf '%s %s\n' "$p" "$(tr '\0' ' ' < "$d/cmdline" 2>/dev/null)"
done"#;
        let (ok, out, err) = run(
            "podman",
            &["exec", &self.name, "sh", "-c", look],
            Duration::from_secs(60),
        );
        assert!(ok, "looking into the container failed: {err}");
        out.lines()
            .map(|l| l.trim().to_string())
            // The look's own command substitutions (forked `sh`, then `tr`) may be listed.
            .filter(|l| !l.ends_with(" sh -c") && !l.contains(" tr "))
            .filter(|l| l.split_once(' ').is_some_and(|(_, c)| !c.trim().is_empty()))
            .collect()
    }

    /// Waits (bounded) until a process whose command line holds `fragment` runs inside.
    async fn wait_for(&self, fragment: &str) {
        let deadline = tokio::time::Instant::now() + common::TEST_TIMEOUT;
        loop {
            let others = self.others();
            if others.iter().any(|l| l.contains(fragment)) {
                return;
            }
            assert!(
                tokio::time::Instant::now() < deadline,
                "`{fragment}` never ran in the container: {others:?}"
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// Waits (bounded by `limit`) until nothing but the container's first process runs in
    /// it and no conmon of an exec session into it is left on this machine.
    async fn wait_empty(&self, limit: Duration) {
        let deadline = tokio::time::Instant::now() + limit;
        loop {
            let (inside, conmons) = (self.others(), self.exec_conmons());
            if inside.is_empty() && conmons.is_empty() {
                return;
            }
            assert!(
                tokio::time::Instant::now() < deadline,
                "still running: in the container {inside:?}, exec conmons here {conmons:?}"
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// conmon processes on this machine that serve an exec session into this container.
    fn exec_conmons(&self) -> Vec<i64> {
        let (_, id, _) = run(
            "podman",
            &["inspect", "--format", "{{.Id}}", &self.name],
            Duration::from_secs(60),
        );
        let id = id.trim().to_string();
        common::procs::pids_running(&id)
            .into_iter()
            .filter(|&p| common::procs::alive(p))
            .filter(|p| {
                std::fs::read_to_string(format!("/proc/{p}/comm"))
                    .is_ok_and(|c| c.trim() == "conmon")
                    && std::fs::read(format!("/proc/{p}/cmdline"))
                        .is_ok_and(|c| String::from_utf8_lossy(&c).contains("--exec-attach"))
            })
            .collect()
    }

    fn stop(&self) {
        let (ok, _, err) = run(
            "podman",
            &["stop", "-t", "0", &self.name],
            Duration::from_secs(120),
        );
        assert!(ok, "podman stop failed: {err}");
    }
}

impl Drop for Container {
    fn drop(&mut self) {
        drop(Removal(self.name.clone()));
    }
}

async fn start_session(server: &common::Server, host: &str, cwd: Option<&str>) -> Value {
    let mut args = json!({"host": host});
    if let Some(dir) = cwd {
        args["cwd"] = dir.into();
    }
    server.ok("terminal_start", args).await
}

#[tokio::test]
async fn terminal_stop_leaves_nothing_running_in_the_container_and_says_so_truly() {
    let Some(container) = Container::start("stop") else {
        return;
    };
    let server = common::start().await;
    let started = start_session(&server, &container.host(), None).await;
    let id = started["sessionId"].as_str().unwrap().to_string();
    let out = common::exec(
        &server,
        &id,
        "sleep 1091 & setsid sleep 1092 >/dev/null 2>&1 & echo ran-$((40+2))",
    )
    .await;
    assert!(out.to_string().contains("ran-42"), "{out}");
    container.wait_for("sleep 1091").await;
    container.wait_for("sleep 1092").await;
    assert!(
        !container.exec_conmons().is_empty(),
        "the session's exec has its conmon here"
    );

    let stopped = server.ok("terminal_stop", json!({"sessionId": id})).await;
    let message = stopped["message"].as_str().unwrap();
    assert!(message.ends_with("its processes are gone."), "{message}");
    // The stop waited for the sweep: nothing is left now (the bound only covers conmon's
    // own exit, which follows its exec session's end).
    let inside = container.others();
    assert!(
        inside.is_empty(),
        "still running in the container: {inside:?}"
    );
    container.wait_empty(Duration::from_secs(10)).await;
    server.stop().await;
}

#[tokio::test]
async fn a_run_in_the_container_leaves_nothing_whether_it_ends_or_times_out() {
    let Some(container) = Container::start("run") else {
        return;
    };
    let server = common::start().await;
    let host = container.host();
    let timed_out = server
        .ok(
            "terminal_run",
            json!({"host": host, "cmd": "sleep 1093 & setsid sleep 1094 & sleep 1095",
                   "shell": true, "timeout": 2000}),
        )
        .await;
    assert_eq!(timed_out["timedOut"], true, "{timed_out}");
    let hint = timed_out["hint"].as_str().unwrap_or_default();
    assert!(!hint.contains("could not be ended"), "{hint}");
    container.wait_empty(Duration::from_secs(10)).await;

    // A run that ends by itself leaves its background work behind no more than locally.
    let ended = server
        .ok(
            "terminal_run",
            json!({"host": host, "cmd": "sleep 1096 & echo left-$((1+1))", "shell": true,
                   "timeout": 30000}),
        )
        .await;
    assert_eq!(ended["exitCode"], 0, "{ended}");
    assert!(ended.to_string().contains("left-2"), "{ended}");
    container.wait_empty(Duration::from_secs(10)).await;
    server.stop().await;
}

#[tokio::test]
async fn a_killed_server_leaves_nothing_running_in_the_container() {
    let Some(container) = Container::start("crash") else {
        return;
    };
    let server = common::start().await;
    let host = container.host();
    let id = start_session(&server, &host, None).await["sessionId"]
        .as_str()
        .unwrap()
        .to_string();
    common::exec(&server, &id, "setsid sleep 1097 >/dev/null 2>&1 &").await;
    let params = rmcp::model::CallToolRequestParams::new("terminal_run").with_arguments(
        json!({"host": host, "cmd": "sleep", "args": ["1098"], "timeout": 600000})
            .as_object()
            .unwrap()
            .clone(),
    );
    let peer = server.client.peer().clone();
    let run = tokio::spawn(async move {
        let _ = peer.call_tool(params).await;
    });
    container.wait_for("sleep 1097").await;
    container.wait_for("sleep 1098").await;

    server.crash().await;
    let _ = run.await;
    // The undertaker sweeps the container once the server is gone.
    container.wait_empty(Duration::from_secs(30)).await;
}

#[tokio::test]
async fn terminal_start_gives_the_container_sessions_own_cwd() {
    let Some(container) = Container::start("cwd") else {
        return;
    };
    let server = common::start().await;
    let there = start_session(&server, &container.host(), Some("/tmp")).await;
    assert_eq!(there["cwd"], "/tmp", "{there}");
    let home = start_session(&server, &container.host(), None).await;
    assert_eq!(
        home["cwd"], "/",
        "the exec's own directory (the image's): {home}"
    );
    server.stop().await;
}

#[tokio::test]
async fn a_server_that_exits_leaves_nothing_running_in_the_container() {
    let Some(container) = Container::start("exit") else {
        return;
    };
    let server = common::start().await;
    let id = start_session(&server, &container.host(), None).await["sessionId"]
        .as_str()
        .unwrap()
        .to_string();
    common::exec(&server, &id, "setsid sleep 1099 >/dev/null 2>&1 &").await;
    container.wait_for("sleep 1099").await;
    // The client goes (stdin closes); the server ends its sessions on the way out.
    server.stop().await;
    container.wait_empty(Duration::from_secs(30)).await;
}

#[tokio::test]
async fn a_stopped_container_reads_as_unreachable() {
    let Some(container) = Container::start("stopped") else {
        return;
    };
    container.stop();
    let server = common::start().await;
    let host = container.host();
    let run = server
        .err("terminal_run", json!({"host": host, "cmd": "true"}))
        .await;
    assert!(run.contains("could not be reached"), "{run}");
    assert!(run.contains("podman ps"), "{run}");
    let start = server.err("terminal_start", json!({"host": host})).await;
    assert!(start.contains("could not be reached"), "{start}");
    server.stop().await;
}

#[tokio::test]
async fn a_respawn_into_a_stopped_container_says_it_could_not_start() {
    let Some(container) = Container::start("respawn") else {
        return;
    };
    let server = common::start().await;
    let id = start_session(&server, &container.host(), None).await["sessionId"]
        .as_str()
        .unwrap()
        .to_string();
    container.stop();
    // The transport ends a moment after the container: the session is then listed as ended.
    let deadline = tokio::time::Instant::now() + common::TEST_TIMEOUT;
    loop {
        let listed = server.ok("terminal_list", json!({})).await;
        if listed["sessions"]
            .as_array()
            .unwrap()
            .iter()
            .all(|s| s["id"] != id.as_str() || s["alive"] == false)
        {
            break;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "the session never ended: {listed}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }

    // The session's shell died with the container: the next call starts it again, which
    // cannot work, and says so.
    let respawn = server
        .err(
            "terminal_exec",
            json!({"sessionId": id, "command": "echo hi"}),
        )
        .await;
    assert!(
        respawn.contains("could not be started again") && respawn.contains("could not be reached"),
        "{respawn}"
    );
    assert!(!respawn.contains("now runs"), "{respawn}");
    let listed = server.ok("terminal_list", json!({})).await;
    let alive: Vec<&Value> = listed["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["id"] == id.as_str() && s["alive"] == true)
        .collect();
    assert!(alive.is_empty(), "listed as alive: {listed}");
    server.stop().await;
}

#[tokio::test]
async fn a_hard_reset_that_cannot_reach_the_container_again_says_so() {
    let Some(container) = Container::start("reset") else {
        return;
    };
    let server = common::start().await;
    let id = start_session(&server, &container.host(), None).await["sessionId"]
        .as_str()
        .unwrap()
        .to_string();
    // The live session keeps its exec; a new exec by the old name finds nothing.
    let renamed = format!("{}-renamed", container.name);
    let _removal = Removal(renamed.clone());
    let (ok, _, err) = run(
        "podman",
        &["rename", &container.name, &renamed],
        Duration::from_secs(60),
    );
    assert!(ok, "podman rename failed: {err}");
    let reset = server
        .err(
            "terminal_reset",
            json!({"sessionId": id, "hardReset": true}),
        )
        .await;
    assert!(reset.contains("could not be reached"), "{reset}");
    assert!(!reset.contains("a fresh shell runs"), "{reset}");
    server.stop().await;
}

#[tokio::test]
async fn a_stop_that_cannot_reach_into_a_paused_container_does_not_claim_its_processes_are_gone() {
    let Some(container) = Container::start("paused") else {
        return;
    };
    let server = common::start().await;
    let id = start_session(&server, &container.host(), None).await["sessionId"]
        .as_str()
        .unwrap()
        .to_string();
    let (ok, _, err) = run(
        "podman",
        &["pause", &container.name],
        Duration::from_secs(60),
    );
    assert!(ok, "podman pause failed: {err}");
    let stopped = server.ok("terminal_stop", json!({"sessionId": id})).await;
    let message = stopped["message"].as_str().unwrap();
    assert!(
        message.contains("could not be ended")
            && message.contains(&format!("`{}`", container.host()))
            && message.contains("paused"),
        "{message}"
    );
    server.stop().await;
}

/// Starts `sleep SECONDS` detached inside the container, carrying the marker `value`.
fn marked_sleep(container: &Container, value: &str, seconds: &str) {
    let (ok, _, err) = run(
        "podman",
        &[
            "exec",
            "-d",
            &container.name,
            "env",
            &format!("TERMPILOT_RUN_ID={value}"),
            "setsid",
            "sleep",
            seconds,
        ],
        Duration::from_secs(60),
    );
    assert!(ok, "podman exec -d failed: {err}");
}

#[tokio::test]
async fn the_sweep_through_the_transport_ends_marked_processes_and_only_those() {
    use termpilot_core::remote::{self, RemoteOptions, Target};
    let Some(container) = Container::start("sweep") else {
        return;
    };
    let target = Target::parse(&container.host()).unwrap();
    let options = RemoteOptions::default();
    // Values from another process id than this one's: nothing here carries them.
    marked_sleep(&container, "1.s7", "1101");
    marked_sleep(&container, "1.s70", "1102");
    marked_sleep(&container, "2.s7", "1103");
    container.wait_for("sleep 1101").await;
    container.wait_for("sleep 1102").await;
    container.wait_for("sleep 1103").await;

    // A session's exact value: its process only.
    let survivors = remote::end_marked(&target, &options, "1.s7").await;
    assert!(survivors.is_empty(), "{survivors:?}");
    let left = container.others();
    assert!(!left.iter().any(|l| l.contains("sleep 1101")), "{left:?}");
    assert!(left.iter().any(|l| l.contains("sleep 1102")), "{left:?}");

    // The undertaker's sweep: every value of one server (a prefix), nothing of another.
    let argv = remote::sweep_argv(&target, &options, "1.", true);
    let (code, out, err) =
        termpilot_core::host::run_bounded(&argv, Duration::from_secs(60)).unwrap();
    assert_eq!(code, Some(0), "{out}{err}");
    let left = container.others();
    assert!(!left.iter().any(|l| l.contains("sleep 1102")), "{left:?}");
    assert!(left.iter().any(|l| l.contains("sleep 1103")), "{left:?}");
}
