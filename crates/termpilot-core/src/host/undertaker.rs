//! The undertaker: a small process that outlives the server by a moment and ends what it
//! started, however the server died (`kill -9` included).
//!
//! A one-shot child dies with the server through its parent-death signal
//! ([`crate::exec::spawner`]), but that reaches the child only: what it started (a `subprocess`
//! of `run_python`, the command under a shell) would live on, as would a session's process
//! that ignores the hang-up (`nohup`, `setsid -f`). So at start-up, while the server is
//! still one thread, [`start`] forks this process. It keeps only the read end of a pipe
//! whose write end the server holds (close-on-exec: no child inherits it), leaves the
//! server's session and process group (a signal to those does not reach it) and waits for
//! end of file there — the server is gone, whatever way it went — or for its parent-death
//! signal, which comes as soon as the server's main thread (the one that forked it) has
//! ended: a killed server whose descriptors outlive that thread (another of its threads
//! still in the kernel) would give end of file only later, and its sessions, no longer
//! served, would live on meanwhile. Then it kills every process
//! carrying one of the server's markers ([`super::marker`]: `TERMPILOT_RUN_ID=<server pid>.…`)
//! and exits. Detached jobs carry none and survive, as they should.
//!
//! What the server started inside a container or a pod is not on this machine's `/proc`:
//! for each such target the server writes the command line of a sweep there
//! ([`crate::remote::ending`]) into the pipe ([`remember`]), and the undertaker runs those
//! too, each bounded, after its own sweep.
//!
//! Linux only. If the process is not single-threaded by then, or the fork fails, the server
//! runs without it (logged).

use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicU32, Ordering};

/// The write end of the pipe the undertaker reads (-1: no undertaker).
static PIPE: AtomicI32 = AtomicI32::new(-1);
/// The command lines told already (each once).
static TOLD: Mutex<Vec<Vec<String>>> = Mutex::new(Vec::new());
/// Separates the words of a command line in the pipe; a line feed ends it.
const WORD: char = '\x1f';

/// Tells the undertaker to run `argv` (a sweep inside a target) once the server is gone.
pub(crate) fn remember(argv: &[String]) {
    let fd = PIPE.load(Ordering::SeqCst);
    if fd < 0 || argv.iter().any(|w| w.contains(['\n', WORD])) {
        return;
    }
    let mut told = TOLD.lock().unwrap_or_else(|e| e.into_inner());
    if told.iter().any(|a| a == argv) {
        return;
    }
    let mut line = argv.join(&WORD.to_string());
    line.push('\n');
    let mut bytes = line.as_bytes();
    while !bytes.is_empty() {
        // SAFETY: writing our own buffer to the pipe's write end, which lives as long as the
        // process.
        let n = unsafe { libc::write(fd, bytes.as_ptr().cast(), bytes.len()) };
        if n < 0 {
            if std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted {
                continue;
            }
            tracing::warn!("the undertaker could not be told of a target to sweep");
            return;
        }
        bytes = &bytes[n as usize..];
    }
    told.push(argv.to_vec());
}

/// Forks the undertaker. Call once, before any thread is started.
pub fn start() {
    #[cfg(target_os = "linux")]
    if let Err(why) = fork_it() {
        tracing::warn!(
            "no undertaker: {why}; what one-shot commands start may outlive a killed server"
        );
    }
}

#[cfg(target_os = "linux")]
fn fork_it() -> Result<(), String> {
    let threads = std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("Threads:"))
                .and_then(|n| n.trim().parse::<u32>().ok())
        });
    if threads != Some(1) {
        return Err(format!("the process has {threads:?} threads, not one"));
    }
    let mut fds = [0; 2];
    // SAFETY: pipe2 writes two descriptors into the array we own.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(format!("pipe2: {}", std::io::Error::last_os_error()));
    }
    let server = std::process::id();
    // SAFETY: the process is single-threaded (checked above), so the child may run any code.
    match unsafe { libc::fork() } {
        -1 => Err(format!("fork: {}", std::io::Error::last_os_error())),
        0 => {
            // SAFETY: descriptors of this (child) process only.
            unsafe { libc::close(fds[1]) };
            watch(fds[0], server)
        }
        _ => {
            // The write end stays open for the server's life; the read end is the child's.
            // SAFETY: closing our copy of the read end.
            unsafe { libc::close(fds[0]) };
            PIPE.store(fds[1], Ordering::SeqCst);
            Ok(())
        }
    }
}

/// The undertaker's life: wait for the server to go, end what it started, exit.
#[cfg(target_os = "linux")]
fn sweep_targets(told: &[u8]) {
    let text = String::from_utf8_lossy(told);
    let sweeps: Vec<std::thread::JoinHandle<()>> = text
        .lines()
        .filter(|l| !l.is_empty())
        .map(|l| l.split(WORD).map(String::from).collect::<Vec<String>>())
        .map(|argv| {
            std::thread::spawn(move || {
                let _ = super::bounded::run_bounded(&argv, super::bounded::SWEEP_LIMIT);
            })
        })
        .collect();
    for sweep in sweeps {
        let _ = sweep.join();
    }
}

