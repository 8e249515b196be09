//! Integrity end to end: another local user cannot get in, writes never destroy what they
//! should not, spills are bounded and cleaned up, and nothing survives that should not.
//!
//! Tests that need a second user create one (`useradd`) when running as root; elsewhere they
//! say so and skip, except in CI (`CI=true`), where they fail.

mod common;

use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

use common::start_with;
use serde_json::json;

/// The second local user the hostile-neighbour tests act as.
const NEIGHBOUR: &str = "tpneighbour";

/// The neighbour's uid, creating the user first; `None` (after saying why) when not root.
fn neighbour() -> Option<u32> {
    local_user(NEIGHBOUR)
}

/// The uid of local user `name`, created first; `None` (after saying why) when not root.
fn local_user(name: &str) -> Option<u32> {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        common::procs::skip("a second user can only be created as root");
        return None;
    }
    let id = |_: ()| {
        std::process::Command::new("id")
            .args(["-u", name])
            .output()
            .ok()
            .filter(|o| o.status.success())
            .and_then(|o| String::from_utf8_lossy(&o.stdout).trim().parse().ok())
    };
    if let Some(uid) = id(()) {
        return Some(uid);
    }
    // Several tests may race to create it; whoever loses finds it made.
    let _ = std::process::Command::new("useradd")
        .args(["--system", "--no-create-home", "--shell", "/bin/sh", name])
        .status();
    Some(id(()).unwrap_or_else(|| panic!("useradd created {name}")))
}

/// Runs `script` in `sh` as the neighbour; panics when it fails.
fn as_neighbour(script: &str) {
    let out = std::process::Command::new("setpriv")
        .args([
            "--reuid",
            NEIGHBOUR,
            "--regid",
            NEIGHBOUR,
            "--clear-groups",
            "/bin/sh",
            "-c",
            script,
        ])
        .output()
        .expect("run setpriv");
    assert!(
        out.status.success(),
        "as {NEIGHBOUR}: {script}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A shared temp folder like `/tmp` (sticky, world-writable) for the server's TMPDIR.
fn shared_tmp() -> tempfile::TempDir {
    let dir = tempfile::Builder::new()
        .prefix("tp-shared-")
        .tempdir_in("/tmp")
        .unwrap();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o1777)).unwrap();
    dir
}

/// Every file under `dir` (recursively), as paths relative to it, sorted.
fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let p = e.path();
            if e.file_type().is_ok_and(|t| t.is_dir()) {
                todo.push(p.clone());
            }
            found.push(p.strip_prefix(dir).unwrap().to_path_buf());
        }
    }
    found.sort();
    found
}

// ---- 1. the private runtime folder -------------------------------------------------------

#[tokio::test]
async fn a_neighbours_private_folder_is_refused_and_their_code_never_runs() {
    let Some(_) = neighbour() else { return };
    let tmp = shared_tmp();
    let t = tmp.path().display().to_string();
    let mine = tmp.path().join("termpilot-0");
    // The neighbour pre-creates the folder open to all, with an ENV script of their own.
    as_neighbour(&format!(
        "mkdir -m 0777 {t}/termpilot-0 {t}/termpilot-0/shell-integration && \
         printf 'touch {t}/pwned\\n' > {t}/termpilot-0/shell-integration/sh.sh && \
         chmod 0666 {t}/termpilot-0/shell-integration/sh.sh"
    ));
    let before = files_under(&mine);
    let server = start_with(
        common::Era::Initialize,
        &[],
        &[("TMPDIR", &t), ("XDG_RUNTIME_DIR", "")],
    )
    .await;
    let e = server.err("terminal_start", json!({})).await;
    assert!(
        e.contains("termpilot-0") && e.contains("belongs to uid"),
        "the error names the folder and why: {e}"
    );
    // A big output would spill there too: it must not.
    let run = server
        .ok(
            "terminal_run",
            json!({"cmd": "seq", "args": ["1", "100000"], "maxOutputBytes": 1000}),
        )
        .await;
    assert!(run["stdout"]["fullOutputPath"].is_null(), "{run}");
    server.stop().await;
    assert_eq!(files_under(&mine), before, "nothing was written there");
    assert!(
        !tmp.path().join("pwned").exists(),
        "the neighbour's code ran"
    );
}

