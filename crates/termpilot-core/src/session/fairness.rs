//! Fairness between sessions: while several sessions print flat out, each of them steps back
//! — its reader thread and its program run at a lower priority — so a call on a quiet
//! session is answered at once; each takes its priority back once it is quiet again.
//!
//! Profiled with 20 sessions running `yes` on 2 cores (issue 32 item 4): the `yes`
//! processes took most of the CPU (a pty write's output processing runs in the writer), and
//! each session is its own scheduling group (the kernel's autogroup: one per `setsid`), so
//! twenty groups always ready to run faced the server's one, and a woken tokio worker waited
//! for the server's turn; inside the server, twenty busy reader threads stood before it.
//! So a flooding session (a) lowers its program's autogroup by [`BUSY_NICE`] (its whole
//! session: the shell and what it runs, not what set up a session of its own) and (b) its
//! reader thread's own nice value by as much. Neither costs a flood output: the program still
//! prints as fast as the reader drains it, and the reader still gets every cycle nobody in
//! the server wants — but a worker, or a quiet session's reader, that wakes runs first.
//!
//! Busy: output was waiting after every chunk for [`BUSY_AFTER`]; the priorities drop while
//! at least [`MIN_FLOODS`] sessions are busy (one flood alone starves nobody, and keeps its
//! full speed against the rest of the machine). Quiet: no output for [`QUIET_AFTER`] (a
//! shorter gap is the kernel moving the next bytes along, or the lowered thread's own turn
//! coming late, not the program stopping) while the terminal's foreground program neither is
//! runnable nor sleeps in a write to the terminal — a lowered flood on a loaded machine can
//! get no processor for longer than that, and its printed bytes can wait that long for the
//! kernel's worker that moves them to the reader; neither is quieter for it (counted quiet,
//! it went up and down, and under the kernel's rate limit its group stayed up while its
//! thread stayed down). A busy reader waits that long at most before it looks, so a session
//! that stops printing has its thread's priority back within it; its group comes back once
//! it has stayed quiet for [`GROUP_QUIET`] — a group change is heavy for the kernel and
//! rationed, and a flood that pauses for a moment keeps its group low and asks nothing.
//!
//! Raising a priority back may be refused: a thread's nice value needs `CAP_SYS_NICE`
//! or `RLIMIT_NICE`, so without them the reader keeps its lower one for the rest of its
//! session and stops asking. Without `CAP_SYS_ADMIN` (in the first user namespace: a
//! container's root has not) the kernel changes an autogroup's priority at most ten times a
//! second across the whole system, so a refused change is asked again every
//! [`RETRY_EVERY`]: a lowering on a later chunk, a setting back between short waits for
//! output (for [`RETRY_FOR`] at most). Every change to a session's group is made by its
//! reader thread, one after the other — a setting back still refused when a new flood
//! begins is simply dropped, the group being low already — so nothing can set a group back
//! behind a flood's back. Only once the session's reader is done may a helper thread ask
//! on. A group is only ever changed when it is not the server's own, and set back only while
//! it is still the one lowered. Linux only; elsewhere nothing changes.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// How long a reader must have found output waiting after every chunk to count as busy.
pub(super) const BUSY_AFTER: Duration = Duration::from_millis(20);
/// How long a wait for output must last for the reader to count as quiet again.
pub(super) const QUIET_AFTER: Duration = Duration::from_millis(50);
/// How much lower a flooding session runs (a nice increment, for its reader thread and its
/// program's scheduling group).
pub(super) const BUSY_NICE: i32 = 10;
/// How many sessions must be busy at once for them to step back.
pub(super) const MIN_FLOODS: usize = 2;
/// How long a session must stay quiet before its group is set back.
pub(super) const GROUP_QUIET: Duration = Duration::from_millis(500);
/// How often a refused group priority is asked again, and for how long a setting back is.
const RETRY_EVERY: Duration = Duration::from_millis(110);
const RETRY_FOR: Duration = Duration::from_secs(30);

/// How many readers are busy now, server-wide.
static BUSY: AtomicUsize = AtomicUsize::new(0);

