//! A small DevTools-protocol client for the browser tests: headless Chromium (Debian's
//! package) started in its own process group with a fresh profile, one page driven over the
//! browser's WebSocket (tokio-tungstenite, the crate axum already builds on).
//!
//! Waits run in the page (`waitFor`: a condition checked on every animation frame, bounded
//! by a timeout), so the test sleeps nowhere.

use std::process::Stdio;
use std::time::Duration;

use futures_util::{SinkExt, StreamExt};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::net::TcpStream;
use tokio::process::{Child, Command};
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};

use super::TEST_TIMEOUT;

/// The flags every test browser gets (no network beyond loopback, nothing in the background).
pub const FLAGS: &[&str] = &[
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--window-size=1280,720",
    "--remote-debugging-port=0",
];

/// The Chromium binary: `chromium` (Debian), else `chromium-browser`, else `google-chrome`.
pub fn find() -> Option<&'static str> {
    ["chromium", "chromium-browser", "google-chrome"]
        .into_iter()
        .find(|p| super::procs::has(p))
}

pub struct Browser {
    child: Child,
    ws: WebSocketStream<MaybeTlsStream<TcpStream>>,
    session: String,
    next_id: u64,
    _profile: tempfile::TempDir,
}

impl Browser {
    /// Starts the browser, or `None` (with a message) when none is installed outside CI.
    pub async fn launch() -> Option<Browser> {
        let Some(program) = find() else {
            super::procs::skip("chromium is not installed");
            return None;
        };
        let profile = tempfile::tempdir().expect("a profile dir");
        let mut child = Command::new(program)
            .args(FLAGS)
            .arg(format!("--user-data-dir={}", profile.path().display()))
            .arg("about:blank")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .process_group(0)
            .kill_on_drop(true)
            .spawn()
            .expect("start chromium");
        let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
        let endpoint = tokio::time::timeout(TEST_TIMEOUT, async {
            while let Ok(Some(line)) = lines.next_line().await {
                if let Some(url) = line.split("DevTools listening on ").nth(1) {
                    return url.trim().to_string();
                }
            }
            panic!("chromium ended before its DevTools endpoint was up");
        })
        .await
        .expect("chromium starts in time");
        tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
        let (ws, _) = tokio_tungstenite::connect_async(&endpoint)
            .await
            .expect("connect to DevTools");
        let mut browser = Browser {
            child,
            ws,
            session: String::new(),
            next_id: 0,
            _profile: profile,
        };
        let targets = browser.call("Target.getTargets", json!({}), false).await;
        let page = targets["targetInfos"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["type"] == "page")
            .map(|t| t["targetId"].as_str().unwrap().to_string());
        let target = match page {
            Some(id) => id,
            None => browser
                .call("Target.createTarget", json!({"url": "about:blank"}), false)
                .await["targetId"]
                .as_str()
                .unwrap()
                .to_string(),
        };
        let attached = browser
            .call(
                "Target.attachToTarget",
                json!({"targetId": target, "flatten": true}),
                false,
            )
            .await;
        browser.session = attached["sessionId"].as_str().unwrap().to_string();
        browser.page("Page.enable", json!({})).await;
        browser.page("Runtime.enable", json!({})).await;
        Some(browser)
    }

    /// A DevTools call; its result (events in between are skipped).
    async fn call(&mut self, method: &str, params: Value, on_page: bool) -> Value {
        match self.try_call(method, params, on_page).await {
            Ok(result) => result,
            Err(error) => panic!("{method} failed: {error}"),
        }
    }

    /// A DevTools call; its result, or the error it answered.
    async fn try_call(
        &mut self,
        method: &str,
        params: Value,
        on_page: bool,
    ) -> Result<Value, Value> {
        self.next_id += 1;
        let id = self.next_id;
        let mut message = json!({"id": id, "method": method, "params": params});
        if on_page {
            message["sessionId"] = self.session.clone().into();
        }
        self.ws
            .send(Message::Text(message.to_string().into()))
            .await
            .expect("send to DevTools");
        let reply = tokio::time::timeout(TEST_TIMEOUT, async {
            loop {
                let Some(Ok(Message::Text(text))) = self.ws.next().await else {
                    panic!("the DevTools connection closed");
                };
                let value: Value = serde_json::from_str(&text).unwrap();
                if value["id"] == id {
                    return value;
                }
            }
        })
        .await
        .unwrap_or_else(|_| panic!("{method} answered in time"));
        match reply.get("error") {
            Some(error) => Err(error.clone()),
            None => Ok(reply["result"].clone()),
        }
    }

    /// A call on the page's session.
    pub async fn page(&mut self, method: &str, params: Value) -> Value {
        self.call(method, params, true).await
    }

    /// Opens `url` and waits until its document has loaded.
    pub async fn navigate(&mut self, url: &str) {
        self.page("Page.navigate", json!({"url": url})).await;
    }

