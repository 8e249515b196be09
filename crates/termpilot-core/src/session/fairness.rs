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
//! coming late, not the program stopping); a busy reader waits that long at most before it
//! looks, so a session that stops printing has its priorities back within it.
//!
//! Raising a priority back may be refused: a thread's nice value needs `CAP_SYS_NICE`
//! or `RLIMIT_NICE`, so without them the reader keeps its lower one for the rest of its
//! session and stops asking. Without `CAP_SYS_ADMIN` the kernel changes an autogroup's
//! priority at most ten times a second across the whole system, so a refused lowering is
//! asked again on a later chunk, and a refused setting back on a helper thread (every
//! [`RETRY_EVERY`], for [`RETRY_FOR`]). A group is only ever changed when it
//! is not the server's own, and set back only while it is still the one lowered. Linux only;
//! elsewhere nothing changes.

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
/// How often a refused group priority is asked back, and for how long.
const RETRY_EVERY: Duration = Duration::from_millis(110);
const RETRY_FOR: Duration = Duration::from_secs(5);

/// How many readers are busy now, server-wide.
static BUSY: AtomicUsize = AtomicUsize::new(0);

/// One reader thread's priorities: made and used on the thread it governs.
pub(super) struct Fairness {
    /// The session's main process: its autogroup is the session's.
    pid: i32,
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
}

/// The priorities a flooding session gave up.
struct Lowered {
    /// The thread's nice value before.
    thread: Option<i32>,
    /// The program's autogroup (its name) and its nice value before.
    group: Option<(String, i32)>,
}

impl Fairness {
    pub(super) fn new(pid: i32) -> Self {
        Fairness {
            pid,
            busy_since: None,
            counted: false,
            lowered: None,
            stuck: false,
            group_again: None,
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
            self.lowered = Some(Lowered {
                thread: if self.stuck { None } else { lower_thread() },
                group: None,
            });
            self.lower_group();
        } else if self.group_again.is_some_and(|at| Instant::now() >= at) {
            self.lower_group();
        }
    }

    /// Lowers the program's group, or asks again after [`RETRY_EVERY`] when the kernel's
    /// rate limit refused it (without `CAP_SYS_ADMIN`, one group change a tenth of a
    /// second system-wide: two floods stepping back at once meet it).
    fn lower_group(&mut self) {
        self.group_again = None;
        let Some(lowered) = self.lowered.as_mut() else {
            return;
        };
        match lower_group(self.pid) {
            GroupChange::Done(name, base) => lowered.group = Some((name, base)),
            GroupChange::Later => self.group_again = Some(Instant::now() + RETRY_EVERY),
            GroupChange::Never => {}
        }
    }

    /// Waits until the terminal `fd` has output (or hung up). A busy session waits
    /// [`QUIET_AFTER`] first: nothing by then, it is quiet, and takes its priorities back
    /// before the long wait; a wait that lasted that long is quiet too.
    pub(super) fn wait(&mut self, fd: i32) {
        if self.counted || self.lowered.is_some() {
            if crate::platform::wait_readable_for(&[fd], QUIET_AFTER).is_some() {
                return;
            }
            self.quiet();
            crate::platform::wait_readable(&[fd]);
            return;
        }
        let waiting = Instant::now();
        crate::platform::wait_readable(&[fd]);
        if waiting.elapsed() >= QUIET_AFTER {
            self.quiet();
        }
    }

    /// Quiet, or done: nothing counted, nothing lowered.
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
        if let Some(base) = lowered.thread
            && !set_thread_nice(base)
        {
            self.stuck = true;
        }
        if let Some((group, base)) = lowered.group {
            restore_group(self.pid, group, base);
        }
    }
}

impl Drop for Fairness {
    fn drop(&mut self) {
        self.quiet();
    }
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

/// The autogroup of a process (`/proc/PID/autogroup`: `/autogroup-N nice V`): its name
/// and nice value.
#[cfg(target_os = "linux")]
fn autogroup(pid: &str) -> Option<(String, i32)> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/autogroup")).ok()?;
    let (name, nice) = text.trim().split_once(" nice ")?;
    Some((name.to_string(), nice.trim().parse().ok()?))
}

/// What became of lowering a program's group.
enum GroupChange {
    /// Lowered: the group's name and its nice value before.
    Done(String, i32),
    /// Refused for now by the system-wide rate limit: ask again later.
    Later,
    /// Not done and not to be asked again (the server's own group, no autogroups, refused).
    Never,
}

/// Lowers the autogroup of `pid` by [`BUSY_NICE`] when it is not the server's own.
#[cfg(target_os = "linux")]
fn lower_group(pid: i32) -> GroupChange {
    let Some((name, base)) = autogroup(&pid.to_string()) else {
        return GroupChange::Never;
    };
    if autogroup("self").is_none_or(|(own, _)| own == name) {
        return GroupChange::Never;
    }
    let lower = (base + BUSY_NICE).min(19);
    match std::fs::write(format!("/proc/{pid}/autogroup"), lower.to_string()) {
        Ok(()) => GroupChange::Done(name, base),
        // EAGAIN: another autogroup changed in the last 100 ms, anywhere on the system.
        Err(e) if e.raw_os_error() == Some(libc::EAGAIN) => GroupChange::Later,
        Err(_) => GroupChange::Never,
    }
}

/// Sets the autogroup of `pid` back to `base` while it is still `group`; refused for now
/// (the system-wide rate limit), tried again on a helper thread.
#[cfg(target_os = "linux")]
fn restore_group(pid: i32, group: String, base: i32) {
    let attempt = move || -> bool {
        if autogroup(&pid.to_string()).is_none_or(|(now, _)| now != group) {
            return true;
        }
        match std::fs::write(format!("/proc/{pid}/autogroup"), base.to_string()) {
            Ok(()) => true,
            // EAGAIN: another autogroup changed in the last 100 ms, anywhere on the system.
            Err(e) => e.raw_os_error() != Some(libc::EAGAIN),
        }
    };
    if attempt() {
        return;
    }
    let retry = move || {
        let until = Instant::now() + RETRY_FOR;
        while Instant::now() < until {
            std::thread::sleep(RETRY_EVERY);
            if attempt() {
                return;
            }
        }
        tracing::debug!(pid, "could not set a session's scheduling group back");
    };
    if let Err(e) = std::thread::Builder::new()
        .name("fairness".into())
        .stack_size(64 * 1024)
        .spawn(retry)
    {
        tracing::debug!(
            pid,
            "no thread to set a session's scheduling group back: {e}"
        );
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

#[cfg(not(target_os = "linux"))]
fn lower_group(_pid: i32) -> GroupChange {
    GroupChange::Never
}

#[cfg(not(target_os = "linux"))]
fn restore_group(_pid: i32, _group: String, _base: i32) {}

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
            let writer = std::thread::spawn(move || {
                std::thread::sleep(QUIET_AFTER * 2);
                loud.write_all(b"y").unwrap();
                loud
            });
            let waited = Instant::now();
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
}
