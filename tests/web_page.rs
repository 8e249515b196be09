//! The web page on real screens (issue 37), in headless Chromium against the real binary:
//! the terminal scaled to fit its pane and every control on screen at 1280×800, 1024×768 and
//! 390×844 (the list folding away on the phone); the page's small bugs (no dead Take control,
//! a pasted token URL logs in, the login page as dark as the app, a favicon, the open session's
//! busy badge from its live bytes); and an agent's output reaching the page every time, the
//! session opened afresh before each of 50 commands. An `#[ignore]`d test writes screenshots at
//! the three sizes for a person to look at.

mod common;

use std::time::{Duration, Instant};

use common::cdp::Browser;
use common::http::{self, HttpServer, TOKEN};
use common::{Era, Server};
use serde_json::{Value, json};

const WAIT: Duration = Duration::from_secs(20);

/// The screens the page must fit: (width, height, a phone's).
const SCREENS: [(u32, u32, bool); 3] = [(1280, 800, false), (1024, 768, false), (390, 844, true)];

/// A bash session at the default size (120×30), with a plain prompt.
async fn start_session(agent: &Server, name: &str) -> String {
    agent
        .ok(
            "terminal_start",
            json!({"shell": "bash", "name": name, "env": {"PS1": "$ ", "HOME": "/tmp"}}),
        )
        .await["sessionId"]
        .as_str()
        .unwrap()
        .to_string()
}

fn row(id: &str) -> String {
    format!("#sessions li[data-id=\"{id}\"]")
}

/// Logs in with the token in the URL and waits until `id` is listed.
async fn log_in(browser: &mut Browser, server: &HttpServer, id: &str) {
    browser
        .navigate(&format!("{}/#token={TOKEN}", server.url))
        .await;
    let listed = format!("document.querySelector('{}')", row(id));
    assert!(
        browser.wait_for(&listed, WAIT).await,
        "the session is listed"
    );
}

/// Opens `id` in the page and waits for its prompt.
async fn open(browser: &mut Browser, id: &str) {
    browser.click(&row(id)).await;
    assert!(
        browser
            .wait_for(
                &format!("window.termpilot.mode === 'live' && window.termpilot.screenText().includes('$') && document.querySelector('{}.open')", row(id)),
                WAIT
            )
            .await,
        "the session's screen is shown"
    );
}

/// The page's geometry: the viewport, the terminal's box and font, the pane, and for each
/// control whether it is visible, inside the viewport and the topmost element at its centre.
const GEOMETRY: &str = r#"(() => {
    const vw = innerWidth, vh = innerHeight;
    const box = (el) => { const r = el.getBoundingClientRect(); return {left: r.left, top: r.top, right: r.right, bottom: r.bottom, width: r.width, height: r.height}; };
    const control = (sel) => {
        const el = document.querySelector(sel);
        if (!el || el.getClientRects().length === 0) return {shown: false};
        const r = box(el);
        const inside = r.left >= 0 && r.top >= 0 && r.right <= vw && r.bottom <= vh;
        const hit = document.elementFromPoint((r.left + r.right) / 2, (r.top + r.bottom) / 2);
        return {shown: true, inside, reachable: !!hit && (hit === el || el.contains(hit)), box: r};
    };
    const pane = document.getElementById('screen');
    const style = getComputedStyle(pane);
    const paneWidth = pane.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight);
    const paneHeight = pane.clientHeight - parseFloat(style.paddingTop) - parseFloat(style.paddingBottom);
    const term = box(document.getElementById('term'));
    const view = window.termpilot.term;
    return {
        vw, vh, term, paneWidth, paneHeight,
        font: view ? view.options.fontSize : null,
        termInside: term.width > 0 && term.left >= 0 && term.right <= vw && term.bottom <= vh,
        fills: Math.max(term.width / paneWidth, term.height / paneHeight),
        take: control('#take'), menu: control('#menu'), list: control('#list'),
    };
})()"#;

/// Whether the geometry says the page fits: the whole terminal inside the viewport and using
/// most of its pane, Take control and the list button inside and reachable.
fn fits(g: &Value) -> bool {
    let ok = |c: &Value| c["shown"] == true && c["inside"] == true && c["reachable"] == true;
    g["termInside"] == true
        && g["fills"].as_f64().unwrap_or(0.0) >= 0.75
        && ok(&g["take"])
        && ok(&g["menu"])
}

