//! Nothing lost, nothing left behind (issue 36): the full output file holds every byte, a
//! cap caps what the agent gets, a full disk is said and never hidden behind a short file, a
//! transcript that cannot be written is kept, and every child the server starts ends with
//! it — escapees from the session's process group included, or named when they cannot be.

mod common;

use std::path::{Path, PathBuf};

use common::{Server, exec, start_with};
use serde_json::json;

// ---- a small file system that can be filled ----------------------------------------------

/// A tmpfs of a few hundred KiB mounted by the test (0700, so it can be a runtime folder),
/// unmounted when dropped.
struct SmallDisk {
    dir: tempfile::TempDir,
}

impl SmallDisk {
    /// Mounts one, or (where mounting is not permitted) records a visible skip and returns
    /// `None`; under CI that fails the test instead.
    fn mount(size: &str) -> Option<SmallDisk> {
        let dir = tempfile::tempdir().unwrap();
        let out = std::process::Command::new("mount")
            .args([
                "-t",
                "tmpfs",
                "-o",
                &format!("size={size},mode=0700"),
                "tmpfs",
            ])
            .arg(dir.path())
            .output();
        match out {
            Ok(o) if o.status.success() => Some(SmallDisk { dir }),
            Ok(o) => {
                common::procs::skip(&format!(
                    "mounting a small tmpfs is not permitted here ({})",
                    String::from_utf8_lossy(&o.stderr).trim()
                ));
                None
            }
            Err(e) => {
                common::procs::skip(&format!("`mount` could not run ({e})"));
                None
            }
        }
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }

    /// Fills what is left of it with one file, until the kernel says it is full.
    fn fill(&self) {
        use std::io::Write;
        let mut file = std::fs::File::create(self.path().join("filler")).unwrap();
        let block = vec![0u8; 4096];
        loop {
            match file.write_all(&block) {
                Ok(()) => {}
                Err(e) if e.raw_os_error() == Some(libc::ENOSPC) => break,
                Err(e) => panic!("filling the tmpfs: {e}"),
            }
        }
        // The last partial block may have gone in: one more byte must fail now.
        let _ = file.flush();
    }

    /// Every file under it (the filler aside), with its size.
    fn files(&self) -> Vec<(PathBuf, u64)> {
        let mut out = Vec::new();
        let mut dirs = vec![self.path().to_path_buf()];
        while let Some(d) = dirs.pop() {
            for entry in std::fs::read_dir(&d).unwrap().flatten() {
                let m = entry.metadata().unwrap();
                if m.is_dir() {
                    dirs.push(entry.path());
                } else if entry.file_name() != "filler" {
                    out.push((entry.path(), m.len()));
                }
            }
        }
        out
    }
}

impl Drop for SmallDisk {
    fn drop(&mut self) {
        // Lazily: a server a failed test left running must not keep it mounted for good.
        let _ = std::process::Command::new("umount")
            .arg("-l")
            .arg(self.dir.path())
            .status();
    }
}

/// A server whose private runtime folder is `runtime` (`XDG_RUNTIME_DIR`).
async fn server_with_runtime(runtime: &Path) -> Server {
    start_with(
        common::Era::Initialize,
        &[],
        &[("XDG_RUNTIME_DIR", runtime.to_str().unwrap())],
    )
    .await
}

async fn session(server: &Server) -> String {
    let started = server
        .ok("terminal_start", json!({"env": {"PS1": "$ "}}))
        .await;
    started["sessionId"].as_str().unwrap().to_string()
}

// ---- 1. the full output holds every byte --------------------------------------------------

#[tokio::test]
async fn a_three_megabyte_line_is_whole_in_the_full_output_file() {
    let server = common::start().await;
    let id = session(&server).await;
    let r = server
        .ok(
            "terminal_exec",
            json!({"sessionId": id, "timeout": 60000,
                   "command": "printf 'first\\n'; head -c 3000000 /dev/zero | tr '\\0' x; echo; printf 'after\\n'"}),
        )
        .await;
    assert_eq!(r["truncated"], true, "{r}");
    assert_eq!(r["exitCode"], 0, "{r}");
    let output = r["output"].as_str().unwrap();
    assert!(
        output.len() < 10_000,
        "the reply is cut: {} bytes",
        output.len()
    );
    assert!(
        output.contains("more bytes of this line are in the full output file"),
        "{output}"
    );
    let path = r["fullOutputPath"].as_str().expect("a full output file");
    let full = std::fs::read_to_string(path).unwrap();
    let lines: Vec<&str> = full.lines().collect();
    assert_eq!(lines.len(), 3, "three lines, the long one whole");
    assert_eq!(lines[0], "first");
    assert_eq!(lines[1].len(), 3_000_000);
    assert!(lines[1].bytes().all(|b| b == b'x'));
    assert_eq!(lines[2], "after");
    server.stop().await;
}

