//! terminal_exec end to end: exact output, exit codes and cwd through shell integration in
//! bash, zsh, fish and dash, the process-group fallback, waiting for input, cancellation,
//! retry and diff.

mod common;

use std::time::Duration;

use common::procs::has;
use common::{Server, exec, start};
use rmcp::model::{CallToolRequest, CallToolRequestParams, ClientRequest};
use rmcp::service::PeerRequestOptions;
use serde_json::{Value, json};

/// Starts a session of `shell` with a plain prompt; returns (id, integration).
async fn session(server: &Server, shell: &str) -> (String, String) {
    let started = server
        .ok(
            "terminal_start",
            json!({"shell": shell, "env": {"PS1": "$ "}}),
        )
        .await;
    (
        started["sessionId"].as_str().unwrap().to_string(),
        started["integration"].as_str().unwrap().to_string(),
    )
}

/// A bash session whose HOME holds `bashrc`; returns the home (keep it alive) and the id.
async fn bash_with_rc(server: &Server, bashrc: &str) -> (tempfile::TempDir, Value) {
    let home = tempfile::tempdir().unwrap();
    std::fs::write(home.path().join(".bashrc"), bashrc).unwrap();
    let started = server
        .ok(
            "terminal_start",
            json!({"shell": "bash", "env": {"HOME": home.path()}}),
        )
        .await;
    (home, started)
}

/// The behaviours every integrated shell must show.
async fn exact_output_codes_and_cwd(server: &Server, id: &str) {
    let r = exec(server, id, "echo hi").await;
    assert_eq!(r["output"], "hi", "{r}");
    assert_eq!(r["exitCode"], 0);
    assert_eq!(r["timedOut"], false);
    assert_eq!(exec(server, id, "false").await["exitCode"], 1);
    assert_eq!(exec(server, id, "sh -c 'exit 42'").await["exitCode"], 42);
    let r = exec(server, id, "cd /tmp").await;
    assert_eq!(r["cwd"], "/tmp", "{r}");
    let r = exec(server, id, "pwd").await;
    assert_eq!(r["output"], "/tmp");
    assert_eq!(r["cwd"], "/tmp");
}

#[tokio::test]
async fn bash_reports_output_exit_codes_and_cwd_exactly() {
    let server = start().await;
    let (id, integration) = session(&server, "bash").await;
    assert_eq!(integration, "osc133");
    exact_output_codes_and_cwd(&server, &id).await;
    let r = exec(&server, &id, "(exit 42)").await;
    assert_eq!(r["exitCode"], 42);
    server.stop().await;
}

#[tokio::test]
async fn zsh_reports_output_exit_codes_and_cwd_exactly() {
    integrated_shell("zsh").await;
}

#[tokio::test]
async fn fish_reports_output_exit_codes_and_cwd_exactly() {
    integrated_shell("fish").await;
}

#[tokio::test]
async fn dash_reports_exit_codes_through_its_prompt() {
    integrated_shell("/bin/sh").await;
}

/// Starts `shell` (skipping when it is not installed) and checks exact results through its
/// prompt marks.
async fn integrated_shell(shell: &str) {
    if !has(shell) {
        return;
    }
    let server = start().await;
    let (id, integration) = session(&server, shell).await;
    assert_eq!(integration, "osc133");
    exact_output_codes_and_cwd(&server, &id).await;
    server.stop().await;
}

#[tokio::test]
async fn a_shell_without_hooks_falls_back_to_the_process_group() {
    // dash under another name gets no integration.
    let dir = tempfile::tempdir().unwrap();
    let plain = dir.path().join("plainsh");
    std::os::unix::fs::symlink("/bin/dash", &plain).unwrap();
    let server = start().await;
    let (id, integration) = session(&server, plain.to_str().unwrap()).await;
    assert_eq!(integration, "process-group");
    let r = exec(&server, &id, "echo hi").await;
    assert_eq!(r["output"], "hi", "{r}");
    assert_eq!(r["exitCode"], Value::Null);
    assert!(r["hint"].as_str().unwrap().contains("echo $?"));
    let r = exec(&server, &id, "sleep 0.3; echo slept").await;
    assert_eq!(r["output"], "slept", "{r}");
    let r = exec(&server, &id, "cd /tmp && pwd").await;
    assert_eq!(r["output"], "/tmp");
    assert_eq!(r["cwd"], "/tmp");
    server.stop().await;
}

