//! What the tests need to know about processes: is a program installed, which processes
//! descend from this test, and are they gone (read from /proc).

use std::time::Duration;

/// True when `program` is on PATH (tests that need it skip with a message otherwise). In CI
/// (`CI` set) a missing program fails the test instead: a green run means every test ran.
pub fn has(program: &str) -> bool {
    let found = std::process::Command::new("sh")
        .args(["-c", &format!("command -v {program}")])
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false);
    if !found && std::env::var_os("CI").is_some_and(|v| !v.is_empty() && v != "false") {
        panic!("`{program}` is not installed, and CI runs every test: install it in .ci/run");
    }
    found
}

/// Pids of every descendant of `root`.
pub fn descendants(root: i64) -> Vec<i64> {
    let mut parents = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<i64>() else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            continue;
        };
        let Some(after) = stat.rfind(')').map(|i| &stat[i + 2..]) else {
            continue;
        };
        let ppid: i64 = after
            .split(' ')
            .nth(1)
            .and_then(|p| p.parse().ok())
            .unwrap_or(0);
        parents.push((pid, ppid));
    }
    let mut found = vec![];
    let mut frontier = vec![root];
    while let Some(p) = frontier.pop() {
        for &(pid, ppid) in &parents {
            if ppid == p && !found.contains(&pid) {
                found.push(pid);
                frontier.push(pid);
            }
        }
    }
    found
}

/// Descendants of this test process running `comm` (e.g. `sleep`).
pub fn my_descendants_named(comm: &str) -> Vec<i64> {
    descendants(std::process::id() as i64)
        .into_iter()
        .filter(|p| {
            std::fs::read_to_string(format!("/proc/{p}/comm")).is_ok_and(|c| c.trim() == comm)
        })
        .collect()
}

/// True while `pid` exists and is not a zombie.
pub fn alive(pid: i64) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => !stat[stat.rfind(')').unwrap() + 2..].starts_with('Z'),
        Err(_) => false,
    }
}

/// Waits (at most 10 s) until none of `pids` is alive; fails the test otherwise.
pub async fn all_gone(pids: &[i64]) {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    while pids.iter().any(|&p| alive(p)) {
        assert!(
            tokio::time::Instant::now() < deadline,
            "processes survived: {pids:?}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Pids of every process whose command line contains `fragment` (orphans included).
pub fn pids_running(fragment: &str) -> Vec<i64> {
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| e.file_name().to_string_lossy().parse::<i64>().ok())
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/cmdline"))
                .map(|c| {
                    String::from_utf8_lossy(&c)
                        .replace('\0', " ")
                        .contains(fragment)
                })
                .unwrap_or(false)
        })
        .collect()
}