/// Set by the parent-death signal: the server's main thread has ended.
#[cfg(target_os = "linux")]
static SERVER_GONE: AtomicBool = AtomicBool::new(false);
/// The server's pid: the parent-death signal is sent by the server's ending thread, so it
/// carries this pid; a `SIGUSR1` from anyone else is not the server's death.
#[cfg(target_os = "linux")]
static SERVER: AtomicU32 = AtomicU32::new(0);

/// The parent-death signal's handler (async-signal-safe: atomic loads and a store).
#[cfg(target_os = "linux")]
extern "C" fn server_gone(
    _signal: libc::c_int,
    info: *mut libc::siginfo_t,
    _context: *mut libc::c_void,
) {
    // SAFETY: the kernel passes a valid siginfo to an SA_SIGINFO handler.
    let sender = unsafe { (*info).si_pid() } as u32;
    if sender == SERVER.load(Ordering::SeqCst) {
        SERVER_GONE.store(true, Ordering::SeqCst);
    }
}

/// Asks for `SIGUSR1` when the server's main thread ends, blocked but while waiting (so it
/// cannot fall between a look at [`SERVER_GONE`] and the wait); the mask to wait with.
#[cfg(target_os = "linux")]
fn on_server_death(server: u32) -> libc::sigset_t {
    // SAFETY: signal masks and dispositions of this (single-threaded) process; the handler
    // only stores to an atomic.
    unsafe {
        let mut usr1: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut usr1);
        libc::sigaddset(&mut usr1, libc::SIGUSR1);
        let mut waiting: libc::sigset_t = std::mem::zeroed();
        libc::sigprocmask(libc::SIG_BLOCK, &usr1, &mut waiting);
        libc::sigdelset(&mut waiting, libc::SIGUSR1);
        SERVER.store(server, Ordering::SeqCst);
        let mut action: libc::sigaction = std::mem::zeroed();
        action.sa_sigaction = server_gone as *const () as usize;
        action.sa_flags = libc::SA_SIGINFO;
        libc::sigemptyset(&mut action.sa_mask);
        libc::sigaction(libc::SIGUSR1, &action, std::ptr::null_mut());
        libc::prctl(
            libc::PR_SET_PDEATHSIG,
            libc::SIGUSR1 as libc::c_ulong,
            0,
            0,
            0,
        );
        // Gone before the request was made: no signal will come.
        if libc::getppid() as u32 != server {
            SERVER_GONE.store(true, Ordering::SeqCst);
        }
        waiting
    }
}

/// Reads what the server told into `told` until end of file or, once its main thread has
/// ended, until the pipe is empty.
#[cfg(target_os = "linux")]
fn read_told(told: &mut Vec<u8>, waiting: &libc::sigset_t) {
    let mut buffer = [0u8; 4096];
    let mut draining = false;
    loop {
        let gone = SERVER_GONE.load(Ordering::SeqCst);
        if gone && !draining {
            draining = true;
            // SAFETY: a flag on our own descriptor.
            unsafe { libc::fcntl(3, libc::F_SETFL, libc::O_NONBLOCK) };
        } else if !gone {
            let mut poll = libc::pollfd {
                fd: 3,
                events: libc::POLLIN,
                revents: 0,
            };
            // SAFETY: one pollfd of ours; the mask lets the parent-death signal in.
            if unsafe { libc::ppoll(&mut poll, 1, std::ptr::null(), waiting) } < 0 {
                // The signal came (look again), or the wait itself failed: sweep now.
                if std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted {
                    continue;
                }
                return;
            }
        }
        // SAFETY: reading into our own buffer from our own descriptor.
        let n = unsafe { libc::read(3, buffer.as_mut_ptr().cast(), buffer.len()) };
        if n > 0 {
            told.extend_from_slice(&buffer[..n as usize]);
        } else if n == 0
            || gone
            || std::io::Error::last_os_error().kind() != std::io::ErrorKind::Interrupted
        {
            return;
        }
    }
}

#[cfg(target_os = "linux")]
fn watch(pipe: i32, server: u32) -> ! {
    // SAFETY: plain system calls on this process's own descriptors and signal dispositions.
    unsafe {
        // stdin and stdout are the protocol's and stderr the client's log: hold none of them,
        // nor anything else of the server's.
        let null = libc::open(c"/dev/null".as_ptr(), libc::O_RDWR);
        for fd in 0..3 {
            libc::dup2(null, fd);
        }
        libc::dup2(pipe, 3);
        libc::syscall(libc::SYS_close_range, 4u32, u32::MAX, 0u32);
        libc::setsid();
        for signal in [libc::SIGINT, libc::SIGHUP, libc::SIGPIPE, libc::SIGQUIT] {
            libc::signal(signal, libc::SIG_IGN);
        }
        let name = c"termpilot-undertaker";
        libc::prctl(libc::PR_SET_NAME, name.as_ptr() as libc::c_ulong, 0, 0, 0);
    }
    let waiting = on_server_death(server);
    let mut told = Vec::new();
    read_told(&mut told, &waiting);
    super::marker::end_blocking(&format!("{server}."), true);
    sweep_targets(&told);
    // SAFETY: ending this process without running the server's exit handlers.
    unsafe { libc::_exit(0) }
}
