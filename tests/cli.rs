//! The command line a newcomer meets: a bad shell refused at start, `skills-dir` saying what
//! it wrote.

mod common;

#[tokio::test]
async fn a_missing_shell_is_an_error_at_start() {
    let state = tempfile::tempdir().unwrap();
    for (flag, env) in [(Some("no-such-shell-xyz"), None), (None, Some("/nope/zsh"))] {
        let mut cmd = common::command(state.path(), &[]);
        if let Some(shell) = flag {
            cmd.args(["--shell", shell]);
        }
        if let Some(shell) = env {
            cmd.env("TERMPILOT_SHELL", shell);
        }
        let out = tokio::time::timeout(
            common::TEST_TIMEOUT,
            cmd.stdin(std::process::Stdio::piped()).output(),
        )
        .await
        .expect("exits at once")
        .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{stderr}");
        let name = flag.or(env).unwrap();
        assert!(
            stderr.contains(name) && stderr.contains("TERMPILOT_SHELL"),
            "{stderr}"
        );
        assert!(out.stdout.is_empty());
    }
}

#[tokio::test]
async fn skills_dir_says_what_it_wrote() {
    let data = tempfile::tempdir().unwrap();
    let out = tokio::process::Command::new(common::BIN)
        .arg("skills-dir")
        .env("XDG_DATA_HOME", data.path())
        .output()
        .await
        .unwrap();
    assert!(out.status.success());
    let dir = String::from_utf8_lossy(&out.stdout).trim().to_string();
    let skill = std::path::Path::new(&dir).join("termpilot/SKILL.md");
    assert!(skill.is_file(), "{dir}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(skill.to_str().unwrap()) && stderr.contains("skills"),
        "{stderr}"
    );
}

#[tokio::test]
async fn attach_help_says_what_it_does_and_how_to_detach() {
    let out = tokio::time::timeout(
        common::TEST_TIMEOUT,
        tokio::process::Command::new(common::BIN)
            .args(["attach", "--help"])
            .kill_on_drop(true)
            .output(),
    )
    .await
    .expect("help in time")
    .unwrap();
    assert!(out.status.success());
    let help = String::from_utf8_lossy(&out.stdout);
    for needle in [
        "Join a session",
        "Ctrl+] to detach",
        "--socket <PATH>",
        "Unix socket",
        "--resize",
        "window",
        "16 people",
    ] {
        assert!(help.contains(needle), "{needle:?} missing from:\n{help}");
    }
    // Only attach's own options: the server's flags are not listed, and not taken.
    for flag in ["--shell", "--cols", "--sandbox", "--http", "--compat"] {
        assert!(
            !help.contains(flag),
            "{flag} listed in attach's help:\n{help}"
        );
    }
    let out = std::process::Command::new(common::BIN)
        .args(["attach", "some-id", "--cols", "80"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("unexpected argument '--cols'"));
}

#[tokio::test]
async fn serving_options_go_after_serve_or_without_it() {
    // `termpilot serve --cols 100` and `termpilot --cols 100` serve; mixing the two levels
    // is refused with a sentence saying where the options go.
    for args in [&["serve", "--cols", "100"][..], &["--cols", "100"][..]] {
        let server = common::start_with(common::Era::Initialize, args, &[]).await;
        let started = server
            .ok("terminal_start", serde_json::json!({"shell": "/bin/sh"}))
            .await;
        let id = started["sessionId"].as_str().unwrap().to_string();
        let info = server.ok("terminal_list", serde_json::json!({})).await;
        let cols = info["sessions"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["id"] == id.as_str())
            .map(|s| s["cols"].clone());
        assert_eq!(cols, Some(serde_json::json!(100)), "{args:?}: {info}");
        server.stop().await;
    }
    let out = std::process::Command::new(common::BIN)
        .args(["--cols", "100", "serve"])
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("after `serve`"), "{stderr}");
}

/// The binary defines the few C maths functions it calls (`src/maths.rs`), so the server's
/// process does not load the system's libm: half a MiB of resident pages at rest.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
#[test]
fn the_server_loads_no_libm() {
    if !common::procs::has("ldd") {
        return;
    }
    let out = std::process::Command::new("ldd")
        .arg(common::BIN)
        .output()
        .unwrap();
    let libraries = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "ldd failed: {libraries}");
    assert!(libraries.contains("libc.so"), "{libraries}");
    assert!(
        !libraries.contains("libm.so"),
        "a new call into libm (nm -D --undefined-only shows which): define it in src/maths.rs\n{libraries}"
    );
}
