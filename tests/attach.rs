//! People attaching to sessions: the socket, its permissions and protocol, several clients,
//! the `termpilot attach` client, and the socket's removal.
#![cfg(unix)]

mod common;

use std::io::{Read, Write};
use std::os::unix::fs::{FileTypeExt, PermissionsExt};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use common::{BIN, Era, Server, TEST_TIMEOUT, start_with};
use serde_json::json;

/// A server whose sockets go under its own runtime dir.
async fn server(runtime: &Path) -> Server {
    start_with(
        Era::Initialize,
        &[],
        &[("XDG_RUNTIME_DIR", runtime.to_str().unwrap())],
    )
    .await
}

/// Starts a /bin/sh session; returns its id and the socket named in its attach command.
async fn session(server: &Server, runtime: &Path) -> (String, PathBuf) {
    let started = server
        .ok(
            "terminal_start",
            json!({"env": {"PS1": "$ "}, "cols": 60, "rows": 10}),
        )
        .await;
    let id = started["sessionId"].as_str().unwrap().to_string();
    let command = started["attach"].as_str().expect("an attach command");
    assert!(
        command.contains(&format!(" attach {id} --socket ")),
        "{command}"
    );
    let socket = PathBuf::from(command.rsplit(' ').next().unwrap());
    assert!(socket.starts_with(runtime.join("termpilot")), "{command}");
    (id, socket)
}

/// An attached test client speaking the socket protocol.
struct Client {
    stream: UnixStream,
    seen: Vec<u8>,
}

impl Client {
    fn connect(socket: &Path) -> Client {
        let stream = UnixStream::connect(socket).expect("connect to the attach socket");
        stream
            .set_read_timeout(Some(Duration::from_millis(100)))
            .unwrap();
        Client {
            stream,
            seen: Vec::new(),
        }
    }

    /// Reads until `needle` has been seen (bounded); returns false on end of stream.
    fn expect(&mut self, needle: &str) -> bool {
        let deadline = Instant::now() + TEST_TIMEOUT;
        let mut buf = [0u8; 8192];
        loop {
            if String::from_utf8_lossy(&self.seen).contains(needle) {
                return true;
            }
            assert!(
                Instant::now() < deadline,
                "never saw {needle:?} in {:?}",
                String::from_utf8_lossy(&self.seen)
            );
            match self.stream.read(&mut buf) {
                Ok(0) => return false,
                Ok(n) => self.seen.extend_from_slice(&buf[..n]),
                Err(e)
                    if matches!(
                        e.kind(),
                        std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                    ) => {}
                Err(_) => return false,
            }
        }
    }

    /// Reads until the server closes the connection (bounded).
    fn expect_end(&mut self) {
        let deadline = Instant::now() + TEST_TIMEOUT;
        let mut buf = [0u8; 8192];
        loop {
            assert!(Instant::now() < deadline, "the connection stayed open");
            match self.stream.read(&mut buf) {
                Ok(0) => return,
                Ok(n) => self.seen.extend_from_slice(&buf[..n]),
                Err(e)
                    if matches!(
                        e.kind(),
                        std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                    ) => {}
                Err(_) => return,
            }
        }
    }

    fn send(&mut self, kind: u8, payload: &[u8]) {
        let mut frame = vec![kind];
        frame.extend_from_slice(&(payload.len() as u16).to_be_bytes());
        frame.extend_from_slice(payload);
        self.stream.write_all(&frame).unwrap();
    }

    fn type_text(&mut self, text: &str) {
        self.send(b'i', text.as_bytes());
    }
}

