//! Conformance of `--compat director-shell` with seed 004 (director-shell-mcp, in Russian):
//! the 15 tools, their parameters and defaults, snake_case result fields, per-stream
//! previews, and every error as a tool error whose text is `{"error": "…"}`. Each case
//! names the seed section it comes from.

mod common;

use std::fs;

use common::Server;
use common::compat::{Params, check_params, server_name, start_preset, tools};
use serde_json::{Value, json};

/// "Справочник инструментов": the tools, in the seed's order.
const TOOLS: &[&str] = &[
    "shell_run",
    "write_file",
    "edit_file",
    "run_python",
    "job_start",
    "job_status",
    "job_kill",
    "job_list",
    "grep_files",
    "job_wait",
    "lock_acquire",
    "lock_release",
    "screenshot",
    "process_list",
    "file_lockers",
];

const PARAMS: &[Params] = &[
    Params {
        seed: "shell_run",
        tool: "shell_run",
        params: &["command", "cwd", "timeout_ms", "shell"],
        required: &["command"],
        defaults: &[("timeout_ms", "60000")],
    },
    Params {
        seed: "write_file",
        tool: "write_file",
        params: &["path", "content", "append", "create_dirs"],
        required: &["path", "content"],
        defaults: &[("create_dirs", "true")],
    },
    Params {
        seed: "edit_file",
        tool: "edit_file",
        params: &["path", "old_text", "new_text", "replace_all"],
        required: &["path", "old_text", "new_text"],
        defaults: &[],
    },
    Params {
        seed: "run_python",
        tool: "run_python",
        params: &["code", "cwd", "timeout_ms", "args"],
        required: &["code"],
        defaults: &[("timeout_ms", "60000")],
    },
    Params {
        seed: "job_start",
        tool: "job_start",
        params: &["command", "cwd", "shell", "name"],
        required: &["command"],
        defaults: &[],
    },
    Params {
        seed: "job_status",
        tool: "job_status",
        params: &["job_id", "tail_lines"],
        required: &["job_id"],
        defaults: &[("tail_lines", "40")],
    },
    Params {
        seed: "job_kill (\"Принимает job_id\")",
        tool: "job_kill",
        params: &["job_id"],
        required: &["job_id"],
        defaults: &[],
    },
    Params {
        seed: "job_list",
        tool: "job_list",
        params: &[],
        required: &[],
        defaults: &[],
    },
    Params {
        seed: "grep_files",
        tool: "grep_files",
        params: &[
            "pattern",
            "path",
            "glob",
            "case_sensitive",
            "max_results",
            "context_lines",
        ],
        required: &["pattern", "path"],
        defaults: &[("max_results", "200"), ("context_lines", "0")],
    },
    Params {
        seed: "job_wait",
        tool: "job_wait",
        params: &["job_id", "timeout_ms", "tail_lines"],
        required: &["job_id"],
        defaults: &[("timeout_ms", "60000"), ("tail_lines", "40")],
    },
    Params {
        seed: "lock_acquire и lock_release",
        tool: "lock_acquire",
        params: &["name", "wait_ms", "note"],
        required: &["name"],
        defaults: &[("wait_ms", "0")],
    },
    Params {
        seed: "lock_acquire и lock_release",
        tool: "lock_release",
        params: &["name", "token"],
        required: &["name", "token"],
        defaults: &[],
    },
    Params {
        seed: "screenshot",
        tool: "screenshot",
        params: &["target", "window_title", "output_path"],
        required: &[],
        defaults: &[("target", "\"screen\"")],
    },
    Params {
        seed: "process_list",
        tool: "process_list",
        params: &["name_filter", "max_results"],
        required: &[],
        defaults: &[("max_results", "100")],
    },
    Params {
        seed: "file_lockers",
        tool: "file_lockers",
        params: &["path"],
        required: &["path"],
        defaults: &[],
    },
];

/// A call that must fail as director-shell fails: a tool error whose text is a JSON object
/// with an `error` sentence. Returns the object.
async fn json_err(server: &Server, seed: &str, tool: &str, args: Value) -> Value {
    let text = server.err(tool, args.clone()).await;
    let value: Value = serde_json::from_str(&text)
        .unwrap_or_else(|_| panic!("[{seed}] {tool}({args}): error is not JSON: {text}"));
    let sentence = value["error"]
        .as_str()
        .unwrap_or_else(|| panic!("[{seed}] {tool}({args}): no `error` sentence in {value}"));
    assert!(
        sentence.len() > 10 && !sentence.contains('\n'),
        "[{seed}] {sentence}"
    );
    value
}

