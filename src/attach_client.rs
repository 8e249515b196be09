//! `termpilot attach <id> [--socket PATH] [--resize]`: a person joins a session from their
//! own terminal.
//!
//! The terminal goes into raw mode (when it is one), the session's screen and recent
//! scrollback are drawn, then output flows live both ways until `Ctrl+]` detaches, the input
//! ends, or the session ends; the terminal is restored in every case. With `--resize` the
//! session follows this window's size. The socket protocol is described in
//! the core's `session/socket.rs` (`termpilot_core::session::socket_frame`).

use std::path::PathBuf;

/// The detach key: Ctrl+] (as telnet and docker use).
const DETACH: u8 = 0x1d;
/// What a detach by Ctrl+] says.
const DETACHED: &str = "detached";
/// How long a detach waits for the output the server still had for us.
const DRAIN_MAX: std::time::Duration = std::time::Duration::from_secs(2);
/// Turns off what the session may have turned on in this terminal.
const RESTORE_MODES: &str =
    "\x1b[0m\x1b[?1000l\x1b[?1002l\x1b[?1003l\x1b[?1006l\x1b[?2004l\x1b[?1l\x1b[?25h";
/// Leaves the alternate screen, when the session left this terminal on it.
const LEAVE_ALT_SCREEN: &str = "\x1b[?1049l";

/// Whether output ends on the alternate screen: the last switch in `chunk` (1049/1047/47),
/// or `was` when it has none.
fn alt_screen_after(chunk: &[u8], was: bool) -> bool {
    let text = String::from_utf8_lossy(chunk);
    let mut last: Option<(usize, bool)> = None;
    for mode in ["\x1b[?1049", "\x1b[?1047", "\x1b[?47"] {
        for (i, _) in text.match_indices(mode) {
            if let Some(c) = text[i + mode.len()..].chars().next()
                && (c == 'h' || c == 'l')
                && last.is_none_or(|(j, _)| i > j)
            {
                last = Some((i, c == 'h'));
            }
        }
    }
    last.map_or(was, |(_, on)| on)
}

/// What `attach` was asked.
pub struct Request {
    pub id: String,
    pub socket: Option<PathBuf>,
    pub resize: bool,
}

/// Runs the client; the error is one sentence for the person.
pub fn run(req: Request) -> Result<(), String> {
    #[cfg(unix)]
    {
        unix::run(req)
    }
    #[cfg(not(unix))]
    {
        let _ = req;
        Err("attach is not supported on this platform yet.".into())
    }
}

/// The socket to use: the one given, or the only running server's socket for `id`.
fn resolve(req: &Request) -> Result<PathBuf, String> {
    if let Some(socket) = &req.socket {
        return Ok(socket.clone());
    }
    let dir = termpilot_core::session::socket_dir();
    let found = termpilot_core::session::find_sockets(&dir, &req.id);
    match found.len() {
        0 => Err(format!(
            "No running termpilot has a session `{}` (looked in {}); use the attach command terminal_start returned, or pass --socket.",
            req.id,
            dir.display()
        )),
        1 => Ok(found[0].1.clone()),
        _ => {
            let list: Vec<String> = found
                .iter()
                .map(|(pid, path)| format!("  server {pid}: --socket {}", path.display()))
                .collect();
            Err(format!(
                "Several termpilot servers have a session `{}`; pick one with --socket:\n{}",
                req.id,
                list.join("\n")
            ))
        }
    }
}