#[tokio::test]
async fn a_symlinked_private_folder_is_refused() {
    let Some(_) = neighbour() else { return };
    let tmp = shared_tmp();
    let t = tmp.path().display().to_string();
    as_neighbour(&format!(
        "mkdir -m 0777 {t}/theirs && ln -s {t}/theirs {t}/termpilot-0"
    ));
    let server = start_with(
        common::Era::Initialize,
        &[],
        &[("TMPDIR", &t), ("XDG_RUNTIME_DIR", "")],
    )
    .await;
    let e = server.err("terminal_start", json!({})).await;
    assert!(e.contains("not a real directory"), "{e}");
    server.stop().await;
    assert!(files_under(&tmp.path().join("theirs")).is_empty());
}

#[tokio::test]
async fn an_unsafe_xdg_runtime_dir_is_passed_over_for_a_private_temp_folder() {
    let Some(_) = neighbour() else { return };
    let tmp = shared_tmp();
    let t = tmp.path().display().to_string();
    as_neighbour(&format!("mkdir -m 0777 {t}/runtime"));
    let runtime = format!("{t}/runtime");
    let server = start_with(
        common::Era::Initialize,
        &[],
        &[("TMPDIR", &t), ("XDG_RUNTIME_DIR", &runtime)],
    )
    .await;
    let started = server.ok("terminal_start", json!({})).await;
    assert_eq!(started["shellType"], "sh");
    let id = started["sessionId"].as_str().unwrap().to_string();
    server.ok("terminal_stop", json!({"sessionId": id})).await;
    server.stop().await;
    assert!(files_under(tmp.path().join("runtime").as_path()).is_empty());
    let mine = std::fs::symlink_metadata(tmp.path().join("termpilot-0")).unwrap();
    assert!(mine.is_dir() && mine.uid() == 0 && mine.mode() & 0o777 == 0o700);
    let script = tmp.path().join("termpilot-0/shell-integration/sh.sh");
    let meta = std::fs::symlink_metadata(&script).unwrap();
    assert!(
        meta.is_file() && meta.mode() & 0o077 == 0,
        "{:o}",
        meta.mode()
    );
}

#[tokio::test]
async fn a_safe_xdg_runtime_dir_holds_the_private_folder() {
    let runtime = tempfile::tempdir().unwrap();
    std::fs::set_permissions(runtime.path(), std::fs::Permissions::from_mode(0o700)).unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let server = start_with(
        common::Era::Initialize,
        &[],
        &[
            ("TMPDIR", tmp.path().to_str().unwrap()),
            ("XDG_RUNTIME_DIR", runtime.path().to_str().unwrap()),
        ],
    )
    .await;
    let started = server.ok("terminal_start", json!({})).await;
    let id = started["sessionId"].as_str().unwrap().to_string();
    server.ok("terminal_stop", json!({"sessionId": id})).await;
    server.stop().await;
    assert!(
        runtime
            .path()
            .join("termpilot/shell-integration/sh.sh")
            .is_file()
    );
    assert!(
        !tmp.path()
            .join(format!("termpilot-{}", unsafe { libc::getuid() }))
            .exists()
    );
}

// ---- 2. jobs are private -------------------------------------------------------------------

