//! smart-terminal-mcp's own test suite (`pungggi/smart-terminal-mcp` v1.2.28, `test/*.test.js`),
//! ported to end-to-end calls against `termpilot --compat smart-terminal` over stdio.
//!
//! Each test names the upstream file and test it comes from. Upstream's unit tests call its
//! functions with made-up input; here the same input reaches the real tools: a parser's
//! stdout comes from a stand-in program of the same name (a two-line sh script printing the
//! exact text), an ANSI-cleaning case from `printf` in a real session. Upstream tests that
//! cannot apply here (Windows-only, release scripts, source-text checks) are listed with the
//! reason in `docs/compat.md`.

mod common;

use std::path::{Path, PathBuf};

use common::Server;
use common::compat::{start_preset, tools};
use serde_json::{Value, json};

/// The preset with all 16 tools direct.
async fn preset() -> Server {
    start_preset("smart-terminal", &[("SMART_TERMINAL_DISABLED_TOOLS", "")]).await
}

/// A stand-in program `name` in a temp dir that prints `stdout` exactly.
fn stand_in(dir: &Path, name: &str, stdout: &str) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    std::fs::write(dir.join(format!("{name}.out")), stdout).unwrap();
    let path = dir.join(name);
    std::fs::write(
        &path,
        format!("#!/bin/sh\nexec cat \"$(dirname \"$0\")/{name}.out\"\n"),
    )
    .unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path
}

/// `terminal_run` of a stand-in `cmd` printing `stdout`, with `extra` arguments.
async fn run_stand_in(
    server: &Server,
    cmd: &str,
    args: &[&str],
    stdout: &str,
    extra: Value,
) -> Value {
    let dir = tempfile::tempdir().unwrap();
    let path = stand_in(dir.path(), cmd, stdout);
    let mut call = json!({"cmd": path, "args": args});
    if let Value::Object(more) = extra {
        call.as_object_mut().unwrap().extend(more);
    }
    server.ok("terminal_run", call).await
}

/// upstream `parseCommandOutput({cmd, args, stdout})`, through `terminal_run`.
async fn parsed(cmd: &str, args: &[&str], stdout: &str) -> Value {
    let server = preset().await;
    let r = run_stand_in(&server, cmd, args, stdout, json!({})).await;
    server.stop().await;
    assert_eq!(r["ok"], true, "{r}");
    r["stdout"]["parsed"].clone()
}

macro_rules! parser_case {
    ($name:ident, $upstream:literal, $cmd:literal, $args:expr, $stdout:literal, $want:expr) => {
        #[doc = concat!("test/command-parsers.test.js: ", $upstream)]
        #[tokio::test]
        async fn $name() {
            let got = parsed($cmd, &$args, $stdout).await;
            assert_eq!(got, $want, "[command-parsers.test.js: {}]", $upstream);
        }
    };
}

// ---- test/command-parsers.test.js ----

#[tokio::test]
/// test/command-parsers.test.js: normalizeCommandName removes executable extensions
/// (on Linux: a path and upper case reach the `where` parser all the same).
async fn command_parsers_normalize_command_name_removes_executable_extensions() {
    let got = parsed("Where.exe", &["git"], "/usr/bin/git\n").await;
    assert_eq!(got, json!({"paths": ["/usr/bin/git"]}));
}

parser_case!(
    command_parsers_git_log_oneline,
    "parseCommandOutput parses git log --oneline",
    "git",
    ["log", "--oneline"],
    "a1b2c3d Add parser\nffeedd0 Fix tests\n",
    json!({"commits": [
        {"hash": "a1b2c3d", "message": "Add parser"},
        {"hash": "ffeedd0", "message": "Fix tests"},
    ]})
);

parser_case!(
    command_parsers_git_log_oneline_max_count,
    "parseCommandOutput parses git log --oneline with max-count variants",
    "git",
    ["log", "--oneline", "-n", "2"],
    "a1b2c3d Add parser\nffeedd0 Fix tests\n",
    json!({"commits": [
        {"hash": "a1b2c3d", "message": "Add parser"},
        {"hash": "ffeedd0", "message": "Fix tests"},
    ]})
);

parser_case!(
    command_parsers_git_status_porcelain,
    "parseCommandOutput parses git status porcelain output",
    "git",
    ["status", "--porcelain=v1", "--branch"],
    "## main...origin/main [ahead 2]\nM  staged.txt\n M modified.txt\n?? new file.txt\n",
    json!({
        "branch": {"head": "main", "upstream": "origin/main", "ahead": 2},
        "staged": ["staged.txt"],
        "modified": ["modified.txt"],
        "untracked": ["new file.txt"],
    })
);

parser_case!(
    command_parsers_git_status_short_aliases,
    "parseCommandOutput parses git status short aliases",
    "git",
    ["status", "-b", "--short"],
    "## feature...origin/feature [ahead 1, behind 2]\n M changed.txt\n",
    json!({
        "branch": {"head": "feature", "upstream": "origin/feature", "ahead": 1, "behind": 2},
        "staged": [],
        "modified": ["changed.txt"],
        "untracked": [],
    })
);

parser_case!(
    command_parsers_git_status_short_without_branch,
    "parseCommandOutput parses git status --short without branch metadata",
    "git",
    ["status", "--short"],
    "M  staged.txt\n M modified.txt\n?? new file.txt\n",
    json!({
        "branch": null,
        "staged": ["staged.txt"],
        "modified": ["modified.txt"],
        "untracked": ["new file.txt"],
    })
);

parser_case!(
    command_parsers_git_branch,
    "parseCommandOutput parses git branch output",
    "git",
    ["branch"],
    "* main\n  feature/test\n",
    json!({"branches": [
        {"name": "main", "current": true},
        {"name": "feature/test", "current": false},
    ]})
);

parser_case!(
    command_parsers_git_branch_all,
    "parseCommandOutput parses git branch --all output",
    "git",
    ["branch", "--all"],
    "* main\n  remotes/origin/main\n",
    json!({"branches": [
        {"name": "main", "current": true},
        {"name": "remotes/origin/main", "current": false},
    ]})
);

parser_case!(
    command_parsers_git_branch_vv,
    "parseCommandOutput parses git branch -vv output",
    "git",
    ["branch", "-vv"],
    "* main abc1234 [origin/main: ahead 1] Main branch\n  old fedcba9 [origin/old: gone] Old branch\n",
    json!({"branches": [
        {"name": "main", "current": true, "commit": "abc1234", "upstream": "origin/main", "ahead": 1, "message": "Main branch"},
        {"name": "old", "current": false, "commit": "fedcba9", "upstream": "origin/old", "gone": true, "message": "Old branch"},
    ]})
);

parser_case!(
    command_parsers_git_branch_show_current,
    "parseCommandOutput parses git branch --show-current",
    "git",
    ["branch", "--show-current"],
    "main\n",
    json!({"current": "main"})
);

parser_case!(
    command_parsers_git_rev_parse_abbrev_ref_head,
    "parseCommandOutput parses git rev-parse --abbrev-ref HEAD",
    "git",
    ["rev-parse", "--abbrev-ref", "HEAD"],
    "main\n",
    json!({"current": "main"})
);

parser_case!(
    command_parsers_git_rev_parse_show_toplevel,
    "parseCommandOutput parses git rev-parse --show-toplevel",
    "git",
    ["rev-parse", "--show-toplevel"],
    "C:/repo\n",
    json!({"topLevel": "C:/repo"})
);