#[tokio::test]
async fn tool_list_parameters_and_server_name() {
    let server = start_preset("director-shell", &[]).await;
    let listed = tools(&server).await;
    let mut names: Vec<&str> = listed.keys().map(String::as_str).collect();
    names.sort_unstable();
    let mut want = TOOLS.to_vec();
    want.sort_unstable();
    assert_eq!(
        names, want,
        "[Справочник инструментов] exactly the 15 tools"
    );
    check_params(&listed, PARAMS);
    assert_eq!(server_name(&server), "director-shell-mcp");
    server.stop().await;
}

#[tokio::test]
async fn shell_run_streams_previews_timeouts_and_shells() {
    let server = start_preset("director-shell", &[]).await;
    // shell_run: "exit_code, duration_ms и объекты stdout/stderr"; bash off Windows.
    let r = server
        .ok(
            "shell_run",
            json!({"command": "echo hi; echo oops >&2; [[ -n $BASH_VERSION ]] && exit 3"}),
        )
        .await;
    assert_eq!(r["exit_code"], 3, "[shell_run] {r}");
    assert_eq!(r["stdout"]["text"], "hi\n");
    assert_eq!(r["stderr"]["text"], "oops\n");
    assert!(r["duration_ms"].is_u64());
    assert!(r.get("exitCode").is_none(), "[shell_run] snake_case only");

    // shell_run: "до примерно 50 КиБ … truncated: true и full_output_path" — per stream: a
    // small stderr is not marked truncated when stdout is long.
    let r = server
        .ok(
            "shell_run",
            json!({"command": "head -c 200000 /dev/zero | tr '\\0' x; echo small >&2"}),
        )
        .await;
    let preview = r["stdout"]["text"].as_str().unwrap();
    assert!(
        (40_000..=60_000).contains(&preview.len()),
        "[shell_run] preview {}",
        preview.len()
    );
    assert_eq!(r["stdout"]["truncated"], true);
    let full = r["stdout"]["full_output_path"].as_str().unwrap();
    assert_eq!(fs::read(full).unwrap().len(), 200_000);
    assert_eq!(r["stderr"]["text"], "small\n");
    assert!(r["stderr"].get("truncated").is_none(), "[shell_run] {r}");
    assert!(r["stderr"].get("full_output_path").is_none());

    // shell_run: "Тайм-аут возвращает ошибку инструмента MCP … и частичным результатом".
    let e = json_err(
        &server,
        "shell_run timeout",
        "shell_run",
        json!({"command": "echo started; sleep 30", "timeout_ms": 500}),
    )
    .await;
    assert!(e["error"].as_str().unwrap().contains("timed out"), "{e}");
    assert_eq!(e["stdout"]["text"], "started\n", "[shell_run] partial: {e}");

    // shell_run: timeout_ms "максимум 600 000"; shell "powershell, cmd или bash".
    json_err(
        &server,
        "shell_run timeout_ms max",
        "shell_run",
        json!({"command": "true", "timeout_ms": 600001}),
    )
    .await;
    json_err(
        &server,
        "shell_run shell",
        "shell_run",
        json!({"command": "true", "shell": "zsh"}),
    )
    .await;
    if cfg!(unix) {
        let e = json_err(
            &server,
            "shell_run shell cmd off Windows",
            "shell_run",
            json!({"command": "echo", "shell": "cmd"}),
        )
        .await;
        assert!(e["error"].as_str().unwrap().contains("Windows"), "{e}");
    }
    server.stop().await;
}

