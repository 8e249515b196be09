//! What the tests need to know about processes: is a program installed, which processes
//! descend from this test, and are they gone (read from /proc).

use std::time::Duration;

/// True when `program` is on PATH; otherwise the test (or the part of it that needs the
/// program) is skipped through [`skip`].
pub fn has(program: &str) -> bool {
    let found = std::process::Command::new("sh")
        .args(["-c", &format!("command -v {program}")])
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false);
    if !found {
        skip(&format!("`{program}` is not installed"));
    }
    found
}

/// True when the tests run in CI (`CI` set, and not empty or `false`).
pub fn in_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| !v.is_empty() && v != "false")
}

/// Records that the calling test skips (some of) its work for `reason`. In CI this fails the
/// test instead: a green run means every test ran. Locally it prints the reason and, when the
/// run was started by `scripts/test`, appends it to the file that script summarises at the
/// end (`TERMPILOT_TEST_SKIPS`).
pub fn skip(reason: &str) {
    if in_ci() {
        panic!("{reason}, and CI runs every test: .ci/run installs what the tests need");
    }
    let thread = std::thread::current();
    let test = thread.name().unwrap_or("a test");
    eprintln!("skipped: {reason}");
    if let Some(path) = std::env::var_os("TERMPILOT_TEST_SKIPS") {
        use std::io::Write;
        let line = format!("{test}: {reason}\n");
        // One short append per line, so parallel tests do not interleave.
        if let Ok(mut file) = std::fs::OpenOptions::new()
            .append(true)
            .create(true)
            .open(path)
        {
            let _ = file.write_all(line.as_bytes());
        }
    }
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

/// Waits (at most 10 s) until none of `pids` is alive; fails the test otherwise, saying
/// what each survivor is doing (for a failure seen only elsewhere, as in CI).
pub async fn all_gone(pids: &[i64]) {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    while pids.iter().any(|&p| alive(p)) {
        if tokio::time::Instant::now() >= deadline {
            let told: Vec<String> = pids.iter().map(|&p| describe(p)).collect();
            panic!("processes survived: {pids:?}\n{}", told.join("\n"));
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// What `pid` is and is doing, from /proc: its stat line, its signal masks, what it waits
/// in, and its open files.
pub fn describe(pid: i64) -> String {
    let read = |name: &str| std::fs::read_to_string(format!("/proc/{pid}/{name}"));
    let stat = read("stat").unwrap_or_else(|e| format!("no stat: {e}"));
    let status: Vec<String> = read("status")
        .unwrap_or_default()
        .lines()
        .filter(|l| {
            ["State", "Sig", "Shd", "Threads", "NSpid"]
                .iter()
                .any(|k| l.starts_with(k))
        })
        .map(str::to_string)
        .collect();
    let wchan = read("wchan").unwrap_or_default();
    let files: Vec<String> = std::fs::read_dir(format!("/proc/{pid}/fd"))
        .into_iter()
        .flatten()
        .flatten()
        .map(|f| {
            let target = std::fs::read_link(f.path()).unwrap_or_default();
            format!("{}->{}", f.file_name().to_string_lossy(), target.display())
        })
        .collect();
    // Each thread's state, what it waits in and its system call (a process whose leader has
    // exited lives on while another of its threads has not).
    let threads: Vec<String> = std::fs::read_dir(format!("/proc/{pid}/task"))
        .into_iter()
        .flatten()
        .flatten()
        .map(|t| {
            let read =
                |name: &str| std::fs::read_to_string(t.path().join(name)).unwrap_or_default();
            let stat = read("stat");
            let state = stat.rfind(')').map_or("?", |i| &stat[i + 2..i + 3]);
            let syscall = read("syscall");
            format!(
                "{} {state} {} [{}]",
                t.file_name().to_string_lossy(),
                read("wchan"),
                syscall.split_whitespace().next().unwrap_or("")
            )
        })
        .collect();
    format!(
        "pid {pid}: {} | {} | wchan {wchan} | threads {} | fds {}",
        stat.trim(),
        status.join(", "),
        threads.join("; "),
        files.join(" ")
    )
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

/// Kills a detached job's process group when dropped, so a test that fails half-way does not
/// leave the job running (jobs outlive their server by design). A job that already ended is
/// left alone.
pub struct JobGuard(i32);

impl JobGuard {
    /// Guards the job whose `job_start` result is `started` (its `pid` leads its group).
    pub fn of(started: &serde_json::Value) -> JobGuard {
        let pid = started["pid"]
            .as_i64()
            .expect("job_start returns the job's pid");
        JobGuard(pid as i32)
    }
}

impl Drop for JobGuard {
    fn drop(&mut self) {
        if self.0 > 1 && alive(self.0 as i64) {
            // SAFETY: kill(2) on the process group of a job this test started.
            unsafe { libc::kill(-self.0, libc::SIGKILL) };
        }
    }
}

/// The second local user of the tests of what other users can see and do
/// (`termpilot-other`, created with `useradd` on first use): its uid and gid. `None` (the test
/// skips, failing under CI) when not root or without `useradd`.
#[cfg(unix)]
pub fn other_user() -> Option<(u32, u32)> {
    const NAME: &str = "termpilot-other";
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        skip("a second local user needs root to create");
        return None;
    }
    let lookup = || -> Option<(u32, u32)> {
        let passwd = std::fs::read_to_string("/etc/passwd").ok()?;
        passwd.lines().find_map(|line| {
            let fields: Vec<&str> = line.split(':').collect();
            (fields.len() > 3 && fields[0] == NAME)
                .then(|| Some((fields[2].parse().ok()?, fields[3].parse().ok()?)))
                .flatten()
        })
    };
    // Test processes run in parallel: another may be creating the user (and holding the
    // passwd lock) right now, so look again after a failed useradd, a bounded number of times.
    for _ in 0..50 {
        if let Some(ids) = lookup() {
            return Some(ids);
        }
        if !has("useradd") {
            return None;
        }
        let made = std::process::Command::new("useradd")
            .args(["--system", "--no-create-home", "--user-group"])
            .args(["--shell", "/usr/sbin/nologin", NAME])
            .output()
            .expect("run useradd");
        if !made.status.success() && lookup().is_none() {
            std::thread::sleep(Duration::from_millis(100));
        }
    }
    lookup().or_else(|| panic!("could not create the user {NAME} with useradd"))
}

/// Runs `program args` as the user `(uid, gid)`; its exit status and output (stdout then
/// stderr).
#[cfg(unix)]
pub fn run_as(user: (u32, u32), program: &str, args: &[&str]) -> (bool, String) {
    use std::os::unix::process::CommandExt;
    let out = std::process::Command::new(program)
        .args(args)
        .uid(user.0)
        .gid(user.1)
        .current_dir("/")
        .output()
        .expect("run a program as the other user");
    let mut text = String::from_utf8_lossy(&out.stdout).into_owned();
    text.push_str(&String::from_utf8_lossy(&out.stderr));
    (out.status.success(), text)
}