parser_case!(
    command_parsers_git_rev_parse_is_inside_work_tree,
    "parseCommandOutput parses git rev-parse --is-inside-work-tree",
    "git",
    ["rev-parse", "--is-inside-work-tree"],
    "true\n",
    json!({"isInsideWorkTree": true})
);

parser_case!(
    command_parsers_git_diff_name_only,
    "parseCommandOutput parses git diff --name-only",
    "git",
    ["diff", "--cached", "--name-only"],
    "src/index.js\nREADME.md\n",
    json!({"paths": ["src/index.js", "README.md"]})
);

parser_case!(
    command_parsers_git_diff_name_status,
    "parseCommandOutput parses git diff --name-status",
    "git",
    ["diff", "--name-status"],
    "M\tsrc/index.js\nR100\told-name.js\tnew-name.js\n",
    json!({"changes": [
        {"status": "M", "path": "src/index.js"},
        {"status": "R100", "path": "new-name.js", "previousPath": "old-name.js"},
    ]})
);

parser_case!(
    command_parsers_git_diff_stat,
    "parseCommandOutput parses git diff --stat",
    "git",
    ["diff", "--stat"],
    " src/index.js | 2 +-\n README.md    | 3 ++-\n 2 files changed, 3 insertions(+), 2 deletions(-)\n",
    json!({
        "files": [
            {"path": "src/index.js", "changes": 2, "histogram": "+-"},
            {"path": "README.md", "changes": 3, "histogram": "++-"},
        ],
        "summary": {"filesChanged": 2, "insertions": 3, "deletions": 2},
    })
);

parser_case!(
    command_parsers_git_diff_shortstat,
    "parseCommandOutput parses git diff --shortstat",
    "git",
    ["diff", "--shortstat"],
    " 2 files changed, 3 insertions(+), 2 deletions(-)\n",
    json!({"summary": {"filesChanged": 2, "insertions": 3, "deletions": 2}})
);

parser_case!(
    command_parsers_git_remote_v,
    "parseCommandOutput parses git remote -v output",
    "git",
    ["remote", "-v"],
    "origin\thttps://github.com/example/repo.git (fetch)\norigin\thttps://github.com/example/repo.git (push)\n",
    json!({"remotes": [{
        "name": "origin",
        "fetchUrl": "https://github.com/example/repo.git",
        "pushUrl": "https://github.com/example/repo.git",
    }]})
);

parser_case!(
    command_parsers_tasklist_csv,
    "parseCommandOutput parses tasklist csv output",
    "tasklist",
    ["/fo", "csv", "/nh"],
    "\"node.exe\",\"1234\",\"Console\",\"1\",\"25,000 K\"\n",
    json!({"processes": [{
        "imageName": "node.exe",
        "pid": 1234,
        "sessionName": "Console",
        "sessionNumber": 1,
        "memUsage": "25,000 K",
    }]})
);

parser_case!(
    command_parsers_where_or_which_paths,
    "parseCommandOutput parses where or which output as paths",
    "where",
    ["git"],
    "C:\\Program Files\\Git\\bin\\git.exe\nC:\\Windows\\System32\\git.exe\n",
    json!({"paths": [
        "C:\\Program Files\\Git\\bin\\git.exe",
        "C:\\Windows\\System32\\git.exe",
    ]})
);

parser_case!(
    command_parsers_git_ls_files,
    "parseCommandOutput parses git ls-files as paths",
    "git",
    ["ls-files"],
    "src/index.js\nREADME.md\n",
    json!({"paths": ["src/index.js", "README.md"]})
);

parser_case!(
    command_parsers_unsupported_is_null,
    "parseCommandOutput returns null for unsupported commands",
    "git",
    ["show"],
    "raw output",
    Value::Null
);

#[tokio::test]
/// test/command-parsers.test.js: summarizeCommandOutput returns counts for supported parsed
/// output (the same parsed status, reached with `summary: true`).
async fn command_parsers_summarize_counts() {
    let server = preset().await;
    let r = run_stand_in(
        &server,
        "git",
        &["status", "--short", "--branch"],
        "## main...origin/main [ahead 1]\nM  staged.txt\n M modified.txt\n?? new.txt\n",
        json!({"summary": true}),
    )
    .await;
    server.stop().await;
    assert_eq!(
        r["stdout"]["summary"],
        json!({
            "branch": "main",
            "upstream": "origin/main",
            "ahead": 1,
            "stagedCount": 1,
            "modifiedCount": 1,
            "untrackedCount": 1,
        }),
        "{r}"
    );
    assert_eq!(r["stdout"]["raw"], "");
    assert_eq!(r["stdout"]["parsed"], Value::Null);
}

// ---- test/command-runner.test.js ----

#[tokio::test]
/// test/command-runner.test.js: runCommand captures stdout for a successful command
async fn command_runner_captures_stdout() {
    let server = preset().await;
    let r = server
        .ok(
            "terminal_run",
            json!({"cmd": "sh", "args": ["-c", "printf hello"], "parse": false}),
        )
        .await;
    server.stop().await;
    assert_eq!(r["ok"], true, "{r}");
    assert_eq!(r["exitCode"], 0);
    assert_eq!(r["stdout"]["raw"], "hello");
    assert_eq!(r["stderr"]["raw"], "");
}

#[tokio::test]
/// test/command-runner.test.js: runCommand keeps stderr and non-zero exit codes in-band
async fn command_runner_keeps_stderr_and_exit_codes() {
    let server = preset().await;
    let r = server
        .ok(
            "terminal_run",
            json!({"cmd": "sh", "args": ["-c", "printf boom >&2; exit 3"], "parse": false}),
        )
        .await;
    server.stop().await;
    assert_eq!(r["ok"], false, "{r}");
    assert_eq!(r["exitCode"], 3);
    assert_eq!(r["stderr"]["raw"], "boom");
    assert!(r.get("hint").is_none(), "no hint upstream: {r}");
}

#[tokio::test]
/// test/command-runner.test.js: runCommand marks timed out processes (upstream's 50 ms is
/// below its own schema minimum of 1000 ms, as here)
async fn command_runner_marks_timed_out() {
    let server = preset().await;
    let r = server
        .ok(
            "terminal_run",
            json!({"cmd": "sleep", "args": ["30"], "timeout": 1000, "parse": false}),
        )
        .await;
    server.stop().await;
    assert_eq!(r["ok"], false, "{r}");
    assert_eq!(r["timedOut"], true);
    assert!(
        r.get("hint").is_none(),
        "upstream gives no hint on a timeout: {r}"
    );
}

#[tokio::test]
/// test/command-runner.test.js: runCommand rejects invalid working directories
async fn command_runner_rejects_invalid_cwd() {
    let server = preset().await;
    let missing = std::env::temp_dir().join("__missing__smart_terminal__");
    let e = server
        .err(
            "terminal_run",
            json!({"cmd": "true", "cwd": missing, "parse": false}),
        )
        .await;
    server.stop().await;
    assert!(e.contains("Failed to start command"), "{e}");
}

