//! The PTY and its I/O: the terminal's master side, the program started on it, and the
//! three small threads that serve it.
//!
//! The reader only reads the PTY and feeds every chunk, once, to the session's state
//! ([`State::feed`], under a short-held lock, no await inside), writes the emulator's query
//! replies back, and bumps an event counter that wakes waiters. The writer thread takes
//! the PTY's input that may wait, so a program that stops reading can never block a tool
//! call. The waiter reaps the child and records how it ended.
//!
//! The terminal is non-blocking (Unix): a tool call's write goes out at once from the
//! calling task when nothing is queued before it and the terminal takes it whole — the
//! usual case, a short command typed to a program that reads — and only what it could not
//! take is queued for the writer thread. That spares every call a hand-over to another
//! thread and back (issue 32, the HTTP figure). One lock over the writing end keeps the
//! two in order: the writer thread holds it for each job, a direct write only tries it.

use std::io::{Read, Write};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use portable_pty::{CommandBuilder, MasterPty, PtyPair, PtySize, native_pty_system};
use tokio::sync::{oneshot, watch};

use super::emulator::Size;
use super::replies::{Asker, ReplyContext};
use super::state::{State, lock};
use super::terminal::{Exit, Shape};
use crate::error::{Error, Fault, Result};
use crate::platform;

/// How long a write may wait for the program to take its input.
const WRITE_TIMEOUT: Duration = Duration::from_secs(5);
/// Size of one read from the PTY.
const READ_CHUNK: usize = 64 * 1024;
/// While more output is already waiting, waiters are woken once per this many bytes instead
/// of once per read: a flood of output costs a few wake-ups, not thousands.
const WAKE_BATCH: usize = 256 * 1024;
/// A burst of output counts as a flood once this much came without a pause of
/// [`FLOOD_WAKE_EVERY`]: then a reader that catches up with the program wakes waiters at
/// most once per [`FLOOD_WAKE_EVERY`], not after every few kilobytes the program manages to
/// print (seq 1 5000000: 105,000 wake-ups of the runtime's workers became 8,000, their CPU
/// a third). A burst of less (a REPL's answer, a screen) wakes them at once.
const FLOOD_BYTES: usize = 64 * 1024;
const FLOOD_WAKE_EVERY: Duration = Duration::from_millis(1);

/// A terminal opened, its program not started yet.
pub(super) struct Opened {
    pair: PtyPair,
}

/// Opens a pseudo-terminal of `size`.
pub(super) fn open(size: Size) -> Result<Opened> {
    let pair = native_pty_system()
        .openpty(PtySize {
            rows: size.rows,
            cols: size.cols,
            pixel_width: 0,
            pixel_height: 0,
        })
        .map_err(|e| {
            Error::Other(format!(
                "Could not open a pseudo-terminal ({e}); too many may be open, stop some sessions."
            ))
        })?;
    Ok(Opened { pair })
}

/// Where a started program's threads report: the state they feed and the event counter
/// that wakes waiters.
pub(super) struct Feeds {
    pub(super) state: Arc<Mutex<State>>,
    pub(super) events: Arc<watch::Sender<u64>>,
    /// The session started with prompt hooks (its answers to queries follow the reply rule).
    pub(super) hooked: bool,
    /// The session runs one command instead of a shell.
    pub(super) command: bool,
    pub(super) started: Instant,
}

