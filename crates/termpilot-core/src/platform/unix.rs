//! Unix: process groups and signals through libc, process facts from `/proc` (Linux).

use std::collections::HashMap;

/// Sends `signal` to every process in group `pgid`. Returns false when the group is gone.
pub fn signal_group(pgid: i32, signal: i32) -> bool {
    if pgid <= 1 {
        return false;
    }
    // SAFETY: kill(2) with a negative pid addresses a process group; no memory is shared.
    unsafe { libc::kill(-pgid, signal) == 0 }
}

/// Sends `signal` to one process. Returns false when it is gone.
pub fn signal_pid(pid: i32, signal: i32) -> bool {
    if pid <= 1 {
        return false;
    }
    // SAFETY: as above, for one pid.
    unsafe { libc::kill(pid, signal) == 0 }
}

/// True while a process with this pid exists (it may be a zombie, or someone else's).
pub fn pid_exists(pid: i32) -> bool {
    if pid <= 0 {
        return false;
    }
    // SAFETY: signal 0 only checks for existence and permission.
    let r = unsafe { libc::kill(pid, 0) };
    r == 0 || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM)
}

/// A small `/proc` file read whole in one `read` (a process's `stat`, `syscall`, `status`):
/// `read_to_string` grows its buffer from 32 bytes and takes six to eight calls for one, which
/// the answer to typed input and the waits pay on every look.
fn read_proc(path: &str) -> std::io::Result<String> {
    use std::io::Read;
    let mut file = std::fs::File::open(path)?;
    let mut buf = vec![0u8; 4096];
    let mut len = 0;
    loop {
        let n = file.read(&mut buf[len..])?;
        len += n;
        // These files are made whole at the first read: one that did not fill the buffer
        // returned all of it.
        if len < buf.len() {
            break;
        }
        buf.resize(len * 2, 0);
    }
    buf.truncate(len);
    String::from_utf8(buf).map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidData, e))
}

/// The fields of `/proc/<pid>/stat` after the command name, split on spaces.
fn stat_fields(pid: i32) -> Option<Vec<String>> {
    let stat = read_proc(&format!("/proc/{pid}/stat")).ok()?;
    // The command name is in parentheses and may itself contain spaces or parentheses.
    let after = &stat[stat.rfind(')')? + 2..];
    Some(after.split(' ').map(String::from).collect())
}

/// When the process started, in clock ticks since boot (Linux `/proc/<pid>/stat` field 22).
/// Together with the pid it names one process for good: a reused pid has another start time.
pub fn process_start_time(pid: i32) -> Option<u64> {
    // Field 22 overall is index 19 after the name (fields 3.. start at index 0).
    stat_fields(pid)?.get(19)?.parse().ok()
}

/// The process state letter (`R`, `S`, `Z`, …) of `/proc/<pid>/stat`.
pub fn process_state(pid: i32) -> Option<char> {
    stat_fields(pid)?.first()?.chars().next()
}

/// Whether `pid` sleeps in a `write` or `writev` to a terminal (`/proc/<pid>/syscall`, then
/// the descriptor's target, a `/dev/pts/N`): what it printed waits in the terminal's buffers
/// for the kernel to move it along, so it is printing, whatever its reader has seen lately.
/// False when the kernel does not say (another user's process, or not Linux).
#[cfg(target_os = "linux")]
pub fn writes_to_a_terminal(pid: i32) -> bool {
    let Ok(text) = std::fs::read_to_string(format!("/proc/{pid}/syscall")) else {
        return false;
    };
    // "NR arg1 arg2 …" while blocked in a call; "running" or "-1 …" otherwise.
    let mut fields = text.split_whitespace();
    let Some(call) = fields.next().and_then(|n| n.parse::<libc::c_long>().ok()) else {
        return false;
    };
    if call != libc::SYS_write && call != libc::SYS_writev {
        return false;
    }
    let Some(fd) = fields
        .next()
        .and_then(|a| u64::from_str_radix(a.trim_start_matches("0x"), 16).ok())
    else {
        return false;
    };
    std::fs::read_link(format!("/proc/{pid}/fd/{fd}")).is_ok_and(|p| p.starts_with("/dev/pts"))
}

/// True while `pid` is still the living process recorded with `start_time` (from
/// [`process_start_time`]): it exists, is not a zombie, and was not started anew under a
/// reused pid. `None` skips the start-time check.
pub fn is_same_process(pid: i32, start_time: Option<u64>) -> bool {
    if !pid_exists(pid) || process_state(pid) == Some('Z') {
        return false;
    }
    match (start_time, process_start_time(pid)) {
        (Some(recorded), Some(now)) => recorded == now,
        _ => true,
    }
}

/// Parent pid of every process we can see, keyed by pid.
fn parent_map() -> HashMap<i32, i32> {
    let mut parents = HashMap::new();
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return parents;
    };
    for entry in dir.flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<i32>().ok())
        else {
            continue;
        };
        if let Some(ppid) = stat_fields(pid).and_then(|f| f.get(1)?.parse().ok()) {
            parents.insert(pid, ppid);
        }
    }
    parents
}