// ---- 3. a full disk is said, never hidden ---------------------------------------------------

#[tokio::test]
async fn a_full_disk_gives_a_spill_error_and_no_short_full_output_file() {
    let Some(disk) = SmallDisk::mount("1m") else {
        return;
    };
    let server = server_with_runtime(disk.path()).await;
    // The session's shell hooks are written to the runtime folder at start: fill it after.
    let id = session(&server).await;
    assert_eq!(exec(&server, &id, "echo ready").await["output"], "ready");
    disk.fill();
    let r = server
        .ok(
            "terminal_exec",
            json!({"sessionId": id, "command": "seq 1 100000", "timeout": 60000}),
        )
        .await;
    assert_eq!(r["exitCode"], 0, "{r}");
    assert_eq!(r["truncated"], true, "{r}");
    assert!(r["fullOutputPath"].is_null(), "no short file offered: {r}");
    let error = r["spillError"]
        .as_str()
        .unwrap_or_else(|| panic!("no spillError: {r}"));
    let spill_dir = disk.path().join("termpilot").join("spill");
    assert!(
        error.contains("No space left") && error.contains(spill_dir.to_str().unwrap()),
        "what failed, and where: {error}"
    );
    // The reply still carries what it can: the first and last lines.
    let output = r["output"].as_str().unwrap();
    assert!(
        output.starts_with("1\n2\n") && output.ends_with("99999\n100000"),
        "{output}"
    );
    let spills: Vec<_> = disk
        .files()
        .into_iter()
        .filter(|(p, _)| p.starts_with(&spill_dir))
        .collect();
    assert!(spills.is_empty(), "no short spill file is left: {spills:?}");
    server.stop().await;
}

// ---- 4. a transcript that cannot be written is kept -----------------------------------------

#[tokio::test]
async fn a_transcript_on_a_full_disk_is_kept_in_the_reply_when_the_runtime_folder_is_full_too() {
    let Some(disk) = SmallDisk::mount("1m") else {
        return;
    };
    let server = server_with_runtime(disk.path()).await;
    let id = session(&server).await;
    exec(&server, &id, "echo transcript-words-$((6*7))").await;
    disk.fill();
    let target = disk.path().join("transcript.txt");
    let e = server
        .err(
            "terminal_stop",
            json!({"sessionId": id, "transcriptPath": target}),
        )
        .await;
    assert!(
        e.contains("was stopped") && !e.contains("nothing was stopped"),
        "{e}"
    );
    assert!(e.contains("No space left"), "{e}");
    assert!(e.contains("here it is, whole"), "{e}");
    assert!(
        e.contains("transcript-words-42"),
        "the text is in the reply: {e}"
    );
    assert!(!target.exists(), "no short transcript is left at the path");
    let left = disk.files();
    assert!(
        left.iter()
            .all(|(p, _)| !p.to_string_lossy().contains("transcript")),
        "no short fallback file either: {left:?}"
    );
    let listed = server.ok("terminal_list", json!({})).await;
    assert!(!listed.to_string().contains(&id), "{listed}");
    server.stop().await;
}

