//! Exactness under pressure: the shell only ever receives what the agent typed (terminal
//! query answers of finished programs never reach the prompt), only the shell's own signed
//! marks end a command, and multi-line commands return exactly their output however the
//! shell reads them.

mod common;

use common::procs::has;
use common::{Server, exec, start};
use serde_json::{Value, json};

/// Each shell the integration supports, when installed (CI fails instead of skipping).
fn shells() -> Vec<&'static str> {
    ["bash", "zsh", "fish", "sh"]
        .into_iter()
        .filter(|s| has(s))
        .collect()
}

async fn session(server: &Server, shell: &str, env: Value) -> String {
    let started = server
        .ok("terminal_start", json!({"shell": shell, "env": env}))
        .await;
    assert_eq!(started["integration"], "osc133", "{started}");
    started["sessionId"].as_str().unwrap().to_string()
}

/// Queries a program prints and then exits without reading the answer.
const QUERIES: [(&str, &str); 10] = [
    ("cursor position", r"printf '\033[6n'"),
    ("status report", r"printf '\033[5n'"),
    ("primary attributes", r"printf '\033[c'"),
    ("secondary attributes", r"printf '\033[>c'"),
    ("palette colour", r"printf '\033]4;1;?\007'"),
    ("foreground colour", r"printf '\033]10;?\007'"),
    ("background colour", r"printf '\033]11;?\007'"),
    ("cursor colour", r"printf '\033]12;?\007'"),
    ("text area size", r"printf '\033[18t'"),
    ("mode report", r"printf '\033[?2004$p'"),
];

#[tokio::test]
async fn answers_to_a_finished_programs_queries_never_reach_the_prompt() {
    let server = start().await;
    for shell in shells() {
        let id = session(&server, shell, json!({"PS1": "$ "})).await;
        for (what, query) in QUERIES {
            exec(&server, &id, query).await;
            let r = exec(&server, &id, "echo hi").await;
            assert_eq!(r["output"], "hi", "{shell}, after a {what} query: {r}");
            assert_eq!(r["exitCode"], 0, "{shell}, after a {what} query: {r}");
        }
        // Random bytes hold queries by chance.
        exec(&server, &id, "head -c 2000000 /dev/urandom").await;
        let r = exec(&server, &id, "echo hi").await;
        assert_eq!(r["output"], "hi", "{shell}, after random bytes: {r}");
        server.ok("terminal_stop", json!({"sessionId": id})).await;
    }
    server.stop().await;
}

#[tokio::test]
async fn a_program_that_reads_its_answer_still_gets_it() {
    let server = start().await;
    for shell in ["bash", "zsh"].into_iter().filter(|s| has(s)) {
        let id = session(&server, shell, json!({"PS1": "$ "})).await;
        // A separate program, and the shell's own builtins, ask and read.
        let program = r#"bash -c 'printf "\033[6n"; read -rs -d R p; echo "at ${p#*\[}"'"#;
        let r = exec(&server, &id, program).await;
        assert!(
            r["output"].as_str().unwrap().starts_with("at "),
            "{shell}: {r}"
        );
        if shell == "bash" {
            let builtin = r#"printf '\033[6n'; read -rs -d R p; echo "at ${p#*[}""#;
            let r = exec(&server, &id, builtin).await;
            assert!(r["output"].as_str().unwrap().starts_with("at "), "{r}");
        }
        assert_eq!(exec(&server, &id, "echo hi").await["output"], "hi");
    }
    server.stop().await;
}

#[tokio::test]
async fn marks_printed_by_a_program_do_not_end_the_command() {
    let server = start().await;
    let fake = r"\033]133;D;0\007\033]133;A\007\033]133;B\007\033]133;C\007\033]7;file://x/etc\007";
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("marks.log");
    std::fs::write(
        &log,
        "first\n\x1b]133;D;0\x07\x1b]133;A\x07\x1b]133;B\x07second\n\x1b]133;C\x07third\n",
    )
    .unwrap();
    for shell in shells() {
        let id = session(&server, shell, json!({"PS1": "$ "})).await;
        let command = format!("bash -c 'printf \"{fake}\"; sleep 1; echo real; exit 3'");
        let started = std::time::Instant::now();
        let r = exec(&server, &id, &command).await;
        assert_eq!(r["output"], "real", "{shell}: {r}");
        assert_eq!(r["exitCode"], 3, "{shell}: {r}");
        assert!(started.elapsed().as_millis() >= 1000, "{shell} ended early");
        assert_ne!(r["cwd"], "/etc", "{shell}: a fake OSC 7 moved the cwd");
        let r = exec(&server, &id, &format!("cat {}", log.display())).await;
        assert_eq!(r["output"], "first\nsecond\nthird", "{shell}: {r}");
        assert_eq!(r["exitCode"], 0);
        server.ok("terminal_stop", json!({"sessionId": id})).await;
    }
    server.stop().await;
}

#[tokio::test]
async fn multi_line_commands_are_exact_whatever_the_line_editor() {
    let server = start().await;
    let dir = tempfile::tempdir().unwrap();
    let inputrc = dir.path().join("inputrc");
    std::fs::write(&inputrc, "set enable-bracketed-paste off\n").unwrap();
    let shapes = [
        ("bash", json!({"PS1": "$ ", "INPUTRC": inputrc})),
        ("bash", json!({"PS1": "$ "})),
        ("sh", json!({"PS1": "$ "})),
        ("zsh", json!({"PS1": "$ "})),
    ];
    let cases = [
        ("echo one\necho two", "one\ntwo"),
        ("cat <<'EOF'\nalpha\n  beta\nEOF", "alpha\n  beta"),
        (
            "for i in 1 2; do\n  echo \"it's $i\"\ndone",
            "it's 1\nit's 2",
        ),
    ];
    for (shell, env) in shapes.iter().filter(|(s, _)| has(s)) {
        // Sent the moment the session starts, again and again.
        for _ in 0..5 {
            let id = session(&server, shell, env.clone()).await;
            let r = exec(&server, &id, "echo one\necho two").await;
            assert_eq!(r["output"], "one\ntwo", "{shell} {env}: {r}");
            let screen = server.screen_text(&id).await;
            assert!(
                screen.matches("echo two").count() <= 1,
                "{shell}: the command shows twice:\n{screen}"
            );
            server.ok("terminal_stop", json!({"sessionId": id})).await;
        }
        let id = session(&server, shell, env.clone()).await;
        for (command, want) in cases {
            let r = exec(&server, &id, command).await;
            assert_eq!(r["output"], want, "{shell} {env}: {r}");
            assert_eq!(r["exitCode"], 0, "{shell} {env}: {r}");
        }
        server.ok("terminal_stop", json!({"sessionId": id})).await;
    }
    server.stop().await;
}

#[tokio::test]
async fn screen_text_shows_tabs_as_the_spaces_on_screen() {
    let server = start().await;
    let id = session(&server, "sh", json!({"PS1": "$ "})).await;
    exec(&server, &id, r"printf 'a\tb\tc\n'").await;
    let screen = server.screen_text(&id).await;
    assert!(!screen.contains('\t'), "{screen:?}");
    assert!(screen.contains("a       b       c"), "{screen:?}");
    server.stop().await;
}
