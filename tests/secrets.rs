//! A person answers password prompts through URL elicitation (issue 35), end to end: the real
//! binary, rmcp's client declaring URL-mode elicitation, and the person played by headless
//! Chromium on the one-time page. The secret's hash comes out of the command; the secret itself
//! appears in no result, transcript, trace log or runtime file. Also: decline, cancel, a
//! replayed submit, an expired link, a foreign Origin, a client without the capability, and a
//! prompt that goes away before the submit.

mod common;

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::cdp::Browser;
use common::{TEST_TIMEOUT, text};
use rmcp::model::{
    CallToolRequestParams, CallToolResult, ClientCapabilities, ClientConfig, CustomNotification,
    ElicitRequestParams, ElicitResult, ElicitationAction, Implementation, JsonObject,
};
use rmcp::service::{NotificationContext, RequestContext, RunningService};
use rmcp::transport::TokioChildProcess;
use rmcp::{ClientHandler, ErrorData, RoleClient, ServiceExt};
use serde_json::{Value, json};
use tokio::sync::{mpsc, oneshot};

const WAIT: Duration = Duration::from_secs(20);
const SECRET: &str = "Zq9-hunter2-Secret!";
/// `printf '%s' "$SECRET" | sha256sum`.
fn sha256_of_secret() -> String {
    let out = std::process::Command::new("sh")
        .args(["-c", &format!("printf '%s' '{SECRET}' | sha256sum")])
        .output()
        .expect("sha256sum");
    String::from_utf8_lossy(&out.stdout)
        .split_whitespace()
        .next()
        .unwrap()
        .to_string()
}

/// One URL elicitation the client received: its message and URL, and where to answer.
struct Asked {
    message: String,
    url: String,
    id: String,
    answer: oneshot::Sender<ElicitationAction>,
}

/// The client side of the person: hands each URL elicitation to the test.
struct PersonClient {
    asked: mpsc::UnboundedSender<Asked>,
    completed: Arc<Mutex<Vec<String>>>,
    /// Woken on each completion (it may come just after the call's result).
    completed_note: Arc<tokio::sync::Notify>,
    progress: mpsc::UnboundedSender<String>,
}

impl ClientHandler for PersonClient {
    fn get_info(&self) -> ClientConfig {
        let capabilities: ClientCapabilities =
            serde_json::from_value(json!({"elicitation": {"url": {}}})).unwrap();
        ClientConfig::new(capabilities, Implementation::new("secrets-test", "1"))
    }

    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        let ElicitRequestParams::UrlElicitationParams {
            message,
            url,
            elicitation_id,
            ..
        } = request
        else {
            panic!("termpilot asked for a form, not a URL");
        };
        let (answer, action) = oneshot::channel();
        self.asked
            .send(Asked {
                message,
                url,
                id: elicitation_id,
                answer,
            })
            .unwrap();
        let action = action.await.unwrap_or(ElicitationAction::Cancel);
        Ok(ElicitResult::new(action))
    }

    async fn on_progress(
        &self,
        params: rmcp::model::ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        let _ = self.progress.send(params.message.unwrap_or_default());
    }

    async fn on_custom_notification(
        &self,
        notification: CustomNotification,
        _context: NotificationContext<RoleClient>,
    ) {
        if notification.method == "notifications/elicitation/complete" {
            let id = notification.params.unwrap()["elicitationId"]
                .as_str()
                .unwrap()
                .to_string();
            self.completed.lock().unwrap().push(id);
            self.completed_note.notify_one();
        }
    }
}

/// A server with a person-playing client, its stderr (trace log) in a file, and its
/// runtime folder in a temp dir of its own.
struct Setup {
    client: RunningService<RoleClient, PersonClient>,
    asked: mpsc::UnboundedReceiver<Asked>,
    completed: Arc<Mutex<Vec<String>>>,
    completed_note: Arc<tokio::sync::Notify>,
    progress: mpsc::UnboundedReceiver<String>,
    dirs: tempfile::TempDir,
}

impl Setup {
    async fn start(envs: &[(&str, &str)]) -> Setup {
        Setup::start_args(&[], envs).await
    }

    async fn start_args(args: &[&str], envs: &[(&str, &str)]) -> Setup {
        let dirs = tempfile::tempdir().unwrap();
        for d in ["state", "run", "tmp"] {
            std::fs::create_dir(dirs.path().join(d)).unwrap();
        }
        let run = dirs.path().join("run");
        std::fs::set_permissions(
            &run,
            <std::fs::Permissions as std::os::unix::fs::PermissionsExt>::from_mode(0o700),
        )
        .unwrap();
        let mut cmd = common::command(&dirs.path().join("state"), args);
        cmd.env("XDG_RUNTIME_DIR", &run)
            .env("TMPDIR", dirs.path().join("tmp"))
            .env("TERMPILOT_LOG", "trace,termpilot::wire=trace");
        for (k, v) in envs {
            cmd.env(k, v);
        }
        let log = std::fs::File::create(dirs.path().join("server.log")).unwrap();
        let (transport, _) = TokioChildProcess::builder(cmd)
            .stderr(Stdio::from(log))
            .spawn()
            .expect("spawn termpilot");
        let (tx, asked) = mpsc::unbounded_channel();
        let completed = Arc::new(Mutex::new(Vec::new()));
        let completed_note = Arc::new(tokio::sync::Notify::new());
        let (progress_tx, progress) = mpsc::unbounded_channel();
        let person = PersonClient {
            asked: tx,
            completed: completed.clone(),
            completed_note: completed_note.clone(),
            progress: progress_tx,
        };
        let client = tokio::time::timeout(TEST_TIMEOUT, person.serve(transport))
            .await
            .expect("initialize in time")
            .expect("initialize");
        Setup {
            client,
            asked,
            completed,
            completed_note,
            progress,
            dirs,
        }
    }

    /// A bash session with a plain prompt.
    async fn session(&self) -> String {
        let started = ok(call(
            &self.client,
            "terminal_start",
            json!({"shell": "bash", "env": {"PS1": "$ ", "HOME": "/tmp"}}),
        )
        .await);
        started["sessionId"].as_str().unwrap().to_string()
    }

    /// `terminal_exec` running in the background.
    fn exec(&self, id: &str, command: &str) -> tokio::task::JoinHandle<CallToolResult> {
        let args = json!({"sessionId": id, "command": command, "timeout": 30000});
        self.background("terminal_exec", args)
    }

    /// A tool call running in the background.
    fn background(
        &self,
        tool: &'static str,
        args: Value,
    ) -> tokio::task::JoinHandle<CallToolResult> {
        let peer = self.client.peer().clone();
        tokio::spawn(async move {
            let params = CallToolRequestParams::new(tool).with_arguments(object(args));
            tokio::time::timeout(TEST_TIMEOUT * 2, peer.call_tool(params))
                .await
                .expect("exec answered in time")
                .expect("exec at the protocol level")
        })
    }