/// One reader thread's priorities: made and used on the thread it governs.
pub(super) struct Fairness<G: Groups = Autogroups> {
    /// The session's main process: its autogroup is the session's.
    pid: i32,
    /// How the session's group is read and changed.
    groups: G,
    /// Since when output has been waiting after every chunk.
    busy_since: Option<Instant>,
    /// Counted in [`BUSY`].
    counted: bool,
    /// What was lowered, and from what.
    lowered: Option<Lowered>,
    /// Raising the thread back was refused once: it stays low and stops trying.
    stuck: bool,
    /// Lowering the group was refused for now (the system-wide rate limit): when to ask
    /// again.
    group_again: Option<Instant>,
    /// Setting the group back was refused for now: it is still low, and asked again.
    set_back: Option<SetBack>,
    /// How many waits of [`QUIET_AFTER`] found no output while the program was still
    /// printing: waiting for a processor, or asleep in a write (read by the tests).
    starved: u64,
}

/// The priorities a flooding session gave up.
struct Lowered {
    /// The thread's nice value before.
    thread: Option<i32>,
    /// The program's group (its name) and its nice value before.
    group: Option<(String, i32)>,
}

/// A group left low until its session has been quiet for [`GROUP_QUIET`], or because the
/// kernel refused, for now, to set it back.
struct SetBack {
    group: String,
    base: i32,
    /// When to ask next.
    at: Instant,
    /// When to stop asking.
    until: Instant,
}

impl Fairness {
    pub(super) fn new(pid: i32) -> Self {
        Fairness::with_groups(pid, Autogroups)
    }
}

impl<G: Groups> Fairness<G> {
    fn with_groups(pid: i32, groups: G) -> Self {
        Fairness {
            pid,
            groups,
            busy_since: None,
            counted: false,
            lowered: None,
            stuck: false,
            group_again: None,
            set_back: None,
            starved: 0,
        }
    }

    /// After a chunk was fed: `more` is whether output was already waiting behind it.
    pub(super) fn after_chunk(&mut self, more: bool) {
        if !more {
            self.busy_since = None;
            return;
        }
        let since = *self.busy_since.get_or_insert_with(Instant::now);
        if since.elapsed() < BUSY_AFTER {
            return;
        }
        if !self.counted {
            self.counted = true;
            BUSY.fetch_add(1, Ordering::Relaxed);
        }
        if self.lowered.is_none() && BUSY.load(Ordering::Relaxed) >= MIN_FLOODS {
            let thread = if self.stuck { None } else { lower_thread() };
            // A group the kernel has not set back yet is still low: it stays so.
            let group = self.set_back.take().map(|back| (back.group, back.base));
            let low_already = group.is_some();
            tracing::debug!(pid = self.pid, ?thread, low_already, "a flood steps back");
            self.lowered = Some(Lowered { thread, group });
            if !low_already {
                self.lower_group();
            }
        } else if self.group_again.is_some_and(|at| Instant::now() >= at) {
            self.lower_group();
        }
    }

    /// Lowers the program's group, or asks again after [`RETRY_EVERY`] when the kernel's
    /// rate limit refused it (two floods stepping back at once meet it).
    fn lower_group(&mut self) {
        self.group_again = None;
        let Some(lowered) = self.lowered.as_mut() else {
            return;
        };
        let Some((group, base)) = self.groups.of(self.pid) else {
            return;
        };
        let change = self
            .groups
            .set(self.pid, &group, (base + BUSY_NICE).min(19));
        tracing::debug!(pid = self.pid, group, base, ?change, "lowering the group");
        match change {
            Change::Done => lowered.group = Some((group, base)),
            Change::Later => self.group_again = Some(Instant::now() + RETRY_EVERY),
            Change::Never => {}
        }
    }

    /// Sets a group left low back, if the kernel lets it now: refused, it is asked again
    /// after [`RETRY_EVERY`], until [`RETRY_FOR`] has passed.
    fn set_group_back(&mut self) {
        let Some(back) = self.set_back.as_mut() else {
            return;
        };
        let change = self.groups.set(self.pid, &back.group, back.base);
        tracing::debug!(
            pid = self.pid,
            group = back.group,
            ?change,
            "setting the group back"
        );
        let now = Instant::now();
        match change {
            Change::Later if now < back.until => back.at = now + RETRY_EVERY,
            Change::Later => {
                tracing::debug!(pid = self.pid, "could not set a session's group back");
                self.set_back = None;
            }
            Change::Done | Change::Never => self.set_back = None,
        }
    }

