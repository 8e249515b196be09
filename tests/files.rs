//! File tools end to end: terminal_write_file (encodings, append, directories, atomic
//! replacement keeping permissions, sessions), edit_file (exactly one match, failures leave
//! the file byte-for-byte unchanged) and grep_files (skips, limits, binary files, context).

mod common;

use std::fs;

use common::start;
use serde_json::json;

#[tokio::test]
async fn write_file_encodings_append_and_dirs() {
    let server = start().await;
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("new/deeper/out.txt");
    let r = server
        .extra(
            "terminal_write_file",
            json!({"path": f, "content": "héllo\n"}),
        )
        .await;
    assert_eq!(r["success"], true);
    assert_eq!(r["created"], true);
    assert_eq!(r["size"], 7);
    assert_eq!(r["path"], f.to_str().unwrap());
    let r = server
        .extra(
            "terminal_write_file",
            json!({"path": f, "content": "more", "append": true}),
        )
        .await;
    assert_eq!(
        (r["append"].clone(), r["size"].clone()),
        (json!(true), json!(11))
    );
    assert_eq!(fs::read_to_string(&f).unwrap(), "héllo\nmore");
    for (encoding, content, bytes) in [
        ("base64", "AAEC/w==", vec![0u8, 1, 2, 255]),
        ("hex", "00ff10", vec![0, 255, 16]),
        ("latin1", "é", vec![0xe9]),
        ("ascii", "ok", b"ok".to_vec()),
    ] {
        server
            .extra(
                "terminal_write_file",
                json!({"path": f, "content": content, "encoding": encoding}),
            )
            .await;
        assert_eq!(fs::read(&f).unwrap(), bytes, "{encoding}");
    }
    let e = server
        .err("terminal_extra", json!({"tool": "terminal_write_file", "args": {"path": f, "content": "é", "encoding": "ascii"}}))
        .await;
    assert!(e.contains("ascii cannot encode"), "{e}");
    assert_eq!(
        fs::read(&f).unwrap(),
        b"ok",
        "a failed write changes nothing"
    );
    let e = server
        .err("terminal_extra", json!({"tool": "terminal_write_file", "args": {"path": dir.path().join("x/y"), "content": "", "createDirs": false}}))
        .await;
    assert!(e.contains("does not exist"), "{e}");
    server.stop().await;
}

#[tokio::test]
async fn write_file_bad_paths_change_nothing() {
    let server = start().await;
    let dir = tempfile::tempdir().unwrap();
    fs::write(dir.path().join("keep"), "kept").unwrap();
    let call = |args: serde_json::Value| {
        server.err(
            "terminal_extra",
            json!({"tool": "terminal_write_file", "args": args}),
        )
    };
    let e = call(json!({"path": dir.path(), "content": "x"})).await;
    assert!(e.contains("is a directory"), "{e}");
    let e = call(json!({"path": "relative.txt", "content": "x"})).await;
    assert!(e.contains("relative path"), "{e}");
    let e = call(json!({"sessionId": "no-such", "path": "relative.txt", "content": "x"})).await;
    assert!(e.contains("No session is called `no-such`"), "{e}");
    let names: Vec<_> = fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names, vec!["keep"]);
    server.stop().await;
}

#[cfg(unix)]
#[tokio::test]
async fn replacing_is_atomic_and_keeps_permissions() {
    use std::os::unix::fs::PermissionsExt;
    let server = start().await;
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("script.sh");
    fs::write(&f, "old").unwrap();
    fs::set_permissions(&f, fs::Permissions::from_mode(0o750)).unwrap();
    let inode = std::os::unix::fs::MetadataExt::ino(&fs::metadata(&f).unwrap());
    server
        .extra(
            "terminal_write_file",
            json!({"path": f, "content": "#!/bin/sh\n"}),
        )
        .await;
    let meta = fs::metadata(&f).unwrap();
    assert_eq!(meta.permissions().mode() & 0o777, 0o750);
    assert_ne!(
        std::os::unix::fs::MetadataExt::ino(&meta),
        inode,
        "replaced by rename"
    );
    server
        .extra(
            "edit_file",
            json!({"path": f, "oldText": "sh", "newText": "bash"}),
        )
        .await;
    assert_eq!(fs::read_to_string(&f).unwrap(), "#!/bin/bash\n");
    assert_eq!(
        fs::metadata(&f).unwrap().permissions().mode() & 0o777,
        0o750
    );
    assert_eq!(
        fs::read_dir(dir.path()).unwrap().count(),
        1,
        "no temp file left"
    );
    server.stop().await;
}

#[tokio::test]
async fn edit_replaces_exactly_one_or_fails_cleanly() {
    let server = start().await;
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("code.txt");
    let original = "let a = 1;\r\nlet b = 1;\r\nété\n";
    fs::write(&f, original).unwrap();
    let edit = |old: &str, new: &str, all: bool| json!({"tool": "edit_file", "args": {"path": f, "oldText": old, "newText": new, "replaceAll": all}});
    let e = server
        .err("terminal_extra", edit("= 1;", "= 2;", false))
        .await;
    assert!(e.contains("matches 2 times"), "{e}");
    let e = server
        .err("terminal_extra", edit("nothing", "x", false))
        .await;
    assert!(e.contains("0 matches"), "{e}");
    let e = server.err("terminal_extra", edit("", "x", false)).await;
    assert!(e.contains("oldText"), "{e}");
    let e = server
        .err("terminal_extra", json!({"tool": "edit_file", "args": {"path": "rel.txt", "oldText": "a", "newText": "b"}}))
        .await;
    assert!(e.contains("relative path"), "{e}");
    assert_eq!(
        fs::read(&f).unwrap(),
        original.as_bytes(),
        "byte-for-byte unchanged"
    );
    let r = server
        .ok("terminal_extra", edit("let b", "let c", false))
        .await;
    assert_eq!(r["replacements"], 1);
    let r = server
        .ok("terminal_extra", edit("= 1;", "= 3;", true))
        .await;
    assert_eq!(r["replacements"], 2);
    assert_eq!(
        fs::read_to_string(&f).unwrap(),
        "let a = 3;\r\nlet c = 3;\r\nété\n"
    );
    server.stop().await;
}