    /// The completions received, once there are `n` (the notification may come just after
    /// the call's result; bounded by `WAIT`).
    async fn completions(&self, n: usize) -> Vec<String> {
        let enough = async {
            loop {
                let notified = self.completed_note.notified();
                if self.completed.lock().unwrap().len() >= n {
                    return;
                }
                notified.await;
            }
        };
        let _ = tokio::time::timeout(WAIT, enough).await;
        self.completed.lock().unwrap().clone()
    }

    async fn next_ask(&mut self) -> Asked {
        tokio::time::timeout(WAIT, self.asked.recv())
            .await
            .expect("an elicitation in time")
            .expect("the client is up")
    }

    /// Stops `id` with a transcript; the transcript's text.
    async fn stop_with_transcript(&self, id: &str) -> (Value, String) {
        let path = self.dirs.path().join("transcript.cast");
        let stopped = ok(call(
            &self.client,
            "terminal_stop",
            json!({"sessionId": id, "transcriptPath": path, "snapshotLines": 50}),
        )
        .await);
        (stopped, std::fs::read_to_string(&path).unwrap())
    }

    /// Every file under the state, runtime and temp folders, and the log, holding `needle`.
    fn files_holding(&self, needle: &[u8]) -> Vec<PathBuf> {
        let mut found = Vec::new();
        walk(self.dirs.path(), &mut |p| {
            if let Ok(bytes) = std::fs::read(p)
                && bytes.windows(needle.len()).any(|w| w == needle)
            {
                found.push(p.to_path_buf());
            }
        });
        found
    }

    fn log(&self) -> String {
        std::fs::read_to_string(self.dirs.path().join("server.log")).unwrap_or_default()
    }
}

fn walk(dir: &Path, f: &mut dyn FnMut(&Path)) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        match e.file_type() {
            Ok(t) if t.is_dir() => walk(&p, f),
            Ok(t) if t.is_file() => f(&p),
            _ => {}
        }
    }
}

fn object(args: Value) -> JsonObject {
    match args {
        Value::Object(map) => map,
        _ => panic!("arguments must be an object"),
    }
}

async fn call(
    client: &RunningService<RoleClient, PersonClient>,
    name: &str,
    args: Value,
) -> CallToolResult {
    let params = CallToolRequestParams::new(name.to_string()).with_arguments(object(args));
    tokio::time::timeout(TEST_TIMEOUT, client.call_tool(params))
        .await
        .expect("answered in time")
        .expect("protocol level")
}

fn ok(result: CallToolResult) -> Value {
    assert_ne!(result.is_error, Some(true), "failed: {}", text(&result));
    result.structured_content.expect("structured content")
}

/// The person on the page: opens `url`, types `secret` into the password field, submits;
/// the page's answer (status, sentence).
async fn answer_on_page(browser: &mut Browser, url: &str, secret: &str) -> (u16, String) {
    browser.navigate(url).await;
    assert!(
        browser
            .wait_for(
                "document.querySelector('input[type=password]#secret')",
                WAIT
            )
            .await,
        "the page shows a password field"
    );
    browser.click("#secret").await;
    browser
        .eval("document.getElementById('secret').focus()")
        .await;
    browser.type_text(secret).await;
    // `TERMPILOT_DOCS_SCREENSHOT=1` writes the page as the README shows it.
    if std::env::var_os("TERMPILOT_DOCS_SCREENSHOT").is_some() {
        browser.set_viewport(760, 520, false).await;
        let png = browser.screenshot().await;
        std::fs::write(
            concat!(env!("CARGO_MANIFEST_DIR"), "/docs/secret-page.png"),
            png,
        )
        .unwrap();
    }
    browser.click("#send").await;
    assert!(
        browser
            .wait_for(
                "document.getElementById('result').dataset.done === '1'",
                WAIT
            )
            .await,
        "the page answers"
    );
    page_result(browser).await
}

async fn page_result(browser: &mut Browser) -> (u16, String) {
    let status = browser
        .eval("Number(document.getElementById('result').dataset.status)")
        .await
        .as_u64()
        .unwrap() as u16;
    let sentence = browser
        .eval("document.getElementById('result').textContent")
        .await
        .as_str()
        .unwrap()
        .to_string();
    (status, sentence)
}

/// Posts `body` to the link from the page itself (same origin) again: the replay.
async fn post_again(browser: &mut Browser, body: &str) -> (u16, String) {
    let v = browser
        .eval(&format!(
            "fetch(location.pathname, {{method: 'POST', body: {}}}).then(async r => [r.status, await r.text()])",
            serde_json::to_string(body).unwrap()
        ))
        .await;
    (
        v[0].as_u64().unwrap() as u16,
        v[1].as_str().unwrap().to_string(),
    )
}

/// The authority (`127.0.0.1:port`) of a link.
fn authority(url: &str) -> &str {
    url.strip_prefix("http://")
        .unwrap()
        .split('/')
        .next()
        .unwrap()
}

/// A raw POST to the link with `origin` (a foreign page's attempt).
async fn post_from(url: &str, origin: &str, body: &str) -> (u16, String) {
    let client = reqwest::Client::new();
    let r = client
        .post(url)
        .header("Origin", origin)
        .body(body.to_string())
        .send()
        .await
        .expect("post");
    (r.status().as_u16(), r.text().await.unwrap())
}