/// Sets the screen size and waits (bounded) until the page fits it; the geometry.
async fn at_size(browser: &mut Browser, (width, height, mobile): (u32, u32, bool)) -> Value {
    browser.set_viewport(width, height, mobile).await;
    let condition = format!(
        "(() => {{ const g = {GEOMETRY}; return innerWidth === {width} && g.termInside && g.fills >= 0.75 && g.take.inside && g.take.reachable && g.menu.inside && g.menu.reachable; }})()"
    );
    browser.wait_for(&condition, WAIT).await;
    browser.eval(GEOMETRY).await
}

#[tokio::test]
async fn the_terminal_and_its_controls_fit_laptop_tablet_and_phone_screens() {
    let server = http::start().await;
    let Some(mut browser) = Browser::launch().await else {
        return;
    };
    let agent = server.client(Era::Initialize).await;
    let id = start_session(&agent, "wide").await;
    log_in(&mut browser, &server, &id).await;
    open(&mut browser, &id).await;
    // A line as wide as the terminal: its last character must be on screen too.
    let ran = agent
        .ok(
            "terminal_exec",
            json!({"sessionId": id, "timeout": 20000,
                   "command": "printf '<%0118d>\\n' 0 | tr 0 ="}),
        )
        .await;
    assert_eq!(ran["output"].as_str().unwrap().len(), 120, "{ran}");

    for screen in SCREENS {
        let g = at_size(&mut browser, screen).await;
        assert!(fits(&g), "the page does not fit {screen:?}: {g:#}");
        let font = g["font"].as_f64().unwrap();
        assert!((4.0..=14.0).contains(&font), "{g:#}");
        eprintln!(
            "{}×{}: terminal {:.0}×{:.0} px at font {font} px in a {:.0}×{:.0} pane",
            screen.0,
            screen.1,
            g["term"]["width"].as_f64().unwrap(),
            g["term"]["height"].as_f64().unwrap(),
            g["paneWidth"].as_f64().unwrap(),
            g["paneHeight"].as_f64().unwrap()
        );
        if screen.2 {
            // The phone: the list gave the terminal its room; the Sessions button brings it
            // back over the terminal, and choosing a session folds it away again.
            assert_eq!(g["list"]["shown"], false, "{g:#}");
            browser.click("#menu").await;
            let g = browser.eval(GEOMETRY).await;
            assert!(
                g["list"]["shown"] == true && g["list"]["inside"] == true,
                "{g:#}"
            );
            let first = format!("document.querySelector('{} .id')", row(&id));
            let reachable = browser
                .eval(&format!(
                    "(() => {{ const r = {first}.getBoundingClientRect(); const hit = document.elementFromPoint(r.left + 2, r.top + r.height / 2); return !!hit && !!hit.closest('{}'); }})()",
                    row(&id)
                ))
                .await;
            assert_eq!(reachable, json!(true), "the listed session can be tapped");
            open(&mut browser, &id).await;
            let g = browser.eval(GEOMETRY).await;
            assert!(g["list"]["shown"] == false && fits(&g), "{g:#}");
        } else {
            assert!(
                g["list"]["shown"] == true && g["list"]["inside"] == true,
                "the list stays beside the terminal: {g:#}"
            );
        }
        // The wide line's last character is on screen, in the terminal's last column.
        assert!(
            browser
                .eval("window.termpilot.screenText().includes('=>')")
                .await
                == json!(true)
        );
    }

    // Take control works from the phone.
    browser.click("#take").await;
    assert!(browser.wait_for("window.termpilot.controlling", WAIT).await);
    let g = browser.eval(GEOMETRY).await;
    let release = browser
        .eval("(() => { const r = document.getElementById('release').getBoundingClientRect(); return r.width > 0 && r.right <= innerWidth && r.bottom <= innerHeight; })()")
        .await;
    assert_eq!(release, json!(true), "Release is on screen: {g:#}");
    browser.close().await;
    agent.stop().await;
    server.terminate().await;
}