#[tokio::test]
async fn a_transcript_on_a_full_disk_is_kept_in_the_private_runtime_folder() {
    let Some(disk) = SmallDisk::mount("1m") else {
        return;
    };
    // The runtime folder is on another file system, with room.
    let runtime = tempfile::tempdir().unwrap();
    let server = server_with_runtime(runtime.path()).await;
    let id = session(&server).await;
    exec(&server, &id, "echo transcript-words-$((6*7))").await;
    disk.fill();
    let target = disk.path().join("transcript.txt");
    let e = server
        .err(
            "terminal_stop",
            json!({"sessionId": id, "transcriptPath": target}),
        )
        .await;
    let kept = e
        .split("kept in ")
        .nth(1)
        .and_then(|r| r.split(" instead").next())
        .unwrap_or_else(|| panic!("no path in: {e}"));
    assert!(kept.starts_with(runtime.path().to_str().unwrap()), "{e}");
    assert!(
        std::fs::read_to_string(kept)
            .unwrap()
            .contains("transcript-words-42")
    );
    assert!(!target.exists(), "no short transcript is left at the path");
    server.stop().await;
}

// ---- 2. a cap that caps -------------------------------------------------------------------

/// `terminal_run` of 200,000 lines of `y`: the reply's text block, and that block parsed.
async fn run_yes(server: &Server) -> (String, serde_json::Value) {
    let result = server
        .call(
            "terminal_run",
            json!({"cmd": "yes | head -n 200000", "shell": true}),
        )
        .await;
    assert_ne!(result.is_error, Some(true), "{}", common::text(&result));
    let text = common::text(&result);
    let value: serde_json::Value = serde_json::from_str(&text).unwrap();
    (text, value)
}

#[tokio::test]
async fn terminal_runs_max_output_bytes_caps_the_text_the_agent_receives() {
    let server = common::start().await;
    let (text, r) = run_yes(&server).await;
    let stdout = &r["stdout"];
    let raw = stdout["raw"].as_str().unwrap();
    let escaped = serde_json::to_string(raw).unwrap().len() - 2;
    assert!(
        escaped <= 102_400,
        "stdout takes {escaped} bytes in the reply"
    );
    assert!(escaped > 100_000, "and uses its cap: {escaped}");
    assert!(
        text.len() <= 102_400 + 1024,
        "the whole reply is {} bytes",
        text.len()
    );
    assert_eq!(stdout["truncated"], true);
    assert_eq!(stdout["totalBytes"], 400_000);
    let full = std::fs::read(stdout["fullOutputPath"].as_str().unwrap()).unwrap();
    assert_eq!(
        full,
        "y\n".repeat(200_000).into_bytes(),
        "the rest is in the file"
    );
    server.stop().await;
}

#[tokio::test]
async fn smart_terminals_max_output_bytes_keeps_counting_raw_bytes() {
    let server = common::compat::start_preset("smart-terminal", &[]).await;
    let (_, r) = run_yes(&server).await;
    let raw = r["stdout"]["raw"].as_str().unwrap();
    // Upstream counts raw bytes, not their JSON escaping (which would keep 68,267 of `y\n`).
    assert_eq!(raw.len(), 102_400, "raw bytes, as upstream");
    assert_eq!(r["maxOutputExceeded"], true, "{r}");
    server.stop().await;
}

// ---- 5. every child dies with the server ----------------------------------------------------