fn mode(path: &Path) -> u32 {
    std::fs::symlink_metadata(path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .mode()
        & 0o777
}

#[tokio::test]
async fn a_jobs_folder_logs_and_pipes_are_closed_to_other_users() {
    let neighbour = neighbour();
    let parent = tempfile::tempdir().unwrap();
    std::fs::set_permissions(parent.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let state = parent.path().join("state");
    let server = common::start_in(&state, &[]).await;
    let job = server
        .extra(
            "job_start",
            json!({"command": "echo job-secret; exec sleep 30"}),
        )
        .await;
    let id = job["jobId"].as_str().unwrap().to_string();
    let dir = state.join("jobs").join(&id);
    // The secret is in the log once the wrapper's tee wrote it; the pipes exist until exit.
    let deadline = std::time::Instant::now() + common::TEST_TIMEOUT;
    while !std::fs::read_to_string(dir.join("stdout.log")).is_ok_and(|t| t.contains("job-secret")) {
        assert!(std::time::Instant::now() < deadline, "the job never wrote");
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    assert_eq!(mode(&state), 0o700, "state dir");
    assert_eq!(mode(&state.join("jobs")), 0o700, "jobs dir");
    assert_eq!(mode(&dir), 0o700, "job dir");
    for f in [
        "stdout.log",
        "stderr.log",
        "combined.log",
        "job.json",
        ".stdout.pipe",
        ".stderr.pipe",
    ] {
        assert_eq!(mode(&dir.join(f)) & 0o077, 0, "{f}");
    }
    if neighbour.is_some() {
        let out = std::process::Command::new("setpriv")
            .args([
                "--reuid",
                NEIGHBOUR,
                "--regid",
                NEIGHBOUR,
                "--clear-groups",
                "cat",
            ])
            .arg(dir.join("stdout.log"))
            .output()
            .unwrap();
        assert!(!out.status.success(), "the neighbour read the log");
        assert!(!String::from_utf8_lossy(&out.stdout).contains("job-secret"));
    }
    server.extra("job_kill", json!({"jobId": id})).await;
    for f in ["exit_code.txt", "killed_at.txt"] {
        assert_eq!(mode(&dir.join(f)) & 0o077, 0, "{f}");
    }
    server.stop().await;
}

// ---- 4, 5. writes that never destroy what they should not ---------------------------------

fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

#[tokio::test]
async fn devices_fifos_sockets_folders_and_proc_files_are_not_written() {
    let server = common::start().await;
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("fifo");
    let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    // SAFETY: mkfifo on a path we own.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    let socket = dir.path().join("sock");
    let _listener = std::os::unix::net::UnixListener::bind(&socket).unwrap();
    let cases = [
        ("/dev/null", "a character device"),
        (fifo.to_str().unwrap(), "a FIFO"),
        (socket.to_str().unwrap(), "a socket"),
        ("/proc/self/status", "pseudo file system"),
        ("/proc/self/new-file", "pseudo file system"),
    ];
    for (path, kind) in cases {
        for append in [false, true] {
            let e = server
                .err(
                    "terminal_write_file",
                    json!({"path": path, "content": "x", "append": append}),
                )
                .await;
            assert!(
                e.contains("not a regular file") && e.contains(kind),
                "{path}: {e}"
            );
        }
        if !path.ends_with("new-file") {
            let e = server
                .err(
                    "edit_file",
                    json!({"path": path, "oldText": "a", "newText": "b"}),
                )
                .await;
            assert!(e.contains("not a regular file"), "{path}: {e}");
        }
    }
    let e = server
        .err(
            "terminal_write_file",
            json!({"path": dir.path(), "content": "x"}),
        )
        .await;
    assert!(e.contains("is a directory"), "{e}");
    use std::os::unix::fs::FileTypeExt;
    assert!(
        std::fs::metadata("/dev/null")
            .unwrap()
            .file_type()
            .is_char_device()
    );
    assert!(
        std::fs::symlink_metadata(&fifo)
            .unwrap()
            .file_type()
            .is_fifo()
    );
    // /dev/zero is never read until memory runs out.
    let e = server
        .err(
            "edit_file",
            json!({"path": "/dev/zero", "oldText": "a", "newText": "b"}),
        )
        .await;
    assert!(e.contains("not a regular file"), "{e}");
    server.stop().await;
}

#[tokio::test]
async fn edit_refuses_a_file_over_64_mib() {
    let server = common::start().await;
    let dir = tempfile::tempdir().unwrap();
    let big = dir.path().join("big.txt");
    let f = std::fs::File::create(&big).unwrap();
    f.set_len(65 * 1024 * 1024).unwrap();
    let e = server
        .err(
            "edit_file",
            json!({"path": big, "oldText": "a", "newText": "b"}),
        )
        .await;
    assert!(e.contains("64 MiB"), "{e}");
    assert_eq!(std::fs::metadata(&big).unwrap().len(), 65 * 1024 * 1024);
    server.stop().await;
}

#[tokio::test]
async fn a_replace_keeps_owner_group_and_mode_and_follows_only_good_links() {
    let server = common::start().await;
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("conf");
    std::fs::write(&file, "old a\n").unwrap();
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o640)).unwrap();
    if is_root() {
        std::os::unix::fs::chown(&file, Some(4321), Some(4322)).unwrap();
    }
    server
        .ok(
            "terminal_write_file",
            json!({"path": file, "content": "new a\n"}),
        )
        .await;
    server
        .ok(
            "edit_file",
            json!({"path": file, "oldText": "new", "newText": "edited"}),
        )
        .await;
    let meta = std::fs::metadata(&file).unwrap();
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "edited a\n");
    assert_eq!(meta.mode() & 0o777, 0o640);
    if is_root() {
        assert_eq!(
            (meta.uid(), meta.gid()),
            (4321, 4322),
            "owner and group kept"
        );
    }
    // Through a link to a regular file: the target changes, the link stays.
    let link = dir.path().join("link");
    std::os::unix::fs::symlink(&file, &link).unwrap();
    server
        .ok(
            "terminal_write_file",
            json!({"path": link, "content": "via link\n"}),
        )
        .await;
    assert!(
        std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "via link\n");
    // A dangling link is an error, not replaced by a file; nor is its target created.
    let dangling = dir.path().join("dangling");
    std::os::unix::fs::symlink(dir.path().join("missing"), &dangling).unwrap();
    let e = server
        .err(
            "terminal_write_file",
            json!({"path": dangling, "content": "x"}),
        )
        .await;
    assert!(e.contains("does not exist"), "{e}");
    assert!(
        std::fs::symlink_metadata(&dangling)
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert!(!dir.path().join("missing").exists());
    // A link to a device is refused like the device.
    let to_null = dir.path().join("to-null");
    std::os::unix::fs::symlink("/dev/null", &to_null).unwrap();
    let e = server
        .err(
            "terminal_write_file",
            json!({"path": to_null, "content": "x"}),
        )
        .await;
    assert!(e.contains("not a regular file"), "{e}");
    server.stop().await;
}

#[tokio::test]
async fn a_hard_linked_file_is_replaced_only_with_break_links() {
    let server = common::start().await;
    let dir = tempfile::tempdir().unwrap();
    let a = dir.path().join("a");
    let b = dir.path().join("b");
    std::fs::write(&a, "shared one\n").unwrap();
    std::fs::hard_link(&a, &b).unwrap();
    let e = server
        .err("terminal_write_file", json!({"path": a, "content": "x"}))
        .await;
    assert!(
        e.contains("2 hard links") && e.contains("breakLinks"),
        "{e}"
    );
    let e = server
        .err(
            "edit_file",
            json!({"path": a, "oldText": "one", "newText": "two"}),
        )
        .await;
    assert!(e.contains("hard links"), "{e}");
    assert_eq!(std::fs::read_to_string(&b).unwrap(), "shared one\n");
    server
        .ok(
            "terminal_write_file",
            json!({"path": a, "content": "mine\n", "breakLinks": true}),
        )
        .await;
    assert_eq!(std::fs::read_to_string(&a).unwrap(), "mine\n");
    assert_eq!(
        std::fs::read_to_string(&b).unwrap(),
        "shared one\n",
        "b keeps its text"
    );
    std::fs::hard_link(&b, dir.path().join("c")).unwrap();
    server
        .ok(
            "edit_file",
            json!({"path": b, "oldText": "one", "newText": "two", "breakLinks": true}),
        )
        .await;
    assert_eq!(std::fs::read_to_string(&b).unwrap(), "shared two\n");
    // Appending writes in place, links or not.
    server
        .ok(
            "terminal_write_file",
            json!({"path": dir.path().join("c"), "content": "more\n", "append": true}),
        )
        .await;
    assert_eq!(
        std::fs::read_to_string(dir.path().join("c")).unwrap(),
        "shared one\nmore\n"
    );
    server.stop().await;
}

// ---- 6. transcripts ------------------------------------------------------------------------

async fn session_saying(server: &common::Server, words: &str) -> String {
    let id = server
        .ok("terminal_start", json!({"env": {"PS1": "$ "}}))
        .await["sessionId"]
        .as_str()
        .unwrap()
        .to_string();
    server
        .ok(
            "terminal_exec",
            json!({"sessionId": id, "command": format!("echo {words}")}),
        )
        .await;
    id
}

#[tokio::test]
async fn a_transcript_never_replaces_or_follows_and_never_creates_folders() {
    let server = common::start().await;
    let dir = tempfile::tempdir().unwrap();
    let id = session_saying(&server, "transcript-words").await;
    let existing = dir.path().join("old.txt");
    std::fs::write(&existing, "keep me").unwrap();
    let victim = dir.path().join("victim");
    std::fs::write(&victim, "victim").unwrap();
    let link = dir.path().join("link.txt");
    std::os::unix::fs::symlink(&victim, &link).unwrap();
    let missing = dir.path().join("no/such/dir/t.txt");
    let refused = [
        (json!({"transcriptPath": existing}), "already exists"),
        (json!({"transcriptPath": link}), "symlink"),
        (
            json!({"transcriptPath": link, "overwrite": true}),
            "symlink",
        ),
        (json!({"transcriptPath": missing}), "not an existing folder"),
    ];
    for (mut args, why) in refused {
        args["sessionId"] = json!(id);
        let e = server.err("terminal_stop", args).await;
        assert!(e.contains(why) && e.contains("nothing was stopped"), "{e}");
    }
    assert_eq!(std::fs::read_to_string(&existing).unwrap(), "keep me");
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "victim");
    assert!(!dir.path().join("no").exists(), "no folder was created");
    // The session is still there; overwrite replaces the regular file.
    let stopped = server
        .ok(
            "terminal_stop",
            json!({"sessionId": id, "transcriptPath": existing, "overwrite": true}),
        )
        .await;
    assert!(
        stopped["transcript"]["bytes"].as_u64().unwrap() > 0,
        "{stopped}"
    );
    assert!(
        std::fs::read_to_string(&existing)
            .unwrap()
            .contains("transcript-words")
    );
    server.stop().await;
}

