//! Jobs end to end: they survive a SIGKILLed server, job_wait reacts at once, kill ends a
//! tree, a reused pid is not the job, corrupt job directories are reported.
#![cfg(unix)]

mod common;

use std::path::Path;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use common::{TEST_TIMEOUT, start, start_in};
use serde_json::{Value, json};

/// Waits (bounded) until `f` holds, re-checking after short pauses.
async fn eventually<F: FnMut() -> bool>(what: &str, mut f: F) {
    let deadline = Instant::now() + TEST_TIMEOUT;
    while !f() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

fn gone(pid: i32) -> bool {
    !termpilot_core::platform::pid_exists(pid)
        || termpilot_core::platform::process_state(pid) == Some('Z')
}

#[tokio::test]
async fn a_job_survives_the_server_being_killed() {
    let state = tempfile::tempdir().unwrap();
    let gate = state.path().join("gate");
    let made = std::process::Command::new("mkfifo")
        .arg(&gate)
        .status()
        .unwrap();
    assert!(made.success());

    let first = start_in(state.path(), &[]).await;
    let command = format!(
        "echo started; read line < '{}'; echo \"got $line\"; exit 7",
        gate.display()
    );
    let job = first
        .extra("job_start", json!({"command": command, "name": "survivor"}))
        .await;
    let _job = common::procs::JobGuard::of(&job);
    let id = job["jobId"].as_str().unwrap().to_string();
    assert!(
        job["logPaths"]["combined"]
            .as_str()
            .unwrap()
            .ends_with("combined.log")
    );
    first.crash().await;

    let second = start_in(state.path(), &[]).await;
    let listed = second.extra("job_list", json!({})).await;
    let mine = listed["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|j| j["jobId"] == id.as_str())
        .unwrap_or_else(|| panic!("job missing from {listed}"))
        .clone();
    assert_eq!(mine["running"], true, "{mine}");
    assert_eq!(mine["name"], "survivor");

    // Let the job finish: the fifo opens once the job reads it.
    let writer = tokio::task::spawn_blocking(move || std::fs::write(gate, "hello\n"));
    let waited = second
        .extra("job_wait", json!({"jobId": id, "timeoutMs": 20000}))
        .await;
    writer.await.unwrap().unwrap();
    assert_eq!(waited["timedOut"], false, "{waited}");
    assert_eq!(waited["running"], false);
    assert_eq!(waited["state"], "exited");
    assert_eq!(waited["exitCode"], 7);
    let tail = waited["outputTail"].as_str().unwrap();
    assert!(
        tail.contains("started") && tail.contains("got hello"),
        "{tail}"
    );
    second.stop().await;
}

#[tokio::test]
async fn job_wait_returns_within_100ms_of_the_end() {
    let server = start().await;
    let job = server
        .extra("job_start", json!({"command": "sleep 2; date +%s%N"}))
        .await;
    let id = job["jobId"].as_str().unwrap();
    let waited = server
        .extra(
            "job_wait",
            json!({"jobId": id, "timeoutMs": 20000, "tailLines": 1}),
        )
        .await;
    let returned = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_nanos();
    assert_eq!(waited["exitCode"], 0, "{waited}");
    assert!(waited["waitedMs"].as_u64().unwrap() > 0);
    let ended: u128 = waited["outputTail"]
        .as_str()
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    let latency_ms = (returned - ended) as f64 / 1e6;
    let recorded = humantime::parse_rfc3339(waited["endedAt"].as_str().unwrap()).unwrap();
    let recorded_ns = recorded.duration_since(UNIX_EPOCH).unwrap().as_nanos();
    eprintln!(
        "job_wait latency: {latency_ms:.1} ms from the command's last output to the result, \
         {:.1} ms from the exit being recorded",
        (returned - recorded_ns) as f64 / 1e6
    );
    assert!(
        latency_ms < 100.0,
        "job_wait took {latency_ms} ms after the job ended"
    );

    // Status after the end agrees; a short wait on a finished job returns at once.
    let status = server.extra("job_status", json!({"jobId": id})).await;
    assert_eq!(status["state"], "exited");
    assert!(status["endedAt"].is_string());
    server.stop().await;
}

#[tokio::test]
async fn job_wait_times_out_as_a_normal_result() {
    let server = start().await;
    let job = server
        .extra("job_start", json!({"command": "sleep 30"}))
        .await;
    let _job = common::procs::JobGuard::of(&job);
    let id = job["jobId"].as_str().unwrap();
    let waited = server
        .extra("job_wait", json!({"jobId": id, "timeoutMs": 200}))
        .await;
    assert_eq!(waited["timedOut"], true, "{waited}");
    assert_eq!(waited["running"], true);
    let killed = server.extra("job_kill", json!({"jobId": id})).await;
    assert_eq!(killed["killed"], true);
    server.stop().await;
}

#[tokio::test]
async fn kill_ends_the_whole_tree() {
    let server = start().await;
    // One child in the job's group, one that escaped into a session of its own.
    let job = server
        .extra(
            "job_start",
            json!({"command": "sleep 300 & echo $!; setsid sleep 301 & echo $!; wait"}),
        )
        .await;
    let _job = common::procs::JobGuard::of(&job);
    let id = job["jobId"].as_str().unwrap().to_string();
    let log = job["logPaths"]["stdout"].as_str().unwrap().to_string();
    let mut pids: Vec<i32> = Vec::new();
    eventually("the job's children", || {
        pids = std::fs::read_to_string(&log)
            .unwrap_or_default()
            .lines()
            .filter_map(|l| l.trim().parse().ok())
            .collect();
        pids.len() == 2
    })
    .await;
    let wrapper = job["pid"].as_i64().unwrap() as i32;
    let killed = server.extra("job_kill", json!({"jobId": id})).await;
    assert_eq!(killed["killed"], true, "{killed}");
    assert_eq!(killed["state"], "killed");
    assert_eq!(killed["exitCode"], 137);
    for pid in pids.iter().copied().chain([wrapper]) {
        eventually(&format!("pid {pid} to end"), || gone(pid)).await;
    }
    let again = server.extra("job_kill", json!({"jobId": id})).await;
    assert_eq!(again["killed"], false, "a finished job is left as it is");
    assert_eq!(again["exitCode"], 137);
    server.stop().await;
}

fn write_job(state: &Path, id: &str, meta: Value) {
    let dir = state.join("jobs").join(id);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("job.json"), meta.to_string()).unwrap();
}

#[tokio::test]
async fn a_reused_pid_is_not_taken_for_the_job_and_corrupt_jobs_are_reported() {
    let state = tempfile::tempdir().unwrap();
    // A live process that is not the job: the recorded start time differs from its own.
    let mut stranger = std::process::Command::new("sleep")
        .arg("60")
        .spawn()
        .unwrap();
    let pid = stranger.id() as i32;
    let real = termpilot_core::platform::process_start_time(pid).unwrap();
    write_job(
        state.path(),
        "reused-pid-0001",
        json!({
            "job_id": "reused-pid-0001", "name": null, "command": "old", "shell": "bash",
            "cwd": "/", "pid": pid, "pid_start_time": real + 1,
            "started_at": "2020-01-01T00:00:00.000Z", "started_at_ms": 1577836800000u64
        }),
    );
    let broken = state.path().join("jobs").join("broken-job-0002");
    std::fs::create_dir_all(&broken).unwrap();
    std::fs::write(broken.join("job.json"), "{not json").unwrap();

    let server = start_in(state.path(), &[]).await;
    let status = server
        .extra("job_status", json!({"jobId": "reused-pid-0001"}))
        .await;
    assert_eq!(status["running"], false, "{status}");
    assert_eq!(status["state"], "lost");
    let killed = server
        .extra("job_kill", json!({"jobId": "reused-pid-0001"}))
        .await;
    assert_eq!(killed["killed"], false);
    assert!(
        termpilot_core::platform::is_same_process(pid, Some(real)),
        "job_kill must not touch a process that merely reuses the pid"
    );
    let waited = server
        .extra(
            "job_wait",
            json!({"jobId": "reused-pid-0001", "timeoutMs": 5000}),
        )
        .await;
    assert_eq!(waited["timedOut"], false);

    let listed = server.extra("job_list", json!({})).await;
    assert_eq!(listed["count"], 1, "{listed}");
    assert_eq!(listed["invalid"][0]["jobId"], "broken-job-0002");
    assert!(
        listed["invalid"][0]["problem"]
            .as_str()
            .unwrap()
            .contains("not valid")
    );
    let e = server
        .err(
            "terminal_extra",
            json!({"tool": "job_status", "args": {"jobId": "broken-job-0002"}}),
        )
        .await;
    assert!(e.contains("cannot be read"), "{e}");

    stranger.kill().unwrap();
    stranger.wait().unwrap();
    server.stop().await;
}

#[tokio::test]
async fn bad_job_calls_are_clear_errors() {
    let server = start().await;
    let call = |tool: &str, args: Value| json!({"tool": tool, "args": args});
    let e = server
        .err(
            "terminal_extra",
            call("job_status", json!({"jobId": "no-such-job"})),
        )
        .await;
    assert!(
        e.contains("No job is called") && e.contains("job_list"),
        "{e}"
    );
    let e = server
        .err(
            "terminal_extra",
            call("job_status", json!({"jobId": "../etc"})),
        )
        .await;
    assert!(e.contains("not a job id"), "{e}");
    let e = server
        .err(
            "terminal_extra",
            call("job_start", json!({"command": "dir", "shell": "cmd"})),
        )
        .await;
    assert!(e.contains("only on Windows"), "{e}");
    let e = server
        .err(
            "terminal_extra",
            call(
                "job_start",
                json!({"command": "true", "cwd": "/no/such/dir"}),
            ),
        )
        .await;
    assert!(e.contains("not an existing directory"), "{e}");
    let e = server
        .err(
            "terminal_extra",
            call("job_wait", json!({"jobId": "x", "timeoutMs": 600001})),
        )
        .await;
    assert!(e.contains("timeoutMs"), "{e}");
    let e = server
        .err(
            "terminal_extra",
            call("job_status", json!({"jobId": "x", "tailLines": 1001})),
        )
        .await;
    assert!(e.contains("tailLines"), "{e}");
    let listed = server.extra("job_list", json!({})).await;
    assert_eq!(
        listed["count"], 0,
        "no job was started by the bad calls: {listed}"
    );
    server.stop().await;
}