impl Opened {
    /// Starts `cmd` on the terminal and the threads that serve it. `shape` names the
    /// program and the directory in an error.
    pub(super) fn start(
        self,
        id: &str,
        cmd: CommandBuilder,
        shape: &Shape,
        feeds: Feeds,
    ) -> Result<Pty> {
        let Opened { pair } = self;
        let mut child = pair.slave.spawn_command(cmd).map_err(|e| {
            Error::Other(format!(
                "Could not start `{}` in {} ({e}); check the shell and the working directory.",
                shape.shell.program.display(),
                shape.cwd.display()
            ))
        })?;
        // The slave must close here, or the reader never sees the end of the output.
        drop(pair.slave);
        // Every session has its main process's id: a start without one is refused, so no
        // "0 for none" travels on (the kill, the foreground checks and `/proc` need it).
        let Some(pid) = child.process_id().map(|p| p as i32) else {
            let _ = child.kill();
            return Err(Error::Other(
                "The terminal's program started but the system gave no process id for it; try again or pick another shell.".into(),
            ));
        };
        let reader = pair
            .master
            .try_clone_reader()
            .map_err(|e| Error::Other(format!("Could not read the terminal ({e}).")))?;
        let writer = pair
            .master
            .take_writer()
            .map_err(|e| Error::Other(format!("Could not write to the terminal ({e}).")))?;
        #[cfg(unix)]
        let master_fd = pair.master.as_raw_fd();
        #[cfg(not(unix))]
        let master_fd = None;
        if let Some(fd) = master_fd {
            platform::set_nonblocking(fd).map_err(|e| {
                Error::Other(format!("Could not set up the terminal ({e}); try again."))
            })?;
        }
        let writer = Arc::new(Writer {
            end: Mutex::new(writer),
            fd: master_fd,
            queued: AtomicUsize::new(0),
        });

        let Feeds {
            state,
            events,
            hooked,
            command,
            started,
        } = feeds;
        let (input, input_rx) = std::sync::mpsc::channel::<WriteJob>();
        let reader_idle = Arc::new(AtomicBool::new(false));
        let mut replies = ReplyContext::new(
            master_fd,
            pid,
            hooked,
            super::replies::counter(&state, |s: &State| s.phase().boundaries()),
            reader_idle.clone(),
        );
        {
            let writer = writer.clone();
            spawn_thread(id, "writer", move || {
                writer_loop(&writer, input_rx, &mut replies)
            })?;
        }
        {
            let state = state.clone();
            let events = events.clone();
            let input = Queue {
                jobs: input.clone(),
                writer: writer.clone(),
            };
            // A command session's program is the one asker: its answers go out at once.
            let shell = (!command).then_some(pid);
            let ctx = ReaderContext {
                pid,
                master_fd,
                shell,
                idle: reader_idle.clone(),
                started,
            };
            spawn_thread(id, "reader", move || {
                reader_loop(reader, &ctx, state, events, input)
            })?;
        }
        spawn_thread(id, "waiter", move || {
            let status = child.wait();
            let exit = match status {
                Ok(s) => Exit {
                    code: s.signal().is_none().then(|| s.exit_code() as i32),
                    signal: s.signal().map(String::from),
                },
                Err(_) => Exit {
                    code: None,
                    signal: None,
                },
            };
            {
                lock(&state).command.on_exit(exit, Instant::now());
            }
            events.send_modify(|n| *n += 1);
        })?;
        Ok(Pty {
            pid,
            input: Queue {
                jobs: input,
                writer,
            },
            master: Mutex::new(pair.master),
            master_fd,
            reader_idle,
        })
    }
}

/// A session's terminal: its master side, the program's input queue, and what the reader
/// is doing.
pub(crate) struct Pty {
    /// The main process started on it.
    pid: i32,
    input: Queue,
    master: Mutex<Box<dyn MasterPty + Send>>,
    master_fd: Option<i32>,
    /// Set while the reader waits for output (see [`Pty::scanned_all`]).
    reader_idle: Arc<AtomicBool>,
}

impl Pty {
    /// The main process's id.
    pub(super) fn pid(&self) -> i32 {
        self.pid
    }