/// Every living descendant of `root` (children, grandchildren, …), found through `/proc`.
pub fn descendants(root: i32) -> Vec<i32> {
    let parents = parent_map();
    let mut found = Vec::new();
    let mut frontier = vec![root];
    while let Some(p) = frontier.pop() {
        for (&pid, &ppid) in &parents {
            if ppid == p && !found.contains(&pid) {
                found.push(pid);
                frontier.push(pid);
            }
        }
    }
    found
}

/// Kills a whole tree at once: the group led by `root` and every descendant of `root`,
/// including those that moved to groups or sessions of their own. Descendants are found
/// before anything is signalled, so none is orphaned out of sight.
pub fn kill_tree(root: i32) {
    let family = descendants(root);
    signal_group(root, libc::SIGKILL);
    signal_pid(root, libc::SIGKILL);
    for pid in family {
        signal_group(pid, libc::SIGKILL);
        signal_pid(pid, libc::SIGKILL);
    }
}

/// Kills every process of session `sid` — the terminal session a PTY shell led — even after
/// the shell itself is gone: a background job it left (`sleep 100 &`, then `exit`) is
/// reparented away from it but stays in its session. Only a session leader's pid is a
/// session id, so this never reaches beyond that session; `leader_start` (the leader's start
/// time) guards against a reused pid leading someone else's session now.
pub fn kill_session(sid: i32, leader_start: Option<u64>) {
    if sid <= 1 {
        return;
    }
    if pid_exists(sid) && process_start_time(sid) != leader_start {
        return;
    }
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return;
    };
    for pid in dir
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
    {
        let in_session = stat_fields(pid)
            .and_then(|f| f.get(3)?.parse::<i32>().ok())
            .is_some_and(|s| s == sid);
        if in_session {
            signal_pid(pid, libc::SIGKILL);
        }
    }
}

/// The foreground process group of the terminal whose master is `fd` (`tcgetpgrp`).
pub fn foreground_group(fd: i32) -> Option<i32> {
    // SAFETY: tcgetpgrp reads terminal state for a descriptor we own.
    let pgid = unsafe { libc::tcgetpgrp(fd) };
    (pgid > 0).then_some(pgid)
}

/// The short command name of a process (`/proc/<pid>/comm`).
pub fn process_name(pid: i32) -> Option<String> {
    std::fs::read_to_string(format!("/proc/{pid}/comm"))
        .ok()
        .map(|s| s.trim_end().to_string())
}

/// The working directory of a process (`/proc/<pid>/cwd`).
pub fn process_cwd(pid: i32) -> Option<std::path::PathBuf> {
    std::fs::read_link(format!("/proc/{pid}/cwd")).ok()
}

/// The terminal a process has as its standard input (e.g. `/dev/pts/3`).
pub fn stdin_tty(pid: i32) -> Option<std::path::PathBuf> {
    std::fs::read_link(format!("/proc/{pid}/fd/0"))
        .ok()
        .filter(|p| p.starts_with("/dev/pts") || p.starts_with("/dev/tty"))
}

/// True while some process of group `pgid` still runs (zombies do not count).
pub fn group_alive(pgid: i32) -> bool {
    let runs = |pid: i32| process_state(pid).is_some_and(|s| s != 'Z' && s != 'X');
    runs(pgid) || group_members(pgid).into_iter().any(runs)
}

/// Every process in process group `pgid`.
pub fn group_members(pgid: i32) -> Vec<i32> {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    dir.flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
        .filter(|&pid| {
            stat_fields(pid)
                .and_then(|f| f.get(2)?.parse::<i32>().ok())
                .is_some_and(|g| g == pgid)
        })
        .collect()
}

/// How a blocked system call waits for input (Linux, by architecture).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Waits {
    /// read/readv/pread: argument 0 is the descriptor.
    Read,
    /// poll/ppoll: argument 0 points at `struct pollfd[argument 1]`.
    Poll,
    /// select/pselect6: argument 0 is nfds, argument 1 points at the read set.
    Select,
    /// epoll_wait family: argument 0 is the epoll descriptor.
    Epoll,
}

/// Where a blocked call keeps its timeout.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Timeout {
    /// It has none (read).
    Never,
    /// Argument `n` is milliseconds as an int; negative means none (poll, epoll_wait).
    Millis(usize),
    /// Argument `n` points at a `timespec`; null means none (ppoll, pselect6, epoll_pwait2).
    Timespec(usize),
    /// Argument `n` points at a `timeval`; null means none (select).
    Timeval(usize),
}