/// `terminal_write` (and a batch) that run into a secret prompt hand it to a person too; the
/// write's answer is the program's after the secret.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_write_that_meets_a_secret_prompt_is_answered_by_a_person() {
    let Some(mut browser) = Browser::launch().await else {
        return;
    };
    let mut setup = Setup::start(&[]).await;
    let id = setup.session().await;
    let command =
        "read -s -p 'Password: ' p; echo; printf '%s' \"$p\" | sha256sum; read -p 'Next: ' q\r";
    let mut write = setup.background("terminal_write", json!({"sessionId": id, "data": command}));
    // A write that comes back without asking says what it saw (failed once under three busy
    // loops: no ask in 20 s, cause unseen).
    let asked = tokio::select! {
        asked = setup.next_ask() => asked,
        done = &mut write => panic!("the write returned without asking a person: {done:?}"),
    };
    assert!(
        asked.message.contains("bash asks: Password:"),
        "{}",
        asked.message
    );
    // The person goes by the web page (the listener started for the link): the session's
    // row carries the same one-time page.
    let port = authority(&asked.url).rsplit(':').next().unwrap();
    let token_file = setup
        .dirs
        .path()
        .join(format!("run/termpilot/run/http-token-{port}"));
    let token = std::fs::read_to_string(&token_file).expect("the listener's token file");
    browser
        .navigate(&format!(
            "http://{}/#token={}",
            authority(&asked.url),
            token.trim()
        ))
        .await;
    let badge = format!("document.querySelector('#sessions li[data-id=\"{id}\"] a.badge.secret')");
    assert!(
        browser.wait_for(&badge, WAIT).await,
        "the row shows the password badge"
    );
    let href = browser.eval(&format!("{badge}.href")).await;
    assert_eq!(href.as_str().unwrap(), asked.url);
    let (status, sentence) = answer_on_page(&mut browser, &asked.url, SECRET).await;
    assert_eq!(status, 200, "{sentence}");
    let _ = asked.answer.send(ElicitationAction::Accept);
    let result = write.await.unwrap();
    let value = ok(result.clone());
    assert!(
        value["output"]
            .as_str()
            .unwrap()
            .contains(&sha256_of_secret()),
        "{value}"
    );
    assert!(
        value["person"]
            .as_str()
            .unwrap()
            .contains("A person answered"),
        "{value}"
    );
    assert!(value.get("secretPrompt").is_none(), "{value}");
    assert!(!text(&result).contains(SECRET));
    // A batch that types into a secret prompt: the person declines this time.
    let batch = setup.background(
        "terminal_extra",
        json!({"tool": "terminal_batch", "args": {"sessionId": id, "actions": [
            {"type": "type", "text": "x\r"},
            {"type": "type", "text": "read -s -p 'PIN: ' p; echo got:$p\r"}
        ]}}),
    );
    let asked = setup.next_ask().await;
    assert!(
        asked.message.contains("bash asks: PIN:"),
        "{}",
        asked.message
    );
    let _ = asked.answer.send(ElicitationAction::Decline);
    let value = ok(batch.await.unwrap());
    assert_eq!(value["secretPrompt"], true, "{value}");
    assert!(
        value["person"].as_str().unwrap().contains("declined"),
        "{value}"
    );
    assert!(!setup.log().contains(SECRET));
    assert!(setup.files_holding(SECRET.as_bytes()).is_empty());
    browser.close().await;
}

/// A secret prompt met during `terminal_wait` goes to a person too; the wait goes on to its
/// pattern.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_wait_that_meets_a_secret_prompt_is_answered_by_a_person() {
    let Some(mut browser) = Browser::launch().await else {
        return;
    };
    let mut setup = Setup::start(&[]).await;
    let id = setup.session().await;
    ok(call(
        &setup.client,
        "terminal_write",
        json!({"sessionId": id, "returnOutput": "none",
               "data": "sleep 0.3; read -s -p 'Password: ' p; echo; printf '%s' \"$p\" | sha256sum\r"}),
    )
    .await);
    let wait = setup.background(
        "terminal_wait",
        json!({"sessionId": id, "pattern": "[0-9a-f]{64}", "timeout": 30000}),
    );
    let asked = setup.next_ask().await;
    let (status, sentence) = answer_on_page(&mut browser, &asked.url, SECRET).await;
    assert_eq!(status, 200, "{sentence}");
    let _ = asked.answer.send(ElicitationAction::Accept);
    let value = ok(wait.await.unwrap());
    assert_eq!(value["matched"], true, "{value}");
    assert!(
        value["matchedText"]
            .as_str()
            .unwrap()
            .contains(&sha256_of_secret()),
        "{value}"
    );
    assert!(
        value["person"]
            .as_str()
            .unwrap()
            .contains("A person answered"),
        "{value}"
    );
    assert!(!value.to_string().contains(SECRET));
    browser.close().await;
}

/// A secret prompt met during `terminal_watch` goes to a person; the watch goes on to its
/// trigger. A decline ends the watch with reason `secretPrompt` and the hint.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_watch_that_meets_a_secret_prompt_is_answered_by_a_person() {
    let Some(mut browser) = Browser::launch().await else {
        return;
    };
    let mut setup = Setup::start(&[]).await;
    let id = setup.session().await;
    let asks = "sleep 0.3; read -s -p 'Password: ' p; echo; printf '%s' \"$p\" | sha256sum\r";
    ok(call(
        &setup.client,
        "terminal_write",
        json!({"sessionId": id, "returnOutput": "none", "data": asks}),
    )
    .await);
    let watch = setup.background(
        "terminal_watch",
        json!({"sessionId": id, "timeout": 30000,
               "triggers": [{"id": "hash", "pattern": "[0-9a-f]{64}"}]}),
    );
    let asked = setup.next_ask().await;
    assert!(asked.message.contains("Password:"), "{}", asked.message);
    let (status, sentence) = answer_on_page(&mut browser, &asked.url, SECRET).await;
    assert_eq!(status, 200, "{sentence}");
    let _ = asked.answer.send(ElicitationAction::Accept);
    let value = ok(watch.await.unwrap());
    assert_eq!(value["reason"], "trigger", "{value}");
    assert!(
        value["matchedLine"]
            .as_str()
            .unwrap()
            .contains(&sha256_of_secret()),
        "{value}"
    );
    assert!(
        value["person"]
            .as_str()
            .unwrap()
            .contains("A person answered"),
        "{value}"
    );
    assert!(!value.to_string().contains(SECRET));
    // Declined: the watch ends at once, saying so; nothing was typed.
    ok(call(
        &setup.client,
        "terminal_write",
        json!({"sessionId": id, "returnOutput": "none", "data": "sleep 0.3; read -s -p 'PIN: ' p; echo got:$p\r"}),
    )
    .await);
    let watch = setup.background(
        "terminal_watch",
        json!({"sessionId": id, "timeout": 30000, "triggers": [{"id": "got", "pattern": "^got:"}]}),
    );
    let asked = setup.next_ask().await;
    assert!(asked.message.contains("PIN:"), "{}", asked.message);
    let _ = asked.answer.send(ElicitationAction::Decline);
    let value = ok(watch.await.unwrap());
    assert_eq!(value["reason"], "secretPrompt", "{value}");
    assert_eq!(value["secretPrompt"], true, "{value}");
    assert!(
        value["person"].as_str().unwrap().contains("declined"),
        "{value}"
    );
    assert!(
        value["hint"]
            .as_str()
            .unwrap()
            .contains("do not ask for the secret"),
        "{value}"
    );
    assert!(!got_past(&setup_screen(&setup, &id).await));
    assert!(!setup.log().contains(SECRET));
    browser.close().await;
}

