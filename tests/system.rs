//! System views end to end: process_list finds a process the test started, file_lockers
//! finds the process holding a file, and screenshot captures an Xvfb display and a window.
#![cfg(target_os = "linux")]

mod common;

use std::process::Stdio;

use common::{TEST_TIMEOUT, start, start_with};
use serde_json::json;
use tokio::io::{AsyncBufReadExt, BufReader};

fn call(tool: &str, args: serde_json::Value) -> serde_json::Value {
    json!({"tool": tool, "args": args})
}

#[tokio::test]
async fn process_list_finds_a_process_the_test_started() {
    let dir = tempfile::tempdir().unwrap();
    let name = format!("tpprobe{}", &uuid::Uuid::new_v4().simple().to_string()[..6]);
    let exe = dir.path().join(&name);
    std::fs::copy("/bin/sleep", &exe).unwrap();
    let mut child = std::process::Command::new(&exe).arg("60").spawn().unwrap();
    let server = start().await;
    let listed = server
        .extra("process_list", json!({"nameFilter": name.to_uppercase()}))
        .await;
    let procs = listed["processes"].as_array().unwrap();
    assert_eq!(procs.len(), 1, "{listed}");
    assert_eq!(procs[0]["pid"], child.id());
    assert_eq!(procs[0]["name"], name.as_str());
    assert_eq!(procs[0]["path"], exe.display().to_string());
    assert!(procs[0]["startedAt"].is_string() && procs[0]["workingSetBytes"].is_u64());
    assert_eq!(listed["truncated"], false);
    let one = server.extra("process_list", json!({"maxResults": 1})).await;
    assert_eq!(one["truncated"], true);
    let e = server
        .err(
            "terminal_extra",
            call("process_list", json!({"maxResults": 1001})),
        )
        .await;
    assert!(e.contains("maxResults"), "{e}");
    child.kill().unwrap();
    child.wait().unwrap();
    server.stop().await;
}

#[tokio::test]
async fn file_lockers_finds_the_process_holding_a_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("held.txt");
    std::fs::write(&path, "x").unwrap();
    let mut holder = std::process::Command::new("sleep")
        .arg("60")
        .stdin(std::fs::File::open(&path).unwrap())
        .spawn()
        .unwrap();
    let server = start().await;
    let found = server
        .extra("file_lockers", json!({"path": path.display().to_string()}))
        .await;
    let lockers = found["lockers"].as_array().unwrap();
    assert!(
        lockers
            .iter()
            .any(|l| l["pid"] == holder.id() && l["appName"] == "sleep"),
        "{found}"
    );
    assert!(found["skippedProcesses"].is_u64() && found["complete"].is_boolean());
    holder.kill().unwrap();
    holder.wait().unwrap();
    let after = server
        .extra("file_lockers", json!({"path": path.display().to_string()}))
        .await;
    assert_eq!(after["lockers"], json!([]), "{after}");
    let e = server
        .err(
            "terminal_extra",
            call("file_lockers", json!({"path": "relative.txt"})),
        )
        .await;
    assert!(e.contains("absolute"), "{e}");
    server.stop().await;
}

/// An Xvfb server on a display number it picked itself (`-displayfd`), killed on `stop`.
struct Xvfb {
    child: tokio::process::Child,
    display: String,
}

impl Xvfb {
    async fn start(size: &str) -> Option<Xvfb> {
        let spawned = tokio::process::Command::new("Xvfb")
            .args(["-displayfd", "1", "-screen", "0", size, "-nolisten", "tcp"])
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .spawn();
        let mut child = match spawned {
            Ok(c) => c,
            Err(e) => {
                common::procs::skip(&format!("Xvfb could not start ({e})"));
                return None;
            }
        };
        let mut line = String::new();
        let mut out = BufReader::new(child.stdout.take().unwrap());
        tokio::time::timeout(TEST_TIMEOUT, out.read_line(&mut line))
            .await
            .expect("Xvfb ready in time")
            .expect("Xvfb display number");
        Some(Xvfb {
            child,
            display: format!(":{}", line.trim()),
        })
    }

    async fn stop(mut self) {
        let _ = self.child.start_kill();
        let _ = self.child.wait().await;
    }
}

