//! Windows: written for parity, not compiled here (no Windows target on this machine).
//! Process trees end through `taskkill /T /F`; there is no terminal foreground group.

/// Ends a process and all its descendants.
pub fn kill_tree(root: i32) {
    let _ = std::process::Command::new("taskkill")
        .args(["/T", "/F", "/PID", &root.to_string()])
        .output();
}

/// True while a process with this pid exists.
pub fn pid_exists(pid: i32) -> bool {
    std::process::Command::new("tasklist")
        .args(["/FI", &format!("PID eq {pid}"), "/NH"])
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).contains(&pid.to_string()))
        .unwrap_or(false)
}

/// Windows has no process start time in this module yet; pid reuse is not detected.
pub fn process_start_time(_pid: i32) -> Option<u64> {
    None
}

/// True while `pid` exists; without start times, a reused pid is not told apart.
pub fn is_same_process(pid: i32, _start_time: Option<u64>) -> bool {
    pid_exists(pid)
}

/// Windows terminals have no foreground process group.
pub fn foreground_group(_fd: i32) -> Option<i32> {
    None
}

/// Windows consoles have no such check; a waiting program is found by the timeout instead.
pub fn waiting_for_input(_pgid: i32, _tty: &std::path::Path) -> bool {
    false
}

/// Windows consoles have no such check.
pub fn reading_terminal(_pgid: i32, _tty: &std::path::Path) -> bool {
    false
}

/// Windows consoles have no tty to ask.
pub fn unread_input(_tty: &std::path::Path) -> Option<usize> {
    None
}

/// Windows consoles have no termios to read.
pub fn input_mode(_fd: i32) -> Option<super::InputMode> {
    None
}

/// Windows consoles have no such check.
pub fn waiting_longer_than(_pgid: i32, _tty: &std::path::Path, _min: std::time::Duration) -> bool {
    false
}

/// Not counted on Windows; callers fall back to a quiet timer.
pub fn context_switches(_pid: i32) -> Option<u64> {
    None
}

/// Not counted on Windows.
#[derive(Default)]
pub struct SwitchCounter;

impl SwitchCounter {
    pub fn read(&mut self, _pid: i32) -> Option<u64> {
        None
    }
}

/// Not polled on Windows.
pub fn wait_readable_for(_fds: &[i32], _max: std::time::Duration) -> Option<usize> {
    None
}

pub fn wait_readable_until(_fds: &[i32], _deadline: std::time::Instant) -> Option<usize> {
    None
}

/// Windows consoles have no tty path.
pub fn wait_readable(_fds: &[i32]) -> Option<usize> {
    None
}

pub fn group_alive(_pgid: i32) -> bool {
    false
}

pub fn stdin_tty(_pid: i32) -> Option<std::path::PathBuf> {
    None
}

/// Windows terminals keep their blocking handles.
pub fn set_nonblocking(_fd: i32) -> std::io::Result<()> {
    Ok(())
}

/// Windows terminals are not polled.
pub fn wait_writable(_fd: i32) {}

/// Windows pipes are not polled here: every read wakes waiters.
pub fn readable_now(_fd: i32) -> bool {
    false
}

/// Windows consoles have no Unix sessions; the tree kill covers them.
pub fn kill_session(_sid: i32, _leader_start: Option<u64>) {}

/// A process's working directory, as sysinfo reads it (the same question `unix.rs` answers
/// from `/proc`).
pub fn process_cwd(pid: i32) -> Option<std::path::PathBuf> {
    process_info(pid, |p| p.cwd().map(std::path::Path::to_path_buf))
}

/// A process's name (its executable's file name), as sysinfo reads it.
pub fn process_name(pid: i32) -> Option<String> {
    process_info(pid, |p| Some(p.name().to_string_lossy().into_owned()))
}

/// Refreshes one process in sysinfo and reads something of it.
fn process_info<T>(pid: i32, read: impl Fn(&sysinfo::Process) -> Option<T>) -> Option<T> {
    use sysinfo::{Pid, ProcessRefreshKind, ProcessesToUpdate, System, UpdateKind};
    let pid = Pid::from_u32(u32::try_from(pid).ok()?);
    let mut system = System::new().ok()?;
    system.refresh_processes_specifics(
        ProcessesToUpdate::Some(&[pid]),
        true,
        ProcessRefreshKind::nothing().with_cwd(UpdateKind::Always),
    );
    system.process(pid).and_then(read)
}