    /// Waits until the terminal `fd` has output (or hung up). A busy session waits
    /// [`QUIET_AFTER`] first: nothing by then, it is quiet, and takes its thread's priority
    /// back before the long wait; a wait that lasted that long is quiet too. A group left
    /// low is set back when the wait has lasted [`GROUP_QUIET`], and asked again between
    /// waits of [`RETRY_EVERY`] while the kernel refuses.
    pub(super) fn wait(&mut self, fd: i32) {
        if self.counted || self.lowered.is_some() {
            loop {
                if crate::platform::wait_readable_for(&[fd], QUIET_AFTER).is_some() {
                    return;
                }
                if !still_printing(fd) {
                    break;
                }
                self.starved += 1;
            }
            self.quiet();
        }
        while let Some(at) = self.set_back.as_ref().map(|back| back.at) {
            let left = at.saturating_duration_since(Instant::now());
            if !left.is_zero() && crate::platform::wait_readable_for(&[fd], left).is_some() {
                return;
            }
            self.set_group_back();
        }
        let waiting = Instant::now();
        crate::platform::wait_readable(&[fd]);
        if waiting.elapsed() >= QUIET_AFTER {
            self.quiet();
        }
    }

    /// Quiet, or done: nothing counted, the thread's priority back, the group's to come
    /// back after [`GROUP_QUIET`].
    pub(super) fn quiet(&mut self) {
        self.busy_since = None;
        self.group_again = None;
        if self.counted {
            self.counted = false;
            BUSY.fetch_sub(1, Ordering::Relaxed);
        }
        let Some(lowered) = self.lowered.take() else {
            return;
        };
        tracing::debug!(
            pid = self.pid,
            "quiet: the session takes its priorities back"
        );
        if let Some(base) = lowered.thread
            && !set_thread_nice(base)
        {
            self.stuck = true;
        }
        if let Some((group, base)) = lowered.group {
            let at = Instant::now() + GROUP_QUIET;
            self.set_back = Some(SetBack {
                group,
                base,
                at,
                until: at + RETRY_FOR,
            });
        }
    }
}

impl<G: Groups> Drop for Fairness<G> {
    /// The session's reader is done: its group is set back at once, and while the kernel
    /// refuses, asked on a helper thread (no reader is left to lower it again).
    fn drop(&mut self) {
        self.quiet();
        self.set_group_back();
        let Some(back) = self.set_back.take() else {
            return;
        };
        let (groups, pid) = (self.groups.clone(), self.pid);
        let retry = move || {
            while Instant::now() < back.until {
                std::thread::sleep(RETRY_EVERY);
                if !matches!(groups.set(pid, &back.group, back.base), Change::Later) {
                    return;
                }
            }
            tracing::debug!(pid, "could not set a session's group back");
        };
        if let Err(e) = std::thread::Builder::new()
            .name("fairness".into())
            .stack_size(64 * 1024)
            .spawn(retry)
        {
            tracing::debug!(pid, "no thread to set a session's group back: {e}");
        }
    }
}

/// Whether the program in the foreground of the terminal whose master is `fd` (its process
/// group's leader) is runnable (`R`) — it printed nothing for a while only because it got
/// no processor, a lowered flood on a loaded machine, or it computes without printing — or
/// sleeps writing to the terminal, its bytes waiting for the kernel to move them along.
/// Either way it is not quiet.
#[cfg(target_os = "linux")]
fn still_printing(fd: i32) -> bool {
    crate::platform::foreground_group(fd).is_some_and(|leader| {
        crate::platform::process_state(leader) == Some('R')
            || crate::platform::writes_to_a_terminal(leader)
    })
}

#[cfg(not(target_os = "linux"))]
fn still_printing(_fd: i32) -> bool {
    false
}