#[tokio::test]
/// test/command-runner.test.js: runCommand stops when maxOutputBytes is exceeded
/// (upstream's 128 is below its own schema minimum of 1024, as here)
async fn command_runner_stops_at_max_output_bytes() {
    let server = preset().await;
    let r = server
        .ok(
            "terminal_run",
            json!({"cmd": "sh", "args": ["-c", "head -c 40960 /dev/zero | tr '\\0' x"], "maxOutputBytes": 1024, "parse": false}),
        )
        .await;
    server.stop().await;
    assert_eq!(r["ok"], false, "{r}");
    assert_eq!(r["maxOutputExceeded"], true, "{r}");
    assert!(r["stdout"]["raw"].as_str().unwrap().len() <= 1024, "{r}");
}

#[tokio::test]
/// test/command-runner.test.js: runCommand can omit raw output when parseOnly is enabled
async fn command_runner_parse_only_omits_raw() {
    let server = preset().await;
    let r = server
        .ok(
            "terminal_run",
            json!({"cmd": "which", "args": ["which"], "parse": false, "parseOnly": true}),
        )
        .await;
    server.stop().await;
    assert_eq!(r["ok"], true, "{r}");
    assert_eq!(r["stdout"]["raw"], "");
    assert!(
        !r["stdout"]["parsed"]["paths"]
            .as_array()
            .unwrap()
            .is_empty(),
        "{r}"
    );
}

#[tokio::test]
/// test/command-runner.test.js: runCommand can return concise summaries for supported commands
async fn command_runner_summary_for_supported() {
    let server = preset().await;
    let r = server
        .ok(
            "terminal_run",
            json!({"cmd": "which", "args": ["which"], "parse": false, "summary": true}),
        )
        .await;
    server.stop().await;
    assert_eq!(r["ok"], true, "{r}");
    assert_eq!(r["stdout"]["raw"], "");
    assert_eq!(r["stdout"]["parsed"], Value::Null);
    assert!(
        r["stdout"]["summary"]["pathCount"].as_u64().unwrap() > 0,
        "{r}"
    );
}

#[tokio::test]
/// test/command-runner.test.js: runCommand can use a custom successExitCode
async fn command_runner_custom_success_exit_code() {
    let server = preset().await;
    let r = server
        .ok(
            "terminal_run",
            json!({"cmd": "sh", "args": ["-c", "exit 3"], "parse": false, "successExitCode": 3}),
        )
        .await;
    server.stop().await;
    assert_eq!(r["ok"], true, "{r}");
    assert_eq!(r["exitCode"], 3);
    assert_eq!(
        r["checks"],
        json!({"exitCode": {"ok": true, "expected": 3, "actual": 3}})
    );
}

async fn success_file_case(content: &str) -> (Value, PathBuf, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let server = preset().await;
    let r = server
        .ok(
            "terminal_run",
            json!({
                "cmd": "sh",
                "cwd": dir.path(),
                "args": ["-c", format!("printf '{content}\\n' > build.log")],
                "parse": false,
                "successFile": "build.log",
                "successFilePattern": "BUILD OK",
            }),
        )
        .await;
    server.stop().await;
    (r, dir.path().join("build.log"), dir)
}

#[tokio::test]
/// test/command-runner.test.js: runCommand can require a success file pattern
async fn command_runner_success_file_pattern() {
    let (r, log, _dir) = success_file_case("BUILD OK").await;
    assert_eq!(r["ok"], true, "{r}");
    assert_eq!(r["exitCode"], 0);
    assert_eq!(
        r["checks"],
        json!({
            "exitCode": {"ok": true, "expected": 0, "actual": 0},
            "successFile": {"path": log, "matched": true},
        })
    );
}

#[tokio::test]
/// test/command-runner.test.js: runCommand marks ok=false when success file pattern does not match
async fn command_runner_success_file_pattern_mismatch() {
    let (r, log, _dir) = success_file_case("BUILD FAILED").await;
    assert_eq!(r["ok"], false, "{r}");
    assert_eq!(r["exitCode"], 0);
    assert_eq!(
        r["checks"],
        json!({
            "exitCode": {"ok": true, "expected": 0, "actual": 0},
            "successFile": {"path": log, "matched": false},
        })
    );
}

#[tokio::test]
/// test/command-runner.test.js: runCommand requires successFile and successFilePattern together
async fn command_runner_success_file_needs_pattern() {
    let server = preset().await;
    let e = server
        .err(
            "terminal_run",
            json!({"cmd": "true", "parse": false, "successFile": "build.log"}),
        )
        .await;
    assert_eq!(
        e,
        "successFile and successFilePattern must be provided together."
    );
    let e = server
        .err(
            "terminal_run",
            json!({"cmd": "true", "parse": false, "successFilePattern": "OK"}),
        )
        .await;
    server.stop().await;
    assert!(e.contains("successFile and successFilePattern"), "{e}");
}

#[tokio::test]
/// test/command-runner.test.js: runCommand keeps raw output when summary mode has no supported parser
async fn command_runner_summary_without_parser_keeps_raw() {
    let server = preset().await;
    let r = server
        .ok(
            "terminal_run",
            json!({"cmd": "sh", "args": ["-c", "printf hello"], "parse": false, "summary": true}),
        )
        .await;
    server.stop().await;
    assert_eq!(r["ok"], true, "{r}");
    assert_eq!(r["stdout"]["raw"], "hello");
    assert_eq!(r["stdout"]["parsed"], Value::Null);
    assert!(r["stdout"].get("summary").is_none(), "{r}");
}

#[tokio::test]
/// test/command-runner.test.js: runCommand handles explicit command paths with spaces
async fn command_runner_paths_with_spaces() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::Builder::new()
        .prefix("smart terminal mcp-")
        .tempdir()
        .unwrap();
    let script = dir.path().join("space-wrapper.sh");
    std::fs::write(&script, "#!/bin/sh\necho \"[$1]\"\n").unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    let server = preset().await;
    let r = server
        .ok(
            "terminal_run",
            json!({"cmd": script, "args": ["hello world"], "parse": false}),
        )
        .await;
    server.stop().await;
    assert_eq!(r["ok"], true, "{r}");
    assert_eq!(r["exitCode"], 0);
    assert!(
        r["stdout"]["raw"]
            .as_str()
            .unwrap()
            .contains("[hello world]")
    );
}

const PROPOSE: &str = "Structured parser unavailable for this command signature. If you need this often, propose one.";

#[tokio::test]
/// test/command-runner.test.js: getStructuredParserHint returns a hint for large unmatched
/// parser-worthy output
async fn command_runner_hint_for_large_unmatched_output() {
    let server = preset().await;
    let r = run_stand_in(
        &server,
        "git",
        &["log", "--stat"],
        &"commit summary line\n".repeat(20),
        json!({}),
    )
    .await;
    server.stop().await;
    assert_eq!(r["hint"], PROPOSE, "{r}");
}

#[tokio::test]
/// test/command-runner.test.js: getStructuredParserHint skips short unmatched output
async fn command_runner_hint_skips_short_output() {
    let server = preset().await;
    let r = run_stand_in(&server, "git", &["log", "--stat"], "short\n", json!({})).await;
    server.stop().await;
    assert!(r.get("hint").is_none(), "{r}");
}

#[tokio::test]
/// test/command-runner.test.js: getStructuredParserHint skips commands when parsing was not requested
async fn command_runner_hint_skips_when_not_parsing() {
    let server = preset().await;
    let r = run_stand_in(
        &server,
        "git",
        &["log", "--stat"],
        &"commit summary line\n".repeat(20),
        json!({"parse": false}),
    )
    .await;
    server.stop().await;
    assert!(r.get("hint").is_none(), "{r}");
}