#[tokio::test]
async fn a_failed_transcript_says_the_session_was_stopped_and_where_the_text_went() {
    let server = common::start().await;
    let id = session_saying(&server, "kept-words").await;
    // /proc/self is a folder, but no file can be created in it.
    let e = server
        .err(
            "terminal_stop",
            json!({"sessionId": id, "transcriptPath": "/proc/self/termpilot-transcript.txt"}),
        )
        .await;
    assert!(
        e.contains("was stopped") && !e.contains("nothing was stopped"),
        "{e}"
    );
    let kept = e
        .split("kept in ")
        .nth(1)
        .and_then(|r| r.split(" instead").next())
        .unwrap_or_else(|| panic!("no path in: {e}"));
    assert!(
        std::fs::read_to_string(kept)
            .unwrap()
            .contains("kept-words")
    );
    let listed = server.ok("terminal_list", json!({})).await;
    assert!(
        !listed.to_string().contains(&id),
        "the session is gone: {listed}"
    );
    std::fs::remove_file(kept).unwrap();
    server.stop().await;
}

// ---- 9. one-shot children die with the server; jobs do not ---------------------------------

#[tokio::test]
async fn a_killed_server_takes_its_one_shot_children_but_not_its_jobs() {
    let state = tempfile::tempdir().unwrap();
    let server = common::start_in(state.path(), &[]).await;
    let job = server
        .extra("job_start", json!({"command": "exec sleep 97"}))
        .await;
    let _job = common::procs::JobGuard::of(&job);
    let job_pid = job["pid"].as_i64().unwrap();
    // Two one-shot runs in flight: argv and through a shell.
    let mut runs = Vec::new();
    for args in [
        json!({"cmd": "sleep", "args": ["98"], "timeout": 60000}),
        json!({"cmd": "exec sleep 99", "shell": true, "timeout": 60000}),
    ] {
        let params = rmcp::model::CallToolRequestParams::new("terminal_run")
            .with_arguments(args.as_object().unwrap().clone());
        let peer = server.client.peer().clone();
        runs.push(tokio::spawn(async move { peer.call_tool(params).await }));
    }
    let deadline = std::time::Instant::now() + common::TEST_TIMEOUT;
    let sleeps = loop {
        let found: Vec<i64> = ["sleep 98", "sleep 99"]
            .iter()
            .flat_map(|c| common::procs::pids_running(c))
            .collect();
        if found.len() == 2 {
            break found;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the runs never started"
        );
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    };
    server.crash().await;
    common::procs::all_gone(&sleeps).await;
    for run in runs {
        let _ = run.await;
    }
    assert!(common::procs::alive(job_pid), "the job survived the server");
    // SAFETY: the job's wrapper leads its own process group; we started it.
    unsafe { libc::kill(-(job_pid as i32), libc::SIGKILL) };
}