/// A secret prompt met during a batch's `wait` goes to a person; the wait goes on to its
/// pattern and the batch completes. A decline fails that wait, and the batch's end does not
/// ask again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_batch_wait_that_meets_a_secret_prompt_is_answered_by_a_person() {
    let Some(mut browser) = Browser::launch().await else {
        return;
    };
    let mut setup = Setup::start(&[]).await;
    let id = setup.session().await;
    let asks = "read -s -p 'Password: ' p; echo; printf '%s' \"$p\" | sha256sum\r";
    let batch = setup.background(
        "terminal_extra",
        json!({"tool": "terminal_batch", "args": {"sessionId": id, "actions": [
            {"type": "type", "text": asks},
            {"type": "wait", "pattern": "[0-9a-f]{64}", "timeout": 30000},
            {"type": "type", "text": "echo after-the-wait\r"}
        ]}}),
    );
    let asked = setup.next_ask().await;
    assert!(asked.message.contains("Password:"), "{}", asked.message);
    let (status, sentence) = answer_on_page(&mut browser, &asked.url, SECRET).await;
    assert_eq!(status, 200, "{sentence}");
    let _ = asked.answer.send(ElicitationAction::Accept);
    let result = batch.await.unwrap();
    let value = ok(result.clone());
    assert_eq!(value["ok"], true, "{value}");
    assert_eq!(value["completed"], 3, "{value}");
    let screen = value["screen"]["text"].as_str().unwrap();
    assert!(screen.contains(&sha256_of_secret()), "{value}");
    assert!(
        value["person"]
            .as_str()
            .unwrap()
            .contains("A person answered"),
        "{value}"
    );
    assert!(!text(&result).contains(SECRET));
    // Declined during the wait: the wait fails, the rest is not sent, nobody is asked twice.
    let batch = setup.background(
        "terminal_extra",
        json!({"tool": "terminal_batch", "args": {"sessionId": id, "actions": [
            {"type": "type", "text": "read -s -p 'PIN: ' p; echo got:$p\r"},
            {"type": "wait", "ms": 20000},
            {"type": "type", "text": "never-typed\r"}
        ]}}),
    );
    let asked = setup.next_ask().await;
    assert!(asked.message.contains("PIN:"), "{}", asked.message);
    let _ = asked.answer.send(ElicitationAction::Decline);
    let value = ok(batch.await.unwrap());
    assert_eq!(value["ok"], false, "{value}");
    assert_eq!(value["failedAction"], 2, "{value}");
    assert!(
        value["error"].as_str().unwrap().contains("secret prompt"),
        "{value}"
    );
    assert_eq!(value["secretPrompt"], true, "{value}");
    assert!(
        value["person"].as_str().unwrap().contains("declined"),
        "{value}"
    );
    assert!(setup.asked.try_recv().is_err(), "asked once");
    assert!(!got_past(&setup_screen(&setup, &id).await));
    assert!(!setup.log().contains(SECRET));
    browser.close().await;
}

/// Logs the browser in to the page at `base` (`http://127.0.0.1:port`) with `token` and
/// opens session `id`; waits until the password field asks with `prompt`.
async fn page_field(browser: &mut Browser, base: &str, token: &str, id: &str, prompt: &str) {
    browser.navigate(&format!("{base}/#token={token}")).await;
    let row = format!("#sessions li[data-id=\"{id}\"]");
    assert!(
        browser
            .wait_for(&format!("document.querySelector('{row}')"), WAIT)
            .await,
        "the session is listed"
    );
    browser.click(&row).await;
    let asks = format!(
        "!document.getElementById('secret-field').hidden && document.querySelector('#secret-field .ask').textContent.includes({})",
        serde_json::to_string(prompt).unwrap()
    );
    assert!(
        browser.wait_for(&asks, WAIT).await,
        "the page shows the password field"
    );
}

/// Types `secret` into the page's password field and submits; the page's answer.
async fn submit_field(browser: &mut Browser, secret: &str) -> (u16, String) {
    browser
        .eval("document.querySelector('#secret-field .said').dataset.status = ''")
        .await;
    // The terminal takes the focus when its socket says hello: wait for it, then click.
    assert!(
        browser
            .wait_for(
                "window.termpilot.mode === 'live' && window.termpilot.screenText().includes('$')",
                WAIT
            )
            .await
    );
    browser.click("#secret-answer").await;
    browser
        .eval("document.getElementById('secret-answer').focus()")
        .await;
    browser.type_text(secret).await;
    assert_eq!(
        browser
            .eval("document.getElementById('secret-answer').value.length")
            .await,
        secret.len(),
        "the field holds what was typed"
    );
    browser.click("#secret-send").await;
    assert!(
        browser
            .wait_for(
                "document.querySelector('#secret-field .said').dataset.status !== ''",
                WAIT
            )
            .await,
        "the page answers"
    );
    let status = browser
        .eval("Number(document.querySelector('#secret-field .said').dataset.status)")
        .await
        .as_u64()
        .unwrap() as u16;
    let said = browser
        .eval("document.querySelector('#secret-field .said').textContent")
        .await;
    (status, said.as_str().unwrap().to_string())
}

/// The web page's own password field: a session waiting at a secret prompt shows it (no
/// call asked anyone: the client has no URL elicitation); what is typed reaches the
/// program, only while the same program waits at the same prompt, and shows nowhere.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_page_has_a_password_field_for_a_session_at_a_secret_prompt() {
    let Some(mut browser) = Browser::launch().await else {
        return;
    };
    let server = common::http::start().await;
    let agent = server.client(common::Era::Initialize).await;
    let id = agent
        .ok(
            "terminal_start",
            json!({"shell": "bash", "env": {"PS1": "$ ", "HOME": "/tmp"}}),
        )
        .await["sessionId"]
        .as_str()
        .unwrap()
        .to_string();
    let value = agent
        .ok(
            "terminal_exec",
            json!({"sessionId": id, "command": "read -s -p 'Password: ' p; echo; printf '%s' \"$p\" | sha256sum"}),
        )
        .await;
    assert_eq!(value["secretPrompt"], true, "{value}");
    let hint = value["hint"].as_str().unwrap();
    assert!(
        hint.contains(&server.url) && hint.contains("password field"),
        "{hint}"
    );
    page_field(
        &mut browser,
        &server.url,
        common::http::TOKEN,
        &id,
        "bash asks: Password:",
    )
    .await;
    // A submit for another prompt than the one waiting types nothing.
    let v = browser
        .eval(&format!(
            "fetch('/api/secret/{id}', {{method: 'POST', body: 'bash\\nOther: \\nwrong'}}).then(async r => [r.status, await r.text()])"
        ))
        .await;
    assert_eq!(v[0], 409, "{v}");
    assert!(v[1].as_str().unwrap().contains("nothing was typed"), "{v}");
    // A foreign Origin is refused before anything.
    let foreign = reqwest::Client::new()
        .post(format!("{}/api/secret/{id}", server.url))
        .header("Origin", "http://evil.example")
        .header("Authorization", format!("Bearer {}", common::http::TOKEN))
        .body(format!("bash\nPassword:\n{SECRET}"))
        .send()
        .await
        .unwrap();
    assert_eq!(foreign.status().as_u16(), 403);
    let (status, said) = submit_field(&mut browser, SECRET).await;
    assert_eq!(status, 200, "{said}");
    assert!(said.contains("Typed into the terminal"), "{said}");
    let waited = agent
        .ok(
            "terminal_wait",
            json!({"sessionId": id, "pattern": "[0-9a-f]{64}", "since": 0, "timeout": 10000}),
        )
        .await;
    assert!(
        waited["matchedText"]
            .as_str()
            .unwrap()
            .contains(&sha256_of_secret()),
        "{waited}"
    );
    // The field is gone with the prompt, emptied; the live terminal never showed the secret.
    assert!(
        browser
            .wait_for("document.getElementById('secret-field').hidden", WAIT)
            .await
    );
    assert_eq!(
        browser
            .eval("document.getElementById('secret-answer').value")
            .await,
        ""
    );
    assert!(
        browser
            .eval(&format!(
                "window.termpilot.waitText({}, 5000)",
                serde_json::to_string(&sha256_of_secret()).unwrap()
            ))
            .await
            .as_bool()
            .unwrap()
    );
    let screen = browser.eval("window.termpilot.screenText()").await;
    assert!(!screen.as_str().unwrap().contains(SECRET));
    let history = agent
        .ok("terminal_get_history", json!({"sessionId": id}))
        .await;
    assert!(!history.to_string().contains(SECRET));
    // No prompt waiting: a submit types nothing.
    let v = browser
        .eval(&format!(
            "fetch('/api/secret/{id}', {{method: 'POST', body: 'bash\\nPassword:\\nlate'}}).then(async r => [r.status, await r.text()])"
        ))
        .await;
    assert_eq!(v[0], 409, "{v}");
    agent.stop().await;
    browser.close().await;
}