#[tokio::test]
async fn colours_and_progress_bars_come_back_as_final_lines() {
    let server = start().await;
    let (id, _) = session(&server, "bash").await;
    let r = exec(
        &server,
        &id,
        r"printf '\033[31mred\033[0m plain\n'; printf 'get 10%%\rget 50%%\rget 100%%\n'",
    )
    .await;
    assert_eq!(r["output"], "red plain\nget 100%", "{r}");
    server.stop().await;
}

#[tokio::test]
async fn long_output_keeps_head_and_tail_and_the_file_holds_everything() {
    let server = start().await;
    let (id, _) = session(&server, "bash").await;
    let r = exec(&server, &id, "seq 1 200000").await;
    assert_eq!(r["truncated"], true);
    assert_eq!(r["exitCode"], 0);
    let output = r["output"].as_str().unwrap();
    assert!(
        output.starts_with("1\n2\n") && output.ends_with("199999\n200000"),
        "{output:.200}"
    );
    assert!(output.lines().count() <= 201);
    let path = r["fullOutputPath"].as_str().unwrap();
    let full = std::fs::read_to_string(path).unwrap();
    assert_eq!(full.lines().count(), 200000);
    // Rendered while it ran and finished at the end: no line lost or doubled at the seam.
    for (i, line) in full.lines().enumerate() {
        assert_eq!(line, (i + 1).to_string(), "line {}", i + 1);
    }
    server.stop().await;
}

#[tokio::test]
async fn sleep_two_returns_when_it_ends() {
    let server = start().await;
    let (id, _) = session(&server, "bash").await;
    let r = exec(&server, &id, "sleep 2").await;
    let ms = r["durationMs"].as_u64().unwrap();
    assert!((2000..2500).contains(&ms), "sleep 2 took {ms} ms");
    assert_eq!(r["exitCode"], 0);
    server.stop().await;
}

#[tokio::test]
async fn a_prompt_for_input_is_reported_and_can_be_answered() {
    let server = start().await;
    let (id, _) = session(&server, "bash").await;
    let r = server
        .ok(
            "terminal_exec",
            json!({"sessionId": id, "command": "read -p 'Continue? ' answer", "timeout": 30000}),
        )
        .await;
    assert_eq!(r["waitingForInput"], true, "{r}");
    assert!(r["prompt"].as_str().unwrap().contains("Continue?"), "{r}");
    assert!(r["durationMs"].as_u64().unwrap() < 5000, "{r}");
    // A second exec would type into the question: refused.
    let e = server
        .err(
            "terminal_exec",
            json!({"sessionId": id, "command": "echo no"}),
        )
        .await;
    assert!(e.contains("still running"), "{e}");
    server
        .ok("terminal_write", json!({"sessionId": id, "data": "yes\r"}))
        .await;
    let done = server
        .ok("terminal_wait", json!({"sessionId": id, "until": "exit"}))
        .await;
    assert_eq!(done["reason"], "exit");
    assert_eq!(exec(&server, &id, "echo $answer").await["output"], "yes");
    // A program reading the terminal (not the shell itself) is found the same way.
    if has("python3") {
        let r = server
            .ok(
                "terminal_exec",
                json!({"sessionId": id, "command": "python3 -c 'print(input(\"name? \"))'"}),
            )
            .await;
        assert_eq!(r["waitingForInput"], true, "{r}");
        assert!(r["prompt"].as_str().unwrap().contains("name?"));
        server
            .ok("terminal_write", json!({"sessionId": id, "data": "Ada\r"}))
            .await;
        server
            .ok("terminal_wait", json!({"sessionId": id, "until": "exit"}))
            .await;
    }
    server.stop().await;
}