// ---- 7, 8. spills: bounded, honest, cleaned up ---------------------------------------------

/// A server whose private folder is under `tmp` (TMPDIR), with extra environment.
async fn server_in_tmp(tmp: &Path, envs: &[(&str, &str)]) -> common::Server {
    let t = tmp.to_str().unwrap();
    let mut all = vec![("TMPDIR", t), ("XDG_RUNTIME_DIR", "")];
    all.extend_from_slice(envs);
    start_with(common::Era::Initialize, &[], &all).await
}

#[tokio::test]
async fn a_spill_stops_at_its_cap_and_says_so() {
    let tmp = tempfile::tempdir().unwrap();
    let server = server_in_tmp(tmp.path(), &[("TERMPILOT_MAX_SPILL_BYTES", "100000")]).await;
    let run = server
        .ok(
            "terminal_run",
            json!({"cmd": "seq", "args": ["1", "1000000"], "maxOutputBytes": 1000}),
        )
        .await;
    let out = &run["stdout"];
    assert_eq!(out["spillTruncated"], true, "{out}");
    assert_eq!(
        out["totalBytes"], 6_888_896,
        "every byte produced is counted"
    );
    assert_eq!(out["spillBytes"], 100_000, "{out}");
    let path = out["fullOutputPath"].as_str().unwrap();
    assert_eq!(std::fs::metadata(path).unwrap().len(), 100_000);
    assert!(
        std::fs::read_to_string(path)
            .unwrap()
            .starts_with("1\n2\n3\n")
    );
    // A stream under the cap is whole and says nothing more.
    let run = server
        .ok(
            "terminal_run",
            json!({"cmd": "seq", "args": ["1", "10000"], "maxOutputBytes": 1000}),
        )
        .await;
    assert!(run["stdout"]["spillTruncated"].is_null() && run["stdout"]["spillBytes"].is_null());
    server.stop().await;
}

