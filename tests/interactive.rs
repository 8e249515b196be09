//! Driving interactive programs (issue 14): a write returns once the program took the input
//! and waits for more, full-screen programs come back as screen text, and quitting one
//! reports its exit status in the write that quit it.

mod common;

use common::procs::has;
use common::{Server, exec, start};
use serde_json::json;

async fn bash(server: &Server) -> String {
    let started = server
        .ok(
            "terminal_start",
            json!({"shell": "bash", "env": {"PS1": "$ "}, "cols": 100, "rows": 30}),
        )
        .await;
    started["sessionId"].as_str().unwrap().to_string()
}

/// Runs the python `script` (it prints `tick` now and then and answers each line with
/// `got <line>`), writes `hello` once it ticks, and checks the write came back with the
/// answer and fewer than 50 ticks — not at the write's 10 s cap (`waited_for` says what it
/// would have waited for instead).
async fn answers_while_ticking(script: &str, waited_for: &str) {
    assert!(has("python3"));
    let server = start().await;
    let id = bash(&server).await;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("ticking.py");
    std::fs::write(&path, script).unwrap();
    server
        .ok(
            "terminal_write",
            json!({"sessionId": id, "data": format!("python3 -u {}\r", path.display()),
                   "returnOutput": "none"}),
        )
        .await;
    let w = server
        .ok(
            "terminal_wait",
            json!({"sessionId": id, "pattern": "^tick", "timeout": 20000}),
        )
        .await;
    assert_eq!(w["reason"], "pattern", "{w}");
    let reply = server
        .ok(
            "terminal_write",
            json!({"sessionId": id, "data": "hello\r"}),
        )
        .await;
    let output = reply["output"].as_str().unwrap();
    assert!(output.contains("got hello"), "{reply}");
    let ticks = output.matches("tick").count();
    assert!(
        ticks < 50,
        "the write waited for {waited_for} instead of the program: {ticks} ticks in {reply}"
    );
    server
        .ok(
            "terminal_send_key",
            json!({"sessionId": id, "key": "Ctrl+C"}),
        )
        .await;
    server.stop().await;
}

/// A REPL that keeps printing from another thread while its main thread waits for the next
/// line never goes quiet: the write must still return with the answer once the main thread
/// reads the terminal again (a quiet timer would run to the write's 10 s cap, ~100 ticks).
#[tokio::test]
async fn a_write_returns_when_the_program_reads_again_even_while_it_prints() {
    // Each line in one write: print() writes its words one by one, and the other thread's
    // `tick` could land between `got` and ` hello` (the program's own race, not the server's).
    let script = "import os, sys, threading, time\n\
def tick():\n    while True:\n        time.sleep(0.1); os.write(1, b'tick\\n')\n\
threading.Thread(target=tick, daemon=True).start()\n\
while True:\n    line = sys.stdin.readline()\n    os.write(1, ('got ' + line.strip() + '\\n').encode())\n";
    answers_while_ticking(script, "quiet").await;
}

/// A program that waits for input with a timer (a UI that redraws on each tick; node's REPL
/// waits 15 ms to save its history) is waiting for input all the same: the write returns
/// with its answer, not at the write's 10 s cap (~200 ticks) for want of a wait without one.
#[tokio::test]
async fn a_write_returns_when_the_program_reads_again_with_a_timer() {
    let script = "import select, sys\n\
while True:\n    ready, _, _ = select.select([sys.stdin], [], [], 0.05)\n    \
if ready:\n        print('got', sys.stdin.readline().strip(), flush=True)\n    \
else:\n        print('tick', flush=True)\n";
    answers_while_ticking(script, "the cap").await;
}