fn classify(nr: i64) -> Option<(Waits, Timeout)> {
    use Timeout::*;
    #[cfg(target_arch = "x86_64")]
    let table: &[(i64, Waits, Timeout)] = &[
        (0, Waits::Read, Never),
        (17, Waits::Read, Never),
        (19, Waits::Read, Never),
        (295, Waits::Read, Never),
        (7, Waits::Poll, Millis(2)),
        (271, Waits::Poll, Timespec(2)),
        (23, Waits::Select, Timeval(4)),
        (270, Waits::Select, Timespec(4)),
        (232, Waits::Epoll, Millis(3)),
        (281, Waits::Epoll, Millis(3)),
        (441, Waits::Epoll, Timespec(3)),
    ];
    #[cfg(target_arch = "aarch64")]
    let table: &[(i64, Waits, Timeout)] = &[
        (63, Waits::Read, Never),
        (65, Waits::Read, Never),
        (67, Waits::Read, Never),
        (69, Waits::Read, Never),
        (73, Waits::Poll, Timespec(2)),
        (72, Waits::Select, Timespec(4)),
        (22, Waits::Epoll, Millis(3)),
        (441, Waits::Epoll, Timespec(3)),
    ];
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    let table: &[(i64, Waits, Timeout)] = &[];
    table
        .iter()
        .find(|(n, _, _)| *n == nr)
        .map(|(_, w, t)| (*w, *t))
}

/// The timeout of a blocked call, `None` when it waits for good.
fn timeout_of(pid: i32, timeout: Timeout, args: &[u64]) -> Option<std::time::Duration> {
    let arg = |i: usize| args.get(i).copied().unwrap_or(0);
    let pair = |addr: u64| -> Option<(i64, i64)> {
        let raw = read_memory(pid, addr, 16)?;
        let a = i64::from_ne_bytes(raw[0..8].try_into().ok()?);
        let b = i64::from_ne_bytes(raw[8..16].try_into().ok()?);
        Some((a.max(0), b.max(0)))
    };
    match timeout {
        Timeout::Never => None,
        Timeout::Millis(i) => {
            let ms = arg(i) as i32;
            (ms >= 0).then(|| std::time::Duration::from_millis(ms as u64))
        }
        Timeout::Timespec(i) if arg(i) != 0 => {
            let (sec, nsec) = pair(arg(i))?;
            Some(
                std::time::Duration::from_secs(sec as u64)
                    + std::time::Duration::from_nanos(nsec as u64),
            )
        }
        Timeout::Timeval(i) if arg(i) != 0 => {
            let (sec, usec) = pair(arg(i))?;
            Some(
                std::time::Duration::from_secs(sec as u64)
                    + std::time::Duration::from_micros(usec as u64),
            )
        }
        _ => None,
    }
}

/// Reads `len` bytes of process `pid`'s memory at `addr` (our own descendants may be read).
fn read_memory(pid: i32, addr: u64, len: usize) -> Option<Vec<u8>> {
    use std::io::{Read, Seek, SeekFrom};
    let mut mem = std::fs::File::open(format!("/proc/{pid}/mem")).ok()?;
    mem.seek(SeekFrom::Start(addr)).ok()?;
    let mut buf = vec![0; len];
    mem.read_exact(&mut buf).ok()?;
    Some(buf)
}

/// True when descriptor `fd` of `pid` is `tty`: opened by its own path, or as `/dev/tty` by a
/// process whose controlling terminal `tty` is (getpass, sudo and ssh ask for a password
/// there, so that a redirected stdin cannot answer).
fn fd_is(pid: i32, fd: i64, tty: &std::path::Path) -> bool {
    match std::fs::read_link(format!("/proc/{pid}/fd/{fd}")) {
        Ok(path) if path == tty => true,
        Ok(path) if path == std::path::Path::new("/dev/tty") => controlling_terminal_is(pid, tty),
        _ => false,
    }
}

/// True when `tty` is the controlling terminal of `pid` (`/proc/<pid>/stat` field 7, the
/// device number in the kernel's encoding: minor in bits 0–7 and 20–31, major in bits 8–19).
fn controlling_terminal_is(pid: i32, tty: &std::path::Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    let Some(nr) = stat_fields(pid).and_then(|f| f.get(4)?.parse::<i64>().ok()) else {
        return false;
    };
    let Ok(meta) = std::fs::metadata(tty) else {
        return false;
    };
    let nr = nr as u64 & 0xffff_ffff;
    let (major, minor) = ((nr >> 8) & 0xfff, (nr & 0xff) | ((nr >> 12) & 0xf_ff00));
    nr != 0
        && u64::from(libc::major(meta.rdev())) == major
        && u64::from(libc::minor(meta.rdev())) == minor
}

/// The descriptors a blocked call of `pid` waits to read, when they can be told.
fn waited_fds(pid: i32, kind: Waits, args: &[u64]) -> Vec<i64> {
    let arg = |i: usize| args.get(i).copied().unwrap_or(0);
    match kind {
        Waits::Read => vec![arg(0) as i64],
        Waits::Poll => {
            let n = (arg(1) as usize).min(1024);
            let Some(raw) = read_memory(pid, arg(0), n * 8) else {
                return Vec::new();
            };
            raw.chunks_exact(8)
                .filter(|p| i16::from_ne_bytes([p[4], p[5]]) & libc::POLLIN != 0)
                .map(|p| i32::from_ne_bytes([p[0], p[1], p[2], p[3]]) as i64)
                .collect()
        }
        Waits::Select => {
            let nfds = (arg(0) as usize).min(1024);
            if arg(1) == 0 || nfds == 0 {
                return Vec::new();
            }
            let Some(set) = read_memory(pid, arg(1), nfds.div_ceil(8)) else {
                return Vec::new();
            };
            (0..nfds)
                .filter(|&fd| set[fd / 8] & (1 << (fd % 8)) != 0)
                .map(|fd| fd as i64)
                .collect()
        }
        Waits::Epoll => {
            let Ok(info) = std::fs::read_to_string(format!("/proc/{pid}/fdinfo/{}", arg(0))) else {
                return Vec::new();
            };
            info.lines()
                .filter_map(|l| l.strip_prefix("tfd:"))
                .filter_map(|rest| rest.split_whitespace().next()?.parse().ok())
                .collect()
        }
    }
}