/// Reads and changes a session's scheduling group: the kernel's autogroups
/// ([`Autogroups`]), or a stand-in in the tests.
pub(super) trait Groups: Clone + Send + 'static {
    /// The group of `pid`, when it may be changed (it is not the server's own): its name
    /// and nice value.
    fn of(&self, pid: i32) -> Option<(String, i32)>;
    /// Sets the nice value of the group of `pid` while it is still `group`.
    fn set(&self, pid: i32, group: &str, nice: i32) -> Change;
}

/// What became of changing a group.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Change {
    /// Done, or nothing left to do (the process has another group now, or is gone).
    Done,
    /// Refused for now by the system-wide rate limit: ask again later.
    Later,
    /// Refused, not to be asked again.
    Never,
}

/// The kernel's autogroups, through `/proc/PID/autogroup` (`/autogroup-N nice V`).
#[derive(Clone, Copy)]
pub(super) struct Autogroups;

#[cfg(target_os = "linux")]
impl Groups for Autogroups {
    fn of(&self, pid: i32) -> Option<(String, i32)> {
        own_group_apart(autogroup(&pid.to_string()), autogroup("self"))
    }

    fn set(&self, pid: i32, group: &str, nice: i32) -> Change {
        if autogroup(&pid.to_string()).is_none_or(|(now, _)| now != group) {
            return Change::Done;
        }
        match std::fs::write(format!("/proc/{pid}/autogroup"), nice.to_string()) {
            Ok(()) => Change::Done,
            // EAGAIN: another autogroup changed in the last 100 ms, anywhere on the system.
            Err(e) if e.raw_os_error() == Some(libc::EAGAIN) => Change::Later,
            Err(_) => Change::Never,
        }
    }
}

#[cfg(not(target_os = "linux"))]
impl Groups for Autogroups {
    fn of(&self, _pid: i32) -> Option<(String, i32)> {
        None
    }

    fn set(&self, _pid: i32, _group: &str, _nice: i32) -> Change {
        Change::Never
    }
}

/// A session's group (`session`), when it is not the server's own (`own`). A process that
/// no session leader ever started — a descendant of `init` that never called `setsid`, as a
/// CI job can be — is in the kernel's root group, which is no autogroup: its file is empty,
/// and every session's group is apart from it.
#[cfg(target_os = "linux")]
fn own_group_apart(
    session: Option<(String, i32)>,
    own: Option<(String, i32)>,
) -> Option<(String, i32)> {
    let (group, nice) = session?;
    own.is_none_or(|(own, _)| own != group)
        .then_some((group, nice))
}

/// The autogroup of a process (`self` or a pid): its name and nice value; `None` for a
/// process in the root group (its file is empty) or where there are no autogroups.
#[cfg(target_os = "linux")]
fn autogroup(pid: &str) -> Option<(String, i32)> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/autogroup")).ok()?;
    let (name, nice) = text.trim().split_once(" nice ")?;
    Some((name.to_string(), nice.trim().parse().ok()?))
}

/// Lowers the calling thread's priority by [`BUSY_NICE`]; the nice value it had, if done.
#[cfg(target_os = "linux")]
fn lower_thread() -> Option<i32> {
    let base = thread_nice()?;
    set_thread_nice((base + BUSY_NICE).min(19)).then_some(base)
}

/// The calling thread's nice value.
#[cfg(target_os = "linux")]
fn thread_nice() -> Option<i32> {
    // SAFETY: gettid takes nothing; getpriority reads nothing of ours. -1 is a valid nice
    // value, so errno tells an error apart.
    unsafe {
        let tid = libc::gettid() as libc::id_t;
        *libc::__errno_location() = 0;
        let value = libc::getpriority(libc::PRIO_PROCESS, tid);
        (value != -1 || *libc::__errno_location() == 0).then_some(value)
    }
}

/// Sets the calling thread's nice value (on Linux a `PRIO_PROCESS` of a thread id is that
/// thread alone); false when refused.
#[cfg(target_os = "linux")]
fn set_thread_nice(value: i32) -> bool {
    // SAFETY: gettid takes nothing; setpriority changes this thread's priority only.
    unsafe {
        let tid = libc::gettid() as libc::id_t;
        libc::setpriority(libc::PRIO_PROCESS, tid, value) == 0
    }
}

#[cfg(not(target_os = "linux"))]
fn lower_thread() -> Option<i32> {
    None
}