#[cfg(unix)]
mod unix {
    use std::io::{Read, Write};
    use std::os::fd::AsRawFd;
    use std::os::unix::net::UnixStream;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};

    use termpilot_core::platform;
    use termpilot_core::session::{FRAME_DETACH, FRAME_INPUT, FRAME_RESIZE, socket_frame as frame};

    use super::*;

    /// The write end of the pipe the SIGWINCH handler pokes.
    static WINCH_FD: AtomicI32 = AtomicI32::new(-1);

    extern "C" fn on_winch(_: libc::c_int) {
        let fd = WINCH_FD.load(Ordering::Relaxed);
        if fd >= 0 {
            // SAFETY: write(2) is async-signal-safe; one byte from a static.
            unsafe { libc::write(fd, b"w".as_ptr().cast(), 1) };
        }
    }

    /// Restores the terminal when dropped, however the client ends.
    struct RawGuard(Option<libc::termios>);

    impl Drop for RawGuard {
        fn drop(&mut self) {
            if let Some(saved) = &self.0 {
                platform::restore_mode(0, saved);
            }
        }
    }

    pub fn run(req: Request) -> Result<(), String> {
        let path = resolve(&req)?;
        let mut socket = UnixStream::connect(&path).map_err(|e| {
            format!(
                "Could not connect to {} ({e}); the session or its server may have ended.",
                path.display()
            )
        })?;
        let winch = if req.resize { winch_pipe() } else { None };
        eprint!("[termpilot: attached to {}; Ctrl+] detaches]\r\n", req.id);
        let guard = RawGuard(platform::enter_raw_mode(0));
        if req.resize {
            send_size(&mut socket);
        }
        // Output: socket → stdout, until the session closes the connection.
        let mut from = socket.try_clone().map_err(|e| e.to_string())?;
        let (done_tx, done_rx) = UnixStream::pair().map_err(|e| e.to_string())?;
        let alt = Arc::new(AtomicBool::new(false));
        let alt_seen = alt.clone();
        let output = std::thread::spawn(move || {
            let mut out = std::io::stdout();
            let mut buf = [0u8; 16 * 1024];
            while let Ok(n) = from.read(&mut buf) {
                if n == 0 || out.write_all(&buf[..n]).and_then(|_| out.flush()).is_err() {
                    break;
                }
                let was = alt_seen.load(Ordering::Relaxed);
                alt_seen.store(alt_screen_after(&buf[..n], was), Ordering::Relaxed);
            }
            drop(done_tx);
        });
        let why = input_loop(&mut socket, done_rx.as_raw_fd(), winch);
        if why == DETACHED {
            // The server sends what it had for us, then closes: wait for that (bounded, for
            // a server that does not know the detach frame).
            let _ = socket.write_all(&frame(FRAME_DETACH, &[]));
            let _ = platform::wait_readable_for(&[done_rx.as_raw_fd()], DRAIN_MAX);
        }
        let _ = socket.shutdown(std::net::Shutdown::Both);
        let _ = output.join();
        let mut out = std::io::stdout();
        let _ = out.write_all(RESTORE_MODES.as_bytes());
        if alt.load(Ordering::Relaxed) {
            let _ = out.write_all(LEAVE_ALT_SCREEN.as_bytes());
        }
        let _ = out.flush();
        drop(guard);
        eprint!("\r\n[termpilot: {why}]\r\n");
        Ok(())
    }

    /// Forwards stdin to the session until Ctrl+], end of input, or the session's end.
    fn input_loop(socket: &mut UnixStream, done: i32, winch: Option<i32>) -> &'static str {
        let mut fds = vec![0, done];
        fds.extend(winch);
        let mut buf = [0u8; 4096];
        loop {
            match platform::wait_readable(&fds) {
                Some(0) => {}
                Some(1) => return "the session ended",
                Some(_) => {
                    if let Some(fd) = winch {
                        let mut sink = [0u8; 64];
                        // SAFETY: reads from our own pipe into a local buffer.
                        unsafe { libc::read(fd, sink.as_mut_ptr().cast(), sink.len()) };
                    }
                    send_size(socket);
                    continue;
                }
                None => return "detached (poll failed)",
            }
            // Unbuffered, so nothing read stays hidden from the next poll.
            // SAFETY: read(2) from stdin into a local buffer of its true length.
            let n = unsafe { libc::read(0, buf.as_mut_ptr().cast(), buf.len()) };
            if n <= 0 {
                if n < 0
                    && std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted
                {
                    continue;
                }
                return "detached: end of input";
            }
            let n = n as usize;
            let (keep, detach) = match buf[..n].iter().position(|&b| b == DETACH) {
                Some(i) => (&buf[..i], true),
                None => (&buf[..n], false),
            };
            if !keep.is_empty() && socket.write_all(&frame(FRAME_INPUT, keep)).is_err() {
                return "the session ended";
            }
            if detach {
                return DETACHED;
            }
        }
    }

    fn send_size(socket: &mut UnixStream) {
        if let Some((cols, rows)) = platform::window_size(1).or_else(|| platform::window_size(0)) {
            let mut payload = cols.to_be_bytes().to_vec();
            payload.extend_from_slice(&rows.to_be_bytes());
            let _ = socket.write_all(&frame(FRAME_RESIZE, &payload));
        }
    }

    /// A pipe poked on every SIGWINCH; returns its read end.
    fn winch_pipe() -> Option<i32> {
        let mut fds = [0i32; 2];
        // SAFETY: pipe(2) fills the two descriptors of a local array.
        if unsafe { libc::pipe(fds.as_mut_ptr()) } != 0 {
            return None;
        }
        WINCH_FD.store(fds[1], Ordering::Relaxed);
        // SAFETY: installs a handler that only calls write(2) on a pipe we own.
        unsafe {
            let mut action: libc::sigaction = std::mem::zeroed();
            action.sa_sigaction = on_winch as *const () as usize;
            action.sa_flags = libc::SA_RESTART;
            libc::sigaction(libc::SIGWINCH, &action, std::ptr::null_mut());
        }
        Some(fds[0])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_last_screen_switch_wins() {
        assert!(alt_screen_after(b"\x1b[?1049h vim", false));
        assert!(!alt_screen_after(b"\x1b[?1049h\x1b[?1049l$ ", true));
        assert!(alt_screen_after(b"\x1b[?47l then \x1b[?1047h", false));
        assert!(alt_screen_after(b"plain output", true));
        assert!(!alt_screen_after(b"\x1b[?1049", false));
    }
}