/// Waits (bounded, polling /proc) until `pid` is gone or a zombie.
async fn gone(pid: i64) -> bool {
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(10);
    while common::procs::alive(pid) {
        if tokio::time::Instant::now() > deadline {
            return false;
        }
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    true
}

/// Waits (bounded) until exactly one running process named `comm` has `fragment` in its
/// command line.
async fn the_one(comm: &str, fragment: &str) -> i64 {
    let deadline = tokio::time::Instant::now() + common::TEST_TIMEOUT;
    loop {
        let found: Vec<i64> = common::procs::pids_running(fragment)
            .into_iter()
            .filter(|&p| common::procs::alive(p))
            .filter(|p| {
                std::fs::read_to_string(format!("/proc/{p}/comm")).is_ok_and(|c| c.trim() == comm)
            })
            .collect();
        if found.len() == 1 {
            return found[0];
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "`{fragment}` never ran alone: {found:?}"
        );
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
}

/// Every one of `pids` is gone within the bound; the survivors are killed (the test cleans
/// up) and named in the failure.
async fn all_gone(pids: &[(&str, i64)]) {
    let mut survivors = Vec::new();
    for &(what, pid) in pids {
        if !gone(pid).await {
            survivors.push(format!("{what} ({pid})"));
            // SAFETY: kill(2) on a process this test made the server start.
            unsafe { libc::kill(pid as i32, libc::SIGKILL) };
        }
    }
    assert!(survivors.is_empty(), "still running: {survivors:?}");
}

/// Starts a tool call without waiting for its answer.
fn call_in_background(
    server: &Server,
    tool: &str,
    args: serde_json::Value,
) -> tokio::task::JoinHandle<()> {
    let params = rmcp::model::CallToolRequestParams::new(tool.to_string())
        .with_arguments(args.as_object().unwrap().clone());
    let peer = server.client.peer().clone();
    tokio::spawn(async move {
        let _ = peer.call_tool(params).await;
    })
}

#[tokio::test]
async fn a_killed_server_takes_run_pythons_child_and_every_grandchild_with_it() {
    if !common::procs::has("python3") {
        return;
    }
    let server = common::start().await;
    let python = call_in_background(
        &server,
        "terminal_extra",
        json!({"tool": "run_python", "args": {
            "code": "import subprocess, time\nsubprocess.Popen(['sleep', '1036'])\ntime.sleep(1000)",
            "args": ["termpilot-36-python"], "timeoutMs": 600000}}),
    );
    let run = call_in_background(
        &server,
        "terminal_run",
        json!({"cmd": "sleep 1037; echo termpilot-36-run", "shell": true, "timeout": 600000}),
    );
    let id = session(&server).await;
    exec(
        &server,
        &id,
        "nohup sleep 1038 >/dev/null 2>&1 & setsid -f sleep 1039",
    )
    .await;
    let pids = [
        ("python", the_one("python3", "termpilot-36-python").await),
        ("python's child", the_one("sleep", "sleep 1036").await),
        ("the run's shell", the_one("sh", "termpilot-36-run").await),
        ("the run's grandchild", the_one("sleep", "sleep 1037").await),
        (
            "a session's nohup job",
            the_one("sleep", "sleep 1038").await,
        ),
        ("a session's escapee", the_one("sleep", "sleep 1039").await),
    ];
    server.crash().await;
    let _ = (python.await, run.await);
    all_gone(&pids).await;
}

// ---- 6. escapees end with their session or run ----------------------------------------------

#[tokio::test]
async fn terminal_stop_ends_what_left_the_session_and_says_so_truly() {
    let server = common::start().await;
    let id = session(&server).await;
    exec(
        &server,
        &id,
        "setsid -f sleep 1040; (setsid sleep 1041 >/dev/null 2>&1 &); (sleep 1042 &)",
    )
    .await;
    let pids = [
        ("setsid -f", the_one("sleep", "sleep 1040").await),
        (
            "a double fork into a new session",
            the_one("sleep", "sleep 1041").await,
        ),
        ("a double fork", the_one("sleep", "sleep 1042").await),
    ];
    let stopped = server.ok("terminal_stop", json!({"sessionId": id})).await;
    assert!(
        stopped["message"]
            .as_str()
            .unwrap()
            .ends_with("its processes are gone."),
        "{stopped}"
    );
    // Gone already when the reply says so: no waiting here.
    let left: Vec<_> = pids
        .iter()
        .filter(|(_, p)| common::procs::alive(*p))
        .collect();
    all_gone(&pids).await;
    assert!(
        left.is_empty(),
        "alive after terminal_stop answered: {left:?}"
    );
    server.stop().await;
}

#[tokio::test]
async fn terminal_run_leaves_nothing_running_when_it_returns() {
    let server = common::start().await;
    let r = server
        .ok(
            "terminal_run",
            json!({"cmd": "setsid -f sleep 1043 >/dev/null 2>&1; (setsid sleep 1044 >/dev/null 2>&1 &); echo started $$",
                   "shell": true}),
        )
        .await;
    assert_eq!(r["exitCode"], 0, "{r}");
    assert!(r["hint"].is_null(), "{r}");
    let left: Vec<i64> = ["sleep 1043", "sleep 1044"]
        .iter()
        .flat_map(|c| common::procs::pids_running(c))
        .filter(|&p| common::procs::alive(p))
        .collect();
    for &pid in &left {
        // SAFETY: kill(2) on a process this test made the server start.
        unsafe { libc::kill(pid as i32, libc::SIGKILL) };
    }
    assert!(left.is_empty(), "escapees outlived the run: {left:?}");
    server.stop().await;
}
