//! The web page (issue 17): how long an agent's output takes to appear in a person's browser
//! — `terminal_write` of an `echo` (returning at once) to the echoed line being in xterm.js's
//! buffer in headless Chromium, over `termpilot --web` next to stdio on loopback (p50 ≤ 50 ms).
//!
//! Runs only where Chromium is installed; otherwise one row says so.

use std::time::{Duration, Instant};

use serde_json::json;

use crate::Row;
use crate::client::{Client, percentile};

#[path = "../tests/common/cdp.rs"]
#[allow(dead_code)]
mod cdp;

/// What `cdp.rs` borrows from the test harness.
const TEST_TIMEOUT: Duration = Duration::from_secs(60);
use crate::procs;

const TOKEN: &str = "bench-token-0123456789abcdef";
const SAMPLES: usize = 50;

pub fn run() -> Vec<Row> {
    if cdp::find().is_none() {
        return vec![Row {
            figure: "web: exec output → browser (no chromium installed)".into(),
            value: "–".into(),
            target: "≤ 50 ms p50",
        }];
    }
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port");
    let mut client = Client::spawn_with_env(
        &[&format!("--web=127.0.0.1:{port}")],
        &[("TERMPILOT_TOKEN", TOKEN)],
    );
    client.initialize();
    let id = client.start_session(json!({"env": {"PS1": "$ "}}));
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let samples = runtime.block_on(async {
        let mut browser = cdp::Browser::launch().await.expect("chromium");
        browser
            .navigate(&format!("http://127.0.0.1:{port}/#token={TOKEN}"))
            .await;
        let row = format!("#sessions li[data-id=\"{id}\"]");
        let listed = format!("document.querySelector('{row}')");
        assert!(browser.wait_for(&listed, TEST_TIMEOUT).await, "the session is listed");
        browser.click(&row).await;
        assert!(
            browser
                .wait_for("window.termpilot.screenText().includes('$')", TEST_TIMEOUT)
                .await
        );
        let mut samples = Vec::new();
        for i in 0..SAMPLES + 3 {
            let marker = format!("seen-{i}-{}", i * 7 + 1);
            let start = Instant::now();
            client.call_ok(
                "terminal_write",
                json!({"sessionId": id, "data": format!("echo seen-{i}-$(({i}*7+1))\r"), "returnOutput": "none"}),
            );
            let seen = browser
                .eval(&format!("window.termpilot.waitText('\\n{marker}', 10000)"))
                .await;
            assert_eq!(seen, json!(true), "{marker} reached the page");
            if i >= 3 {
                samples.push(start.elapsed().as_secs_f64() * 1000.0);
            }
        }
        browser.close().await;
        samples
    });
    client.close();
    vec![
        Row {
            figure: format!("web: agent's echo → visible in the browser, p50 of {SAMPLES}"),
            value: format!("{:.1} ms", percentile(samples.clone(), 0.5)),
            target: "≤ 50 ms",
        },
        Row {
            figure: format!("web: agent's echo → visible in the browser, p99 of {SAMPLES}"),
            value: format!("{:.1} ms", percentile(samples, 0.99)),
            target: "",
        },
    ]
}