#[tokio::test]
/// test/command-runner.test.js: getStructuredParserHint skips non parser-worthy commands
async fn command_runner_hint_skips_non_parser_worthy() {
    let server = preset().await;
    let r = run_stand_in(
        &server,
        "git",
        &["show"],
        &"commit summary line\n".repeat(20),
        json!({}),
    )
    .await;
    server.stop().await;
    assert!(r.get("hint").is_none(), "{r}");
}

// ---- test/pager.test.js (paginateOutput, through terminal_run_paged) ----

/// `terminal_run_paged` of a stand-in `which` printing `stdout`.
async fn paged(stdout: &str, page: Option<u64>, page_size: Option<u64>) -> Value {
    let dir = tempfile::tempdir().unwrap();
    let path = stand_in(dir.path(), "which", stdout);
    let server = preset().await;
    let mut call = json!({"cmd": path, "args": ["x"]});
    if let Some(p) = page {
        call["page"] = json!(p);
    }
    if let Some(s) = page_size {
        call["pageSize"] = json!(s);
    }
    let r = server.ok("terminal_run_paged", call).await;
    server.stop().await;
    r
}

#[tokio::test]
/// test/pager.test.js: paginateOutput keeps the broader default page size for agent context
async fn pager_default_page_size() {
    let text: String = (1..=101).map(|i| format!("line {i}\n")).collect();
    let r = paged(&text, None, None).await;
    assert_eq!(r["pageInfo"]["pageSize"], 100, "{r}");
    assert_eq!(r["pageInfo"]["hasNext"], true);
    assert_eq!(
        r["stdout"]["raw"].as_str().unwrap().split('\n').count(),
        100
    );
}

#[tokio::test]
/// test/pager.test.js: paginateOutput returns the first page and hasNext for remaining lines
async fn pager_first_page() {
    let r = paged("a\nb\nc\nd", Some(0), Some(2)).await;
    assert_eq!(r["stdout"]["raw"], "a\nb");
    assert_eq!(
        r["pageInfo"],
        json!({"totalLines": 4, "hasNext": true, "page": 0, "pageSize": 2})
    );
}

#[tokio::test]
/// test/pager.test.js: paginateOutput returns the last page without hasNext
async fn pager_last_page() {
    let r = paged("a\nb\nc\nd", Some(1), Some(2)).await;
    assert_eq!(r["stdout"]["raw"], "c\nd");
    assert_eq!(
        r["pageInfo"],
        json!({"totalLines": 4, "hasNext": false, "page": 1, "pageSize": 2})
    );
}

#[tokio::test]
/// test/pager.test.js: paginateOutput handles pages beyond the end
async fn pager_beyond_the_end() {
    let r = paged("a\nb", Some(4), Some(2)).await;
    assert_eq!(r["stdout"]["raw"], "");
    assert_eq!(
        r["pageInfo"],
        json!({"totalLines": 2, "hasNext": false, "page": 4, "pageSize": 2})
    );
}

#[tokio::test]
/// test/pager.test.js: paginateOutput handles empty output
async fn pager_empty_output() {
    let r = paged("", Some(0), Some(5)).await;
    assert_eq!(r["stdout"]["raw"], "");
    assert_eq!(
        r["pageInfo"],
        json!({"totalLines": 0, "hasNext": false, "page": 0, "pageSize": 5})
    );
}

// ---- test/ansi.test.js (stripAnsi, through terminal_exec of printf) ----

/// `text` as one single-quoted printf format that prints exactly its UTF-8 bytes.
fn printf_arg(text: &str) -> String {
    let mut out = String::from("'");
    for b in text.bytes() {
        if (0x20..0x7f).contains(&b) && !matches!(b, b'\'' | b'\\' | b'%') {
            out.push(b as char);
        } else {
            out.push_str(&format!("\\{b:03o}"));
        }
    }
    out.push('\'');
    out
}

/// What `terminal_exec` returns for a command printing `raw` (and a newline).
async fn exec_printf(raw: &str) -> String {
    let server = preset().await;
    let s = server.ok("terminal_start", json!({})).await;
    let id = s["sessionId"].as_str().unwrap();
    let r = server
        .ok(
            "terminal_exec",
            json!({"sessionId": id, "command": format!("printf {}; echo", printf_arg(raw)), "timeout": 20000}),
        )
        .await;
    server.stop().await;
    assert_eq!(r["exitCode"], 0, "{r}");
    r["output"].as_str().unwrap().to_string()
}

/// upstream's `stripAnsi(input)` is `want`; terminal_exec returns it as upstream's exec does
/// (the whole output without trailing whitespace).
macro_rules! ansi_case {
    ($name:ident, $upstream:literal, $input:expr, $want:expr) => {
        #[doc = concat!("test/ansi.test.js: ", $upstream)]
        #[tokio::test]
        async fn $name() {
            let got = exec_printf(&$input).await;
            let want: &str = $want;
            assert_eq!(got, want.trim_end(), "[ansi.test.js: {}]", $upstream);
        }
    };
}