#[tokio::test]
async fn a_full_disk_is_reported_as_a_spill_error() {
    if !is_root() {
        common::procs::skip("mounting a small tmpfs needs root");
        return;
    }
    let mnt = tempfile::tempdir().unwrap();
    let status = std::process::Command::new("mount")
        .args(["-t", "tmpfs", "-o", "size=512k", "tmpfs"])
        .arg(mnt.path())
        .status()
        .unwrap();
    assert!(status.success(), "mount a 512 KiB tmpfs");
    let server = server_in_tmp(mnt.path(), &[]).await;
    let run = server
        .ok(
            "terminal_run",
            json!({"cmd": "head", "args": ["-c", "3000000", "/dev/zero"], "maxOutputBytes": 1000}),
        )
        .await;
    server.stop().await;
    let _ = std::process::Command::new("umount")
        .arg(mnt.path())
        .status();
    let out = &run["stdout"];
    assert_eq!(out["totalBytes"], 3_000_000, "{out}");
    let error = out["spillError"]
        .as_str()
        .unwrap_or_else(|| panic!("no spillError: {out}"));
    assert!(error.contains("No space left"), "{error}");
    assert!(out["spillBytes"].as_u64().unwrap() < 3_000_000, "{out}");
    assert!(out["fullOutputPath"].is_string(), "{out}");
}

#[tokio::test]
async fn spill_files_go_when_the_server_exits_and_stale_ones_are_swept() {
    let tmp = tempfile::tempdir().unwrap();
    let spill = tmp
        .path()
        .join(format!("termpilot-{}", unsafe { libc::getuid() }))
        .join("spill");
    std::fs::create_dir_all(&spill).unwrap();
    std::fs::set_permissions(
        spill.parent().unwrap(),
        std::fs::Permissions::from_mode(0o700),
    )
    .unwrap();
    std::fs::set_permissions(&spill, std::fs::Permissions::from_mode(0o700)).unwrap();
    let two_days_ago = std::time::SystemTime::now() - std::time::Duration::from_secs(2 * 86400);
    let file = |name: &str, old: bool| {
        let path = spill.join(name);
        let f = std::fs::File::create(&path).unwrap();
        if old {
            f.set_modified(two_days_ago).unwrap();
        }
        path
    };
    // pid 999999999 is above any pid_max: that server is dead.
    let stale = file("1-999999999-0-stdout.log", true);
    let fresh = file("2-999999999-0-stdout.log", false);
    let live = file(&format!("3-{}-0-stdout.log", std::process::id()), true);
    let server = server_in_tmp(tmp.path(), &[]).await;
    let run = server
        .ok(
            "terminal_run",
            json!({"cmd": "seq", "args": ["1", "100000"], "maxOutputBytes": 1000}),
        )
        .await;
    let path = PathBuf::from(run["stdout"]["fullOutputPath"].as_str().unwrap());
    assert!(path.is_file());
    assert!(!stale.exists(), "a dead server's day-old spill is swept");
    assert!(
        fresh.exists() && live.exists(),
        "young or live ones are kept"
    );
    server.stop().await;
    assert!(!path.exists(), "the server's own spill went with it");
}

// ---- 3. logs keep secrets out --------------------------------------------------------------

/// Runs a server with `TERMPILOT_LOG=level`, makes calls full of a secret, and returns what
/// it logged.
async fn log_of_calls_with_a_secret(level: &str, secret: &str) -> String {
    let state = tempfile::tempdir().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let log_path = dir.path().join("stderr.log");
    let mut cmd = common::command(state.path(), &[]);
    cmd.env("TERMPILOT_LOG", level);
    let (transport, _) = rmcp::transport::TokioChildProcess::builder(cmd)
        .stderr(std::process::Stdio::from(
            std::fs::File::create(&log_path).unwrap(),
        ))
        .spawn()
        .unwrap();
    let client = tokio::time::timeout(common::TEST_TIMEOUT, rmcp::ServiceExt::serve((), transport))
        .await
        .unwrap()
        .unwrap();
    let call = |name: &str, args: serde_json::Value| {
        let params = rmcp::model::CallToolRequestParams::new(name.to_string())
            .with_arguments(args.as_object().unwrap().clone());
        let peer = client.peer().clone();
        async move {
            tokio::time::timeout(common::TEST_TIMEOUT, peer.call_tool(params))
                .await
                .unwrap()
                .unwrap()
        }
    };
    let file = dir.path().join("f.txt");
    call(
        "terminal_write_file",
        json!({"path": file, "content": secret}),
    )
    .await;
    call("terminal_run", json!({"cmd": "cat", "args": [file]})).await;
    call(
        "terminal_run",
        json!({"cmd": "env", "env": {"API_TOKEN": secret}}),
    )
    .await;
    let _ = tokio::time::timeout(common::TEST_TIMEOUT, client.cancel()).await;
    std::fs::read_to_string(&log_path).unwrap()
}