#[cfg(not(target_os = "linux"))]
fn set_thread_nice(_value: i32) -> bool {
    true
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;
    use std::io::{Read, Write};
    use std::os::fd::AsRawFd;

    /// A pipe's two ends: (read, write).
    fn pipe() -> (std::fs::File, std::fs::File) {
        let mut fds = [0; 2];
        // SAFETY: pipe(2) fills the two descriptors, which the files then own.
        assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0);
        use std::os::fd::FromRawFd;
        // SAFETY: both descriptors were just opened and nothing else owns them.
        unsafe {
            (
                std::fs::File::from_raw_fd(fds[0]),
                std::fs::File::from_raw_fd(fds[1]),
            )
        }
    }

    /// A session's group may be changed when it is not the server's — also when the server
    /// is in the root group, whose file is empty (CI's jobs are: nothing above them called
    /// `setsid`, and there the server never lowered a flood's group).
    #[test]
    fn a_server_in_the_root_group_may_change_a_sessions_group() {
        let session = || Some(("/autogroup-7".to_string(), 0));
        assert_eq!(own_group_apart(session(), None), session());
        assert_eq!(
            own_group_apart(session(), Some(("/autogroup-3".to_string(), 0))),
            session()
        );
        assert_eq!(
            own_group_apart(session(), Some(("/autogroup-7".to_string(), 0))),
            None
        );
        assert_eq!(own_group_apart(None, None), None);
        // The root group reads as nothing.
        let root = std::fs::read_to_string("/proc/1/autogroup");
        if root.as_deref().is_ok_and(|text| text.trim().is_empty()) {
            assert_eq!(autogroup("1"), None);
        }
    }

    /// Serialises the tests: they share [`BUSY`].
    static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

    /// Two readers busy for longer than [`BUSY_AFTER`] run lower, each on its own thread;
    /// quiet, they go back up (when the process may raise a thread: as root, or with
    /// `RLIMIT_NICE`). The test's own process is the "program": its autogroup is the
    /// server's, so it is never touched.
    #[test]
    fn busy_together_lowers_and_quiet_restores() {
        let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
        let own_group = autogroup("self");
        let (first_busy, first_rx) = std::sync::mpsc::channel();
        let (second_busy, second_rx) = std::sync::mpsc::channel::<()>();
        let (first_done, first_done_rx) = std::sync::mpsc::channel::<()>();
        let first = std::thread::spawn(move || {
            let base = thread_nice().unwrap();
            let low = Some((base + BUSY_NICE).min(19));
            let mut fairness = Fairness::new(std::process::id() as i32);
            fairness.after_chunk(true);
            std::thread::sleep(BUSY_AFTER);
            fairness.after_chunk(true);
            assert_eq!(
                thread_nice(),
                Some(base),
                "one flood alone keeps its priority"
            );
            first_busy.send(()).unwrap();
            second_rx.recv().unwrap();
            fairness.after_chunk(true);
            assert_eq!(thread_nice(), low, "two floods step back");
            let (quiet, mut loud) = pipe();
            loud.write_all(b"x").unwrap();
            fairness.wait(quiet.as_raw_fd());
            assert_eq!(thread_nice(), low, "output within the time: not quiet");
            let mut byte = [0u8];
            (&quiet).read_exact(&mut byte).unwrap();
            // The clock starts before the writer's: it writes no sooner than this long after.
            let waited = Instant::now();
            let writer = std::thread::spawn(move || {
                std::thread::sleep(QUIET_AFTER * 2);
                loud.write_all(b"y").unwrap();
                loud
            });
            fairness.wait(quiet.as_raw_fd());
            assert!(
                waited.elapsed() >= QUIET_AFTER * 2,
                "the long wait waits for output"
            );
            drop(writer.join().unwrap());
            if fairness.stuck {
                assert_eq!(thread_nice(), low, "not allowed back up: stays low");
            } else {
                assert_eq!(thread_nice(), Some(base));
            }
            first_done.send(()).unwrap();
        });
        first_rx.recv().unwrap();
        std::thread::spawn(move || {
            let base = thread_nice().unwrap();
            let mut fairness = Fairness::new(std::process::id() as i32);
            fairness.after_chunk(true);
            std::thread::sleep(BUSY_AFTER);
            fairness.after_chunk(true);
            assert_eq!(thread_nice(), Some((base + BUSY_NICE).min(19)));
            second_busy.send(()).unwrap();
            first_done_rx.recv().unwrap();
            drop(fairness);
        })
        .join()
        .unwrap();
        first.join().unwrap();
        assert_eq!(BUSY.load(Ordering::Relaxed), 0);
        assert_eq!(
            autogroup("self"),
            own_group,
            "the server's own group is never changed"
        );
    }

    /// Output that stops between chunks is not a flood: the clock starts again.
    #[test]
    fn a_pause_restarts_the_clock() {
        let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
        std::thread::spawn(|| {
            let mut fairness = Fairness::new(std::process::id() as i32);
            fairness.after_chunk(true);
            std::thread::sleep(BUSY_AFTER);
            fairness.after_chunk(false);
            fairness.after_chunk(true);
            assert!(!fairness.counted);
            assert_eq!(BUSY.load(Ordering::Relaxed), 0);
        })
        .join()
        .unwrap();
    }

    /// A stand-in for the kernel's autogroups: one group, and a number of changes it
    /// refuses as the rate limit does.
    #[derive(Clone, Default)]
    struct Kernel(std::sync::Arc<std::sync::Mutex<KernelState>>);

    #[derive(Default)]
    struct KernelState {
        nice: i32,
        /// How many of the next changes are refused (`EAGAIN`).
        refuse: usize,
        /// Changes asked for, refused ones too.
        asked: usize,
    }

    impl Kernel {
        fn state(&self) -> std::sync::MutexGuard<'_, KernelState> {
            self.0.lock().unwrap_or_else(|e| e.into_inner())
        }
    }

    impl Groups for Kernel {
        fn of(&self, _pid: i32) -> Option<(String, i32)> {
            Some(("/autogroup-1".into(), self.state().nice))
        }

        fn set(&self, _pid: i32, group: &str, nice: i32) -> Change {
            assert_eq!(group, "/autogroup-1");
            let mut state = self.state();
            state.asked += 1;
            if state.refuse > 0 {
                state.refuse -= 1;
                return Change::Later;
            }
            state.nice = nice;
            Change::Done
        }
    }

    /// Makes `fairness` busy for longer than [`BUSY_AFTER`].
    fn flood<G: Groups>(fairness: &mut Fairness<G>) {
        fairness.after_chunk(true);
        std::thread::sleep(BUSY_AFTER);
        fairness.after_chunk(true);
    }

    /// A lowered flood that prints nothing only because it gets no processor is not quiet:
    /// here the terminal's foreground program computes without printing, runnable all along,
    /// and its group stays low however long the reader waits; once it has ended, the session
    /// is quiet and takes its priorities back. (Counted quiet, a starved flood went up and
    /// down, and under the kernel's rate limit its group stayed up: CI's failure.)
    #[test]
    fn a_program_waiting_for_a_processor_is_not_quiet() {
        let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
        let (mut child, master, tty) =
            crate::platform::on_terminal(&["/bin/sh", "-c", "while :; do :; done"]);
        // Held open so the terminal does not hang up when the program ends.
        let mut terminal = {
            use std::os::unix::fs::OpenOptionsExt;
            std::fs::OpenOptions::new()
                .read(true)
                .write(true)
                .custom_flags(libc::O_NOCTTY)
                .open(&tty)
                .unwrap()
        };
        std::thread::spawn(move || {
            let kernel = Kernel::default();
            let mut fairness = Fairness::with_groups(1, kernel.clone());
            BUSY.fetch_add(1, Ordering::Relaxed);
            flood(&mut fairness);
            assert_eq!(kernel.state().nice, BUSY_NICE, "two floods: lowered");
            let watcher = {
                let kernel = kernel.clone();
                std::thread::spawn(move || {
                    // Six times the quiet time with no output: still low.
                    std::thread::sleep(QUIET_AFTER * 6);
                    let low = kernel.state().nice;
                    child.kill().unwrap();
                    child.wait().unwrap();
                    let deadline = Instant::now() + Duration::from_secs(10);
                    while kernel.state().nice != 0 && Instant::now() < deadline {
                        std::thread::sleep(Duration::from_millis(5));
                    }
                    terminal.write_all(b"x").unwrap();
                    low
                })
            };
            fairness.wait(master.as_raw_fd());
            let low = watcher.join().unwrap();
            assert_eq!(low, BUSY_NICE, "runnable, not printing: still low");
            assert!(fairness.starved >= 1, "{}", fairness.starved);
            assert_eq!(kernel.state().nice, 0, "ended: quiet, set back");
            assert!(fairness.lowered.is_none());
            drop(fairness);
            BUSY.fetch_sub(1, Ordering::Relaxed);
        })
        .join()
        .unwrap();
        assert_eq!(BUSY.load(Ordering::Relaxed), 0);
    }

    /// Without `CAP_SYS_ADMIN` the kernel refuses group changes that come too close: a
    /// refused setting back is asked again by the reader itself while it waits, and a flood
    /// that starts again meanwhile finds the group still low and keeps it so — nothing sets
    /// it back behind the flood's back (a helper thread asking on did, in CI: the group at
    /// 0 for good while the reader thought it low).
    #[test]
    fn refused_changes_are_asked_again_and_never_undo_a_new_flood() {
        let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
        std::thread::spawn(|| {
            let kernel = Kernel::default();
            let mut fairness = Fairness::with_groups(1, kernel.clone());
            // Another session floods too.
            BUSY.fetch_add(1, Ordering::Relaxed);

            // A refused lowering is asked again on a chunk after RETRY_EVERY.
            kernel.state().refuse = 1;
            flood(&mut fairness);
            assert_eq!(kernel.state().nice, 0, "refused: not lowered yet");
            fairness.after_chunk(true);
            assert_eq!(
                kernel.state().asked,
                1,
                "not asked again before RETRY_EVERY"
            );
            std::thread::sleep(RETRY_EVERY);
            fairness.after_chunk(true);
            assert_eq!(kernel.state().nice, BUSY_NICE, "asked again: lowered");

            // Quiet for a moment: the group stays low and nothing is asked before
            // GROUP_QUIET; the flood starts again before that.
            let asked = kernel.state().asked;
            fairness.quiet();
            assert_eq!(kernel.state().nice, BUSY_NICE);
            assert_eq!(kernel.state().asked, asked, "a pause asks nothing");
            flood(&mut fairness);
            assert_eq!(kernel.state().nice, BUSY_NICE, "still low: it stays so");
            assert_eq!(kernel.state().asked, asked, "nothing to ask: it is low");
            std::thread::sleep(RETRY_EVERY * 3);
            fairness.after_chunk(true);
            assert_eq!(
                kernel.state().nice,
                BUSY_NICE,
                "nothing set the group back behind the flood's back"
            );

            // Quiet again, refused twice: the reader asks after GROUP_QUIET, again
            // between its waits, and its long wait comes after.
            kernel.state().refuse = 2;
            let quiet_since = Instant::now();
            let (quiet, mut loud) = pipe();
            let watcher = {
                let kernel = kernel.clone();
                std::thread::spawn(move || {
                    let deadline = Instant::now() + Duration::from_secs(10);
                    while kernel.state().nice != 0 && Instant::now() < deadline {
                        std::thread::sleep(Duration::from_millis(5));
                    }
                    loud.write_all(b"x").unwrap();
                    loud
                })
            };
            fairness.wait(quiet.as_raw_fd());
            drop(watcher.join().unwrap());
            let set_back_after = quiet_since.elapsed();
            let state = kernel.state();
            assert_eq!(state.nice, 0, "set back on the third time of asking");
            assert!(
                set_back_after >= GROUP_QUIET + QUIET_AFTER,
                "not before the quiet has lasted: {set_back_after:?}"
            );
            assert_eq!(state.refuse, 0);
            drop(state);
            assert!(fairness.set_back.is_none() && fairness.lowered.is_none());
            drop(fairness);
            BUSY.fetch_sub(1, Ordering::Relaxed);
        })
        .join()
        .unwrap();
        assert_eq!(BUSY.load(Ordering::Relaxed), 0);
    }
}