/// A program that read keys one by one, took the key that ends it and put the terminal back
/// to echoed lines is leaving, even while it still waits a moment on the terminal (node's
/// REPL after `.exit` waits 15 ms to save its history): the write that ended it returns with
/// its last words and exit status, not while it is on its way out.
#[tokio::test]
async fn a_program_that_let_go_of_the_terminal_is_leaving_not_waiting() {
    assert!(has("python3"));
    let server = start().await;
    let id = bash(&server).await;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("leaving.py");
    let script = "import os, select, termios, tty\n\
saved = termios.tcgetattr(0)\n\
tty.setraw(0)\n\
os.write(1, b'key? ')\n\
os.read(0, 1)\n\
termios.tcsetattr(0, termios.TCSANOW, saved)\n\
select.select([0], [], [], 0.02)\n\
print('bye')\n";
    std::fs::write(&path, script).unwrap();
    let r = exec(&server, &id, &format!("python3 {}", path.display())).await;
    assert_eq!(r["waitingForInput"], true, "{r}");
    assert_eq!(r["prompt"], "key?", "{r}");
    let reply = server
        .ok("terminal_write", json!({"sessionId": id, "data": "q"}))
        .await;
    assert!(reply["output"].as_str().unwrap().contains("bye"), "{reply}");
    assert_eq!(reply["exitCode"], 0, "{reply}");
    // Back at the prompt: the next command runs.
    assert_eq!(exec(&server, &id, "echo next").await["output"], "next");
    server.stop().await;
}

#[tokio::test]
async fn vim_comes_back_as_screen_text_and_its_exit_is_reported_by_the_quitting_write() {
    assert!(has("vim"));
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("note.txt");
    std::fs::write(&file, "first line\nsecond line\n").unwrap();
    let server = start().await;
    let id = bash(&server).await;

    let r = exec(&server, &id, &format!("vim -Nu NONE {}", file.display())).await;
    assert_eq!(r["waitingForInput"], true, "{r}");
    assert_eq!(
        r["output"], "",
        "a full-screen program's stream is not returned: {r}"
    );
    let text = r["screen"]["text"].as_str().expect("screen text");
    // The whole first screen: the file, the empty lines' tildes, and the message at the
    // bottom (drawn last).
    assert!(
        text.contains("first line") && text.contains("second line"),
        "{text}"
    );
    assert!(
        text.lines().nth(2).is_some_and(|l| l.starts_with('~')),
        "{text}"
    );
    assert!(
        text.lines().last().is_some_and(|l| l.contains("2L, 23B")),
        "{text}"
    );
    assert_eq!(r["screen"]["altScreen"], true);
    assert!(
        text.lines().all(|l| !l.ends_with(' ')),
        "trailing spaces are trimmed: {text:?}"
    );
    assert!(r.get("prompt").is_none(), "{r}");

    // Quitting with an error status: the write that quits returns it.
    let quit = server
        .ok("terminal_write", json!({"sessionId": id, "data": ":cq\r"}))
        .await;
    assert_eq!(quit["exitCode"], 1, "{quit}");

    // And the next command runs at a clean prompt.
    let r = exec(&server, &id, "echo back").await;
    assert_eq!(r["output"], "back", "{r}");
    assert_eq!(r["exitCode"], 0);
    assert!(r.get("screen").is_none(), "{r}");

    // A wait until:exit after the quit has already happened answers at once from the marks.
    exec(&server, &id, &format!("vim -Nu NONE {}", file.display())).await;
    server
        .ok(
            "terminal_write",
            json!({"sessionId": id, "data": ":q!\r", "returnOutput": "none"}),
        )
        .await;
    let w = server
        .ok(
            "terminal_wait",
            json!({"sessionId": id, "until": "exit", "timeout": 20000}),
        )
        .await;
    assert_eq!(w["reason"], "exit", "{w}");
    server.stop().await;
}

