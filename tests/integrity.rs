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
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "CI must run these tests as root"
        );
        eprintln!("skipped: a second user can only be created as root");
        return None;
    }
    let id = |_: ()| {
        std::process::Command::new("id")
            .args(["-u", NEIGHBOUR])
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
        .args([
            "--system",
            "--no-create-home",
            "--shell",
            "/bin/sh",
            NEIGHBOUR,
        ])
        .status();
    Some(id(()).expect("useradd created the neighbour"))
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
    let id = job["job_id"].as_str().unwrap().to_string();
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
    server.extra("job_kill", json!({"job_id": id})).await;
    for f in ["exit_code.txt", "killed_at.txt"] {
        assert_eq!(mode(&dir.join(f)) & 0o077, 0, "{f}");
    }
    server.stop().await;
}