#[tokio::test]
async fn multi_line_commands_heredocs_and_marker_lookalikes() {
    let server = start().await;
    let (id, _) = session(&server, "bash").await;
    let r = exec(&server, &id, "echo one\necho two").await;
    assert_eq!(r["output"], "one\ntwo", "{r}");
    let r = exec(&server, &id, "cat <<'EOF'\nalpha\n  beta\nEOF").await;
    assert_eq!(r["output"], "alpha\n  beta", "{r}");
    let r = exec(&server, &id, r"echo ']133;D;0 __TP_DONE__ \e[31m'").await;
    assert_eq!(r["output"], r"]133;D;0 __TP_DONE__ \e[31m", "{r}");
    assert_eq!(r["exitCode"], 0);
    server.stop().await;
}

#[tokio::test]
async fn exec_is_refused_while_a_full_screen_program_runs() {
    if !has("vim") {
        return;
    }
    let server = start().await;
    let (id, _) = session(&server, "bash").await;
    server.type_in(&id, "vim -u NONE -N\r").await;
    server
        .ok(
            "terminal_wait",
            json!({"sessionId": id, "pattern": "VIM - Vi IMproved", "on": "screen"}),
        )
        .await;
    let e = server
        .err("terminal_exec", json!({"sessionId": id, "command": "ls"}))
        .await;
    assert!(e.contains("vim") && e.contains("terminal_write"), "{e}");
    server
        .ok("terminal_write", json!({"sessionId": id, "data": ":q!\r"}))
        .await;
    server
        .ok("terminal_wait", json!({"sessionId": id, "until": "exit"}))
        .await;
    assert_eq!(exec(&server, &id, "echo back").await["output"], "back");
    server.stop().await;
}

#[tokio::test]
async fn cancellation_interrupts_the_command_and_brings_the_prompt_back() {
    let server = start().await;
    let (id, _) = session(&server, "bash").await;
    // Once a command that stops at Ctrl+C, once one that ignores it. The sleeps' lengths
    // are this run's own (other tests on the machine sleep too).
    let own = format!("3{}.{}", std::process::id(), rand_digits());
    let commands = [
        format!("sleep {own}"),
        format!("bash -c \"trap '' INT; sleep {own}\""),
    ];
    for command in &commands {
        cancel_exec(&server, &id, command).await;
        // No Ctrl+C needed: the session is at its prompt, the sleep is gone.
        let r = exec(&server, &id, "echo hi").await;
        assert_eq!(r["output"], "hi", "after cancelling `{command}`: {r}");
        let ps = exec(
            &server,
            &id,
            &format!("ps -eo args | grep -c '^sleep {own}$' || true"),
        )
        .await;
        assert_eq!(ps["output"], "0", "a sleep survived `{command}`: {ps}");
    }
    server.stop().await;
}

/// Six digits that differ from run to run.
fn rand_digits() -> u32 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .subsec_micros()
}

/// Starts `command` with terminal_exec, waits until it runs, and cancels the request.
async fn cancel_exec(server: &Server, id: &str, command: &str) {
    let params = CallToolRequestParams::new("terminal_exec").with_arguments(
        json!({"sessionId": id, "command": command, "timeout": 60000})
            .as_object()
            .unwrap()
            .clone(),
    );
    let request = ClientRequest::CallToolRequest(CallToolRequest::new(params));
    let handle = server
        .client
        .peer()
        .send_cancellable_request(request, PeerRequestOptions::no_options())
        .await
        .unwrap();
    // Wait until the command runs (the session reports it busy), then cancel.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    loop {
        let listed = server.ok("terminal_list", json!({})).await;
        if listed["sessions"][0]["busy"] == true {
            break;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "sleep never started"
        );
        tokio::task::yield_now().await;
    }
    handle.cancel(Some("test".into())).await.unwrap();
}