async fn screen_text(server: &Server, id: &str) -> serde_json::Value {
    server
        .ok(
            "terminal_read",
            json!({"sessionId": id, "view": "screen", "cursor": false}),
        )
        .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_person_sees_the_screen_and_types_into_the_session() {
    let runtime = tempfile::tempdir().unwrap();
    let server = server(runtime.path()).await;
    let (id, socket) = session(&server, runtime.path()).await;

    // The socket is private: 0600 in a 0700 folder.
    let meta = std::fs::metadata(&socket).unwrap();
    assert!(meta.file_type().is_socket());
    assert_eq!(meta.permissions().mode() & 0o777, 0o600);
    let dir = std::fs::metadata(socket.parent().unwrap()).unwrap();
    assert_eq!(dir.permissions().mode() & 0o777, 0o700);

    server
        .ok(
            "terminal_write",
            json!({"sessionId": id, "data": "echo before-attach\r"}),
        )
        .await;
    let mut alice = tokio::task::block_in_place(|| {
        let mut c = Client::connect(&socket);
        assert!(c.expect("before-attach"), "the current screen comes first");
        c
    });
    tokio::task::block_in_place(|| {
        alice.type_text("echo attached\r");
        // Live output comes back to the client (after it is in the session's log).
        assert!(alice.expect("\nattached"));
    });
    let read = server
        .ok("terminal_read", json!({"sessionId": id, "timeout": 2000}))
        .await;
    assert!(
        read["output"].as_str().unwrap().contains("attached"),
        "{read}"
    );

    // A second person joins; the agent's output reaches both, live.
    let mut bob = tokio::task::block_in_place(|| {
        let mut c = Client::connect(&socket);
        assert!(c.expect("echo attached"));
        c
    });
    server
        .ok(
            "terminal_write",
            json!({"sessionId": id, "data": "echo from-agent-$((6*7))\r"}),
        )
        .await;
    tokio::task::block_in_place(|| {
        assert!(alice.expect("from-agent-42"));
        assert!(bob.expect("from-agent-42"));
    });

    // A resize frame changes the session's size.
    tokio::task::block_in_place(|| bob.send(b'r', &[0, 50, 0, 12]));
    let deadline = Instant::now() + TEST_TIMEOUT;
    loop {
        let read = screen_text(&server, &id).await;
        if read["cols"] == 50 && read["rows"] == 12 {
            break;
        }
        assert!(Instant::now() < deadline, "never resized: {read}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }

    // Stopping the session closes the connections and removes the socket.
    server.ok("terminal_stop", json!({"sessionId": id})).await;
    assert!(!socket.exists(), "socket left after terminal_stop");
    tokio::task::block_in_place(|| {
        alice.expect_end();
        bob.expect_end();
    });
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_attach_command_joins_and_detaches_on_ctrl_bracket() {
    let runtime = tempfile::tempdir().unwrap();
    let server = server(runtime.path()).await;
    let (id, socket) = session(&server, runtime.path()).await;
    server
        .ok(
            "terminal_write",
            json!({"sessionId": id, "data": "echo ready-for-cli\r"}),
        )
        .await;

    // Found by id alone (one server has it); stdin is a pipe, so no raw mode.
    let mut child = tokio::process::Command::new(BIN)
        .args(["attach", &id])
        .env("XDG_RUNTIME_DIR", runtime.path())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    use tokio::io::AsyncWriteExt;
    // Plenty of output still on its way to the client when it detaches: none may be lost.
    stdin
        .write_all(b"seq 1 20000; echo via-cli\r")
        .await
        .unwrap();
    stdin.flush().await.unwrap();
    let waited = server
        .ok(
            "terminal_wait",
            json!({"sessionId": id, "pattern": "^via-cli$", "on": "screen"}),
        )
        .await;
    assert_eq!(waited["matched"], true, "{waited}");
    // Ctrl+] detaches; what follows it is not sent.
    stdin.write_all(b"\x1dexit\r").await.unwrap();
    stdin.flush().await.unwrap();
    let out = tokio::time::timeout(TEST_TIMEOUT, child.wait_with_output())
        .await
        .expect("attach ended in time")
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stdout.contains("ready-for-cli"), "{stdout}");
    assert!(
        stdout.contains("\n19999\r\n20000\r\nvia-cli"),
        "{stdout:.300}"
    );
    assert!(stderr.contains("detached"), "{stderr}");
    let listed = server.ok("terminal_list", json!({})).await;
    assert_eq!(listed["sessions"][0]["alive"], true, "exit was not sent");

    // An unknown id is a clear error.
    let out = std::process::Command::new(BIN)
        .args(["attach", "no-such-session"])
        .env("XDG_RUNTIME_DIR", runtime.path())
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("No running termpilot has a session `no-such-session`"),
        "{stderr}"
    );

    // The server's end removes every socket it opened.
    server.stop().await;
    let deadline = Instant::now() + TEST_TIMEOUT;
    while socket.exists() {
        assert!(
            Instant::now() < deadline,
            "socket left after the server ended"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_restart_keeps_one_socket_and_a_dead_client_is_dropped() {
    let runtime = tempfile::tempdir().unwrap();
    let server = server(runtime.path()).await;
    let (id, socket) = session(&server, runtime.path()).await;
    // A client that connects and never reads must not slow the session down.
    let _silent = UnixStream::connect(&socket).unwrap();
    server
        .ok(
            "terminal_write",
            json!({"sessionId": id, "data": "seq 1 200000\r"}),
        )
        .await;
    let waited = server
        .ok(
            "terminal_wait",
            json!({"sessionId": id, "pattern": "^200000$", "on": "screen", "timeout": 30000}),
        )
        .await;
    assert_eq!(waited["matched"], true, "{waited}");

    server
        .extra(
            "terminal_reset",
            json!({"sessionId": id, "hardReset": true}),
        )
        .await;
    assert!(socket.exists(), "the restarted session listens again");
    let mut client = tokio::task::block_in_place(|| {
        let mut c = Client::connect(&socket);
        assert!(c.expect("$"));
        c
    });
    tokio::task::block_in_place(|| client.type_text("echo after-restart\r"));
    let waited = server
        .ok(
            "terminal_wait",
            json!({"sessionId": id, "pattern": "^after-restart$", "on": "screen"}),
        )
        .await;
    assert_eq!(waited["matched"], true);
    let files: Vec<_> = std::fs::read_dir(socket.parent().unwrap())
        .unwrap()
        .flatten()
        .collect();
    assert_eq!(files.len(), 1, "one socket per session");
    server.stop().await;
}

/// Sixteen people may be attached at once; the seventeenth connection gets one line saying
/// so and is closed, and the sixteen go on seeing and typing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_seventeenth_person_is_refused_and_the_others_stay() {
    let runtime = tempfile::tempdir().unwrap();
    let server = server(runtime.path()).await;
    let (id, socket) = session(&server, runtime.path()).await;
    server
        .ok(
            "terminal_write",
            json!({"sessionId": id, "data": "echo before-$((1+1))\r"}),
        )
        .await;
    let mut people: Vec<Client> = tokio::task::block_in_place(|| {
        (0..16)
            .map(|_| {
                let mut c = Client::connect(&socket);
                // Its redraw arrived: it is attached.
                assert!(c.expect("before-2"), "an attached person sees the screen");
                c
            })
            .collect()
    });

    let refused = tokio::task::block_in_place(|| {
        let mut c = Client::connect(&socket);
        c.expect_end();
        String::from_utf8_lossy(&c.seen).into_owned()
    });
    assert!(
        refused.contains("16 people are already attached") && !refused.contains("before-2"),
        "{refused:?}"
    );
    assert_eq!(refused.trim_end().lines().count(), 1, "{refused:?}");

    // The sixteen are unaffected: one types, every one sees the output.
    tokio::task::block_in_place(|| {
        people[0].type_text("echo still-$((6*7))\r");
        for p in people.iter_mut() {
            assert!(p.expect("still-42"), "an attached person was dropped");
        }
    });
    server.ok("terminal_stop", json!({"sessionId": id})).await;
    tokio::task::block_in_place(|| {
        for p in people.iter_mut() {
            p.expect_end();
        }
    });
    server.stop().await;
}