#[tokio::test]
async fn write_and_edit_files() {
    let server = start_preset("director-shell", &[]).await;
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("new/deep/a.txt");
    let f = file.to_str().unwrap();
    // write_file: "path, bytes_written, created … и appended"; create_dirs default true.
    let r = server
        .ok("write_file", json!({"path": f, "content": "héllo\n"}))
        .await;
    assert_eq!(
        r,
        json!({"path": f, "bytes_written": 7, "created": true, "appended": false}),
        "[write_file]"
    );
    let r = server
        .ok(
            "write_file",
            json!({"path": f, "content": "more\n", "append": true}),
        )
        .await;
    assert_eq!(
        (r["created"].clone(), r["appended"].clone()),
        (json!(false), json!(true))
    );
    assert_eq!(fs::read_to_string(&file).unwrap(), "héllo\nmore\n");
    // write_file: "абсолютный путь"; create_dirs:false leaves a missing folder missing.
    json_err(
        &server,
        "write_file path",
        "write_file",
        json!({"path": "rel.txt", "content": "x"}),
    )
    .await;
    let missing = dir.path().join("nope/b.txt");
    json_err(
        &server,
        "write_file create_dirs",
        "write_file",
        json!({"path": missing, "content": "x", "create_dirs": false}),
    )
    .await;
    assert!(!dir.path().join("nope").exists());
    json_err(
        &server,
        "write_file parameters",
        "write_file",
        json!({"path": f, "content": "x", "encoding": "base64"}),
    )
    .await;

    // edit_file: "ровно один раз … Ноль или несколько совпадений возвращают ошибку … без изменений".
    let g = dir.path().join("e.txt");
    fs::write(&g, "a b a\n").unwrap();
    for (old, seed) in [("zz", "zero matches"), ("a", "two matches")] {
        json_err(
            &server,
            seed,
            "edit_file",
            json!({"path": g, "old_text": old, "new_text": "c"}),
        )
        .await;
        assert_eq!(
            fs::read_to_string(&g).unwrap(),
            "a b a\n",
            "[edit_file] {seed}"
        );
    }
    let r = server
        .ok(
            "edit_file",
            json!({"path": g, "old_text": "a", "new_text": "c", "replace_all": true}),
        )
        .await;
    assert_eq!(r["replacements"], 2, "[edit_file] {r}");
    assert_eq!(r["path"], g.to_str().unwrap());
    json_err(
        &server,
        "edit_file old_text non-empty",
        "edit_file",
        json!({"path": g, "old_text": "", "new_text": "c"}),
    )
    .await;
    // The preset's errors name its own tools: write_file, not the native terminal_write_file.
    let missing = dir.path().join("missing.txt");
    let e = json_err(
        &server,
        "edit_file on a missing file",
        "edit_file",
        json!({"path": missing, "old_text": "a", "new_text": "c"}),
    )
    .await;
    let sentence = e["error"].as_str().unwrap();
    assert!(
        sentence.contains("write_file") && !sentence.contains("terminal_write_file"),
        "{sentence}"
    );
    server.stop().await;
}

#[tokio::test]
async fn python_jobs_and_their_state_folder() {
    // job_start: "%LOCALAPPDATA%/director-shell-mcp/jobs/<jobId>/" — on Linux under
    // $XDG_STATE_HOME/director-shell-mcp when no state dir is given.
    let xdg = tempfile::tempdir().unwrap();
    let state = tempfile::tempdir().unwrap();
    let mut cmd = common::command(state.path(), &["--compat", "director-shell"]);
    cmd.env_remove("TERMPILOT_STATE_DIR")
        .env_remove("LOCALAPPDATA")
        .env("XDG_STATE_HOME", xdg.path());
    let server = common::compat::start_command(cmd).await;

    // run_python: "args … sys.argv[1:]", "python_executable".
    let r = server
        .ok(
            "run_python",
            json!({"code": "import sys; print(sys.argv[1:])", "args": ["a", "b c"]}),
        )
        .await;
    assert_eq!(r["stdout"]["text"], "['a', 'b c']\n", "[run_python] {r}");
    assert_eq!(r["exit_code"], 0);
    assert!(r["python_executable"].as_str().unwrap().contains("python"));
    assert!(
        r.get("timed_out").is_none() && r.get("sandbox").is_none(),
        "{r}"
    );
    // run_python times out as shell_run does: a tool error with the partial result.
    let e = json_err(
        &server,
        "run_python timeout",
        "run_python",
        json!({"code": "import time\nprint('started', flush=True)\ntime.sleep(30)", "timeout_ms": 500}),
    )
    .await;
    assert!(e["error"].as_str().unwrap().contains("timed out"), "{e}");
    assert_eq!(
        e["stdout"]["text"], "started\n",
        "[run_python] partial: {e}"
    );

    // job_start: "job_id, pid, log_paths (stdout, stderr и combined) и путь exit_marker".
    let started = server
        .ok(
            "job_start",
            json!({"command": "echo one; echo two >&2; exit 4", "name": "demo"}),
        )
        .await;
    let id = started["job_id"].as_str().unwrap().to_string();
    assert!(started["pid"].is_i64());
    for log in ["stdout", "stderr", "combined"] {
        let path = started["log_paths"][log].as_str().unwrap();
        assert!(
            path.starts_with(xdg.path().join("director-shell-mcp/jobs").to_str().unwrap()),
            "[job_start] {path}"
        );
    }
    assert!(
        started["exit_marker"]
            .as_str()
            .unwrap()
            .ends_with("exit_code.txt")
    );
    // job_wait: "те же поля, что и job_status, и добавляет timed_out".
    let w = server
        .ok("job_wait", json!({"job_id": id, "timeout_ms": 30000}))
        .await;
    assert_eq!(
        (
            w["running"].clone(),
            w["exit_code"].clone(),
            w["timed_out"].clone()
        ),
        (json!(false), json!(4), json!(false)),
        "[job_wait] {w}"
    );
    assert!(w["output_tail"].as_str().unwrap().contains("one"));
    // job_status: "running, exit_code, runtime_ms, started_at и output_tail".
    let s = server.ok("job_status", json!({"job_id": id})).await;
    for field in [
        "running",
        "exit_code",
        "runtime_ms",
        "started_at",
        "output_tail",
    ] {
        assert!(s.get(field).is_some(), "[job_status] {field} in {s}");
    }
    // job_kill: "Уже завершённые задания остаются без изменений".
    let k = server.ok("job_kill", json!({"job_id": id})).await;
    assert_eq!(k["exit_code"], 4, "[job_kill] {k}");
    json_err(
        &server,
        "job_kill takes job_id only",
        "job_kill",
        json!({"job_id": id, "tail_lines": 5}),
    )
    .await;
    // job_wait: a timeout while running is "нормальным результатом с timed_out: true".
    let long = server.ok("job_start", json!({"command": "sleep 30"})).await;
    let _long = common::procs::JobGuard::of(&long);
    let long_id = long["job_id"].as_str().unwrap();
    let w = server
        .ok("job_wait", json!({"job_id": long_id, "timeout_ms": 300}))
        .await;
    assert_eq!(
        (w["timed_out"].clone(), w["running"].clone()),
        (json!(true), json!(true))
    );
    server.ok("job_kill", json!({"job_id": long_id})).await;
    // job_list: "job_id, необязательным name, pid, состоянием running, кодом выхода".
    let list = server.ok("job_list", json!({})).await;
    let jobs = list["jobs"].as_array().unwrap();
    let demo = jobs.iter().find(|j| j["job_id"] == id.as_str()).unwrap();
    assert_eq!(demo["name"], "demo");
    for field in ["pid", "running", "exit_code", "started_at"] {
        assert!(demo.get(field).is_some(), "[job_list] {field} in {demo}");
    }
    json_err(
        &server,
        "job_status unknown id",
        "job_status",
        json!({"job_id": "nope"}),
    )
    .await;
    server.stop().await;
}

