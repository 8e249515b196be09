//! The sandbox against a hostile agent (issue 30): what a caller puts in a child's
//! environment runs nothing before confinement (real libraries built here with `cc`), the file
//! tools cannot be raced out of the write roots by a real symlink-flipping process, the paths
//! the server writes and reads for the agent obey the same rules, and termpilot's own HTTP
//! token is unreadable from inside.
#![cfg(target_os = "linux")]

mod common;

use std::path::{Path, PathBuf};

use common::procs::has;
use common::{Era, Server, start_with};
use serde_json::{Value, json};

/// A write root, a directory outside it, and a fake home with a secret.
struct Fixture {
    _dir: tempfile::TempDir,
    root: PathBuf,
    outside: PathBuf,
    home: PathBuf,
}

impl Fixture {
    fn new() -> Fixture {
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path().canonicalize().unwrap();
        let (root, outside, home) = (base.join("root"), base.join("outside"), base.join("home"));
        for d in [&root, &outside, &home.join(".ssh")] {
            std::fs::create_dir_all(d).unwrap();
        }
        std::fs::write(home.join(".ssh/id_test"), "SECRET-KEY-abc\n").unwrap();
        Fixture {
            _dir: dir,
            root,
            outside,
            home,
        }
    }

    fn envs(&self) -> Vec<(&str, &str)> {
        vec![
            ("HOME", self.home.to_str().unwrap()),
            ("TERMPILOT_CWD", self.root.to_str().unwrap()),
        ]
    }

    /// A server with `args` (`--sandbox …` among them, or not) whose write root is `root`.
    async fn server(&self, args: &[&str]) -> Server {
        let mut all = vec!["--writable", self.root.to_str().unwrap()];
        all.extend_from_slice(args);
        start_with(Era::Initialize, &all, &self.envs()).await
    }
}