/// Where the `#[ignore]`d screenshot test writes its PNGs.
fn screenshots() -> std::path::PathBuf {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("web-screens");
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Run by hand (`scripts/test --test web_page -- --run-ignored only`, or `cargo nextest run
/// --test web_page --run-ignored only`), then look at the PNGs in the folder it prints.
#[tokio::test]
#[ignore = "writes screenshots for a person to look at"]
async fn screenshots_of_the_page_at_each_screen_size() {
    let server = http::start().await;
    let Some(mut browser) = Browser::launch().await else {
        return;
    };
    let agent = server.client(Era::Initialize).await;
    let id = start_session(&agent, "demo").await;
    agent
        .ok(
            "terminal_exec",
            json!({"sessionId": id, "timeout": 20000,
                   "command": "printf '\\033[1;32mok\\033[0m %s\\n' one two three; printf '<%0118d>\\n' 0 | tr 0 ="}),
        )
        .await;
    log_in(&mut browser, &server, &id).await;
    open(&mut browser, &id).await;
    let dir = screenshots();
    for screen in SCREENS {
        let g = at_size(&mut browser, screen).await;
        assert!(fits(&g), "{g:#}");
        let png = browser.screenshot().await;
        let path = dir.join(format!("{}x{}.png", screen.0, screen.1));
        std::fs::write(&path, png).unwrap();
        if screen.2 {
            browser.click("#menu").await;
            let png = browser.screenshot().await;
            std::fs::write(dir.join(format!("{}x{}-list.png", screen.0, screen.1)), png).unwrap();
            open(&mut browser, &id).await;
        }
    }
    eprintln!("screenshots: {}", dir.display());
    browser.close().await;
    agent.stop().await;
    server.terminate().await;
}

#[tokio::test]
async fn the_login_page_is_dark_a_pasted_token_url_logs_in_and_nothing_dead_shows() {
    let server = http::start().await;
    let Some(mut browser) = Browser::launch().await else {
        return;
    };
    // The login page is as dark as the app, even where the system prefers light.
    browser.set_color_scheme("light").await;
    browser.navigate(&format!("{}/", server.url)).await;
    assert!(
        browser
            .wait_for("document.getElementById('login')", WAIT)
            .await
    );
    let background = browser
        .eval("getComputedStyle(document.body).backgroundColor")
        .await;
    assert_eq!(background, json!("rgb(22, 24, 29)"), "the app's --bg");
    // Its icon is served without the cookie.
    let icon = browser
        .eval("fetch('/favicon.ico').then(r => r.status + ' ' + r.headers.get('content-type'))")
        .await;
    assert_eq!(icon, json!("200 image/x-icon"));

    // A token URL pasted into the open login page (only the fragment changes: no reload).
    browser
        .navigate(&format!("{}/#token={TOKEN}", server.url))
        .await;
    assert!(
        browser
            .wait_for(
                "document.getElementById('sessions') && document.readyState === 'complete'",
                WAIT
            )
            .await,
        "the pasted URL logged in"
    );
    assert_eq!(browser.eval("location.hash").await, json!(""));
    assert_eq!(
        browser
            .eval("getComputedStyle(document.body).backgroundColor")
            .await,
        background,
        "the app and the login page look alike"
    );
    // No session chosen: no view, no Take control button.
    let shown = browser
        .eval("[document.getElementById('view'), document.getElementById('take')].map(e => e.getClientRects().length > 0)")
        .await;
    assert_eq!(shown, json!([false, false]), "nothing dead shows");
    browser.close().await;
    server.terminate().await;
}

#[tokio::test]
async fn the_favicon_needs_no_login() {
    let server = http::start().await;
    let response = reqwest::get(format!("{}/favicon.ico", server.url))
        .await
        .expect("the server answers");
    assert_eq!(response.status().as_u16(), 200);
    assert_eq!(response.headers()["content-type"], "image/x-icon");
    let body = response.bytes().await.unwrap();
    assert_eq!(&body[..4], b"\0\0\x01\0", "an ICO file");
    server.terminate().await;
}

/// The open session's badge, as the page shows it, recorded at every change of the list.
const BADGES: &str = r#"(() => {
    window.badges = [];
    const note = () => {
        const badge = document.querySelector('#sessions li.open .badge');
        const now = badge ? badge.textContent : '';
        if (window.badges[window.badges.length - 1] !== now) window.badges.push(now);
    };
    new MutationObserver(note).observe(document.getElementById('sessions'), {subtree: true, childList: true, characterData: true, attributes: true});
    note();
    return true;
})()"#;