#[tokio::test]
async fn logs_carry_shapes_at_every_level_and_bodies_only_on_the_wire_target() {
    let secret = "hunter2-s3cr3t-value";
    for level in ["trace", "debug", "rmcp=trace", "info,termpilot=trace"] {
        let log = log_of_calls_with_a_secret(level, secret).await;
        assert!(
            !log.contains(secret),
            "TERMPILOT_LOG={level} leaked the secret:\n{log}"
        );
        if level.contains("trace") && !level.starts_with("rmcp") {
            assert!(
                log.contains("tool=\"terminal_write_file\"")
                    || log.contains("tool=terminal_write_file"),
                "the shape of each call is logged at {level}:\n{log}"
            );
            assert!(log.contains("arg_bytes="), "{log}");
        }
    }
    let log = log_of_calls_with_a_secret("termpilot::wire=trace", secret).await;
    assert!(
        log.contains(secret),
        "the wire target logs whole messages:\n{log}"
    );
}

// ---- 11. a fork bomb under a timeout ---------------------------------------------------------

/// The user the fork bomb runs as, so `ulimit -u` bounds it (root is exempt from it).
const BOMBER: &str = "tpbomber";

/// Live (non-zombie) processes of `uid`.
fn processes_of(uid: u32) -> Vec<i64> {
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| e.file_name().to_string_lossy().parse::<i64>().ok())
        .filter(|pid| {
            std::fs::metadata(format!("/proc/{pid}")).is_ok_and(|m| m.uid() == uid)
                && common::procs::alive(*pid)
        })
        .collect()
}

#[tokio::test]
async fn a_fork_bomb_under_a_timeout_is_answered_in_time_and_leaves_nothing() {
    let Some(uid) = local_user(BOMBER) else {
        return;
    };
    let server = common::start().await;
    // At most 200 processes of its own user: the bomb cannot take the machine down.
    let bomb = format!(
        "exec prlimit --nproc=200:200 setpriv --reuid {BOMBER} --regid {BOMBER} --clear-groups /usr/bin/python3 -c 'import os\nwhile True:\n    try: os.fork()\n    except OSError: pass'"
    );
    let started = std::time::Instant::now();
    let run = server
        .ok(
            "terminal_run",
            json!({"cmd": bomb, "shell": true, "timeout": 2000}),
        )
        .await;
    let took = started.elapsed();
    assert_eq!(run["timedOut"], true, "{run}");
    assert!(
        took < std::time::Duration::from_millis(3000),
        "answered {took:?} after the call, over timeout + 1 s"
    );
    let left = processes_of(uid);
    assert!(left.is_empty(), "the bomb left {} processes", left.len());
    // The server still answers.
    server
        .ok("terminal_run", json!({"cmd": "echo", "args": ["alive"]}))
        .await;
    server.stop().await;
}

// ---- 10. escapes with setsid -f ---------------------------------------------------------------

#[tokio::test]
async fn a_timeout_ends_what_escaped_with_setsid() {
    let server = common::start().await;
    let run = server
        .ok(
            "terminal_run",
            json!({"cmd": "setsid -f sleep 87 </dev/null >/dev/null 2>&1; sleep 86", "shell": true, "timeout": 1500}),
        )
        .await;
    assert_eq!(run["timedOut"], true, "{run}");
    let left: Vec<i64> = ["sleep 87", "sleep 86"]
        .iter()
        .flat_map(|c| common::procs::pids_running(c))
        .collect();
    common::procs::all_gone(&left).await;
    server.stop().await;
}