/// Builds `lib` from C `source` with `cc -shared -fPIC` (and `extra` arguments).
fn cc(source: &str, lib: &Path, extra: &[&str]) {
    assert!(has("cc"), "the sandbox escape tests need a C compiler (cc)");
    let dir = lib.parent().unwrap();
    let c = dir.join(format!("{}.c", lib.file_name().unwrap().to_string_lossy()));
    std::fs::write(&c, source).unwrap();
    let out = std::process::Command::new("cc")
        .args(["-shared", "-fPIC", "-o"])
        .arg(lib)
        .arg(&c)
        .args(extra)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "cc: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A library whose constructor (and `la_version`, the entry point of an `LD_AUDIT` module)
/// appends a line to `marker`.
fn planting(marker: &Path) -> String {
    format!(
        r#"#include <fcntl.h>
#include <unistd.h>
static void mark(void) {{
    int fd = open("{}", O_WRONLY | O_CREAT | O_APPEND, 0644);
    if (fd >= 0) {{ write(fd, "ran\n", 4); close(fd); }}
}}
__attribute__((constructor)) static void planted(void) {{ mark(); }}
unsigned int la_version(unsigned int v) {{ mark(); return v; }}
"#,
        marker.display()
    )
}

/// The three ways into the dynamic loader, each with the library (or folder) it names and the
/// file its code would create outside the write root.
struct Planted {
    vars: Vec<(&'static str, String, PathBuf)>,
    _dir: tempfile::TempDir,
}

/// Builds the libraries inside `root` (where a sandboxed agent could build them too).
fn plant(f: &Fixture) -> Planted {
    let dir = tempfile::tempdir_in(&f.root).unwrap();
    let d = dir.path();
    let preload = d.join("preload.so");
    cc(&planting(&f.outside.join("by-preload")), &preload, &[]);
    let audit = d.join("audit.so");
    cc(&planting(&f.outside.join("by-audit")), &audit, &[]);
    // LD_LIBRARY_PATH: a libgcc_s.so.1 of our own, found before the real one, which it loads
    // under another name so every symbol termpilot needs is still there.
    let real = ldd_path(common::BIN, "libgcc_s.so.1");
    let libs = d.join("lib");
    let stub = d.join("stub");
    std::fs::create_dir_all(&libs).unwrap();
    std::fs::create_dir_all(&stub).unwrap();
    cc("void stub(void) {}\n", &stub.join("libgcc_real.so.1"), &[]);
    cc(
        &planting(&f.outside.join("by-library-path")),
        &libs.join("libgcc_s.so.1"),
        &[
            "-Wl,-soname,libgcc_s.so.1",
            "-Wl,--no-as-needed",
            &format!("-L{}", stub.display()),
            "-l:libgcc_real.so.1",
        ],
    );
    std::os::unix::fs::symlink(real, libs.join("libgcc_real.so.1")).unwrap();
    Planted {
        vars: vec![
            (
                "LD_PRELOAD",
                preload.display().to_string(),
                f.outside.join("by-preload"),
            ),
            (
                "LD_AUDIT",
                audit.display().to_string(),
                f.outside.join("by-audit"),
            ),
            (
                "LD_LIBRARY_PATH",
                libs.display().to_string(),
                f.outside.join("by-library-path"),
            ),
        ],
        _dir: dir,
    }
}

/// Where `ldd` says `bin` finds `lib`.
fn ldd_path(bin: &str, lib: &str) -> PathBuf {
    let out = std::process::Command::new("ldd").arg(bin).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    let line = text
        .lines()
        .find(|l| l.trim_start().starts_with(lib))
        .unwrap_or_else(|| panic!("termpilot does not load {lib}: {text}"));
    PathBuf::from(
        line.split("=>")
            .nth(1)
            .unwrap()
            .split_whitespace()
            .next()
            .unwrap(),
    )
}

/// Proves the planted libraries work: run outside any sandbox, each one leaves its marker.
fn planted_libraries_work(p: &Planted) {
    for (var, value, marker) in &p.vars {
        let out = std::process::Command::new(common::BIN)
            .arg("--version")
            .env(var, value)
            .output()
            .unwrap();
        assert!(out.status.success(), "{var}: {out:?}");
        assert!(marker.exists(), "{var} did not run its library");
        std::fs::remove_file(marker).unwrap();
    }
}

fn assert_nothing_ran(p: &Planted, how: &str) {
    for (var, _, marker) in &p.vars {
        assert!(
            !marker.exists(),
            "{var} ran code outside the sandbox through {how}"
        );
    }
}

#[tokio::test]
async fn loader_variables_run_nothing_before_confinement() {
    if !has("cc") || !has("bash") {
        common::procs::skip("sandbox escapes: needs cc and bash");
        return;
    }
    let f = Fixture::new();
    let p = plant(&f);
    planted_libraries_work(&p);
    let env: Value = p
        .vars
        .iter()
        .map(|(k, v, _)| (k.to_string(), json!(v)))
        .collect::<serde_json::Map<_, _>>()
        .into();
    for mode in ["workspace-write", "read-only"] {
        let server = f.server(&["--sandbox", mode]).await;
        for (var, value, _) in &p.vars {
            // Each variable alone, so one cannot hide another's failure.
            let r = server
                .ok(
                    "terminal_run",
                    json!({"cmd": "printenv", "args": [var], "env": {*var: value}}),
                )
                .await;
            assert_nothing_ran(&p, &format!("terminal_run ({mode})"));
            // The program itself still gets the caller's environment.
            assert_eq!(r["exitCode"], 0, "{r}");
            assert!(r.to_string().contains(value.as_str()), "{r}");
        }
        let started = server
            .ok(
                "terminal_start",
                json!({"shell": "bash", "env": env.clone()}),
            )
            .await;
        let id = started["sessionId"].as_str().unwrap();
        let r = common::exec(&server, id, "printenv LD_PRELOAD").await;
        assert!(r["output"].as_str().unwrap().contains("preload.so"), "{r}");
        assert_nothing_ran(&p, &format!("terminal_start ({mode})"));
        server.stop().await;
    }
    // A session that asks for the sandbox on a server without one.
    let server = f.server(&[]).await;
    server
        .ok(
            "terminal_start",
            json!({"shell": "bash", "env": env.clone(), "sandbox": "workspace-write"}),
        )
        .await;
    assert_nothing_ran(&p, "terminal_start (sandbox parameter)");
    server.stop().await;
    // cowork's one tool.
    for mode in ["workspace-write", "read-only"] {
        let server = f.server(&["--compat", "cowork", "--sandbox", mode]).await;
        let r = server
            .ok(
                "execute_command",
                json!({"command": "printenv LD_AUDIT", "env": env.clone()}),
            )
            .await;
        assert_nothing_ran(&p, &format!("execute_command ({mode})"));
        assert!(r["stdout"].as_str().unwrap().contains("audit.so"), "{r}");
        server.stop().await;
    }
}

/// Flips, as fast as it can until killed: `root/d` between a link to `real` (inside) and a
/// link to `out`; `real/f` and `real/g` between regular files and links to files in `out`;
/// and `real` itself between the folder and a link to `out`.
const FLIPPER: &str = r#"import os, sys
root, out = sys.argv[1], sys.argv[2]
real = os.path.join(root, "real")
def swap(link, target):
    tmp = link + ".new"
    try:
        os.symlink(target, tmp)
        os.rename(tmp, link)
    except OSError:
        pass
def put(path, text):
    tmp = path + ".new"
    try:
        with open(tmp, "w") as f:
            f.write(text)
        os.rename(tmp, path)
    except OSError:
        pass
print("flipping", flush=True)
while True:
    swap(os.path.join(root, "d"), out)
    swap(os.path.join(root, "d"), "real")
    swap(os.path.join(real, "f"), os.path.join(out, "f"))
    put(os.path.join(real, "f"), "inside\n")
    swap(os.path.join(real, "g"), os.path.join(out, "g"))
    put(os.path.join(real, "g"), "keep me\n")
    try:
        os.rename(real, real + ".away")
        os.symlink(out, real)
        os.unlink(real)
        os.rename(real + ".away", real)
    except OSError:
        pass
"#;

/// What `dir` holds: each file's name, inode and contents.
fn snapshot(dir: &Path) -> Vec<(String, u64, String)> {
    use std::os::unix::fs::MetadataExt;
    let mut all: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| {
            let e = e.unwrap();
            let meta = std::fs::symlink_metadata(e.path()).unwrap();
            let text = std::fs::read_to_string(e.path()).unwrap_or_default();
            (
                e.file_name().to_string_lossy().into_owned(),
                meta.ino(),
                text,
            )
        })
        .collect();
    all.sort();
    all
}

#[tokio::test]
async fn a_symlink_flipping_process_never_gets_a_write_outside_the_roots() {
    if !has("python3") {
        common::procs::skip("symlink race: needs python3");
        return;
    }
    let f = Fixture::new();
    let real = f.root.join("real");
    std::fs::create_dir_all(&real).unwrap();
    std::fs::write(real.join("f"), "inside\n").unwrap();
    std::fs::write(real.join("g"), "keep me\n").unwrap();
    std::os::unix::fs::symlink("real", f.root.join("d")).unwrap();
    std::fs::write(f.outside.join("f"), "outside f\n").unwrap();
    std::fs::write(f.outside.join("g"), "keep me\n").unwrap();
    let before = snapshot(&f.outside);

    let server = f.server(&["--sandbox", "workspace-write"]).await;
    let script = f._dir.path().join("flipper.py");
    std::fs::write(&script, FLIPPER).unwrap();
    let mut flipper = tokio::process::Command::new("python3")
        .arg(&script)
        .arg(&f.root)
        .arg(&f.outside)
        .stdout(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut lines = tokio::io::AsyncBufReadExt::lines(tokio::io::BufReader::new(
        flipper.stdout.take().unwrap(),
    ));
    let first = tokio::time::timeout(common::TEST_TIMEOUT, lines.next_line()).await;
    assert!(matches!(first, Ok(Ok(Some(_)))), "the flipper started");

    let mut written = 0;
    let mut edited = 0;
    for i in 0..300 {
        let paths = [f.root.join("d/f"), real.join("f")];
        for path in &paths {
            let r = server
                .call(
                    "terminal_extra",
                    json!({"tool": "terminal_write_file", "args": {"path": path, "content": format!("PWNED {i}\n")}}),
                )
                .await;
            written += usize::from(r.is_error != Some(true));
        }
        for path in [f.root.join("d/g"), real.join("g")] {
            let r = server
                .call(
                    "terminal_extra",
                    json!({"tool": "edit_file", "args": {"path": path, "oldText": "keep me", "newText": "keep me"}}),
                )
                .await;
            edited += usize::from(r.is_error != Some(true));
        }
        if i % 50 == 0 {
            assert_eq!(snapshot(&f.outside), before, "written outside by try {i}");
        }
    }
    flipper.kill().await.unwrap();
    let _ = flipper.wait().await;
    assert_eq!(
        snapshot(&f.outside),
        before,
        "a write landed outside the root"
    );
    // The race was real: most calls still went through, inside.
    assert!(
        written > 100 && edited > 50,
        "{written} writes, {edited} edits"
    );
    server.stop().await;
}

/// `successFile` is read by the server: a deny-read file is refused up front, and one a
/// sandboxed command links to during the run is judged where the link leads, never matched.
#[tokio::test]
async fn success_files_obey_the_deny_read_paths() {
    let f = Fixture::new();
    let server = f.server(&["--sandbox", "workspace-write"]).await;
    let secret = f.home.join(".ssh/id_test");
    let e = server
        .err(
            "terminal_run",
            json!({"cmd": "true", "successFile": secret, "successFilePattern": "^SECRET-KEY-abc"}),
        )
        .await;
    assert!(e.contains("deny-read"), "{e}");
    // The command itself plants a link in the write root; the server then reads the file.
    let link = f.root.join("result.log");
    let r = server
        .ok(
            "terminal_run",
            json!({"cmd": "ln", "args": ["-s", secret, &link], "cwd": f.root,
                   "successFile": link, "successFilePattern": "^SECRET-KEY-abc"}),
        )
        .await;
    assert_eq!(r["exitCode"], 0, "the link was made: {r}");
    assert!(link.is_symlink());
    assert_ne!(r["checks"]["successFile"]["matched"], true, "{r}");
    assert_eq!(r["ok"], false, "{r}");
    // The same link to a readable file does match: the check can pass.
    std::fs::write(f.root.join("fine.log"), "SECRET-KEY-abc (a test line)\n").unwrap();
    let ok_link = f.root.join("ok.log");
    let r = server
        .ok(
            "terminal_run",
            json!({"cmd": "ln", "args": ["-s", f.root.join("fine.log"), &ok_link],
                   "successFile": ok_link, "successFilePattern": "^SECRET-KEY-abc"}),
        )
        .await;
    assert_eq!(r["checks"]["successFile"]["matched"], true, "{r}");
    server.stop().await;
}

/// `terminal_stop`'s transcript lands only where a sandboxed process could write: never in
/// `~/.bashrc` or outside the write roots, not through a link, and fine inside.
#[tokio::test]
async fn transcripts_obey_the_write_roots() {
    let f = Fixture::new();
    let bashrc = f.home.join(".bashrc");
    std::fs::write(&bashrc, "# mine\n").unwrap();
    std::os::unix::fs::symlink(&f.outside, f.root.join("out")).unwrap();
    let server = f.server(&["--sandbox", "workspace-write"]).await;
    for target in [
        bashrc.clone(),
        f.outside.join("t.txt"),
        f.root.join("out/t.txt"),
    ] {
        let started = server.ok("terminal_start", json!({"shell": "bash"})).await;
        let id = started["sessionId"].as_str().unwrap();
        let e = server
            .err(
                "terminal_stop",
                json!({"sessionId": id, "transcriptPath": target, "overwrite": true}),
            )
            .await;
        assert!(e.contains("outside the write roots"), "{target:?}: {e}");
        server.ok("terminal_stop", json!({"sessionId": id})).await;
    }
    assert_eq!(std::fs::read_to_string(&bashrc).unwrap(), "# mine\n");
    assert!(std::fs::read_dir(&f.outside).unwrap().next().is_none());
    let started = server.ok("terminal_start", json!({"shell": "bash"})).await;
    let id = started["sessionId"].as_str().unwrap();
    let inside = f.root.join("t.cast");
    server
        .ok(
            "terminal_stop",
            json!({"sessionId": id, "transcriptPath": inside}),
        )
        .await;
    assert!(inside.is_file());
    server.stop().await;
}

/// An Xvfb display for the screenshot test (killed when dropped).
async fn xvfb() -> Option<(tokio::process::Child, String)> {
    let spawned = tokio::process::Command::new("Xvfb")
        .args([
            "-displayfd",
            "1",
            "-screen",
            "0",
            "320x200x24",
            "-nolisten",
            "tcp",
        ])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
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
    let mut out = tokio::io::BufReader::new(child.stdout.take().unwrap());
    tokio::time::timeout(
        common::TEST_TIMEOUT,
        tokio::io::AsyncBufReadExt::read_line(&mut out, &mut line),
    )
    .await
    .expect("Xvfb ready in time")
    .expect("Xvfb display number");
    Some((child, format!(":{}", line.trim())))
}

/// `screenshot`'s `outputPath` obeys the write roots under the sandbox; its default folder is
/// private (0700).
#[tokio::test]
async fn screenshots_obey_the_write_roots_and_default_to_a_private_folder() {
    use std::os::unix::fs::PermissionsExt;
    let Some((mut x, display)) = xvfb().await else {
        return;
    };
    let f = Fixture::new();
    let runtime = tempfile::tempdir().unwrap();
    std::fs::set_permissions(runtime.path(), std::fs::Permissions::from_mode(0o700)).unwrap();
    let mut envs = f.envs();
    envs.push(("DISPLAY", &display));
    envs.push(("XDG_RUNTIME_DIR", runtime.path().to_str().unwrap()));
    let root = f.root.to_str().unwrap();
    let server = start_with(
        Era::Initialize,
        &["--writable", root, "--sandbox", "workspace-write"],
        &envs,
    )
    .await;
    let outside = f.outside.join("shot.png");
    let e = server
        .err(
            "terminal_extra",
            json!({"tool": "screenshot", "args": {"outputPath": outside}}),
        )
        .await;
    assert!(e.contains("outside the write roots"), "{e}");
    assert!(!outside.exists());
    let inside = f.root.join("shots/shot.png");
    let r = server
        .extra("screenshot", json!({"outputPath": inside}))
        .await;
    assert!(inside.is_file(), "{r}");
    let r = server.extra("screenshot", json!({})).await;
    let default = PathBuf::from(r["path"].as_str().unwrap());
    let mode = std::fs::metadata(default.parent().unwrap())
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o700, "{}", default.display());
    server.stop().await;
    let _ = x.start_kill();
    let _ = x.wait().await;
}

/// The HTTP token file termpilot writes is denied to every sandboxed process and to the file
/// tools, wherever it is.
#[tokio::test]
async fn the_http_token_file_is_unreadable_from_the_sandbox() {
    use std::os::unix::fs::PermissionsExt;
    let f = Fixture::new();
    let runtime = tempfile::tempdir().unwrap();
    std::fs::set_permissions(runtime.path(), std::fs::Permissions::from_mode(0o700)).unwrap();
    let mut envs = f.envs();
    envs.push(("XDG_RUNTIME_DIR", runtime.path().to_str().unwrap()));
    let root = f.root.to_str().unwrap();
    let mut http = common::http::spawn(
        &[
            "--http",
            "127.0.0.1:0",
            "--writable",
            root,
            "--sandbox",
            "workspace-write",
        ],
        &envs,
    )
    .await;
    let line = tokio::time::timeout(common::TEST_TIMEOUT, http.stderr.recv())
        .await
        .unwrap()
        .unwrap();
    let path = line
        .strip_prefix("termpilot: token written to ")
        .and_then(|l| l.split(" (").next())
        .unwrap_or_else(|| panic!("no token file line: {line}"))
        .to_string();
    let token = std::fs::read_to_string(&path).unwrap().trim().to_string();
    http.token = token.clone();
    let client = http.client(Era::Initialize).await;
    let r = client
        .ok("terminal_run", json!({"cmd": "cat", "args": [path]}))
        .await;
    assert_ne!(r["exitCode"], 0, "{r}");
    assert!(!r.to_string().contains(&token), "the token leaked: {r}");
    let started = client.ok("terminal_start", json!({"shell": "bash"})).await;
    let id = started["sessionId"].as_str().unwrap();
    let out = common::exec(&client, id, &format!("cat {path}")).await;
    assert!(!out.to_string().contains(&token), "the token leaked: {out}");
    let e = client
        .err(
            "terminal_extra",
            json!({"tool": "grep_files", "args": {"pattern": ".", "path": path}}),
        )
        .await;
    assert!(e.contains("deny-read"), "{e}");
    client.stop().await;
    http.terminate().await;
}

/// A job whose logs lie in a write root (the state dir inside it) swaps its log for a link to
/// a secret: the server, reading the log for the agent, never shows what the link leads to.
#[tokio::test]
async fn a_job_cannot_swap_its_log_for_a_secret() {
    let f = Fixture::new();
    let state = f.root.join("state");
    std::fs::create_dir_all(&state).unwrap();
    let mut envs = f.envs();
    envs.push(("TERMPILOT_STATE_DIR", state.to_str().unwrap()));
    let root = f.root.to_str().unwrap();
    let server = start_with(
        Era::Initialize,
        &["--writable", root, "--sandbox", "workspace-write"],
        &envs,
    )
    .await;
    let secret = f.home.join(".ssh/id_test");
    let command = format!(
        "for d in {}/jobs/*/; do ln -sf {} \"$d/combined.log\"; ln -sf {} \"$d/stdout.log\"; done; echo swapped",
        state.display(),
        secret.display(),
        secret.display()
    );
    let job = server.extra("job_start", json!({"command": command})).await;
    let _job = common::procs::JobGuard::of(&job);
    let id = job["jobId"].as_str().unwrap().to_string();
    let r = server
        .extra("job_wait", json!({"jobId": id, "timeoutMs": 30000}))
        .await;
    let links = std::fs::read_dir(state.join("jobs"))
        .unwrap()
        .filter(|e| e.as_ref().unwrap().path().join("combined.log").is_symlink())
        .count();
    assert_eq!(links, 1, "the job swapped its log: {r}");
    assert!(!r.to_string().contains("SECRET-KEY"), "{r}");
    let s = server.extra("job_status", json!({"jobId": id})).await;
    assert!(!s.to_string().contains("SECRET-KEY"), "{s}");
    server.stop().await;
}

/// A job's unconfined `sh` wrapper runs `tee` and `mkfifo`: a program of that name planted in a
/// PATH folder inside a write root is never the one it runs, and the job still gets its PATH.
#[tokio::test]
async fn a_job_wrapper_runs_no_program_planted_on_path() {
    let f = Fixture::new();
    let bin = f.root.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let marker = f.outside.join("planted-ran");
    for name in ["tee", "mkfifo"] {
        let planted = bin.join(name);
        std::fs::write(
            &planted,
            format!(
                "#!/bin/sh\necho ran >> {}\nexec /usr/bin/{name} \"$@\"\n",
                marker.display()
            ),
        )
        .unwrap();
        std::fs::set_permissions(
            &planted,
            std::os::unix::fs::PermissionsExt::from_mode(0o755),
        )
        .unwrap();
    }
    let path = format!("{}:/usr/bin:/bin", bin.display());
    let mut envs = f.envs();
    envs.push(("PATH", &path));
    let root = f.root.to_str().unwrap();
    let server = start_with(
        Era::Initialize,
        &["--writable", root, "--sandbox", "workspace-write"],
        &envs,
    )
    .await;
    let job = server
        .extra("job_start", json!({"command": "echo \"path=$PATH\""}))
        .await;
    let _job = common::procs::JobGuard::of(&job);
    let r = server
        .extra(
            "job_wait",
            json!({"jobId": job["jobId"], "timeoutMs": 30000}),
        )
        .await;
    assert!(
        r["outputTail"].as_str().unwrap().contains(&path),
        "the job kept its PATH: {r}"
    );
    assert!(
        !marker.exists(),
        "a planted program ran outside the sandbox"
    );
    server.stop().await;
}

/// A job starts through the termpilot binary's path (it outlives the server): when that file
/// lies in a write root, where a sandboxed process could replace it, sandboxed jobs are
/// refused with a sentence and nothing is left behind; one-shots still run.
#[tokio::test]
async fn jobs_are_refused_when_the_binary_lies_in_a_write_root() {
    let f = Fixture::new();
    let copy = f.root.join("termpilot");
    if std::fs::hard_link(common::BIN, &copy).is_err() {
        std::fs::copy(common::BIN, &copy).unwrap();
    }
    let state = tempfile::tempdir().unwrap();
    let mut cmd = tokio::process::Command::new(&copy);
    cmd.args([
        "--writable",
        f.root.to_str().unwrap(),
        "--sandbox",
        "workspace-write",
    ])
    .env("TERMPILOT_STATE_DIR", state.path())
    .env("TERMPILOT_SHELL", "/bin/sh")
    .envs(f.envs())
    .kill_on_drop(true);
    let server = common::compat::start_command(cmd).await;
    let e = server
        .err(
            "terminal_extra",
            json!({"tool": "job_start", "args": {"command": "true"}}),
        )
        .await;
    assert!(
        e.contains("lies where sandboxed processes can write"),
        "{e}"
    );
    let jobs = state.path().join("jobs");
    let left = std::fs::read_dir(&jobs).map(|d| d.count()).unwrap_or(0);
    assert_eq!(left, 0, "a job directory was left behind");
    let r = server.ok("terminal_run", json!({"cmd": "true"})).await;
    assert_eq!(r["exitCode"], 0, "{r}");
    server.stop().await;
}