/// A person who answers on the page's field while a call asked them through URL
/// elicitation answers that call: it goes on, saying so, and the elicitation completes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_page_field_answers_the_call_that_asked() {
    let Some(mut browser) = Browser::launch().await else {
        return;
    };
    let mut setup = Setup::start(&[]).await;
    let id = setup.session().await;
    let exec = setup.exec(
        &id,
        "read -s -p 'Password: ' p; echo; printf '%s' \"$p\" | sha256sum",
    );
    let asked = setup.next_ask().await;
    let base = format!("http://{}", authority(&asked.url));
    let port = authority(&asked.url).rsplit(':').next().unwrap();
    let token = std::fs::read_to_string(
        setup
            .dirs
            .path()
            .join(format!("run/termpilot/run/http-token-{port}")),
    )
    .expect("the listener's token file");
    page_field(
        &mut browser,
        &base,
        token.trim(),
        &id,
        "bash asks: Password:",
    )
    .await;
    let (status, said) = submit_field(&mut browser, SECRET).await;
    assert_eq!(status, 200, "{said}");
    let _ = asked.answer.send(ElicitationAction::Accept);
    let result = exec.await.unwrap();
    let value = ok(result.clone());
    assert!(
        value["output"]
            .as_str()
            .unwrap()
            .contains(&sha256_of_secret()),
        "{value}"
    );
    assert!(
        value["person"]
            .as_str()
            .unwrap()
            .contains("A person answered"),
        "{value}"
    );
    assert_eq!(setup.completions(1).await, vec![asked.id.clone()]);
    // The call's one-time link was the one used.
    let (status, _) = post_from(&asked.url, &base, "again").await;
    assert_eq!(status, 410);
    assert!(!text(&result).contains(SECRET));
    assert!(!setup.log().contains(SECRET));
    assert!(setup.files_holding(SECRET.as_bytes()).is_empty());
    browser.close().await;
}