/// A new pseudo-terminal: its master and slave ends.
pub fn openpty() -> std::io::Result<(std::os::fd::OwnedFd, std::os::fd::OwnedFd)> {
    use std::os::fd::FromRawFd;
    let (mut master, mut slave) = (-1, -1);
    // SAFETY: openpty(3) fills two descriptors, owned by the values returned.
    let r = unsafe {
        libc::openpty(
            &mut master,
            &mut slave,
            std::ptr::null_mut(),
            std::ptr::null(),
            std::ptr::null(),
        )
    };
    if r != 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: both were just opened and are owned here alone.
    Ok(unsafe {
        (
            std::os::fd::OwnedFd::from_raw_fd(master),
            std::os::fd::OwnedFd::from_raw_fd(slave),
        )
    })
}

/// How many bytes written to terminal `tty` its programs have not read yet (typed input,
/// the emulator's replies to their queries): a program asleep reading it with some waiting
/// has not been scheduled since they arrived. `None` when the terminal cannot be opened.
pub fn unread_input(tty: &std::path::Path) -> Option<usize> {
    use std::os::unix::fs::OpenOptionsExt;
    use std::os::unix::io::AsRawFd;
    // Opened for the question only: a descriptor kept open would hold the terminal up after
    // its shell exits (the reader sees the end when the last one closes).
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOCTTY | libc::O_NONBLOCK)
        .open(tty)
        .ok()?;
    // A poll first: input the master wrote may still sit in the kernel's queue between the
    // two ends (pushed by a worker thread); asking the line discipline whether it can be
    // read flushes that queue, so FIONREAD then counts it.
    readable_now(file.as_raw_fd());
    let mut queued: libc::c_int = 0;
    // SAFETY: FIONREAD writes one int through the pointer, which outlives the call.
    let r = unsafe { libc::ioctl(file.as_raw_fd(), libc::FIONREAD, &mut queued) };
    (r == 0).then_some(queued.max(0) as usize)
}

/// True when some process of group `pgid` sleeps waiting for input from `tty`.
///
/// The rule (Linux): a member is asleep (`S`) in a system call that waits to read, and one of
/// the descriptors it waits on is `tty`: the descriptor of a read, the POLLIN entries of a
/// poll, the read set of a select, the watched descriptors of an epoll (its fdinfo).
/// `/proc/<pid>/syscall` names the call and its arguments; the poll and select sets are read
/// from the process's memory (our own descendants). A program that only sleeps, or waits on
/// sockets and timers, is not waiting for input. Costs a few small `/proc` reads; callers ask
/// only after output has been quiet for a while.
pub fn waiting_for_input(pgid: i32, tty: &std::path::Path) -> bool {
    waiting_longer_than(pgid, tty, std::time::Duration::ZERO)
}

/// [`waiting_for_input`] in its plainest form: a process of group `pgid` sleeps waiting for
/// `tty` alone and for good — a `read` of it, or a poll, select or epoll over it and nothing
/// else, without a timeout (python's REPL selects on its stdin alone). Such a program waits
/// for a line or a key and nothing else (`read -p`, `input()`, a password prompt); one that
/// multiplexes the terminal with sockets or pipes may be passing it on while it works (ssh,
/// `docker run -it`), and one with a timeout may be ticking.
pub fn reading_terminal(pgid: i32, tty: &std::path::Path) -> bool {
    let plain = |pid: i32| waits_on(pid, tty, std::time::Duration::ZERO, true);
    plain(pgid)
        || group_members(pgid)
            .into_iter()
            .any(|pid| pid != pgid && plain(pid))
}

/// [`waiting_for_input`], but a wait whose timeout is `min` or shorter does not count: a
/// program that waits a moment to tell a lone Escape key from a key sequence (vim waits
/// 100 ms) is about to do something else, not waiting for the user.
pub fn waiting_longer_than(pgid: i32, tty: &std::path::Path, min: std::time::Duration) -> bool {
    // The group's leader is usually the one reading: ask it before scanning all of /proc.
    waits_on(pgid, tty, min, false)
        || group_members(pgid)
            .into_iter()
            .any(|pid| pid != pgid && waits_on(pid, tty, min, false))
}