    /// Writes bytes to the program and waits (at most [`WRITE_TIMEOUT`]) until it took them:
    /// at once when nothing is queued and the terminal takes them, else through the writer.
    pub(super) async fn write(&self, mut bytes: Vec<u8>) -> Result<()> {
        match self.input.writer.write_now(&bytes) {
            Ok(n) if n == bytes.len() => {
                zeroize::Zeroize::zeroize(&mut bytes);
                // The program just woken is often queued on this very CPU (the kernel wakes
                // a reader where its writer runs), behind this thread: step aside so it reads
                // now, not after this call's first looks (REPL answers were 0.7 ms later
                // without this; a hand-over to the writer thread used to free the CPU).
                std::thread::yield_now();
                return Ok(());
            }
            Ok(n) => {
                // The rest waits for the program; what went is wiped now.
                zeroize::Zeroize::zeroize(&mut bytes[..n]);
                bytes.drain(..n);
            }
            Err(e) => {
                zeroize::Zeroize::zeroize(&mut bytes);
                return Err(Error::Other(format!(
                    "Writing to the terminal failed ({e}); the program may have exited."
                )));
            }
        }
        let (done, ack) = oneshot::channel();
        self.input
            .send(WriteJob {
                bytes,
                done: Some(done),
                held: None,
            })
            .map_err(|_| {
                Error::Other("The session's terminal is closed; start a new session.".into())
            })?;
        match tokio::time::timeout(WRITE_TIMEOUT, ack).await {
            Ok(Ok(Ok(()))) => Ok(()),
            Ok(Ok(Err(e))) => Err(Error::Other(format!(
                "Writing to the terminal failed ({e}); the program may have exited."
            ))),
            Ok(Err(_)) => Err(Error::Other(
                "The session's terminal is closed; start a new session.".into(),
            )),
            Err(_) => Err(Fault::InputNotRead.into()),
        }
    }

    /// Queues bytes for the program without waiting.
    pub(super) fn send(&self, bytes: Vec<u8>) {
        let _ = self.input.send(WriteJob {
            bytes,
            done: None,
            held: None,
        });
    }

    /// Changes the terminal's size (the emulator's is the state's).
    pub(super) fn resize(&self, size: Size) -> Result<()> {
        self.master
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .resize(PtySize {
                rows: size.rows,
                cols: size.cols,
                pixel_width: 0,
                pixel_height: 0,
            })
            .map_err(|e| Error::Other(format!("Could not resize the terminal ({e}).")))
    }

    /// The terminal's foreground process group (Unix), if known.
    pub(super) fn foreground_group(&self) -> Option<i32> {
        self.master_fd.and_then(platform::foreground_group)
    }

    /// How the terminal takes input right now: key by key or in lines.
    pub(super) fn input_mode(&self) -> Option<platform::InputMode> {
        self.master_fd.and_then(platform::input_mode)
    }

    /// True when every byte the programs wrote so far has been scanned: the reader waits
    /// for more and nothing is pending.
    pub(super) fn scanned_all(&self) -> bool {
        scanned_all(self.master_fd, &self.reader_idle)
    }
}

/// True when the reader of the terminal whose master is `master_fd` has scanned every byte
/// the programs wrote so far; `reader_idle` is its flag, up while it waits for output.
pub(super) fn scanned_all(master_fd: Option<i32>, reader_idle: &AtomicBool) -> bool {
    // Nothing readable first, then idle: every byte that had left the program by the first
    // question (the poll flushes the kernel's queue) was read, and its reading is done by
    // the second. The other order misses a chunk read between the two.
    !master_fd.is_some_and(platform::readable_now) && reader_idle.load(Ordering::SeqCst)
}

/// The terminal's writing end, shared by the writer thread and direct writes.
struct Writer {
    /// Held for each write, by whoever writes.
    end: Mutex<Box<dyn Write + Send>>,
    /// The terminal's descriptor (non-blocking), where there is one: direct writes need it.
    fd: Option<i32>,
    /// Jobs sent to the writer thread and not yet done: a direct write goes only when none
    /// is, so nothing overtakes what was queued before it.
    queued: AtomicUsize,
}