/// Typing part of a line at a prompt returns the echo; the rest, the command's result.
#[tokio::test]
async fn typing_at_a_prompt_returns_the_echo_then_the_result() {
    let server = start().await;
    let id = bash(&server).await;
    let part = server
        .ok(
            "terminal_write",
            json!({"sessionId": id, "data": "echo spl"}),
        )
        .await;
    assert_eq!(part["output"], "echo spl", "{part}");
    assert!(part.get("exitCode").is_none(), "{part}");
    let rest = server
        .ok(
            "terminal_write",
            json!({"sessionId": id, "data": "it-$((6*7))\r"}),
        )
        .await;
    let output = rest["output"].as_str().unwrap();
    assert!(output.contains("split-42"), "{rest}");
    assert_eq!(rest["exitCode"], 0, "{rest}");
    server.stop().await;
}

/// vim asks the terminal for its cursor style (DECRQSS `$q q`) at start and, at exit, waits
/// 100 ms for any answer still missing: every query vim sends gets its answer, so it leaves
/// at once.
#[tokio::test]
async fn vim_gets_an_answer_to_every_terminal_query_it_sends() {
    assert!(has("vim"));
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("responses.txt");
    let server = start().await;
    let id = bash(&server).await;
    let r = exec(&server, &id, "vim -n -Nu NONE").await;
    assert_eq!(r["waitingForInput"], true, "{r}");
    let call = format!(
        ":call writefile([v:termresponse, v:termstyleresp, v:termrbgresp], '{}')\r",
        out.display()
    );
    server
        .ok("terminal_write", json!({"sessionId": id, "data": call}))
        .await;
    let quit = server
        .ok("terminal_write", json!({"sessionId": id, "data": ":q!\r"}))
        .await;
    assert_eq!(quit["exitCode"], 0, "{quit}");
    let responses = std::fs::read_to_string(&out).expect("vim wrote its responses");
    let lines: Vec<&str> = responses.lines().collect();
    assert_eq!(
        lines,
        [
            "\x1b[>0;2600;1c",
            "\x1bP1$r2 q\x1b\\",
            "\x1b]11;rgb:1e1e/1e1e/1e1e\x07"
        ],
        "device attributes, cursor style and background colour all answered"
    );
    server.stop().await;
}

/// A program in raw mode with bracketed paste on: prints `READY`, collects every byte it is
/// sent up to a `!`, then prints them as hex after `GOT `.
const PASTE_READER: &str = r#"import os, sys, termios, tty
old = termios.tcgetattr(0)
tty.setraw(0)
sys.stdout.write("\x1b[?2004hREADY\r\n"); sys.stdout.flush()
buf = b""
while not buf.endswith(b"!"):
    buf += os.read(0, 1024)
sys.stdout.write("\x1b[?2004l"); sys.stdout.flush()
termios.tcsetattr(0, termios.TCSADRAIN, old)
print("GOT " + buf.hex())
"#;