/// True when process `pid` sleeps in a call that waits to read `tty`, with no timeout or
/// one longer than `min` (and, with `alone`, for `tty` only and with no timeout at all).
fn waits_on(pid: i32, tty: &std::path::Path, min: std::time::Duration, alone: bool) -> bool {
    if process_state(pid) != Some('S') {
        return false;
    }
    let Ok(syscall) = read_proc(&format!("/proc/{pid}/syscall")) else {
        return false;
    };
    let mut fields = syscall.split_whitespace();
    let Some((kind, timeout)) = fields
        .next()
        .and_then(|n| n.parse::<i64>().ok())
        .and_then(classify)
    else {
        return false;
    };
    let args: Vec<u64> = fields
        .take(6)
        .filter_map(|a| u64::from_str_radix(a.trim_start_matches("0x"), 16).ok())
        .collect();
    if alone || !min.is_zero() {
        match timeout_of(pid, timeout, &args) {
            Some(_) if alone => return false,
            Some(t) if t <= min => return false,
            _ => {}
        }
    }
    let fds = waited_fds(pid, kind, &args);
    if alone {
        !fds.is_empty() && fds.iter().all(|&fd| fd_is(pid, fd, tty))
    } else {
        fds.iter().any(|&fd| fd_is(pid, fd, tty))
    }
}

/// A count that moves whenever process `pid` (its main thread) woke and ran again: how
/// many times it was put on a CPU (`/proc/<pid>/schedstat`, third field), or, where the
/// kernel keeps no such count, how many times it was switched out (`/proc/<pid>/status`).
/// Compared only with itself: one source per kernel. The first is a line of three numbers;
/// the second renders some fifty lines, a cost every write paid (issue 32, HTTP figure).
pub fn context_switches(pid: i32) -> Option<u64> {
    if let Ok(line) = read_proc(&format!("/proc/{pid}/schedstat"))
        && let Some(count) = times_run(line.as_bytes())
    {
        return Some(count);
    }
    switches_in_status(pid)
}

/// The third field of a `schedstat` line (times put on a CPU), unless the kernel keeps none
/// (all zero).
fn times_run(line: &[u8]) -> Option<u64> {
    let line = std::str::from_utf8(line).ok()?;
    let mut fields = line.split_ascii_whitespace().map(str::parse::<u64>);
    match (fields.next(), fields.next(), fields.next()) {
        (Some(Ok(run)), Some(Ok(_)), Some(Ok(count))) if (run, count) != (0, 0) => Some(count),
        _ => None,
    }
}

/// [`context_switches`] with the file kept open: one process's `schedstat` read again in
/// place, without the path walk through `/proc` that opening it costs (a session looks
/// before every write; with fifty HTTP clients at once the open was 4 % of the server's
/// time). A descriptor names its process for good: once that process is gone, the read
/// fails and the next pid's file is opened.
#[derive(Default)]
pub struct SwitchCounter {
    open: Option<(i32, std::fs::File)>,
}

impl SwitchCounter {
    /// The count of [`context_switches`] for `pid`.
    pub fn read(&mut self, pid: i32) -> Option<u64> {
        use std::os::unix::fs::FileExt;
        if self.open.as_ref().is_none_or(|(open, _)| *open != pid) {
            self.open = std::fs::File::open(format!("/proc/{pid}/schedstat"))
                .ok()
                .map(|file| (pid, file));
        }
        if let Some((_, file)) = &self.open {
            let mut line = [0u8; 128];
            match file.read_at(&mut line, 0) {
                Ok(n) if n > 0 => {
                    if let Some(count) = times_run(&line[..n]) {
                        return Some(count);
                    }
                }
                _ => self.open = None,
            }
        }
        context_switches(pid)
    }
}

/// The voluntary and involuntary switches of `/proc/<pid>/status`, added.
fn switches_in_status(pid: i32) -> Option<u64> {
    let status = read_proc(&format!("/proc/{pid}/status")).ok()?;
    let mut total = None;
    for line in status.lines() {
        if let Some(rest) = line
            .strip_prefix("voluntary_ctxt_switches:")
            .or_else(|| line.strip_prefix("nonvoluntary_ctxt_switches:"))
        {
            let n: u64 = rest.trim().parse().ok()?;
            total = Some(total.unwrap_or(0) + n);
        }
    }
    total
}

/// Makes `fd`'s open file (shared by every duplicate of it) non-blocking: a read or write
/// that would wait fails with `WouldBlock` instead.
pub fn set_nonblocking(fd: i32) -> std::io::Result<()> {
    // SAFETY: fcntl(2) reads and sets the status flags of a descriptor the caller owns.
    unsafe {
        let flags = libc::fcntl(fd, libc::F_GETFL);
        if flags < 0 || libc::fcntl(fd, libc::F_SETFL, flags | libc::O_NONBLOCK) < 0 {
            return Err(std::io::Error::last_os_error());
        }
    }
    Ok(())
}

/// Blocks until `fd` takes output again (or hung up): what a non-blocking writer waits for
/// after `WouldBlock`.
pub fn wait_writable(fd: i32) {
    let mut p = libc::pollfd {
        fd,
        events: libc::POLLOUT,
        revents: 0,
    };
    // SAFETY: poll(2) on one pollfd we own. An interrupted wait returns; the caller writes
    // again and comes back.
    unsafe { libc::poll(&mut p, 1, -1) };
}