impl Writer {
    /// Writes what the terminal takes of `bytes` now, without waiting: how many bytes went
    /// (0 when a queued job or another write comes first, or the terminal is full).
    fn write_now(&self, bytes: &[u8]) -> std::io::Result<usize> {
        if self.fd.is_none() || self.queued.load(Ordering::SeqCst) > 0 {
            return Ok(0);
        }
        let Ok(mut end) = self.end.try_lock() else {
            return Ok(0);
        };
        // Asked again under the lock: a job queued meanwhile goes first.
        if self.queued.load(Ordering::SeqCst) > 0 {
            return Ok(0);
        }
        let mut sent = 0;
        while sent < bytes.len() {
            match end.write(&bytes[sent..]) {
                Ok(0) => break,
                Ok(n) => sent += n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => break,
                Err(e) => return Err(e),
            }
        }
        Ok(sent)
    }

    /// Writes all of `bytes`, waiting while the terminal is full (the writer thread).
    fn write_all(&self, end: &mut Box<dyn Write + Send>, bytes: &[u8]) -> std::io::Result<()> {
        let mut sent = 0;
        while sent < bytes.len() {
            match end.write(&bytes[sent..]) {
                Ok(0) => return Err(std::io::ErrorKind::WriteZero.into()),
                Ok(n) => sent += n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                    if let Some(fd) = self.fd {
                        platform::wait_writable(fd);
                    }
                }
                Err(e) => return Err(e),
            }
        }
        end.flush()
    }
}

/// The writer thread's queue, counted in [`Writer::queued`].
struct Queue {
    jobs: std::sync::mpsc::Sender<WriteJob>,
    writer: Arc<Writer>,
}

impl Queue {
    fn send(&self, job: WriteJob) -> std::result::Result<(), std::sync::mpsc::SendError<WriteJob>> {
        self.writer.queued.fetch_add(1, Ordering::SeqCst);
        self.jobs.send(job).inspect_err(|_| {
            self.writer.queued.fetch_sub(1, Ordering::SeqCst);
        })
    }
}

struct WriteJob {
    bytes: Vec<u8>,
    done: Option<oneshot::Sender<std::io::Result<()>>>,
    /// A command's answer to a query, asked after this many command ends: written only
    /// if the command reads it ([`ReplyContext::should_write`]).
    held: Option<u64>,
}

fn spawn_thread(id: &str, role: &str, f: impl FnOnce() + Send + 'static) -> Result<()> {
    std::thread::Builder::new()
        .name(format!("{role}-{id}"))
        .stack_size(256 * 1024)
        .spawn(f)
        .map(|_| ())
        .map_err(|e| Error::Other(format!("Could not start a thread for the session ({e}).")))
}

/// What the reader knows besides the state it feeds.
struct ReaderContext {
    /// The main process (its scheduling group is the session's: `fairness`).
    pid: i32,
    master_fd: Option<i32>,
    /// The shell's pid, when the session runs a shell (its answers follow the reply rule).
    shell: Option<i32>,
    /// Set while waiting for output: everything before has been scanned.
    idle: Arc<AtomicBool>,
    started: Instant,
}