/// Runs a long command in session `id` with few lines shown; returns its spill file.
async fn exec_spill(server: &common::Server, id: &str) -> PathBuf {
    let r = server
        .ok(
            "terminal_exec",
            json!({"sessionId": id, "command": "seq 1 3000", "maxLines": 10, "timeout": 20000}),
        )
        .await;
    let path = PathBuf::from(r["fullOutputPath"].as_str().expect("a spill file"));
    assert!(path.is_file(), "{r}");
    assert!(path.to_string_lossy().ends_with("-exec.log"), "{r}");
    path
}

async fn sh_session(server: &common::Server) -> String {
    let started = server
        .ok("terminal_start", json!({"env": {"PS1": "$ "}}))
        .await;
    started["sessionId"].as_str().unwrap().to_string()
}

/// A session's exec spill files go when the session ends: stopped, its shell exited (and
/// restarted under the same id), or ended as idle; another session's stay.
#[tokio::test]
async fn a_sessions_spill_files_go_when_it_ends() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path().to_str().unwrap();
    let server = start_with(
        common::Era::Initialize,
        &["--idle-timeout", "2"],
        &[("TMPDIR", t), ("XDG_RUNTIME_DIR", "")],
    )
    .await;
    let a = sh_session(&server).await;
    let b = sh_session(&server).await;
    let a_file = exec_spill(&server, &a).await;
    let b_file = exec_spill(&server, &b).await;
    server.ok("terminal_stop", json!({"sessionId": a})).await;
    assert!(!a_file.exists(), "a stopped session's spill file is left");
    assert!(b_file.exists(), "another session's spill file went too");

    // The shell exits; the next call restarts it and its old spill file is gone.
    server
        .ok("terminal_write", json!({"sessionId": b, "data": "exit\r"}))
        .await;
    let notice = server.err("terminal_read", json!({"sessionId": b})).await;
    assert!(notice.contains("same id"), "{notice}");
    assert!(!b_file.exists(), "an exited shell's spill file is left");
    // The fresh shell under the same id keeps its own.
    let b_again = exec_spill(&server, &b).await;

    // Ended as idle (the sweep runs every second): its spill file goes with it.
    let deadline = tokio::time::Instant::now() + common::TEST_TIMEOUT;
    while server.ok("terminal_list", json!({})).await["count"] != 0 {
        assert!(
            tokio::time::Instant::now() < deadline,
            "never ended as idle"
        );
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    assert!(
        !b_again.exists(),
        "an idle-ended session's spill file is left"
    );
    server.stop().await;
}

/// A server's start time, as spill file names record it (`/proc/<pid>/stat` field 22).
fn start_time(pid: u32) -> u64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    let after = &stat[stat.rfind(')').unwrap() + 2..];
    after.split(' ').nth(19).unwrap().parse().unwrap()
}

/// When a server first uses the spill folder, the files of servers that are not running go
/// whatever their age, when the name says which server (pid and start time); a running
/// server's stay, and so does a dead one's kept transcript while it is young.
#[tokio::test]
async fn dead_servers_spill_files_go_at_once() {
    let tmp = tempfile::tempdir().unwrap();
    let first = server_in_tmp(tmp.path(), &[]).await;
    let id = sh_session(&first).await;
    let live_file = exec_spill(&first, &id).await;
    let dir = live_file.parent().unwrap().to_path_buf();
    let name = live_file
        .file_name()
        .unwrap()
        .to_string_lossy()
        .into_owned();
    assert!(
        name.contains(&format!("-{}_{}-", first.pid, start_time(first.pid))),
        "the name says which server: {name}"
    );
    let me = std::process::id();
    let file = |name: String| {
        let path = dir.join(name);
        std::fs::File::create(&path).unwrap();
        path
    };
    // A young file of a dead server (no such pid), and of a reused pid (wrong start time).
    let dead = file("1-999999999_12345-0-exec.log".into());
    let reused = file(format!("2-{me}_1-0-stdout.log"));
    let running = file(format!("3-{me}_{}-0-stdout.log", start_time(me)));
    let transcript = file("4-999999999_12345-0-transcript.log".into());
    // The first server dies without cleaning up.
    first.crash().await;
    assert!(live_file.exists());

    let second = server_in_tmp(tmp.path(), &[]).await;
    let run = second
        .ok(
            "terminal_run",
            json!({"cmd": "seq", "args": ["1", "100000"], "maxOutputBytes": 1000}),
        )
        .await;
    assert!(run["stdout"]["fullOutputPath"].is_string(), "{run}");
    assert!(
        !live_file.exists(),
        "the killed server's spill file is left"
    );
    assert!(
        !dead.exists() && !reused.exists(),
        "dead servers' files are left"
    );
    assert!(running.exists(), "a running server's file was removed");
    assert!(transcript.exists(), "a young kept transcript was removed");
    second.stop().await;
}