ansi_case!(
    ansi_strips_sgr,
    "strips SGR color codes",
    "\x1b[31mred\x1b[0m",
    "red"
);
ansi_case!(
    ansi_strips_bold_multiple_params,
    "strips bold and multiple SGR params",
    "\x1b[1;32mbold green\x1b[0m",
    "bold green"
);
ansi_case!(
    ansi_strips_cursor_movement,
    "strips cursor movement sequences",
    "\x1b[2Jhello\x1b[H",
    "hello"
);
ansi_case!(
    ansi_strips_osc_title,
    "strips OSC sequences (e.g. title setting)",
    "\x1b]0;My Title\x07content",
    "content"
);
ansi_case!(
    ansi_strips_c1_osc,
    "strips C1 8-bit OSC sequences (0x9D ... 0x9C)",
    "\u{9d}0;My Title\u{9c}content",
    "content"
);
ansi_case!(
    ansi_strips_osc_st,
    "strips OSC terminated by ST (ESC backslash)",
    "\x1b]0;My Title\x1b\\content",
    "content"
);
ansi_case!(
    ansi_plain_text_unchanged,
    "returns plain text unchanged",
    "hello world",
    "hello world"
);
ansi_case!(ansi_empty_string, "handles empty string", "", "");
ansi_case!(
    ansi_collapses_cr,
    "collapses simple \\r overwrite",
    "aaa\rbbb",
    "bbb"
);
ansi_case!(
    ansi_progress_bar,
    "collapses progress bar style output",
    "Loading 10%\rLoading 50%\rLoading 100%",
    "Loading 100%"
);
ansi_case!(
    ansi_partial_overwrite,
    "handles partial overwrite (shorter text)",
    "ABCDEF\rXY",
    "XYCDEF"
);
ansi_case!(
    ansi_newlines_with_cr,
    "preserves newlines with \\r overwrites",
    "line1\nfoo\rbar\nline3",
    "line1\nbar\nline3"
);
ansi_case!(
    ansi_windows_newlines,
    "preserves Windows \\r\\n as newlines",
    "line1\r\nline2\r\n",
    "line1\nline2\n"
);
ansi_case!(ansi_trailing_cr, "handles trailing \\r", "hello\r", "hello");
ansi_case!(
    ansi_multiple_cr,
    "handles multiple \\r in sequence",
    "ABCDE\r\r\rXY",
    "XYCDE"
);
ansi_case!(
    ansi_leading_cr,
    "handles \\r at the start of text",
    "\rhello",
    "hello"
);
ansi_case!(
    ansi_single_backspace,
    "simulates single backspace",
    "abc\x08d",
    "abd"
);
ansi_case!(
    ansi_multiple_backspaces,
    "simulates multiple consecutive backspaces",
    "abcd\x08\x08\x08",
    "a"
);
ansi_case!(
    ansi_backspace_at_start,
    "backspace at start is no-op",
    "\x08hello",
    "hello"
);
ansi_case!(
    ansi_backspace_replacement,
    "backspace with replacement character",
    "abc\x08\x08xy",
    "axy"
);
ansi_case!(ansi_strips_nul, "strips null bytes", "hel\x00lo", "hello");
ansi_case!(
    ansi_strips_bell,
    "strips bell character",
    "done\x07",
    "done"
);
ansi_case!(
    ansi_preserves_tabs,
    "preserves tabs",
    "col1\tcol2",
    "col1\tcol2"
);
ansi_case!(
    ansi_preserves_newlines,
    "preserves newlines",
    "line1\nline2",
    "line1\nline2"
);
ansi_case!(
    ansi_strips_mixed_controls,
    "strips mixed control characters",
    "a\x01b\x02c\x7fd",
    "abcd"
);
ansi_case!(
    ansi_cr_erase_eol,
    "\\r + erase-to-EOL clears trailing chars from previous write",
    "Loading... 100%\r\x1b[KDone",
    "Done"
);
ansi_case!(
    ansi_cr_erase_eol_explicit,
    "\\r + \\x1b[0K (explicit param) clears trailing chars",
    "Loading... 100%\r\x1b[0KDone",
    "Done"
);
ansi_case!(
    ansi_erase_line,
    "\\x1b[2K erases entire line",
    "old content\x1b[2Knew",
    "new"
);
ansi_case!(
    ansi_erase_eol_mid_line,
    "erase-to-EOL mid-line truncates at cursor position",
    "foobar\rfoo\x1b[K",
    "foo"
);
ansi_case!(
    ansi_progress_bar_erase_eol,
    "progress bar with \\r + erase-to-EOL",
    "Downloading 10%\r\x1b[KDownloading 50%\r\x1b[KDownloading 100%\r\x1b[KDone!",
    "Done!"
);

#[tokio::test]
/// test/ansi.test.js: standalone erase-to-EOL without \r does not leak sentinel
async fn ansi_standalone_erase_eol() {
    assert_eq!(exec_printf("foobar\x1b[K").await, "foobar");
    assert_eq!(
        exec_printf("hello world\x1b[K done").await,
        "hello world done"
    );
}

ansi_case!(
    ansi_erase_eol_with_colors,
    "erase-to-EOL with ANSI colors",
    "\x1b[32mlong output\x1b[0m\r\x1b[K\x1b[32mshort\x1b[0m",
    "short"
);
ansi_case!(
    ansi_codes_and_cr,
    "ANSI codes + carriage return overwrite",
    "\x1b[32mLoading 10%\x1b[0m\r\x1b[32mLoading 100%\x1b[0m",
    "Loading 100%"
);
ansi_case!(
    ansi_codes_backspace_controls,
    "ANSI codes + backspace + control chars",
    "\x1b[1mhelo\x08\x08llo\x1b[0m\x07",
    "hello"
);
ansi_case!(
    ansi_npm_progress_bar,
    "realistic npm-style progress bar",
    "\x1b[32m⸩\x1b[0m ░░░░░░░░░░░░░░░░░░ 0/10\r\x1b[32m⸩\x1b[0m ██░░░░░░░░░░░░░░░░ 1/10\r\x1b[32m⸩\x1b[0m ████████████████░░ 9/10\r\x1b[32m⸩\x1b[0m ██████████████████ 10/10",
    "⸩ ██████████████████ 10/10"
);

#[tokio::test]
/// test/ansi.test.js: marker parsing compatibility — markers survive \r processing (here:
/// text that looks like upstream's markers is output like any other)
async fn ansi_marker_like_text_survives() {
    let got =
        exec_printf("__MCP_PRE_def456__\r\ncommand output\r\n__MCP_DONE_abc123___0__\r\n").await;
    let lines: Vec<&str> = got.split('\n').collect();
    assert!(lines.contains(&"__MCP_PRE_def456__"), "{got}");
    assert!(
        lines.iter().any(|l| l.contains("__MCP_DONE_abc123__")),
        "{got}"
    );
}

// ---- test/tools.test.js ----

/// A session in the preset and its id.
async fn session(server: &Server, args: Value) -> String {
    let s = server.ok("terminal_start", args).await;
    s["sessionId"].as_str().unwrap().to_string()
}

#[tokio::test]
/// test/tools.test.js: terminal_list returns compact JSON content (and "tools source does not
/// pretty-print JSON responses": the text block is the compact JSON)
async fn tools_terminal_list_compact_json() {
    let server = preset().await;
    let dir = tempfile::tempdir().unwrap();
    let id = session(&server, json!({"cwd": dir.path()})).await;
    let result = server.call("terminal_list", json!({})).await;
    let text = common::text(&result);
    let v: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(text, v.to_string(), "compact JSON text");
    assert_eq!(v["count"], 1, "{v}");
    assert_eq!(v["sessions"][0]["id"], id);
    assert_eq!(v["sessions"].as_array().unwrap().len(), 1);
    server.stop().await;
}

#[tokio::test]
/// test/tools.test.js: terminal_list forwards verbose=false for minimal output;
/// test/pty-session.test.js: getInfo can return minimal terminal_list metadata
async fn tools_terminal_list_minimal() {
    let server = preset().await;
    let dir = tempfile::tempdir().unwrap();
    let id = session(&server, json!({"cwd": dir.path(), "name": "main"})).await;
    let v = server.ok("terminal_list", json!({"verbose": false})).await;
    server.stop().await;
    let cwd = std::fs::canonicalize(dir.path()).unwrap();
    assert_eq!(
        v,
        json!({"sessions": [{"id": id, "name": "main", "cwd": cwd, "alive": true, "busy": false}], "count": 1})
    );
}

#[tokio::test]
/// test/tools.test.js: tool schemas keep agent-friendly default output sizes
async fn tools_schema_defaults() {
    let server = preset().await;
    let listed = tools(&server).await;
    server.stop().await;
    let default = |tool: &str, param: &str| -> Value {
        listed[tool].input_schema["properties"][param]["default"].clone()
    };
    let got = json!({
        "terminalExecMaxLines": default("terminal_exec", "maxLines"),
        "terminalReadMaxLines": default("terminal_read", "maxLines"),
        "terminalHistoryMaxLines": default("terminal_get_history", "maxLines"),
        "terminalHistoryFormat": default("terminal_get_history", "format"),
        "terminalRunPagedPageSize": default("terminal_run_paged", "pageSize"),
        "terminalRunParseOnly": default("terminal_run", "parseOnly"),
        "terminalRunSummary": default("terminal_run", "summary"),
        "terminalRunSuccessExitCode": default("terminal_run", "successExitCode"),
        "terminalRunPagedSummary": default("terminal_run_paged", "summary"),
        "terminalListVerbose": default("terminal_list", "verbose"),
    });
    assert_eq!(
        got,
        json!({
            "terminalExecMaxLines": 200,
            "terminalReadMaxLines": 200,
            "terminalHistoryMaxLines": 200,
            "terminalHistoryFormat": "lines",
            "terminalRunPagedPageSize": 100,
            "terminalRunParseOnly": false,
            "terminalRunSummary": false,
            "terminalRunSuccessExitCode": 0,
            "terminalRunPagedSummary": false,
            "terminalListVerbose": true,
        })
    );
}