fn reader_loop(
    mut reader: Box<dyn Read + Send>,
    ctx: &ReaderContext,
    state: Arc<Mutex<State>>,
    events: Arc<watch::Sender<u64>>,
    input: Queue,
) {
    let (master_fd, shell, started) = (ctx.master_fd, ctx.shell, ctx.started);
    let mut buf = vec![0u8; READ_CHUNK];
    let mut unannounced = 0;
    let mut fairness = super::fairness::Fairness::new(ctx.pid);
    // The next read comes straight after a chunk, without a wait: on the non-blocking
    // terminal it takes what is waiting, or says with `EAGAIN` that the reader caught up —
    // one call where a readiness poll and a read were two (issue 32: the server's CPU per
    // MB of a flood went 10.3 → 6.8 ms, ingestion 87 → 96 % of a bare reader's).
    let mut read_on = false;
    // Chunks were read since the reader last caught up: its catching up is announced.
    let mut unsettled = false;
    // Bytes read since the last pause of FLOOD_WAKE_EVERY, and when waiters were last woken.
    let mut burst = 0;
    let mut woken = started;
    let announce = |unannounced: &mut usize, woken: &mut Instant| {
        events.send_modify(|n| *n += 1);
        *unannounced = 0;
        *woken = Instant::now();
    };
    loop {
        // Idle only while waiting: bytes leave the terminal after the flag is down, so "idle
        // and nothing readable" means every byte written so far has been scanned.
        if let Some(fd) = master_fd {
            if !read_on {
                ctx.idle.store(true, Ordering::SeqCst);
                let waiting = Instant::now();
                fairness.wait(fd);
                if waiting.elapsed() >= FLOOD_WAKE_EVERY {
                    burst = 0;
                }
            }
            ctx.idle.store(false, Ordering::SeqCst);
        }
        let n = match reader.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            // The terminal is non-blocking: nothing (more) waiting, or a signal.
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::Interrupted
                ) =>
            {
                // Idle again before the event goes out: a wait woken by it finds every
                // chunk scanned.
                ctx.idle.store(true, Ordering::SeqCst);
                read_on = false;
                if !unsettled {
                    continue;
                }
                // In a flood, a reader that caught up waits a little for the next bytes
                // before it wakes anyone: what it read is scanned meanwhile (idle), only
                // the wake-up waits.
                if burst >= FLOOD_BYTES
                    && let Some(fd) = master_fd
                    && Instant::now() < woken + FLOOD_WAKE_EVERY
                    && platform::wait_readable_until(&[fd], woken + FLOOD_WAKE_EVERY).is_some()
                {
                    read_on = true;
                    continue;
                }
                fairness.after_chunk(false);
                unsettled = false;
                announce(&mut unannounced, &mut woken);
                continue;
            }
            Err(_) => break,
        };
        // Output was waiting behind the last chunk: the read came straight after it.
        if read_on {
            fairness.after_chunk(true);
        }
        let chunk = &buf[..n];
        // One short lock feeds every owner; nothing blocks while it is held.
        let replies = lock(&state).feed(chunk, started.elapsed());
        for (bytes, inside, ends_at) in replies {
            let asker = match shell {
                Some(pid)
                    if inside || master_fd.and_then(platform::foreground_group) != Some(pid) =>
                {
                    Asker::Command
                }
                _ => Asker::Shell,
            };
            let _ = input.send(WriteJob {
                bytes,
                done: None,
                held: (asker == Asker::Command).then_some(ends_at),
            });
        }
        unannounced += n;
        burst += n;
        if master_fd.is_none() {
            // A blocking reader (no terminal of ours) cannot look on: every chunk is news.
            fairness.after_chunk(false);
            announce(&mut unannounced, &mut woken);
            continue;
        }
        // Idle again before the event goes out: a wait woken by it finds this chunk scanned.
        ctx.idle.store(true, Ordering::SeqCst);
        read_on = true;
        unsettled = true;
        if unannounced >= WAKE_BATCH {
            announce(&mut unannounced, &mut woken);
        }
    }
    lock(&state).on_eof();
    events.send_modify(|n| *n += 1);
}

fn writer_loop(
    writer: &Writer,
    jobs: std::sync::mpsc::Receiver<WriteJob>,
    replies: &mut ReplyContext,
) {
    while let Ok(mut job) = jobs.recv() {
        let mut end = writer.end.lock().unwrap_or_else(|e| e.into_inner());
        let result = if let Some(ends_at) = job.held
            && !replies.should_write(ends_at)
        {
            Ok(())
        } else {
            writer.write_all(&mut end, &job.bytes)
        };
        drop(end);
        writer.queued.fetch_sub(1, Ordering::SeqCst);
        // Typed input may be a secret (`session::secret`): nothing typed outlives its write.
        zeroize::Zeroize::zeroize(&mut job.bytes);
        if let Some(done) = job.done {
            let _ = done.send(result);
        }
    }
}