/// True when `fd` has input waiting right now (a zero-timeout poll).
pub fn readable_now(fd: i32) -> bool {
    let mut p = libc::pollfd {
        fd,
        events: libc::POLLIN,
        revents: 0,
    };
    // SAFETY: poll(2) on one pollfd we own, without waiting.
    unsafe { libc::poll(&mut p, 1, 0) > 0 && p.revents & libc::POLLIN != 0 }
}

/// Blocks until one of `fds` is readable (or hung up) and returns its index; `None` on an
/// error other than an interrupted call.
pub fn wait_readable(fds: &[i32]) -> Option<usize> {
    poll_readable(fds, -1)
}

/// [`wait_readable`], for at most `max`: `None` also when the time ran out.
pub fn wait_readable_for(fds: &[i32], max: std::time::Duration) -> Option<usize> {
    poll_readable(fds, max.as_millis().min(i32::MAX as u128) as i32)
}

fn poll_readable(fds: &[i32], timeout_ms: i32) -> Option<usize> {
    let max = (timeout_ms >= 0).then(|| std::time::Duration::from_millis(timeout_ms as u64));
    poll_readable_until(fds, max.map(|max| std::time::Instant::now() + max))
}

/// [`wait_readable`] until `deadline` at most, to the microsecond (a wait of a fraction of
/// a millisecond is not cut to nothing): `None` also when the time ran out.
pub fn wait_readable_until(fds: &[i32], deadline: std::time::Instant) -> Option<usize> {
    poll_readable_until(fds, Some(deadline))
}

fn poll_readable_until(fds: &[i32], deadline: Option<std::time::Instant>) -> Option<usize> {
    let mut polls: Vec<libc::pollfd> = fds
        .iter()
        .map(|&fd| libc::pollfd {
            fd,
            events: libc::POLLIN,
            revents: 0,
        })
        .collect();
    loop {
        let left = deadline.map(|d| d.saturating_duration_since(std::time::Instant::now()));
        let r = poll_for(&mut polls, left);
        if r > 0 {
            return polls.iter().position(|p| p.revents != 0);
        }
        if r == 0 && deadline.is_some() {
            return None;
        }
        if r < 0 && std::io::Error::last_os_error().kind() != std::io::ErrorKind::Interrupted {
            return None;
        }
    }
}

/// One poll(2) of `polls` for at most `left` (for ever without it), to the nanosecond.
#[cfg(target_os = "linux")]
fn poll_for(polls: &mut [libc::pollfd], left: Option<std::time::Duration>) -> i32 {
    let timeout = left.map(|left| libc::timespec {
        tv_sec: left.as_secs().min(i32::MAX as u64) as libc::time_t,
        tv_nsec: left.subsec_nanos() as libc::c_long,
    });
    let timeout = timeout.as_ref().map_or(std::ptr::null(), |t| t as *const _);
    // SAFETY: ppoll(2) on a buffer of pollfd we own, with its true length; the timeout is
    // a local timespec or null; no signal mask.
    unsafe {
        libc::ppoll(
            polls.as_mut_ptr(),
            polls.len() as libc::nfds_t,
            timeout,
            std::ptr::null(),
        )
    }
}

/// One poll(2) of `polls` for at most `left`, rounded up to the millisecond.
#[cfg(not(target_os = "linux"))]
fn poll_for(polls: &mut [libc::pollfd], left: Option<std::time::Duration>) -> i32 {
    let wait = left.map_or(-1, |left| {
        left.as_micros().div_ceil(1000).min(i32::MAX as u128) as i32
    });
    // SAFETY: poll(2) on a buffer of pollfd we own, with its true length.
    unsafe { libc::poll(polls.as_mut_ptr(), polls.len() as libc::nfds_t, wait) }
}

/// Puts terminal `fd` in raw mode (no echo, no line editing, no signals from keys) and
/// returns the settings to restore, or `None` when `fd` is not a terminal.
pub fn enter_raw_mode(fd: i32) -> Option<libc::termios> {
    // SAFETY: termios is plain data; tcgetattr fills it or fails without touching memory.
    let mut saved: libc::termios = unsafe { std::mem::zeroed() };
    // SAFETY: fd is a descriptor we hold; the pointer is to a local termios.
    if unsafe { libc::tcgetattr(fd, &mut saved) } != 0 {
        return None;
    }
    let mut raw = saved;
    // SAFETY: cfmakeraw edits the local copy; tcsetattr applies it to our descriptor.
    unsafe {
        libc::cfmakeraw(&mut raw);
        if libc::tcsetattr(fd, libc::TCSANOW, &raw) != 0 {
            return None;
        }
    }
    Some(saved)
}

/// How terminal `fd` (either end) hands input to its reader: key by key or in lines.
pub fn input_mode(fd: i32) -> Option<super::InputMode> {
    // SAFETY: termios is plain data; tcgetattr fills it or fails without touching memory.
    let mut t: libc::termios = unsafe { std::mem::zeroed() };
    // SAFETY: fd is a descriptor we hold; the pointer is to a local termios.
    if unsafe { libc::tcgetattr(fd, &mut t) } != 0 {
        return None;
    }
    Some(if t.c_lflag & libc::ICANON == 0 {
        super::InputMode::Keys
    } else {
        super::InputMode::Lines {
            echo: t.c_lflag & libc::ECHO != 0,
        }
    })
}