/// Width, height and the first pixel of a PNG.
fn decode(png_bytes: &[u8]) -> (u32, u32, [u8; 3]) {
    let decoder = png::Decoder::new(std::io::Cursor::new(png_bytes));
    let mut reader = decoder.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size().unwrap()];
    let info = reader.next_frame(&mut buf).unwrap();
    (info.width, info.height, [buf[0], buf[1], buf[2]])
}

#[tokio::test]
async fn screenshot_captures_an_xvfb_screen_and_a_window() {
    use x11rb::connection::Connection;
    use x11rb::protocol::xproto::{
        AtomEnum, ConnectionExt as _, CreateWindowAux, PropMode, WindowClass,
    };
    use x11rb::wrapper::ConnectionExt as _;

    let Some(xvfb) = Xvfb::start("640x480x24").await else {
        return;
    };
    // A small red window with a title, made with the X11 protocol itself.
    let (conn, screen_num) = x11rb::connect(Some(&xvfb.display)).unwrap();
    let screen = &conn.setup().roots[screen_num];
    let win = conn.generate_id().unwrap();
    conn.create_window(
        x11rb::COPY_DEPTH_FROM_PARENT,
        win,
        screen.root,
        20,
        30,
        160,
        100,
        0,
        WindowClass::INPUT_OUTPUT,
        0,
        &CreateWindowAux::new().background_pixel(0xff0000),
    )
    .unwrap();
    conn.change_property8(
        PropMode::REPLACE,
        win,
        AtomEnum::WM_NAME,
        AtomEnum::STRING,
        b"termpilot probe window",
    )
    .unwrap();
    conn.map_window(win).unwrap();
    conn.sync().unwrap();

    let out = tempfile::tempdir().unwrap();
    let server = start_with(common::Era::Initialize, &[], &[("DISPLAY", &xvfb.display)]).await;
    let screen_png = out.path().join("screen.png");
    let begun = std::time::Instant::now();
    let result = server
        .call(
            "terminal_extra",
            call(
                "screenshot",
                json!({"outputPath": screen_png.display().to_string()}),
            ),
        )
        .await;
    eprintln!(
        "screenshot of a 640x480 screen, client to result: {:.1} ms",
        begun.elapsed().as_secs_f64() * 1000.0
    );
    assert_ne!(result.is_error, Some(true), "{}", common::text(&result));
    let shot = result.structured_content.clone().unwrap();
    assert_eq!(
        (shot["width"].as_u64(), shot["height"].as_u64()),
        (Some(640), Some(480))
    );
    assert_eq!(shot["target"], "screen");
    let image = result
        .content
        .iter()
        .find_map(|c| c.as_image().cloned())
        .expect("an image block");
    assert_eq!(image.mime_type, "image/png");
    let on_disk = std::fs::read(&screen_png).unwrap();
    assert_eq!(decode(&on_disk).0, 640);
    assert_eq!(decode(&on_disk).1, 480);

    let window = server
        .extra(
            "screenshot",
            json!({"target": "window", "windowTitle": "PROBE WINDOW"}),
        )
        .await;
    assert_eq!(window["windowTitle"], "termpilot probe window", "{window}");
    assert_eq!(
        (window["width"].as_u64(), window["height"].as_u64()),
        (Some(160), Some(100))
    );
    let path = window["path"].as_str().unwrap();
    let (w, h, first) = decode(&std::fs::read(path).unwrap());
    assert_eq!((w, h, first), (160, 100, [255, 0, 0]));
    std::fs::remove_file(path).unwrap();

    let e = server
        .err(
            "terminal_extra",
            call(
                "screenshot",
                json!({"target": "window", "windowTitle": "no such title"}),
            ),
        )
        .await;
    assert!(e.contains("No matching window"), "{e}");
    server.stop().await;
    drop(conn);
    xvfb.stop().await;
}

#[tokio::test]
async fn screenshot_without_a_display_says_so() {
    let server = start_with(common::Era::Initialize, &[], &[("DISPLAY", "")]).await;
    let e = server
        .err("terminal_extra", call("screenshot", json!({})))
        .await;
    assert!(e.contains("No display"), "{e}");
    server.stop().await;
}