#[tokio::test]
async fn an_overlong_command_is_refused_and_the_prompt_stays_clean() {
    let server = start().await;
    let (id, _) = session(&server, "bash").await;
    let long = format!("echo {}", "x".repeat(2 * 1024 * 1024));
    let e = server
        .err("terminal_exec", json!({"sessionId": id, "command": long}))
        .await;
    assert!(
        e.contains("64 KiB") && e.contains("terminal_write_file"),
        "{e}"
    );
    let r = exec(&server, &id, "echo hi").await;
    assert_eq!(r["output"], "hi", "{r}");
    // Just under the limit goes through whole (the 60 KiB line comes back cut, and whole
    // in the full output file).
    let near = format!("echo {}", "y".repeat(60 * 1024));
    let r = exec(&server, &id, &near).await;
    assert_eq!(r["exitCode"], 0, "{r}");
    let full = std::fs::read_to_string(r["fullOutputPath"].as_str().unwrap()).unwrap();
    assert_eq!(full, format!("{}\n", "y".repeat(60 * 1024)));
    server.stop().await;
}

#[tokio::test]
async fn retry_until_success_and_diff() {
    let dir = tempfile::tempdir().unwrap();
    let counter = dir.path().join("n");
    let server = start().await;
    let (id, _) = session(&server, "bash").await;
    let command = format!(
        "n=$(cat {c} 2>/dev/null || echo 0); n=$((n+1)); echo $n > {c}; echo attempt $n; [ $n -ge 3 ]",
        c = counter.display()
    );
    let r = server
        .extra(
            "terminal_retry",
            json!({"sessionId": id, "command": command, "backoff": "linear", "delayMs": 10}),
        )
        .await;
    assert_eq!(r["success"], true, "{r}");
    assert_eq!(r["attempts"], 3);
    assert_eq!(r["lastResult"]["output"], "attempt 3");
    assert_eq!(r["history"].as_array().unwrap().len(), 3);
    assert_eq!(r["history"][0]["exitCode"], 1);
    let r = server
        .extra("terminal_retry", json!({"sessionId": id, "command": "echo nope", "maxRetries": 1, "delayMs": 1, "backoff": "fixed", "successPattern": "^yes$"}))
        .await;
    assert_eq!(r["success"], false);
    assert_eq!(r["attempts"], 2);

    let d = server
        .extra("terminal_diff", json!({"sessionId": id, "commandA": "printf 'a\\nb\\nc\\n'", "commandB": "printf 'a\\nB\\nc\\n'"}))
        .await;
    assert_eq!(d["identical"], false);
    let diff = d["diff"].as_str().unwrap();
    assert!(
        diff.contains("-b\n") && diff.contains("+B\n") && diff.contains("--- printf"),
        "{diff}"
    );
    let d = server
        .extra(
            "terminal_diff",
            json!({"sessionId": id, "commandA": "echo same", "commandB": "echo same"}),
        )
        .await;
    assert_eq!(d["identical"], true);
    server.stop().await;
}

#[tokio::test]
async fn a_prompt_framework_that_rewrites_ps1_still_gets_exact_results() {
    // Like starship or powerlevel10k: the prompt is rebuilt before every prompt, so the
    // `PS1` that carried termpilot's prompt marks is replaced.
    let server = start().await;
    let (_home, started) = bash_with_rc(
        &server,
        "PROMPT_COMMAND=\"${PROMPT_COMMAND:+$PROMPT_COMMAND;}PS1='fancy> '\"\n",
    )
    .await;
    let id = started["sessionId"].as_str().unwrap();
    let r = exec(&server, id, "echo hi").await;
    assert_eq!(r["output"], "hi", "{r}");
    assert_eq!(r["exitCode"], 0);
    assert_eq!(exec(&server, id, "false").await["exitCode"], 1);
    assert!(server.screen_text(id).await.contains("fancy> "));
    server.stop().await;
}