/// Restores terminal settings saved by [`enter_raw_mode`].
pub fn restore_mode(fd: i32, saved: &libc::termios) {
    // SAFETY: applies settings read from the same descriptor earlier.
    unsafe { libc::tcsetattr(fd, libc::TCSANOW, saved) };
}

/// The size of terminal `fd` as (columns, rows), when it is a terminal.
pub fn window_size(fd: i32) -> Option<(u16, u16)> {
    // SAFETY: winsize is plain data filled by the TIOCGWINSZ ioctl.
    let mut ws: libc::winsize = unsafe { std::mem::zeroed() };
    // SAFETY: as above, on a descriptor we hold.
    let r = unsafe { libc::ioctl(fd, libc::TIOCGWINSZ, &mut ws) };
    (r == 0 && ws.ws_col > 0 && ws.ws_row > 0).then_some((ws.ws_col, ws.ws_row))
}

/// The current user's id.
pub fn uid() -> u32 {
    // SAFETY: getuid has no preconditions and cannot fail.
    unsafe { libc::getuid() }
}

/// Starts `argv` in a session of its own whose controlling terminal is a new pty; returns
/// the child, the master end (kept open while the child runs) and the terminal's path.
#[cfg(test)]
pub fn on_terminal(argv: &[&str]) -> (std::process::Child, std::fs::File, std::path::PathBuf) {
    use std::os::fd::{AsRawFd, FromRawFd};
    let (master, slave) = openpty().unwrap();
    let path = std::fs::read_link(format!("/proc/self/fd/{}", slave.as_raw_fd())).unwrap();
    let stdio = |fd: &std::os::fd::OwnedFd| std::process::Stdio::from(fd.try_clone().unwrap());
    let mut cmd = std::process::Command::new(argv[0]);
    cmd.args(&argv[1..])
        .stdin(stdio(&slave))
        .stdout(stdio(&slave))
        .stderr(stdio(&slave));
    // SAFETY: setsid and ioctl are async-signal-safe; stdin is the terminal by now.
    unsafe {
        std::os::unix::process::CommandExt::pre_exec(&mut cmd, || {
            if libc::setsid() < 0 || libc::ioctl(0, libc::TIOCSCTTY, 0) < 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let child = cmd.spawn().unwrap();
    drop(slave);
    // SAFETY: the master's descriptor is moved into the File, which owns it alone.
    let master = unsafe { std::fs::File::from_raw_fd(std::os::fd::IntoRawFd::into_raw_fd(master)) };
    (child, master, path)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::fd::AsRawFd;
    use std::os::unix::process::CommandExt;
    use std::process::Command;

    /// A program printing to a terminal nobody reads ends up asleep in its write: seen as
    /// such; one asleep in something else is not.
    #[cfg(target_os = "linux")]
    #[test]
    fn a_write_to_a_full_terminal_is_seen() {
        let (mut yes, _master, _) = on_terminal(&["/usr/bin/yes"]);
        let (mut sleep, _master2, _) = on_terminal(&["/bin/sleep", "30"]);
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        let pid = yes.id() as i32;
        while !writes_to_a_terminal(pid) && std::time::Instant::now() < deadline {
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        let writing = writes_to_a_terminal(pid);
        let sleeping = sleep.id() as i32;
        while process_state(sleeping) != Some('S') && std::time::Instant::now() < deadline {
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        let sleeper_writing = writes_to_a_terminal(sleeping);
        for child in [&mut yes, &mut sleep] {
            child.kill().unwrap();
            child.wait().unwrap();
        }
        assert!(writing, "yes, its terminal full, sleeps in a write");
        assert!(!sleeper_writing, "sleep sleeps in nanosleep");
    }

    #[test]
    fn start_time_identifies_this_process() {
        let me = std::process::id() as i32;
        let t = process_start_time(me).expect("own start time");
        assert_eq!(process_start_time(me), Some(t));
        assert!(pid_exists(me));
    }

    /// The count moves when a sleeping process wakes and runs, and stays while it sleeps.
    #[test]
    fn context_switches_move_when_a_process_wakes() {
        use std::io::{BufRead, Write};
        let mut child = Command::new("/bin/sh")
            .args(["-c", "while read line; do echo \"$line\"; done"])
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let pid = child.id() as i32;
        let mut input = child.stdin.take().unwrap();
        let mut output = std::io::BufReader::new(child.stdout.take().unwrap());
        let mut line = String::new();
        let mut round = |line: &mut String| {
            line.clear();
            input.write_all(b"x\n").unwrap();
            output.read_line(line).unwrap();
            // Back asleep in its read: the state says so once it is.
            let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
            while process_state(pid) != Some('S') {
                assert!(std::time::Instant::now() < deadline);
                std::thread::yield_now();
            }
        };
        round(&mut line);
        let before = context_switches(pid).expect("a count");
        assert_eq!(context_switches(pid), Some(before), "asleep, it stays");
        round(&mut line);
        assert_eq!(line, "x\n");
        assert!(
            context_switches(pid).expect("a count") > before,
            "woken, it moves"
        );
        assert_eq!(context_switches(i32::MAX), None);
        // Kept open, the file reads the same counts, and follows a change of process.
        let mut counter = SwitchCounter::default();
        assert!(counter.read(std::process::id() as i32).is_some());
        assert_eq!(counter.read(i32::MAX), None);
        assert_eq!(counter.read(pid), context_switches(pid));
        round(&mut line);
        assert_eq!(counter.read(pid), context_switches(pid));
        drop(input);
        child.wait().unwrap();
        // Its descriptor, still open, reads nothing more.
        assert_eq!(counter.read(pid), None, "a reaped process has no count");
    }

    #[test]
    fn unread_input_counts_what_the_terminal_holds_for_its_reader() {
        use std::io::{Read, Write};
        let (master, slave) = openpty().unwrap();
        let (mut master, mut slave) = (std::fs::File::from(master), std::fs::File::from(slave));
        let path = std::fs::read_link(format!("/proc/self/fd/{}", slave.as_raw_fd())).unwrap();
        // Raw, so bytes are readable as they come (no line to wait for).
        enter_raw_mode(slave.as_raw_fd()).unwrap();
        assert_eq!(unread_input(&path), Some(0));
        master.write_all(b"abc").unwrap();
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while unread_input(&path) != Some(3) {
            assert!(
                std::time::Instant::now() < deadline,
                "{:?}",
                unread_input(&path)
            );
            std::thread::yield_now();
        }
        let mut got = [0u8; 3];
        slave.read_exact(&mut got).unwrap();
        assert_eq!(unread_input(&path), Some(0));
        assert_eq!(unread_input(std::path::Path::new("/nonexistent/tty")), None);
    }

    /// Waits (bounded) until `pid` sleeps in system call `nr`.
    fn until_in_syscall(pid: i32, nrs: &[i64]) {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
        loop {
            let now = std::fs::read_to_string(format!("/proc/{pid}/syscall")).unwrap_or_default();
            let nr = now.split_whitespace().next().and_then(|n| n.parse().ok());
            if process_state(pid) == Some('S') && nr.is_some_and(|n| nrs.contains(&n)) {
                return;
            }
            assert!(
                std::time::Instant::now() < deadline,
                "{pid} never waited in {nrs:?}: {now}"
            );
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
    }

    #[cfg(target_arch = "x86_64")]
    #[test]
    fn reading_the_terminal_alone_counts_through_dev_tty_and_a_select_without_timeout() {
        // read of /dev/tty (as getpass, sudo and ssh read a password), the controlling terminal.
        let (mut child, _master, tty) = on_terminal(&["sh", "-c", "read x < /dev/tty"]);
        let pid = child.id() as i32;
        until_in_syscall(pid, &[0]);
        assert!(reading_terminal(pid, &tty));
        assert!(waiting_for_input(pid, &tty));
        child.kill().unwrap();
        child.wait().unwrap();
        // A select over the terminal alone, for good (python's REPL): a prompt.
        let forever = "import select, sys\nselect.select([sys.stdin], [], [])";
        let (mut child, _master, tty) = on_terminal(&["python3", "-c", forever]);
        let pid = child.id() as i32;
        until_in_syscall(pid, &[23, 270]);
        assert!(reading_terminal(pid, &tty));
        child.kill().unwrap();
        child.wait().unwrap();
        // The same select with a timeout is a program ticking: waiting, but not at a prompt.
        let ticking = "import select, sys\nwhile True: select.select([sys.stdin], [], [], 30)";
        let (mut child, _master, tty) = on_terminal(&["python3", "-c", ticking]);
        let pid = child.id() as i32;
        until_in_syscall(pid, &[23, 270]);
        assert!(waiting_for_input(pid, &tty));
        assert!(!reading_terminal(pid, &tty));
        child.kill().unwrap();
        child.wait().unwrap();
        // /dev/tty of a process whose controlling terminal is another one is not this one.
        let (mut other, _m, _other_tty) = on_terminal(&["sh", "-c", "read x < /dev/tty"]);
        let other_pid = other.id() as i32;
        until_in_syscall(other_pid, &[0]);
        assert!(!reading_terminal(other_pid, &tty));
        other.kill().unwrap();
        other.wait().unwrap();
    }

    #[test]
    fn kill_tree_ends_children_that_left_the_group() {
        // sh leads its own group; one grandchild escapes into a session of its own.
        let mut child = Command::new("sh")
            .args(["-c", "setsid sleep 100 & sleep 100 & wait"])
            .process_group(0)
            .spawn()
            .unwrap();
        let root = child.id() as i32;
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while descendants(root).len() < 2 {
            assert!(
                std::time::Instant::now() < deadline,
                "children never appeared"
            );
            std::thread::yield_now();
        }
        let family = descendants(root);
        kill_tree(root);
        child.wait().unwrap();
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        for pid in family {
            // Reaped by init once orphaned; wait until it is gone or a zombie.
            while pid_exists(pid) && process_state(pid) != Some('Z') {
                assert!(std::time::Instant::now() < deadline, "{pid} survived");
                std::thread::yield_now();
            }
        }
    }
}