#[tokio::test]
/// test/tools.test.js: terminal_start returns compact session metadata
async fn tools_terminal_start_metadata() {
    let server = preset().await;
    let dir = tempfile::tempdir().unwrap();
    let s = server
        .ok(
            "terminal_start",
            json!({"cols": 140, "rows": 40, "cwd": dir.path(), "name": "smc-verify"}),
        )
        .await;
    let mut keys: Vec<&str> = s.as_object().unwrap().keys().map(String::as_str).collect();
    keys.sort_unstable();
    assert_eq!(
        keys,
        ["banner", "cwd", "sessionId", "shell", "shellType"],
        "{s}"
    );
    assert!(!s["banner"].as_str().unwrap().is_empty(), "{s}");
    let list = server.ok("terminal_list", json!({})).await;
    server.stop().await;
    let info = &list["sessions"][0];
    assert_eq!(
        (info["cols"].clone(), info["rows"].clone()),
        (json!(140), json!(40)),
        "{list}"
    );
    assert_eq!(info["name"], "smc-verify");
}

#[tokio::test]
/// test/tools.test.js: terminal_start stops a created session when banner startup fails
/// (here: a shell that cannot start); test/session-manager.test.js: SessionManager.create
/// rejects unknown shell before creating a session
async fn tools_terminal_start_failure_stops_session() {
    let server = preset().await;
    let e = server
        .err(
            "terminal_start",
            json!({"shell": "nonexistent-shell-abc123"}),
        )
        .await;
    assert!(
        e.contains("Shell \"nonexistent-shell-abc123\" not found"),
        "{e}"
    );
    assert!(
        e.to_lowercase()
            .contains("call terminal_start with no shell parameter"),
        "{e}"
    );
    let list = server.ok("terminal_list", json!({})).await;
    server.stop().await;
    assert_eq!(list["count"], 0, "{list}");
}

#[tokio::test]
/// test/tools.test.js: terminal_run forwards summary mode for concise output
async fn tools_terminal_run_summary() {
    let server = preset().await;
    let r = server
        .ok(
            "terminal_run",
            json!({"cmd": "which", "args": ["which"], "parse": false, "summary": true}),
        )
        .await;
    server.stop().await;
    assert_eq!(r["stdout"]["raw"], "");
    assert_eq!(r["stdout"]["parsed"], Value::Null);
    assert!(
        r["stdout"]["summary"]["pathCount"].as_u64().unwrap() > 0,
        "{r}"
    );
}

#[tokio::test]
/// test/tools.test.js: terminal_run can re-evaluate success from a file pattern
async fn tools_terminal_run_success_file() {
    let (r, log, _dir) = success_file_case("BUILD FAILED").await;
    assert_eq!(r["ok"], false, "{r}");
    assert_eq!(r["exitCode"], 0);
    assert_eq!(r["checks"]["exitCode"]["ok"], true);
    assert_eq!(r["checks"]["successFile"]["matched"], false);
    assert_eq!(r["checks"]["successFile"]["path"], json!(log));
}

#[tokio::test]
/// test/tools.test.js: terminal_read rejects idleTimeout values that are not less than timeout
async fn tools_terminal_read_idle_timeout_below_timeout() {
    let server = preset().await;
    // Refused before the session is looked up, as upstream does.
    let e = server
        .err(
            "terminal_read",
            json!({"sessionId": "s1", "timeout": 500, "idleTimeout": 500}),
        )
        .await;
    server.stop().await;
    assert!(e.contains("idleTimeout must be less than timeout."), "{e}");
}

#[tokio::test]
/// test/tools.test.js: terminal_run_paged can return summaries for read-only commands
async fn tools_terminal_run_paged_summary() {
    let server = preset().await;
    let r = server
        .ok(
            "terminal_run_paged",
            json!({"cmd": "which", "args": ["which"], "page": 0, "pageSize": 5, "summary": true}),
        )
        .await;
    server.stop().await;
    assert_eq!(r["stdout"]["raw"], "", "{r}");
    assert_eq!(r["stdout"]["parsed"], Value::Null);
    assert!(
        r["stdout"]["summary"]["pathCount"].as_u64().unwrap() > 0,
        "{r}"
    );
    assert!(r["pageInfo"]["totalLines"].as_u64().unwrap() > 0);
}

#[tokio::test]
/// test/tools.test.js: terminal_get_history forwards format and returns text payloads;
/// test/pty-session.test.js: getHistory can return text mode with the same metadata
async fn tools_terminal_get_history_text() {
    let server = preset().await;
    let id = session(&server, json!({})).await;
    server
        .ok(
            "terminal_exec",
            json!({"sessionId": id, "command": "printf 'line 1\\nline 2\\nline 3\\n'"}),
        )
        .await;
    let all = server
        .ok("terminal_get_history", json!({"sessionId": id}))
        .await;
    let lines: Vec<&str> = all["lines"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l.as_str().unwrap())
        .collect();
    // The newest line is the prompt; skip it and take the two before.
    let at = lines.iter().rposition(|l| *l == "line 3").unwrap();
    let offset = lines.len() - 1 - at;
    let r = server
        .ok(
            "terminal_get_history",
            json!({"sessionId": id, "offset": offset, "maxLines": 2, "format": "text"}),
        )
        .await;
    server.stop().await;
    let total = all["totalLines"].as_u64().unwrap();
    assert_eq!(
        r,
        json!({
            "sessionId": id,
            "text": "line 2\nline 3",
            "totalLines": total,
            "returnedFrom": total - offset as u64 - 2,
            "returnedTo": total - offset as u64,
        })
    );
}

/// A session whose output after the returned position is `lines` (then quiet for 5 s).
async fn printed_lines(server: &Server, lines: &str) -> (String, u64) {
    let id = session(server, json!({})).await;
    let before = server
        .ok(
            "terminal_read",
            json!({"sessionId": id, "idleTimeout": 100, "timeout": 5000}),
        )
        .await;
    let since = before["position"].as_u64().unwrap();
    server
        .ok(
            "terminal_write",
            json!({"sessionId": id, "data": format!("printf {}; sleep 5\r", printf_arg(lines))}),
        )
        .await;
    (id, since)
}

#[tokio::test]
/// test/tools.test.js: terminal_wait forwards returnMode and tailLines;
/// test/pty-session.test.js: waitForPattern can return the full output
async fn tools_terminal_wait_full() {
    let server = preset().await;
    let (id, since) = printed_lines(&server, "line 1\nline 2\nready\n").await;
    let r = server
        .ok(
            "terminal_wait",
            json!({"sessionId": id, "pattern": "^ready$", "since": since, "timeout": 20000, "returnMode": "full", "tailLines": 1}),
        )
        .await;
    server.stop().await;
    assert_eq!(r["matched"], true, "{r}");
    assert_eq!(r["timedOut"], false);
    assert!(
        r["output"]
            .as_str()
            .unwrap()
            .ends_with("line 1\nline 2\nready"),
        "{r}"
    );
}