/// A tree with matches in plain files, in skipped folders, in a binary and in a large file.
fn tree() -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap();
    let p = d.path();
    for skipped in [
        "node_modules/m",
        ".git",
        "target/debug",
        "dist",
        "bin",
        "obj",
    ] {
        fs::create_dir_all(p.join(skipped)).unwrap();
        fs::write(p.join(skipped).join("hit.txt"), "needle\n").unwrap();
    }
    fs::create_dir_all(p.join("src")).unwrap();
    fs::write(
        p.join("src/lib.rs"),
        "a\nb\nfn needle() {}\nc\nd\nNEEDLE again\n",
    )
    .unwrap();
    fs::write(p.join("notes.md"), "a needle in notes\n").unwrap();
    fs::write(p.join("blob.bin"), b"needle\0\x01\x02needle").unwrap();
    let mut big = "needle\n".repeat(10);
    big.push_str(&"x".repeat(5 * 1024 * 1024 + 1));
    fs::write(p.join("big.log"), big).unwrap();
    d
}

#[tokio::test]
async fn grep_skips_filters_limits_and_context() {
    let server = start().await;
    let d = tree();
    let root = d.path().to_str().unwrap();
    let grep = |args: serde_json::Value| server.extra("grep_files", args);
    let r = grep(json!({"pattern": "needle", "path": root})).await;
    let hits: Vec<String> = r["matches"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            format!(
                "{}:{}",
                m["file"].as_str().unwrap().strip_prefix(root).unwrap(),
                m["lineNumber"]
            )
        })
        .collect();
    assert_eq!(hits, vec!["/notes.md:1", "/src/lib.rs:3", "/src/lib.rs:6"]);
    assert_eq!(r["truncated"], false);
    assert_eq!(r["skippedBinary"], 1);
    assert_eq!(r["skippedLarge"], 1);
    assert_eq!(r["filesScanned"], 3);

    let r = grep(json!({"pattern": "needle", "path": root, "caseSensitive": true, "glob": "*.rs", "contextLines": 2})).await;
    assert_eq!(r["matches"].as_array().unwrap().len(), 1);
    let m = &r["matches"][0];
    assert_eq!(m["line"], "fn needle() {}");
    assert_eq!(m["before"], json!(["a", "b"]));
    assert_eq!(m["after"], json!(["c", "d"]));

    let r = grep(json!({"pattern": "needle", "path": root, "maxResults": 2})).await;
    assert_eq!(
        (
            r["matches"].as_array().unwrap().len(),
            r["truncated"].clone()
        ),
        (2, json!(true))
    );

    let e = server
        .err(
            "terminal_extra",
            json!({"tool": "grep_files", "args": {"pattern": "(unclosed", "path": root}}),
        )
        .await;
    assert!(e.contains("not a valid regex"), "{e}");
    let e = server
        .err("terminal_extra", json!({"tool": "grep_files", "args": {"pattern": "x", "path": root, "contextLines": 6}}))
        .await;
    assert!(e.contains("`contextLines` is 6"), "{e}");
    let e = server
        .err("terminal_extra", json!({"tool": "grep_files", "args": {"pattern": "x", "path": root, "maxResults": 1001}}))
        .await;
    assert!(e.contains("`maxResults`"), "{e}");
    server.stop().await;
}

/// Seed 004 (grep_files: "JavaScript regex"): lookaround and backreferences find what
/// JavaScript finds, instead of nothing.
#[tokio::test]
async fn grep_javascript_lookaround_and_backreferences() {
    let server = start().await;
    let d = tempfile::tempdir().unwrap();
    fs::write(
        d.path().join("code.js"),
        "const foobar = 1;\nconst foobaz = 2;\nlet s = 'aa';\n",
    )
    .unwrap();
    let root = d.path().to_str().unwrap();
    let lines = |r: &serde_json::Value| -> Vec<u64> {
        r["matches"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m["lineNumber"].as_u64().unwrap())
            .collect()
    };
    let r = server
        .extra("grep_files", json!({"pattern": "foo(?=bar)", "path": root}))
        .await;
    assert_eq!(lines(&r), vec![1]);
    assert_eq!(r["matches"][0]["line"], "const foobar = 1;");
    let r = server
        .extra("grep_files", json!({"pattern": "foo(?!bar)", "path": root}))
        .await;
    assert_eq!(lines(&r), vec![2]);
    let r = server
        .extra("grep_files", json!({"pattern": r"'(a)\1'", "path": root}))
        .await;
    assert_eq!(lines(&r), vec![3]);
    let e = server
        .err(
            "terminal_extra",
            json!({"tool": "grep_files", "args": {"pattern": "(?=x", "path": root}}),
        )
        .await;
    assert!(e.contains("not a valid regex"), "{e}");
    server.stop().await;
}