#[tokio::test]
async fn unusual_startup_files_do_not_break_exec() {
    // `set -u`, and a PROMPT_COMMAND assigned (not appended) after ours would be: the
    // command must still end, and the session must not stay "running".
    let server = start().await;
    let (_home, started) = bash_with_rc(&server, "set -u\nPROMPT_COMMAND='history -a'\n").await;
    let id = started["sessionId"].as_str().unwrap();
    assert!(
        !started["banner"].as_str().unwrap().contains("unbound"),
        "{started}"
    );
    assert_eq!(exec(&server, id, "echo one").await["output"], "one");
    // Re-reading the rc replaces our PROMPT_COMMAND: no more end marks, only prompt marks.
    exec(&server, id, "source ~/.bashrc").await;
    let r = exec(&server, id, "echo two").await;
    assert_eq!(r["output"], "two", "{r}");
    assert_eq!(r["waitingForInput"], Value::Null, "{r}");
    let listed = server.ok("terminal_list", json!({})).await;
    assert_eq!(listed["sessions"][0]["busy"], false, "{listed}");
    server.stop().await;
}

#[tokio::test]
async fn dash_keeps_its_prompt_to_itself() {
    let server = start().await;
    let (id, _) = session(&server, "/bin/sh").await;
    let r = exec(&server, &id, "env | grep -c '^PS1=' || true").await;
    assert_eq!(r["output"], "0", "the marked prompt is not exported: {r}");
    server.stop().await;
}

#[tokio::test]
async fn zsh_with_nounset_and_an_xdg_zdotdir() {
    if !has("zsh") {
        return;
    }
    let home = tempfile::tempdir().unwrap();
    let conf = home.path().join(".config/zsh");
    std::fs::create_dir_all(&conf).unwrap();
    std::fs::write(
        home.path().join(".zshenv"),
        "export ZDOTDIR=\"$HOME/.config/zsh\"\n",
    )
    .unwrap();
    std::fs::write(
        conf.join(".zshrc"),
        "setopt nounset\nexport FROM_XDG_ZSHRC=yes\n",
    )
    .unwrap();
    let server = start().await;
    let started = server
        .ok(
            "terminal_start",
            json!({"shell": "zsh", "env": {"HOME": home.path()}}),
        )
        .await;
    assert_eq!(started["integration"], "osc133", "{started}");
    let id = started["sessionId"].as_str().unwrap();
    let r = exec(&server, id, "echo $FROM_XDG_ZSHRC").await;
    assert_eq!(r["output"], "yes", "{r}");
    assert_eq!(r["exitCode"], 0);
    server.stop().await;
}

#[tokio::test]
async fn waiting_on_a_timer_is_not_waiting_for_input_but_vim_is() {
    if !has("python3") {
        return;
    }
    let server = start().await;
    let (id, _) = session(&server, "bash").await;
    // Quiet for over a second, blocked in select() with no descriptor to read.
    let r = exec(
        &server,
        &id,
        "python3 -c 'import select; select.select([], [], [], 1.2); print(\"done\")'",
    )
    .await;
    assert_eq!(r["output"], "done", "{r}");
    assert_eq!(r["waitingForInput"], Value::Null, "{r}");
    if has("vim") {
        let r = exec(&server, &id, "vim -u NONE -N").await;
        assert_eq!(r["waitingForInput"], true, "{r}");
        server
            .ok("terminal_write", json!({"sessionId": id, "data": ":q!\r"}))
            .await;
        server
            .ok("terminal_wait", json!({"sessionId": id, "until": "exit"}))
            .await;
    }
    server.stop().await;
}