#[tokio::test]
/// test/pty-session.test.js: waitForPattern returns only the tail by default
async fn pty_session_wait_tail_by_default() {
    let server = preset().await;
    let (id, since) = printed_lines(&server, "line 1\nline 2\nline 3\nready\n").await;
    let r = server
        .ok(
            "terminal_wait",
            json!({"sessionId": id, "pattern": "^ready$", "since": since, "timeout": 20000, "tailLines": 2}),
        )
        .await;
    server.stop().await;
    assert_eq!(
        (
            r["output"].clone(),
            r["matched"].clone(),
            r["timedOut"].clone()
        ),
        (json!("line 3\nready"), json!(true), json!(false)),
        "{r}"
    );
}

#[tokio::test]
/// test/pty-session.test.js: waitForPattern can suppress output entirely
async fn pty_session_wait_match_only() {
    let server = preset().await;
    let (id, since) = printed_lines(&server, "booting\nready\n").await;
    let r = server
        .ok(
            "terminal_wait",
            json!({"sessionId": id, "pattern": "^ready$", "since": since, "timeout": 20000, "returnMode": "match-only"}),
        )
        .await;
    server.stop().await;
    assert_eq!(
        (r["output"].clone(), r["matched"].clone()),
        (json!(""), json!(true)),
        "{r}"
    );
}

#[tokio::test]
/// test/pty-session.test.js: waitForPattern returns only the configured tail on timeout
async fn pty_session_wait_tail_on_timeout() {
    let server = preset().await;
    let (id, since) = printed_lines(&server, "line 1\nline 2\nline 3\n").await;
    let r = server
        .ok(
            "terminal_wait",
            json!({"sessionId": id, "pattern": "^ready$", "since": since, "timeout": 1500, "tailLines": 1}),
        )
        .await;
    server.stop().await;
    assert_eq!(
        (
            r["output"].clone(),
            r["matched"].clone(),
            r["timedOut"].clone()
        ),
        (json!("line 3"), json!(false), json!(true)),
        "{r}"
    );
}

#[tokio::test]
/// test/pty-session.test.js: waitForPattern rejects invalid regex patterns
async fn pty_session_wait_invalid_regex() {
    let server = preset().await;
    let id = session(&server, json!({})).await;
    let e = server
        .err(
            "terminal_wait",
            json!({"sessionId": id, "pattern": "(", "timeout": 1000}),
        )
        .await;
    server.stop().await;
    assert!(e.contains("Invalid regex pattern in pattern"), "{e}");
}

#[tokio::test]
/// test/tools.test.js: terminal_retry returns retry results as compact JSON
async fn tools_terminal_retry_compact() {
    let server = preset().await;
    let dir = tempfile::tempdir().unwrap();
    let id = session(&server, json!({"cwd": dir.path()})).await;
    let r = server
        .ok(
            "terminal_retry",
            json!({"sessionId": id, "command": "echo ok", "maxRetries": 0, "backoff": "fixed", "delayMs": 10, "timeout": 5000, "maxLines": 25, "successExitCode": 0, "successPattern": null}),
        )
        .await;
    server.stop().await;
    let cwd = std::fs::canonicalize(dir.path()).unwrap();
    assert_eq!(
        r,
        json!({
            "success": true,
            "attempts": 1,
            "lastResult": {"output": "ok", "exitCode": 0, "cwd": cwd, "timedOut": false},
            "history": [{"attempt": 1, "output": "ok", "exitCode": 0, "cwd": cwd, "timedOut": false}],
        })
    );
}

#[tokio::test]
/// test/tools.test.js: terminal_diff returns diff results as compact JSON
async fn tools_terminal_diff_compact() {
    let server = preset().await;
    let id = session(&server, json!({})).await;
    let r = server
        .ok(
            "terminal_diff",
            json!({"sessionId": id, "commandA": "echo alpha", "commandB": "echo beta", "timeout": 4321, "maxLines": 30, "contextLines": 2}),
        )
        .await;
    server.stop().await;
    assert_eq!(r["identical"], false, "{r}");
    let diff = r["diff"].as_str().unwrap();
    assert!(diff.contains("--- echo alpha"), "{diff}");
    assert!(diff.contains("+++ echo beta"), "{diff}");
}

// ---- test/smart-tools.test.js ----

#[tokio::test]
/// test/smart-tools.test.js: execWithRetry retries until the exit code and pattern succeed
async fn smart_tools_retry_until_success() {
    let server = preset().await;
    let dir = tempfile::tempdir().unwrap();
    let id = session(&server, json!({"cwd": dir.path()})).await;
    let r = server
        .ok(
            "terminal_retry",
            json!({
                "sessionId": id,
                "command": "if [ -f flag ]; then echo service ready; else touch flag; echo booting; false; fi",
                "maxRetries": 2, "backoff": "fixed", "delayMs": 10, "timeout": 5000, "maxLines": 50,
                "successPattern": "ready",
            }),
        )
        .await;
    server.stop().await;
    assert_eq!(r["success"], true, "{r}");
    assert_eq!(r["attempts"], 2);
    assert_eq!(r["lastResult"]["output"], "service ready");
    assert_eq!(r["history"].as_array().unwrap().len(), 2);
    assert_eq!(r["history"][0]["output"], "booting");
}

#[tokio::test]
/// test/smart-tools.test.js: execWithRetry rejects invalid success patterns
async fn smart_tools_retry_invalid_pattern() {
    let server = preset().await;
    let id = session(&server, json!({})).await;
    let e = server
        .err(
            "terminal_retry",
            json!({"sessionId": id, "command": "true", "successPattern": "("}),
        )
        .await;
    server.stop().await;
    assert!(e.contains("Invalid regex pattern in successPattern"), "{e}");
}

#[tokio::test]
/// test/smart-tools.test.js: execAndDiff returns a unified diff for changed output
async fn smart_tools_diff_unified() {
    let server = preset().await;
    let id = session(&server, json!({})).await;
    let r = server
        .ok(
            "terminal_diff",
            json!({"sessionId": id, "commandA": "printf 'alpha\\nbeta\\n'", "commandB": "printf 'alpha\\ngamma\\n'", "timeout": 5000, "maxLines": 20, "contextLines": 1}),
        )
        .await;
    server.stop().await;
    assert_eq!(r["identical"], false);
    let diff = r["diff"].as_str().unwrap();
    for want in [
        "--- printf 'alpha\\nbeta\\n'",
        "+++ printf 'alpha\\ngamma\\n'",
        "-beta",
        "+gamma",
    ] {
        assert!(diff.contains(want), "{want} in {diff}");
    }
}

// ---- test/pty-session.test.js ----