#[tokio::test]
async fn the_open_sessions_busy_badge_follows_its_live_bytes() {
    let server = http::start().await;
    let Some(mut browser) = Browser::launch().await else {
        return;
    };
    let agent = server.client(Era::Initialize).await;
    let id = start_session(&agent, "badge").await;
    log_in(&mut browser, &server, &id).await;
    open(&mut browser, &id).await;
    assert!(
        browser
            .wait_for(
                "document.querySelector('#sessions li.open .badge').textContent === 'idle'",
                WAIT
            )
            .await
    );
    browser.eval(BADGES).await;
    // Three commands of 0.2 s: the list, re-sent once a second, sees at most some of them
    // busy; the page sees each start and end in the bytes it is shown.
    for i in 0..3 {
        let ran = agent
            .ok(
                "terminal_exec",
                json!({"sessionId": id, "command": format!("sleep 0.2; echo slept-{i}"), "timeout": 20000}),
            )
            .await;
        assert_eq!(ran["output"], format!("slept-{i}"), "{ran}");
        assert!(
            browser
                .wait_for(
                    &format!("window.termpilot.screenText().includes('\\nslept-{i}') && document.querySelector('#sessions li.open .badge').textContent === 'idle'"),
                    WAIT
                )
                .await
        );
    }
    let badges = browser.eval("window.badges").await;
    let busy = badges
        .as_array()
        .unwrap()
        .iter()
        .filter(|b| *b == "busy")
        .count();
    assert_eq!(busy, 3, "each command showed busy, then idle: {badges}");
    browser.close().await;
    agent.stop().await;
    server.terminate().await;
}

/// Issue 37 item 6: with the session (re)opened in the page, an agent's next command's output
/// must appear, every time. Even rounds wait for the first screen before the command; odd ones
/// send it at once, racing the first screen against the live stream; every fifth floods 30,000
/// lines before its marker; every tenth drops the page's socket first. (The race: `termpilot.waitText` answered false at once when the
/// session's first screen, and so its terminal, had not arrived yet; 1 round in 10–50 failed.)
#[tokio::test]
async fn an_agents_output_reaches_the_page_every_time_the_session_is_opened_50_times() {
    let server = http::start().await;
    let Some(mut browser) = Browser::launch().await else {
        return;
    };
    let agent = server.client(Era::Initialize).await;
    let id = start_session(&agent, "race").await;
    log_in(&mut browser, &server, &id).await;
    let mut took = Vec::new();
    let mut previous = "$".to_string();
    for i in 0..50 {
        browser.click(&row(&id)).await;
        if i % 2 == 0 {
            assert!(
                browser
                    .wait_for(
                        &format!(
                            "window.termpilot.screenText().includes({})",
                            json!(previous)
                        ),
                        WAIT
                    )
                    .await,
                "round {i}: the first screen shows the earlier output"
            );
        }
        if i % 10 == 9 {
            // The page's socket drops (as a network or a sleeping laptop drops it): the page
            // connects again by itself.
            browser.eval("state.view.ws.close(); true").await;
        }
        let marker = format!("round-{i}-{}", i * 7 + 1);
        let ran = agent
            .ok(
                "terminal_exec",
                json!({"sessionId": id, "command": if i % 5 == 4 { format!("seq 1 30000; echo round-{i}-$(({i}*7+1))") } else { format!("echo round-{i}-$(({i}*7+1))") }, "timeout": 20000, "maxLines": 5}),
            )
            .await;
        assert!(ran["output"].as_str().unwrap().ends_with(&marker), "{ran}");
        let printed = Instant::now();
        let seen = browser
            .eval(&format!(
                "window.termpilot.waitText({}, 5000)",
                json!(format!("\n{marker}"))
            ))
            .await;
        let text = browser.eval("window.termpilot.screenText()").await;
        assert_eq!(
            seen,
            json!(true),
            "round {i}: {marker} did not reach the page within 5 s; it shows:\n{}",
            text.as_str().unwrap_or_default()
        );
        took.push(printed.elapsed());
        previous = format!("\n{marker}");
    }
    took.sort();
    eprintln!(
        "exec output on the page: median {:?}, slowest {:?}",
        took[took.len() / 2],
        took[took.len() - 1]
    );
    browser.close().await;
    agent.stop().await;
    server.terminate().await;
}
