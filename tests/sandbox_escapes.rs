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