/// A program that polls the terminal together with something else (as ssh does, passing it
/// on while the remote side works) is not taken for one waiting at a prompt during short
/// pauses in its output; one asleep in a plain read of the terminal is, pauses or not.
#[tokio::test]
async fn short_pauses_of_a_program_that_polls_the_terminal_are_not_a_prompt() {
    assert!(has("python3"));
    let server = start().await;
    let (id, _) = session(&server, "bash").await;
    // Ten ticks 60 ms apart, each pause spent in select() over the terminal and a pipe. It
    // prints once before its first pause: else that pause is the interpreter's start too,
    // which on a loaded machine outlasts the long quiet after which any wait on the terminal
    // is a prompt (the flake this test had under load).
    let poller = "import os, select, sys\n\
print('start', flush=True)\n\
r, w = os.pipe()\n\
for i in range(10):\n    select.select([sys.stdin, r], [], [], 0.06)\n    print('tick', i, flush=True)\n\
print('done')\n";
    let script = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(script.path(), poller).unwrap();
    let r = exec(
        &server,
        &id,
        &format!("python3 {}", script.path().display()),
    )
    .await;
    assert_eq!(r["waitingForInput"], Value::Null, "{r}");
    assert_eq!(r["exitCode"], 0, "{r}");
    assert!(
        r["output"].as_str().unwrap().ends_with("tick 9\ndone"),
        "{r}"
    );
    // A plain read of the terminal is a prompt.
    let r = exec(&server, &id, "python3 -c \"input('name? ')\"").await;
    assert_eq!(r["waitingForInput"], true, "{r}");
    assert_eq!(r["prompt"], "name?", "{r}");
    server
        .ok("terminal_write", json!({"sessionId": id, "data": "bob\r"}))
        .await;
    server.stop().await;
}

/// A password prompt reads `/dev/tty`, not the session's terminal by its own name (python's
/// getpass, sudo and ssh do this so that a redirected stdin cannot answer): it is a prompt
/// all the same, answered in the write's reply, and the secret is not echoed back.
#[tokio::test]
async fn a_password_prompt_on_dev_tty_is_reported_and_answered() {
    assert!(has("python3"));
    let server = start().await;
    let (id, _) = session(&server, "bash").await;
    let asks = "python3 -c 'import getpass; print(\"length\", len(getpass.getpass()))'";
    let r = server
        .ok(
            "terminal_exec",
            json!({"sessionId": id, "command": asks, "timeout": 60000}),
        )
        .await;
    assert_eq!(r["waitingForInput"], true, "{r}");
    assert_eq!(r["timedOut"], false, "{r}");
    assert_eq!(r["prompt"], "Password:", "{r}");
    let answered = server
        .ok(
            "terminal_write",
            json!({"sessionId": id, "data": "s3cret\r"}),
        )
        .await;
    let out = answered["output"].as_str().unwrap();
    assert!(out.contains("length 6"), "{answered}");
    assert!(!out.contains("s3cret"), "{answered}");
    assert_eq!(answered["exitCode"], 0, "{answered}");
    // Python's own REPL selects on its stdin alone: a prompt too.
    let r = exec(&server, &id, "python3 -q").await;
    assert_eq!(r["waitingForInput"], true, "{r}");
    assert_eq!(r["prompt"], ">>>", "{r}");
    let answered = server
        .ok("terminal_write", json!({"sessionId": id, "data": "6*7\r"}))
        .await;
    assert!(
        answered["output"].as_str().unwrap().contains("42"),
        "{answered}"
    );
    server
        .ok(
            "terminal_write",
            json!({"sessionId": id, "data": "exit()\r"}),
        )
        .await;
    server.stop().await;
}