#[tokio::test]
async fn grep_locks_and_system_views() {
    let server = start_preset("director-shell", &[]).await;
    let dir = tempfile::tempdir().unwrap();
    fs::write(dir.path().join("a.js"), "foobar\nfoobaz\n").unwrap();
    fs::create_dir(dir.path().join("node_modules")).unwrap();
    fs::write(dir.path().join("node_modules/b.js"), "foobar\n").unwrap();
    let root = dir.path().to_str().unwrap();
    // grep_files: "JavaScript-регулярное выражение" (lookahead), skips node_modules;
    // "matches с file, line_number, line, before и after, а также files_scanned и truncated".
    let r = server
        .ok(
            "grep_files",
            json!({"pattern": "foo(?=bar)", "path": root, "context_lines": 1}),
        )
        .await;
    assert_eq!(
        r["matches"].as_array().unwrap().len(),
        1,
        "[grep_files] {r}"
    );
    let m = &r["matches"][0];
    assert_eq!(
        (
            m["line_number"].clone(),
            m["line"].clone(),
            m["after"].clone()
        ),
        (json!(1), json!("foobar"), json!(["foobaz"]))
    );
    assert_eq!(m["before"], json!([]));
    assert_eq!(
        (r["files_scanned"].clone(), r["truncated"].clone()),
        (json!(1), json!(false))
    );
    // "Недопустимые регулярные выражения возвращают ошибку инструмента MCP".
    json_err(
        &server,
        "grep_files invalid regex",
        "grep_files",
        json!({"pattern": "(", "path": root}),
    )
    .await;
    json_err(
        &server,
        "grep_files context_lines max 5",
        "grep_files",
        json!({"pattern": "x", "path": root, "context_lines": 6}),
    )
    .await;

    // lock_acquire и lock_release: UUID token, held error naming pid and note, wrong token.
    let name = format!("conf-{}", std::process::id());
    let held = server
        .ok("lock_acquire", json!({"name": name, "note": "deploying"}))
        .await;
    let token = held["token"].as_str().unwrap().to_string();
    assert_eq!(token.len(), 36, "[lock_acquire] UUID token {held}");
    assert!(held["acquired_at"].is_string());
    let e = json_err(&server, "lock held", "lock_acquire", json!({"name": name})).await;
    let sentence = e["error"].as_str().unwrap();
    assert!(
        sentence.contains("deploying") && sentence.contains("pid"),
        "{sentence}"
    );
    json_err(
        &server,
        "lock wrong token",
        "lock_release",
        json!({"name": name, "token": "x"}),
    )
    .await;
    server
        .ok("lock_release", json!({"name": name, "token": token}))
        .await;
    json_err(
        &server,
        "lock free",
        "lock_release",
        json!({"name": name, "token": token}),
    )
    .await;
    json_err(
        &server,
        "lock name rules",
        "lock_acquire",
        json!({"name": "a/b"}),
    )
    .await;

    // process_list: "pid и name … truncated".
    let r = server.ok("process_list", json!({"max_results": 1})).await;
    assert_eq!(r["processes"].as_array().unwrap().len(), 1);
    assert_eq!(r["truncated"], true);
    assert!(r["processes"][0]["pid"].is_u64() && r["processes"][0]["name"].is_string());
    // file_lockers: "{ path, lockers }", an unlocked file is an empty array; path absolute.
    let f = dir.path().join("a.js");
    let r = server.ok("file_lockers", json!({"path": f})).await;
    assert_eq!(r["lockers"], json!([]), "[file_lockers] {r}");
    json_err(
        &server,
        "file_lockers absolute",
        "file_lockers",
        json!({"path": "a.js"}),
    )
    .await;
    // "Ошибки возвращаются как ошибки инструментов MCP с полем error": bad arguments too.
    json_err(
        &server,
        "errors",
        "shell_run",
        json!({"command": "true", "bogus": 1}),
    )
    .await;
    server.stop().await;
}

