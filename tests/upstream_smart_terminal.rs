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