/// Writes `PASTE_READER` to a file and runs it in session `id`, returning once it is ready.
pub async fn start_paste_reader(server: &Server, id: &str, dir: &std::path::Path) {
    assert!(has("python3"));
    let path = dir.join("paste_reader.py");
    std::fs::write(&path, PASTE_READER).unwrap();
    server
        .ok(
            "terminal_write",
            json!({"sessionId": id, "data": format!("python3 -u {}\r", path.display()),
                   "returnOutput": "none"}),
        )
        .await;
    let w = server
        .ok(
            "terminal_wait",
            json!({"sessionId": id, "pattern": "^READY", "timeout": 20000}),
        )
        .await;
    assert_eq!(w["reason"], "pattern", "{w}");
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Pasted text that carries the paste's own end marker (or its start marker) cannot end the
/// paste early: the program gets one paste with the markers inside it removed, so nothing
/// after them arrives as typed keys.
#[tokio::test]
async fn pasted_text_cannot_end_the_paste_early() {
    let server = start().await;
    let id = bash(&server).await;
    let dir = tempfile::tempdir().unwrap();
    start_paste_reader(&server, &id, dir.path()).await;
    server
        .ok(
            "terminal_write",
            json!({"sessionId": id, "data": "safe\u{1b}[201~injected\u{1b}[200~x\u{1b}[20\u{1b}[201~1~y",
                   "paste": true, "returnOutput": "none"}),
        )
        .await;
    server
        .ok(
            "terminal_write",
            json!({"sessionId": id, "data": "!", "returnOutput": "none"}),
        )
        .await;
    let w = server
        .ok(
            "terminal_wait",
            json!({"sessionId": id, "pattern": "^GOT ", "timeout": 20000}),
        )
        .await;
    assert_eq!(w["reason"], "pattern", "{w}");
    let got = w.to_string();
    let want = hex(b"\x1b[200~safeinjectedxy\x1b[201~!");
    assert!(
        got.contains(&format!("GOT {want}")),
        "wanted {want} in {got}"
    );
    server.stop().await;
}

/// `terminal_start` with `command` is the one-call way to start an interactive program: a
/// REPL answers with its prompt and waitingForInput, as terminal_exec of it would (issue 32
/// item 2).
#[tokio::test]
async fn starting_a_repl_answers_with_its_prompt_waiting_for_input_in_one_call() {
    if !has("/usr/bin/python3") {
        return;
    }
    let server = start().await;
    let started = server
        .ok(
            "terminal_start",
            json!({"command": "/usr/bin/python3 -q", "cols": 100, "rows": 30}),
        )
        .await;
    assert_eq!(started["waitingForInput"], true, "{started}");
    assert_eq!(started["prompt"], ">>>", "[the line it asks on] {started}");
    assert!(
        started["banner"].as_str().unwrap().ends_with(">>>"),
        "{started}"
    );
    assert!(started.get("screen").is_none(), "{started}");
    // It is ready: what is typed next is answered.
    let id = started["sessionId"].as_str().unwrap();
    let answer = server
        .ok("terminal_write", json!({"sessionId": id, "data": "2+2\r"}))
        .await;
    assert!(answer["output"].as_str().unwrap().contains('4'), "{answer}");
    server.stop().await;
}

/// A full-screen program started with `terminal_start` comes back as terminal_exec of the
/// same program gives it: waitingForInput and its first screen as trimmed text (not the
/// stream of cursor moves and padding that drew it), in a reply of at most 2,500 bytes.
#[tokio::test]
async fn starting_vim_answers_with_its_first_screen_as_exec_gives_it() {
    if !has("/usr/bin/vim") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("note.txt");
    std::fs::write(&file, "first line\nsecond line\n").unwrap();
    // No swap file: the second vim opens the file as the first did.
    let vim = format!("/usr/bin/vim -n -Nu NONE {}", file.display());
    let server = start().await;
    let started = server
        .ok(
            "terminal_start",
            json!({"command": vim, "cols": 100, "rows": 30}),
        )
        .await;
    let bytes = started.to_string().len();
    eprintln!("terminal_start vim reply: {bytes} bytes");
    assert_eq!(started["waitingForInput"], true, "{started}");
    assert_eq!(started["banner"], "", "{started}");
    assert!(started.get("prompt").is_none(), "{started}");
    assert_eq!(started["screen"]["altScreen"], true, "{started}");
    let text = started["screen"]["text"].as_str().expect("screen text");
    assert!(
        text.lines().last().is_some_and(|l| l.contains("2L, 23B")),
        "[the whole first screen, down to the message drawn last] {text}"
    );
    assert!(bytes <= 2500, "{bytes} bytes: {started}");

    // The same program run by terminal_exec at the same size shows the same screen.
    let id = bash(&server).await;
    let r = exec(&server, &id, &vim).await;
    assert_eq!(r["waitingForInput"], true, "{r}");
    assert_eq!(r["screen"]["text"], started["screen"]["text"]);
    server
        .ok("terminal_write", json!({"sessionId": id, "data": ":q!\r"}))
        .await;
    server.stop().await;
}