#[tokio::test]
/// test/pty-session.test.js: buildSessionEnv applies anti-blocking environment defaults
/// (a session's own env cannot turn the pager back on)
async fn pty_session_env_anti_blocking_defaults() {
    let server = preset().await;
    let id = session(
        &server,
        json!({"env": {"CUSTOM_ENV": "yes", "GIT_PAGER": "less"}}),
    )
    .await;
    let r = server
        .ok(
            "terminal_exec",
            json!({"sessionId": id, "command": "printf '%s|' \"$CUSTOM_ENV\" \"$GIT_PAGER\" \"$PAGER\" \"$LESS\" \"$TERM\" \"$DEBIAN_FRONTEND\"; echo"}),
        )
        .await;
    server.stop().await;
    assert_eq!(
        r["output"], "yes|cat|cat|-FRX|xterm-256color|noninteractive|",
        "{r}"
    );
}

#[tokio::test]
/// test/pty-session.test.js: _parseOutput ignores echoed wrapper text and keeps real output
async fn pty_session_output_without_echo() {
    let server = preset().await;
    let dir = tempfile::tempdir().unwrap();
    let id = session(&server, json!({"cwd": dir.path()})).await;
    let r = server
        .ok(
            "terminal_exec",
            json!({"sessionId": id, "command": "echo hi"}),
        )
        .await;
    server.stop().await;
    let cwd = std::fs::canonicalize(dir.path()).unwrap();
    assert_eq!(
        (r["output"].clone(), r["exitCode"].clone(), r["cwd"].clone()),
        (json!("hi"), json!(0), json!(cwd)),
        "{r}"
    );
}

#[tokio::test]
/// test/pty-session.test.js: _truncateOutput keeps the head and tail when output exceeds maxLines
async fn pty_session_truncate_head_and_tail() {
    let server = preset().await;
    let id = session(&server, json!({})).await;
    let r = server
        .ok(
            "terminal_exec",
            json!({"sessionId": id, "command": "for i in 1 2 3 4 5 6; do echo \"line $i\"; done", "maxLines": 4}),
        )
        .await;
    server.stop().await;
    assert_eq!(
        r["output"], "line 1\nline 2\n\n... 2 lines omitted ...\n\nline 5\nline 6",
        "{r}"
    );
}

#[tokio::test]
/// test/pty-session.test.js: read returns unread buffered output once
async fn pty_session_read_returns_output_once() {
    let server = preset().await;
    let id = session(&server, json!({})).await;
    server
        .ok(
            "terminal_write",
            json!({"sessionId": id, "data": "echo hi\r"}),
        )
        .await;
    let first = server
        .ok(
            "terminal_read",
            json!({"sessionId": id, "timeout": 20000, "idleTimeout": 500}),
        )
        .await;
    let second = server
        .ok(
            "terminal_read",
            json!({"sessionId": id, "timeout": 5000, "idleTimeout": 100}),
        )
        .await;
    server.stop().await;
    let out = first["output"].as_str().unwrap();
    assert!(out.contains("echo hi\nhi"), "{first}");
    assert_eq!(first["timedOut"], false);
    assert_eq!(second["output"], "", "{second}");
}

#[tokio::test]
/// test/pty-session.test.js: getHistory keeps the broader default history limit for agent context
async fn pty_session_history_default_limit() {
    let server = preset().await;
    let id = session(&server, json!({})).await;
    server
        .ok(
            "terminal_exec",
            json!({"sessionId": id, "command": "i=1; while [ $i -le 220 ]; do echo \"line $i\"; i=$((i+1)); done"}),
        )
        .await;
    let r = server
        .ok("terminal_get_history", json!({"sessionId": id}))
        .await;
    server.stop().await;
    let lines = r["lines"].as_array().unwrap();
    assert_eq!(lines.len(), 200, "{r}");
    let total = r["totalLines"].as_u64().unwrap();
    assert_eq!(r["returnedTo"].as_u64().unwrap(), total);
    assert_eq!(r["returnedFrom"].as_u64().unwrap(), total - 200);
    assert!(lines.iter().any(|l| l == "line 220"), "{r}");
    assert!(
        !lines.iter().any(|l| l == "line 1"),
        "the newest lines: {r}"
    );
}

#[tokio::test]
/// test/pty-session.test.js: _readUntilIdle collects streamed data even if the buffer shifts
/// (a read collects every chunk that streams in until the output is idle)
async fn pty_session_read_collects_streamed_chunks() {
    let server = preset().await;
    let id = session(&server, json!({})).await;
    server
        .ok(
            "terminal_write",
            json!({"sessionId": id, "data": "printf first; sleep 0.2; printf second; echo\r"}),
        )
        .await;
    let r = server
        .ok(
            "terminal_wait",
            json!({"sessionId": id, "pattern": "^firstsecond$", "since": 0, "timeout": 20000, "returnMode": "full"}),
        )
        .await;
    server.stop().await;
    assert_eq!(r["matched"], true, "{r}");
}

// ---- test/session-manager.test.js ----

#[tokio::test]
/// test/session-manager.test.js: resolveSessionCwd returns an absolute directory path
async fn session_manager_cwd_is_absolute() {
    let server = preset().await;
    let dir = tempfile::tempdir().unwrap();
    let s = server
        .ok("terminal_start", json!({"cwd": dir.path()}))
        .await;
    server.stop().await;
    let cwd = s["cwd"].as_str().unwrap();
    assert!(Path::new(cwd).is_absolute(), "{s}");
    assert_eq!(
        std::fs::canonicalize(cwd).unwrap(),
        std::fs::canonicalize(dir.path()).unwrap()
    );
}

#[tokio::test]
/// test/session-manager.test.js: SessionManager.create rejects invalid cwd before creating a session
async fn session_manager_rejects_missing_cwd() {
    let server = preset().await;
    let missing = std::env::temp_dir().join("smart-terminal-mcp-missing-upstream-test");
    let e = server.err("terminal_start", json!({"cwd": missing})).await;
    let list = server.ok("terminal_list", json!({})).await;
    server.stop().await;
    assert_eq!(
        e,
        format!(
            "Invalid cwd \"{}\": Path does not exist (ENOENT)",
            missing.display()
        )
    );
    assert_eq!(list["count"], 0);
}

#[tokio::test]
/// test/session-manager.test.js: SessionManager.create rejects file cwd values
async fn session_manager_rejects_file_cwd() {
    let server = preset().await;
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("not-a-directory.txt");
    std::fs::write(&file, "hello").unwrap();
    let e = server.err("terminal_start", json!({"cwd": file})).await;
    let list = server.ok("terminal_list", json!({})).await;
    server.stop().await;
    assert!(e.contains("Path is not a directory"), "{e}");
    assert_eq!(list["count"], 0);
}

#[tokio::test]
/// test/tools.test.js: tool metadata stays concise
async fn tools_metadata_stays_concise() {
    let server = preset().await;
    let listed = tools(&server).await;
    server.stop().await;
    let banned = regex::Regex::new(r"(?i)\(default:|e\.g\.|Defaults to|such as").unwrap();
    let mut problems = Vec::new();
    for (name, tool) in &listed {
        let description = tool.description.as_deref().unwrap_or_default();
        if description.chars().count() > 70 {
            problems.push(format!("{name} description is too long: {description}"));
        }
        if description.contains("Supported keys:") {
            problems.push(format!("{name} description lists keys"));
        }
        let props = tool.input_schema["properties"].as_object().unwrap();
        for (field, schema) in props {
            let d = schema["description"].as_str().unwrap_or_default();
            if d.chars().count() > 30 || banned.is_match(d) {
                problems.push(format!("{name}.{field} description: {d}"));
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