    /// Evaluates `expression` in the page (promises awaited); its value.
    pub async fn eval(&mut self, expression: &str) -> Value {
        match self.try_eval(expression).await {
            Ok(value) => value,
            Err(error) => panic!("`{expression}` failed: {error}"),
        }
    }

    /// [`Self::eval`], with a navigation that interrupted it as an `Err`.
    async fn try_eval(&mut self, expression: &str) -> Result<Value, Value> {
        let result = self
            .try_call(
                "Runtime.evaluate",
                json!({"expression": expression, "awaitPromise": true, "returnByValue": true}),
                true,
            )
            .await?;
        if let Some(exception) = result.get("exceptionDetails") {
            panic!("`{expression}` threw: {exception}");
        }
        Ok(result["result"]["value"].clone())
    }

    /// Waits (checking on every animation frame, at most `timeout`) until `condition`, a
    /// JavaScript expression, is truthy; whether it became so.
    /// A page that navigates meanwhile (the login page reloads) is waited on again.
    pub async fn wait_for(&mut self, condition: &str, timeout: Duration) -> bool {
        let deadline = std::time::Instant::now() + timeout;
        loop {
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            match self.try_eval(&Self::waiter(condition, left)).await {
                Ok(value) => return value == json!(true),
                Err(error) if error.to_string().contains("navigated") && !left.is_zero() => {
                    continue;
                }
                Err(error) => panic!("waiting for `{condition}` failed: {error}"),
            }
        }
    }

    fn waiter(condition: &str, timeout: Duration) -> String {
        format!(
            r#"new Promise((done) => {{
                const until = performance.now() + {ms};
                const check = () => {{
                    let ok = false;
                    try {{ ok = !!({condition}); }} catch (e) {{}}
                    if (ok) done(true);
                    else if (performance.now() > until) done(false);
                    else requestAnimationFrame(check);
                }};
                check();
            }})"#,
            ms = timeout.as_millis()
        )
    }

    /// Clicks the element `selector` names (through the DOM, as a user's click would).
    pub async fn click(&mut self, selector: &str) {
        let found = self
            .eval(&format!(
                "(() => {{ const e = document.querySelector({sel}); if (!e) return false; e.click(); return true; }})()",
                sel = serde_json::to_string(selector).unwrap()
            ))
            .await;
        assert_eq!(found, json!(true), "no element matches {selector}");
    }

    /// Types `text` as key presses into the focused element (`\r` is Enter).
    pub async fn type_text(&mut self, text: &str) {
        for c in text.chars() {
            let down = if c == '\r' {
                json!({"type": "keyDown", "key": "Enter", "code": "Enter",
                       "windowsVirtualKeyCode": 13, "nativeVirtualKeyCode": 13, "text": "\r"})
            } else {
                json!({"type": "keyDown", "key": c.to_string(), "text": c.to_string(),
                       "unmodifiedText": c.to_string()})
            };
            self.page("Input.dispatchKeyEvent", down).await;
            let key = if c == '\r' {
                "Enter".to_string()
            } else {
                c.to_string()
            };
            self.page(
                "Input.dispatchKeyEvent",
                json!({"type": "keyUp", "key": key}),
            )
            .await;
        }
    }

    /// Makes the page's viewport `width`×`height` CSS pixels (`mobile`: a phone's, where the
    /// page's `<meta name="viewport">` applies).
    pub async fn set_viewport(&mut self, width: u32, height: u32, mobile: bool) {
        self.page(
            "Emulation.setDeviceMetricsOverride",
            json!({"width": width, "height": height, "deviceScaleFactor": 1, "mobile": mobile}),
        )
        .await;
    }

    /// Makes the page see `prefers-color-scheme: scheme` (`light` or `dark`).
    pub async fn set_color_scheme(&mut self, scheme: &str) {
        self.page(
            "Emulation.setEmulatedMedia",
            json!({"features": [{"name": "prefers-color-scheme", "value": scheme}]}),
        )
        .await;
    }

    /// A PNG of the page as it looks now.
    pub async fn screenshot(&mut self) -> Vec<u8> {
        use base64::Engine as _;
        let shot = self
            .page("Page.captureScreenshot", json!({"format": "png"}))
            .await;
        base64::engine::general_purpose::STANDARD
            .decode(shot["data"].as_str().unwrap())
            .unwrap()
    }

    /// Ends the browser and everything it started (its process group), and reaps it.
    pub async fn close(mut self) {
        let _ = self
            .ws
            .send(Message::Text(
                json!({"id": 0, "method": "Browser.close"})
                    .to_string()
                    .into(),
            ))
            .await;
        if let Some(pid) = self.child.id() {
            // SAFETY: kill(2) on the process group of the browser this test started.
            unsafe { libc::kill(-(pid as i32), libc::SIGKILL) };
        }
        let _ = tokio::time::timeout(Duration::from_secs(10), self.child.wait()).await;
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        if let Some(pid) = self.child.id() {
            // SAFETY: as in `close`; a test that panicked still leaves no browser behind.
            unsafe { libc::kill(-(pid as i32), libc::SIGKILL) };
        }
    }
}