/// Every object key in `value`, at any depth, that is not snake_case.
fn camel_keys(value: &Value, at: &str, found: &mut Vec<String>) {
    match value {
        Value::Object(map) => {
            for (k, v) in map {
                if k.chars().any(|c| c.is_ascii_uppercase()) {
                    found.push(format!("{at}.{k}"));
                }
                camel_keys(v, &format!("{at}.{k}"), found);
            }
        }
        Value::Array(items) => items.iter().for_each(|v| camel_keys(v, at, found)),
        _ => {}
    }
}

#[tokio::test]
async fn every_field_at_every_depth_and_every_sentence_is_snake_case() {
    // "Справочник инструментов": the seed's fields are snake_case, while the native surface
    // is camelCase; nested objects (log paths, matches, processes, spill fields) too.
    let server = start_preset("director-shell", &[]).await;
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("g.txt");
    fs::write(&f, "one\nneedle two\n").unwrap();
    let job = server
        .ok(
            "job_start",
            json!({"command": "echo hi", "cwd": dir.path()}),
        )
        .await;
    let id = job["job_id"].as_str().expect("job_id").to_string();
    let results = [
        job,
        server
            .ok(
                "job_wait",
                json!({"job_id": id, "timeout_ms": 20000, "tail_lines": 5}),
            )
            .await,
        server.ok("job_list", json!({})).await,
        server
            .ok(
                "grep_files",
                json!({"pattern": "needle", "path": dir.path(), "context_lines": 1}),
            )
            .await,
        server.ok("process_list", json!({"max_results": 3})).await,
        server
            .ok(
                "shell_run",
                json!({"command": "seq 1 30000", "timeout_ms": 20000}),
            )
            .await,
    ];
    for r in &results {
        let mut found = Vec::new();
        camel_keys(r, "", &mut found);
        assert!(found.is_empty(), "camelCase keys {found:?} in {r}");
    }
    assert!(
        results[1]["exit_code"] == 0 && results[1]["log_paths"].is_object(),
        "{}",
        results[1]
    );
    assert_eq!(results[3]["matches"][0]["line_number"], 2, "{}", results[3]);
    // Sentences name the fields as the seed spells them; a path quoted in them is untouched.
    let odd = dir.path().join("oldText");
    fs::create_dir(&odd).unwrap();
    let g = odd.join("e.txt");
    fs::write(&g, "a a\n").unwrap();
    let e = json_err(
        &server,
        "edit_file",
        "edit_file",
        json!({"path": g, "old_text": "a", "new_text": "b"}),
    )
    .await;
    let sentence = e["error"].as_str().unwrap();
    assert!(
        sentence.contains("replace_all")
            && sentence.contains("/oldText/e.txt")
            && !sentence.contains("replaceAll"),
        "{sentence}"
    );
    server.stop().await;
}