/// Seed 000 ("開発サーバーの静寂終了を待つ"): `minOutputBytes` counts the command's own
/// output, not its echoed command line, in both completion modes.
#[tokio::test]
async fn min_output_bytes_counts_only_the_commands_output() {
    let dir = tempfile::tempdir().unwrap();
    let plain = dir.path().join("plainsh");
    std::os::unix::fs::symlink("/bin/dash", &plain).unwrap();
    let server = start().await;
    for shell in ["/bin/sh", plain.to_str().unwrap()] {
        let (id, integration) = session(&server, shell).await;
        // 3 bytes, a pause longer than quietExitMs, then 61 bytes, then a long quiet run.
        // The echoed command line alone is over 50 bytes: counting it would return "abc".
        let r = server
            .ok(
                "terminal_exec",
                json!({"sessionId": id, "command": "printf abc; sleep 1; printf '%060d\\n' 0; sleep 30", "quietExitMs": 300, "minOutputBytes": 50}),
            )
            .await;
        assert_eq!(r["quietExited"], true, "[{integration}] {r}");
        assert!(
            r["output"].as_str().unwrap().contains(&"0".repeat(60)),
            "[{integration}] quiet exit fired before 50 bytes of output: {r}"
        );
        server.ok("terminal_stop", json!({"sessionId": id})).await;
    }
    server.stop().await;
}

#[tokio::test]
async fn a_single_huge_line_is_cut_and_kept_in_the_file() {
    let server = start().await;
    let (id, _) = session(&server, "bash").await;
    let r = exec(
        &server,
        &id,
        "head -c 3000000 /dev/zero | tr '\\0' y; echo; echo after",
    )
    .await;
    assert_eq!(r["exitCode"], 0);
    assert_eq!(r["truncated"], true, "{:.300}", r.to_string());
    let output = r["output"].as_str().unwrap();
    assert!(output.len() < 10_000, "{} bytes came back", output.len());
    assert!(output.contains("more bytes of this line"), "{output:.300}");
    assert!(output.ends_with("\nafter"), "{output:.300}");
    let full = std::fs::read_to_string(r["fullOutputPath"].as_str().unwrap()).unwrap();
    let lines: Vec<&str> = full.lines().collect();
    assert_eq!(lines.len(), 2, "{:.100}", full);
    // The file holds the line whole (issue 36); only the reply cuts it.
    assert_eq!(lines[0].len(), 3_000_000);
    assert!(lines[0].bytes().all(|b| b == b'y'));
    assert_eq!(lines[1], "after");
    server.stop().await;
}

/// One deadline for the whole call (issue 31 item 7): a shell restarted under its id whose
/// startup files hold its first prompt back (the second time they run, they turn the echo
/// off and block on a FIFO nobody writes, printing nothing) makes `terminal_exec` wait for the prompt, and that wait
/// spends the call's own `timeout` — the call ends near it, not after the prompt wait and
/// then a whole `timeout` more.
#[tokio::test]
async fn exec_spends_one_timeout_on_the_prompt_and_the_command() {
    assert!(has("bash"));
    let server = start().await;
    let rc = "if [ -e ~/started ]; then stty -echo; read __g < ~/gate; else : > ~/started; fi\n";
    let (home, started) = bash_with_rc(&server, rc).await;
    let gate = std::ffi::CString::new(home.path().join("gate").to_str().unwrap()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(gate.as_ptr(), 0o600) }, 0, "mkfifo");
    let id = started["sessionId"].as_str().unwrap();
    exec(&server, id, "exit").await;
    // The next call starts the shell afresh under the same id, and is told so (once the
    // exit is recorded: on a loaded machine the first look may still find the shell).
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    loop {
        let told = server
            .call("terminal_read", json!({"sessionId": id, "timeout": 0}))
            .await;
        if told.is_error == Some(true) && common::text(&told).contains("exited") {
            break;
        }
        assert!(std::time::Instant::now() < deadline, "{told:?}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let t0 = std::time::Instant::now();
    let r = server
        .ok(
            "terminal_exec",
            json!({"sessionId": id, "command": "echo hi", "timeout": 3000}),
        )
        .await;
    let took = t0.elapsed();
    assert_eq!(r["timedOut"], true, "{r}");
    assert!(
        took < Duration::from_millis(4500),
        "[one 3 s deadline, not 3 s for the prompt and 3 s more] {took:?}"
    );
    server.stop().await;
}