/// The answered flow for `command`, checked whole: the hash in the output, the complete
/// notification, the replay and foreign Origin refused, the secret nowhere.
async fn answered(command: &str, program: &str, prompt: &str) {
    let Some(mut browser) = Browser::launch().await else {
        return;
    };
    let mut setup = Setup::start(&[]).await;
    let id = setup.session().await;
    let exec = setup.exec(&id, command);
    let asked = setup.next_ask().await;
    assert!(
        asked.message.contains(&format!("{program} asks: {prompt}")),
        "the message names the program and its prompt: {}",
        asked.message
    );
    assert!(asked.url.starts_with("http://127.0.0.1:"), "{}", asked.url);
    assert!(!asked.message.contains(SECRET));
    // A foreign page cannot submit (and does not use the link up).
    let (status, sentence) = post_from(&asked.url, "http://evil.example", "wrong").await;
    assert_eq!(status, 403, "{sentence}");
    let (status, sentence) = post_from(
        &asked.url,
        &format!("http://{}", authority(&asked.url)),
        "bad\nline",
    )
    .await;
    assert_eq!(status, 400, "{sentence}");
    let (status, sentence) = answer_on_page(&mut browser, &asked.url, SECRET).await;
    assert_eq!(status, 200, "{sentence}");
    assert!(sentence.contains("Typed into the terminal"), "{sentence}");
    let _ = asked.answer.send(ElicitationAction::Accept);
    let result = exec.await.unwrap();
    let value = ok(result.clone());
    let output = value["output"].as_str().unwrap();
    assert!(
        output.contains(&sha256_of_secret()),
        "the command got the secret: {value}"
    );
    assert_eq!(value["exitCode"], 0, "{value}");
    assert!(
        value["person"]
            .as_str()
            .unwrap()
            .contains("A person answered"),
        "{value}"
    );
    assert!(value.get("waitingForInput").is_none(), "{value}");
    assert_eq!(
        setup.completions(1).await,
        vec![asked.id.clone()],
        "notifications/elicitation/complete for this elicitation"
    );
    // Used once: a replay is refused with a sentence, nothing typed.
    let (status, sentence) = post_again(&mut browser, "again").await;
    assert_eq!(status, 410, "{sentence}");
    assert!(sentence.contains("already used"), "{sentence}");
    // The secret is nowhere: results, the screen, the transcript, the log, the files.
    let mut seen = vec![text(&result)];
    let screen = ok(call(
        &setup.client,
        "terminal_read",
        json!({"sessionId": id, "view": "screen"}),
    )
    .await);
    seen.push(screen.to_string());
    let history = ok(call(
        &setup.client,
        "terminal_get_history",
        json!({"sessionId": id}),
    )
    .await);
    seen.push(history.to_string());
    let (stopped, transcript) = setup.stop_with_transcript(&id).await;
    seen.push(stopped.to_string());
    seen.push(transcript);
    let log = setup.log();
    assert!(
        log.contains("elicitation/create"),
        "the log is at trace with the wire"
    );
    // The one-time link's token is redacted there.
    let token = asked.url.rsplit('/').next().unwrap();
    let leaks: Vec<&str> = log.lines().filter(|l| l.contains(token)).collect();
    assert!(
        leaks.is_empty(),
        "the link's token is in the log: {leaks:#?}"
    );
    assert!(log.contains("/secret/[redacted]"), "the redacted link");
    seen.push(log);
    for (i, s) in seen.iter().enumerate() {
        assert!(!s.contains(SECRET), "the secret leaked into item {i}");
    }
    assert!(
        setup.files_holding(SECRET.as_bytes()).is_empty(),
        "the secret is in {:?}",
        setup.files_holding(SECRET.as_bytes())
    );
    browser.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn read_s_is_answered_by_a_person_on_the_page() {
    answered(
        "read -s -p 'Password: ' p; echo; printf '%s' \"$p\" | sha256sum",
        "bash",
        "Password:",
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn python_getpass_is_answered_by_a_person_on_the_page() {
    if !common::procs::has("python3") {
        common::procs::skip("python3 is not installed");
        return;
    }
    answered(
        "python3 -c \"import getpass, hashlib; print(hashlib.sha256(getpass.getpass('Vault key: ').encode()).hexdigest())\"",
        "python3",
        "Vault key:",
    )
    .await;
}

/// A local user with a password and a sudoers entry, removed when dropped (the test
/// passing or not).
struct SudoUser {
    name: String,
}

impl SudoUser {
    /// `None` (skipped, failing under CI) without root, `useradd` or `sudo`.
    fn create(password: &str) -> Option<SudoUser> {
        // SAFETY: geteuid has no preconditions.
        if unsafe { libc::geteuid() } != 0 {
            common::procs::skip("creating a user with a sudoers entry needs root");
            return None;
        }
        if !common::procs::has("useradd")
            || !common::procs::has("sudo")
            || !common::procs::has("setpriv")
        {
            return None;
        }
        let user = SudoUser {
            name: format!("tpsudo{}", std::process::id()),
        };
        // Other test processes add and remove users too (and hold the passwd lock while they
        // do): a refused useradd or chpasswd is tried again, a bounded number of times.
        let mut made = None;
        for _ in 0..50 {
            let out = std::process::Command::new("useradd")
                .args(["--no-create-home", "--user-group", "--shell", "/bin/sh"])
                .arg(&user.name)
                .output()
                .expect("run useradd");
            if out.status.success() {
                made = None;
                break;
            }
            made = Some(out);
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
        assert!(made.is_none(), "useradd: {made:?}");
        let set_password = || {
            let mut chpasswd = std::process::Command::new("chpasswd")
                .stdin(Stdio::piped())
                .stderr(Stdio::null())
                .spawn()
                .expect("run chpasswd");
            use std::io::Write;
            chpasswd
                .stdin
                .take()
                .unwrap()
                .write_all(format!("{}:{password}\n", user.name).as_bytes())
                .unwrap();
            chpasswd.wait().unwrap().success()
        };
        let set = (0..50).any(|_| {
            set_password() || {
                std::thread::sleep(std::time::Duration::from_millis(100));
                false
            }
        });
        assert!(set, "chpasswd");
        std::fs::write(user.sudoers(), format!("{} ALL=(ALL) ALL\n", user.name)).unwrap();
        std::fs::set_permissions(
            user.sudoers(),
            <std::fs::Permissions as std::os::unix::fs::PermissionsExt>::from_mode(0o440),
        )
        .unwrap();
        Some(user)
    }

    fn sudoers(&self) -> PathBuf {
        PathBuf::from(format!("/etc/sudoers.d/{}", self.name))
    }
}

impl Drop for SudoUser {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(self.sudoers());
        let _ = std::process::Command::new("userdel")
            .arg(&self.name)
            .output();
    }
}

/// `sudo` as a user with a password: the person answers on the one-time page and the
/// command runs as root; the password is nowhere (results, transcript, trace log, files).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sudo_is_answered_by_a_person_on_the_page() {
    let Some(user) = SudoUser::create(SECRET) else {
        return;
    };
    let Some(mut browser) = Browser::launch().await else {
        return;
    };
    let mut setup = Setup::start(&[]).await;
    let started = ok(call(
        &setup.client,
        "terminal_start",
        json!({"shell": "bash", "cwd": "/tmp", "env": {"PS1": "$ ", "HOME": "/tmp"}}),
    )
    .await);
    let id = started["sessionId"].as_str().unwrap().to_string();
    // The user's own sudo, its cached credentials dropped (-k): it asks for the password.
    let command = format!(
        "setpriv --reuid={0} --regid={0} --init-groups sudo -k id -u",
        user.name
    );
    let exec = setup.exec(&id, &command);
    let asked = setup.next_ask().await;
    assert!(
        asked
            .message
            .contains(&format!("sudo asks: [sudo] password for {}:", user.name)),
        "{}",
        asked.message
    );
    let (status, sentence) = answer_on_page(&mut browser, &asked.url, SECRET).await;
    assert_eq!(status, 200, "{sentence}");
    let _ = asked.answer.send(ElicitationAction::Accept);
    let result = exec.await.unwrap();
    let value = ok(result.clone());
    let mut seen = vec![text(&result)];
    let mut output = value["output"].as_str().unwrap().to_string();
    // Debian's sudo runs the command on a pty of its own (`use_pty`) and polls this terminal
    // to relay keys meanwhile: when `id` is slow to start, the relay looks like a program
    // waiting for input, and the reply says so. The agent then does what the reply's hint
    // says: it waits for the end, and reads the status.
    if value["exitCode"].is_null() && value["waitingForInput"] == true {
        let waited = ok(call(
            &setup.client,
            "terminal_wait",
            json!({"sessionId": id, "until": "exit", "timeout": 20000}),
        )
        .await);
        assert_eq!(waited["reason"], "exit", "{waited}");
        output.push('\n');
        output += waited["output"].as_str().unwrap();
        let status = ok(call(
            &setup.client,
            "terminal_exec",
            json!({"sessionId": id, "command": "echo status=$?"}),
        )
        .await);
        assert!(
            status["output"].as_str().unwrap().contains("status=0"),
            "{status}"
        );
        seen.push(waited.to_string());
    } else {
        assert_eq!(value["exitCode"], 0, "{value}");
    }
    assert!(
        output.lines().any(|l| l.trim() == "0"),
        "sudo ran id as root: {value} {output:?}"
    );
    assert!(
        value["person"]
            .as_str()
            .unwrap()
            .contains("A person answered"),
        "{value}"
    );
    let (stopped, transcript) = setup.stop_with_transcript(&id).await;
    seen.push(stopped.to_string());
    seen.push(transcript);
    seen.push(setup.log());
    for (i, s) in seen.iter().enumerate() {
        assert!(!s.contains(SECRET), "the password leaked into item {i}");
    }
    assert!(setup.files_holding(SECRET.as_bytes()).is_empty());
    browser.close().await;
    drop(user);
}

/// Through a remote termpilot (sshd on loopback, this binary on the "target"): the remote
/// detects the prompt, this server asks its own client with a URL of its OWN one-time page,
/// and what the person types there goes over the link to the remote, which types it. A
/// decline goes back as one. The secret is in no result, local log or file on either side.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_secret_prompt_on_a_remote_termpilot_is_answered_on_the_local_page() {
    let remote_state = tempfile::tempdir().unwrap();
    let state = remote_state.path().to_str().unwrap();
    let Some(sshd) = common::sshd::Sshd::start_with(&[("TERMPILOT_STATE_DIR", state)]) else {
        return;
    };
    let Some(mut browser) = Browser::launch().await else {
        return;
    };
    let mut setup = Setup::start_args(
        &[
            "--ssh-config",
            sshd.config_arg(),
            "--remote-bin",
            common::BIN,
        ],
        &[],
    )
    .await;
    let started = ok(call(
        &setup.client,
        "terminal_start",
        json!({"host": "alpha", "shell": "bash", "env": {"PS1": "$ "}}),
    )
    .await);
    assert_eq!(started["via"], "termpilot", "{started}");
    let id = started["sessionId"].as_str().unwrap().to_string();
    let exec = setup.exec(
        &id,
        "read -s -p 'Password: ' p; echo; printf '%s' \"$p\" | sha256sum",
    );
    let asked = setup.next_ask().await;
    assert!(
        asked.message.contains("bash asks: Password:") && asked.message.contains(&id),
        "the local session is named: {}",
        asked.message
    );
    // The page is this server's own (its listener's token file is in the local runtime dir).
    let port = authority(&asked.url).rsplit(':').next().unwrap();
    assert!(
        setup
            .dirs
            .path()
            .join(format!("run/termpilot/run/http-token-{port}"))
            .exists(),
        "{} is not the local server's page",
        asked.url
    );
    let (status, sentence) = answer_on_page(&mut browser, &asked.url, SECRET).await;
    assert_eq!(status, 200, "{sentence}");
    assert!(sentence.contains("Typed into the terminal"), "{sentence}");
    let _ = asked.answer.send(ElicitationAction::Accept);
    let result = exec.await.unwrap();
    let value = ok(result.clone());
    assert!(
        value["output"]
            .as_str()
            .unwrap()
            .contains(&sha256_of_secret()),
        "the remote command got the secret: {value}"
    );
    assert_eq!(value["via"], "termpilot", "{value}");
    assert!(
        value["person"]
            .as_str()
            .unwrap()
            .contains("A person answered"),
        "{value}"
    );
    assert_eq!(setup.completions(1).await, vec![asked.id.clone()]);
    // A decline goes back to the remote: nothing typed, the result says so.
    let exec = setup.exec(&id, "read -s -p 'PIN: ' p; echo got:$p");
    let asked = setup.next_ask().await;
    assert!(asked.message.contains("PIN:"), "{}", asked.message);
    let _ = asked.answer.send(ElicitationAction::Decline);
    let declined = exec.await.unwrap();
    let value = ok(declined.clone());
    assert_eq!(value["secretPrompt"], true, "{value}");
    assert!(
        value["person"].as_str().unwrap().contains("declined"),
        "{value}"
    );
    // The remote's prompt goes away before anyone answers: the call returns saying so, and
    // the local page's link ends with it.
    ok(call(
        &setup.client,
        "terminal_send_key",
        json!({"sessionId": id, "key": "Ctrl+C"}),
    )
    .await);
    let exec = setup.exec(&id, "read -s -t 2 -p 'Token: ' p || echo timed-out");
    let asked = setup.next_ask().await;
    assert!(asked.message.contains("Token:"), "{}", asked.message);
    let value = ok(exec.await.unwrap());
    assert!(
        value["person"].as_str().unwrap().contains("went away"),
        "{value}"
    );
    let (status, sentence) = post_from(
        &asked.url,
        &format!("http://{}", authority(&asked.url)),
        SECRET,
    )
    .await;
    assert_eq!(status, 410, "{sentence}");
    let _ = asked.answer.send(ElicitationAction::Accept);
    // Nowhere: results, the local log (the remote's stderr is logged there too), files on
    // both sides; not even hex-encoded as it crossed the link.
    let hex: String = SECRET.bytes().map(|b| format!("{b:02x}")).collect();
    let log = setup.log();
    for (i, s) in [text(&result), text(&declined), log.clone()]
        .iter()
        .enumerate()
    {
        assert!(
            !s.contains(SECRET) && !s.contains(&hex),
            "leaked into item {i}"
        );
    }
    assert!(setup.files_holding(SECRET.as_bytes()).is_empty());
    assert!(setup.files_holding(hex.as_bytes()).is_empty());
    let mut remote_files = Vec::new();
    walk(remote_state.path(), &mut |p| {
        if std::fs::read(p).is_ok_and(|b| b.windows(SECRET.len()).any(|w| w == SECRET.as_bytes())) {
            remote_files.push(p.to_path_buf());
        }
    });
    assert!(remote_files.is_empty(), "{remote_files:?}");
    ok(call(&setup.client, "terminal_stop", json!({"sessionId": id})).await);
    browser.close().await;
}

/// Runs `read -s` and lets the client answer `action` without opening the page.
async fn refused(action: ElicitationAction, said: &str) {
    let mut setup = Setup::start(&[]).await;
    let id = setup.session().await;
    let exec = setup.exec(&id, "read -s -p 'Password: ' p; echo got:$p");
    let asked = setup.next_ask().await;
    let _ = asked.answer.send(action);
    let value = ok(exec.await.unwrap());
    assert_eq!(value["waitingForInput"], true, "{value}");
    assert_eq!(value["secretPrompt"], true, "{value}");
    assert!(value["person"].as_str().unwrap().contains(said), "{value}");
    assert!(
        value["hint"]
            .as_str()
            .unwrap()
            .contains("do not ask for the secret"),
        "{value}"
    );
    // Nothing was typed: the link is over, the program still waits.
    let (status, sentence) = post_from(
        &asked.url,
        &format!("http://{}", authority(&asked.url)),
        SECRET,
    )
    .await;
    assert_eq!(status, 410, "{sentence}");
    assert!(sentence.contains("nothing was typed"), "{sentence}");
    let screen = setup_screen(&setup, &id).await;
    assert!(!got_past(&screen), "{screen}");
    assert!(setup.completed.lock().unwrap().is_empty());
}

async fn setup_screen(setup: &Setup, id: &str) -> String {
    ok(call(
        &setup.client,
        "terminal_read",
        json!({"sessionId": id, "view": "screen"}),
    )
    .await)["text"]
        .as_str()
        .unwrap()
        .to_string()
}

/// Whether the command printed its `got:` line (it ran past the prompt).
fn got_past(screen: &str) -> bool {
    screen.lines().any(|l| l.starts_with("got:"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_person_who_declines_leaves_the_prompt_waiting() {
    refused(ElicitationAction::Decline, "declined").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancelled_question_types_nothing() {
    refused(ElicitationAction::Cancel, "dismissed").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_expired_link_types_nothing() {
    let mut setup = Setup::start(&[("TERMPILOT_SECRET_LINK_TTL_MS", "400")]).await;
    let id = setup.session().await;
    let exec = setup.exec(&id, "read -s -p 'Password: ' p; echo got:$p");
    let asked = setup.next_ask().await;
    // The person is slow: the link expires, the call returns.
    let value = ok(exec.await.unwrap());
    assert_eq!(value["secretPrompt"], true, "{value}");
    assert!(
        value["person"].as_str().unwrap().contains("expired"),
        "{value}"
    );
    let (status, sentence) = post_from(
        &asked.url,
        &format!("http://{}", authority(&asked.url)),
        SECRET,
    )
    .await;
    assert_eq!(status, 410, "{sentence}");
    assert!(sentence.contains("expired"), "{sentence}");
    let _ = asked.answer.send(ElicitationAction::Accept);
    let screen = setup_screen(&setup, &id).await;
    assert!(!got_past(&screen), "{screen}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_prompt_that_goes_away_before_the_submit_gets_nothing() {
    let mut setup = Setup::start(&[]).await;
    let id = setup.session().await;
    let exec = setup.exec(
        &id,
        "read -s -t 2 -p 'Password: ' p || echo timed-out; read -p 'Name: ' q; echo got:$p:$q",
    );
    let asked = setup.next_ask().await;
    // The prompt times out: the call goes on to the next (echoed) prompt.
    let value = ok(exec.await.unwrap());
    assert_eq!(value["waitingForInput"], true, "{value}");
    assert!(value.get("secretPrompt").is_none(), "{value}");
    assert!(
        value["prompt"].as_str().unwrap().contains("Name:"),
        "{value}"
    );
    assert!(
        value["person"].as_str().unwrap().contains("went away"),
        "{value}"
    );
    let (status, sentence) = post_from(
        &asked.url,
        &format!("http://{}", authority(&asked.url)),
        SECRET,
    )
    .await;
    assert_eq!(status, 410, "{sentence}");
    let _ = asked.answer.send(ElicitationAction::Accept);
    let screen = setup_screen(&setup, &id).await;
    assert!(!screen.contains(SECRET) && !got_past(&screen), "{screen}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_without_url_elicitation_gets_secret_prompt_and_a_hint() {
    let server = common::start().await;
    let started = server
        .ok(
            "terminal_start",
            json!({"shell": "bash", "env": {"PS1": "$ "}}),
        )
        .await;
    let id = started["sessionId"].as_str().unwrap();
    let value = server
        .ok(
            "terminal_exec",
            json!({"sessionId": id, "command": "read -s -p 'Password: ' p; echo got:$p"}),
        )
        .await;
    assert_eq!(value["waitingForInput"], true, "{value}");
    assert_eq!(value["secretPrompt"], true, "{value}");
    assert!(
        value["prompt"].as_str().unwrap().contains("Password:"),
        "{value}"
    );
    let hint = value["hint"].as_str().unwrap();
    assert!(
        hint.contains("do not ask for the secret in the chat"),
        "{hint}"
    );
    assert!(
        value["person"]
            .as_str()
            .unwrap()
            .contains("does not support URL elicitation"),
        "{value}"
    );
    // An echoed prompt is not secret.
    server
        .ok(
            "terminal_send_key",
            json!({"sessionId": id, "key": "Ctrl+C"}),
        )
        .await;
    let value = server
        .ok(
            "terminal_exec",
            json!({"sessionId": id, "command": "read -p 'Name: ' q"}),
        )
        .await;
    assert_eq!(value["waitingForInput"], true, "{value}");
    assert!(value.get("secretPrompt").is_none(), "{value}");
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ask_person_off_asks_nobody() {
    let mut setup = Setup::start_args(&["--ask-person", "off"], &[]).await;
    let id = setup.session().await;
    let value = ok(setup
        .exec(&id, "read -s -p 'Password: ' p; echo got:$p")
        .await
        .unwrap());
    assert_eq!(value["waitingForInput"], true, "{value}");
    // Off is the behaviour from before: no secret fields, nobody asked.
    assert!(value.get("secretPrompt").is_none(), "{value}");
    assert!(value.get("person").is_none(), "{value}");
    assert!(setup.asked.try_recv().is_err(), "nobody was asked");
}

/// A `--compat` preset keeps its seed's behaviour (nobody asked) unless `--ask-person` is
/// given.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn presets_ask_nobody_unless_told_to() {
    for (args, asks) in [
        (&["--compat", "smart-terminal"][..], false),
        (
            &["--compat", "smart-terminal", "--ask-person", "secrets"][..],
            true,
        ),
    ] {
        let mut setup = Setup::start_args(args, &[]).await;
        let started = ok(call(&setup.client, "terminal_start", json!({"shell": "bash"})).await);
        let id = started["sessionId"].as_str().unwrap().to_string();
        let exec = setup.exec(&id, "read -s -p 'Password: ' p; echo got:$p");
        if asks {
            let asked = setup.next_ask().await;
            assert!(asked.message.contains("Password:"), "{}", asked.message);
            let _ = asked.answer.send(ElicitationAction::Decline);
        }
        let result = exec.await.unwrap();
        assert_ne!(result.is_error, Some(true), "{}", text(&result));
        assert!(
            setup.asked.try_recv().is_err(),
            "{args:?}: asked once at most"
        );
        let said = text(&result);
        assert_eq!(said.contains("secretPrompt"), asks, "{args:?}: {said}");
    }
}

/// While the person takes their time, the call reports progress (when the client asked for
/// it), so a client that resets its timeout on progress keeps waiting.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_wait_for_a_person_reports_progress() {
    let mut setup = Setup::start(&[]).await;
    let id = setup.session().await;
    let peer = setup.client.peer().clone();
    let mut params = CallToolRequestParams::new("terminal_exec").with_arguments(object(json!({
        "sessionId": id, "command": "read -s -p 'Password: ' p; echo got:$p"
    })));
    let mut meta = rmcp::model::RequestMetaObject::default();
    meta.set_progress_token(rmcp::model::ProgressToken(
        rmcp::model::NumberOrString::Number(7),
    ));
    params.meta = Some(meta);
    let exec = tokio::spawn(async move { peer.call_tool(params).await.unwrap() });
    let asked = setup.next_ask().await;
    // Progress arrives while nobody has answered yet.
    let mut reported = false;
    while let Ok(Some(message)) = tokio::time::timeout(WAIT, setup.progress.recv()).await {
        if setup.asked.try_recv().is_err() && message.contains("Password:") {
            reported = true;
            break;
        }
    }
    assert!(reported, "progress while the person is asked");
    let _ = asked.answer.send(ElicitationAction::Cancel);
    let value = ok(tokio::time::timeout(WAIT, exec).await.unwrap().unwrap());
    assert_eq!(value["secretPrompt"], true, "{value}");
}
