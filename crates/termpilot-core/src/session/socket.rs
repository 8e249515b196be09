//! People joining a session: every session listens on a Unix socket, and `termpilot attach`
//! (or anything speaking this protocol) shares the terminal with the agent.
//!
//! # Where
//!
//! `attach/` in the private folder ([`crate::host::private`]: `$XDG_RUNTIME_DIR/termpilot/`
//! when that is safe, else `<temp>/termpilot-<uid>/`, both checked); the folder is mode 0700 and must belong to the user, the
//! socket is mode 0600 and named `<server pid>-<session id>.sock`. Whoever can connect can use
//! the shell as this user, so nobody else can. The socket is removed when the session is
//! stopped, restarted or dropped and when the server ends; sockets left by a server that was
//! killed are swept by the next server that opens one in the same folder.
//!
//! # Protocol
//!
//! - Server → client: terminal bytes, nothing else. First a redraw of the current state
//!   (recent scrollback, then the screen, modes and cursor: [`super::redraw`]), then every
//!   byte the program writes, live. The server closes the connection when the session ends.
//! - Client → server: frames of `kind: u8`, `length: u16` (big-endian), `payload`.
//!   `i` = input bytes for the program (keys as a terminal sends them); `r` = resize, payload
//!   `cols: u16, rows: u16` (big-endian), sent by `attach --resize`; `d` = detach (no
//!   payload): the server stops feeding this client, writes what it had queued for it — all
//!   the output read before the detach — and closes. Unknown kinds are skipped.
//!   The web page's keyboard hold, for a page on another server (a kept session's, proxied):
//!   `t` = take control (as a person holding it on a page: the agent's typing is refused),
//!   `l` = release it, `k` = a person's keys, which count only while this client holds
//!   control; control this client holds is released when it leaves.
//!
//! The session never waits for a client: output is queued ([`CLIENT_QUEUE`] chunks) and a
//! client that falls that far behind, or stops reading for [`WRITE_TIMEOUT`], is dropped.
//! At most [`MAX_CLIENTS`] people are attached to one session at a time (the web page's
//! viewers count too); a connection beyond that gets one line saying so and is closed, and
//! those attached are unaffected.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, SyncSender, TrySendError, sync_channel};
use std::sync::{Arc, Weak};
use std::time::{Duration, Instant};

use super::emulator::Size;
use super::redraw::redraw;
use super::terminal::Session;

/// Output chunks queued for one client before it is dropped as too slow.
pub(crate) const CLIENT_QUEUE: usize = 256;
/// How long a write to a client may block before the client is dropped.
pub(crate) const WRITE_TIMEOUT: Duration = Duration::from_secs(5);
/// Most people attached to one session at once.
pub(crate) const MAX_CLIENTS: usize = 16;
/// Frame kinds, client → server.
pub const FRAME_INPUT: u8 = b'i';
pub const FRAME_RESIZE: u8 = b'r';
/// The client leaves: the server sends what it queued for it so far, then closes.
pub const FRAME_DETACH: u8 = b'd';
/// The web page's keyboard hold over the socket: take, release, a person's keys.
pub const FRAME_TAKE: u8 = b't';
pub const FRAME_RELEASE: u8 = b'l';
pub const FRAME_KEYS: u8 = b'k';
/// A socket client's control-holder id, apart from the pages of the process itself.
const SOCKET_HOLDER: u64 = 1 << 62;

/// One attached client, as the session's reader sees it.
struct Client {
    id: u64,
    tx: SyncSender<Vec<u8>>,
    /// Ends the connection (both directions) when the client is dropped.
    hang_up: Box<dyn Fn() + Send>,
}

impl Drop for Client {
    fn drop(&mut self) {
        (self.hang_up)();
    }
}

/// The clients attached to one session. Lives in the session's state, so output reaches
/// them in order, under the same lock that feeds the emulator.
#[derive(Default)]
pub(crate) struct Clients {
    next_id: u64,
    list: Vec<Client>,
    /// When the last person left (the idle clock counts from there).
    left: Option<Instant>,
}

impl Clients {
    /// Queues an output chunk for every client; a client whose queue is full or gone is
    /// dropped. Never blocks.
    pub(crate) fn broadcast(&mut self, chunk: &[u8]) {
        if self.list.is_empty() {
            return;
        }
        let before = self.list.len();
        self.list.retain(|c| match c.tx.try_send(chunk.to_vec()) {
            Ok(()) => true,
            Err(TrySendError::Full(_)) => {
                tracing::info!("attach client {} is too slow; dropped", c.id);
                false
            }
            Err(TrySendError::Disconnected(_)) => false,
        });
        if self.list.len() < before {
            self.left = Some(Instant::now());
        }
    }

    /// Disconnects every client (the session ended).
    pub(crate) fn end(&mut self) {
        self.list.clear();
        self.left = Some(Instant::now());
    }

    pub(crate) fn count(&self) -> usize {
        self.list.len()
    }

    /// When a person was last attached: now while one is, else when the last one left
    /// (`None`: nobody ever was). A session is not idle while someone watches it.
    pub(crate) fn last_seen(&self) -> Option<Instant> {
        if self.list.is_empty() {
            self.left
        } else {
            Some(Instant::now())
        }
    }

    fn add(&mut self, tx: SyncSender<Vec<u8>>, hang_up: Box<dyn Fn() + Send>) -> u64 {
        self.next_id += 1;
        let id = self.next_id;
        self.list.push(Client { id, tx, hang_up });
        id
    }

    fn remove(&mut self, id: u64) {
        let before = self.list.len();
        self.list.retain(|c| c.id != id);
        if self.list.len() < before {
            self.left = Some(Instant::now());
        }
    }

    /// Stops feeding client `id` without hanging up: its writer sends what is queued, then
    /// closes (the queue's end).
    fn detach(&mut self, id: u64) {
        for c in self.list.iter_mut().filter(|c| c.id == id) {
            c.hang_up = Box::new(|| {});
        }
        self.remove(id);
    }
}

/// The folder holding attach sockets (not created): in the private folder
/// ([`crate::host::private`]; `$XDG_RUNTIME_DIR/termpilot/attach` when that is safe).
pub fn socket_dir() -> PathBuf {
    crate::host::private::location().join("attach")
}

/// The socket file of session `id` in this server.
fn socket_path(dir: &Path, id: &str) -> PathBuf {
    dir.join(format!("{}-{id}.sock", std::process::id()))
}

/// The sockets in `dir` for session `id` whose server is still running, as
/// `(server pid, path)`. What `termpilot attach <id>` chooses from.
pub fn find(dir: &Path, id: &str) -> Vec<(i32, PathBuf)> {
    let suffix = format!("-{id}.sock");
    let mut found = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return found;
    };
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if let Some(pid) = name
            .strip_suffix(&suffix)
            .and_then(|p| p.parse::<i32>().ok())
            && crate::platform::pid_exists(pid)
        {
            found.push((pid, entry.path()));
        }
    }
    found.sort();
    found
}

/// The command line a person runs to join session `id` through `socket`.
pub(crate) fn command_line(id: &str, socket: &Path) -> String {
    let exe = std::env::current_exe()
        .map(|p| p.display().to_string())
        .unwrap_or_else(|_| "termpilot".into());
    let quote = |s: &str| {
        if s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "/._-+:@".contains(c))
        {
            s.to_string()
        } else {
            format!("'{}'", s.replace('\'', r"'\''"))
        }
    };
    format!(
        "{} attach {} --socket {}",
        quote(&exe),
        quote(id),
        quote(&socket.display().to_string())
    )
}

/// A session's listening socket; closing (or dropping) it removes the socket file.
pub(crate) struct AttachSocket {
    path: PathBuf,
    #[cfg(unix)]
    inode: u64,
    closed: AtomicBool,
    /// Written to (by being dropped) to wake the accept thread.
    #[cfg(unix)]
    wake: std::sync::Mutex<Option<std::os::unix::net::UnixStream>>,
}

impl AttachSocket {
    /// The socket's path while it still listens.
    pub(super) fn live_path(&self) -> Option<&Path> {
        (!self.closed.load(Ordering::SeqCst)).then(|| self.path())
    }

    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    /// Stops accepting and removes the socket file (if it is still this listener's).
    /// Clients already attached stay until the session ends. Idempotent.
    pub(crate) fn close(&self) {
        if self.closed.swap(true, Ordering::SeqCst) {
            return;
        }
        #[cfg(unix)]
        {
            use std::os::unix::fs::MetadataExt;
            drop(self.wake.lock().unwrap_or_else(|e| e.into_inner()).take());
            if std::fs::symlink_metadata(&self.path).is_ok_and(|m| m.ino() == self.inode) {
                let _ = std::fs::remove_file(&self.path);
            }
        }
    }
}

impl Drop for AttachSocket {
    fn drop(&mut self) {
        self.close();
    }
}

/// A person watching from inside this process (the web page): the attach redraw first, then
/// the same live output a socket client gets, through the same bounded queue.
pub struct Viewer {
    /// Bytes that draw the current screen and recent scrollback ([`redraw`]).
    pub redraw: Vec<u8>,
    /// Live output; disconnected when the session ends or this viewer fell too far behind.
    pub output: Receiver<Vec<u8>>,
    /// Leaves the session's list of attached people when dropped.
    pub membership: ViewerMembership,
}

/// A viewer's place among a session's attached people; dropping it leaves.
pub struct ViewerMembership {
    session: Weak<Session>,
    id: Option<u64>,
}

impl Drop for ViewerMembership {
    fn drop(&mut self) {
        if let (Some(id), Some(session)) = (self.id, self.session.upgrade()) {
            session.state().attached.remove(id);
        }
    }
}

/// Joins `session` as a viewer: the redraw and the live output, taken under one lock so
/// no byte is lost or doubled between them. An ended session gives its last screen and
/// an output that is already disconnected.
pub(super) fn view(session: &Arc<Session>) -> Viewer {
    let (tx, rx) = sync_channel::<Vec<u8>>(CLIENT_QUEUE);
    let mut s = session.state();
    let redraw = redraw(&s.emu);
    let id = if s.command.ending() {
        None
    } else {
        Some(s.attached.add(tx, Box::new(|| {})))
    };
    drop(s);
    Viewer {
        redraw,
        output: rx,
        membership: ViewerMembership {
            session: Arc::downgrade(session),
            id,
        },
    }
}

/// Opens the attach socket of `session`. A failure is logged, not fatal: the session works
/// without it.
pub(crate) fn listen(session: &Arc<Session>) {
    #[cfg(unix)]
    match unix::open(session) {
        Ok(listener) => {
            let _ = session.attach.set(listener);
        }
        Err(e) => tracing::warn!("session {}: no attach socket: {e}", session.id),
    }
    #[cfg(not(unix))]
    let _ = session;
}

#[cfg(unix)]
mod unix {
    use std::os::fd::AsRawFd;
    use std::os::unix::fs::{DirBuilderExt, MetadataExt, PermissionsExt};
    use std::os::unix::net::{UnixListener, UnixStream};

    use super::*;
    use crate::platform;

    /// Creates the 0700 folder (or checks an existing one is ours and private).
    fn prepare_dir(dir: &Path) -> std::io::Result<()> {
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir)?;
        let meta = std::fs::symlink_metadata(dir)?;
        if !meta.is_dir() || meta.uid() != platform::uid() {
            return Err(std::io::Error::other(format!(
                "{} is not a folder owned by this user",
                dir.display()
            )));
        }
        if meta.mode() & 0o777 != 0o700 {
            std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))?;
        }
        sweep_stale(dir);
        Ok(())
    }

    /// Removes sockets whose server is gone (killed before it could clean up).
    fn sweep_stale(dir: &Path) {
        static ONCE: std::sync::Once = std::sync::Once::new();
        ONCE.call_once(|| {
            let Ok(entries) = std::fs::read_dir(dir) else {
                return;
            };
            for entry in entries.flatten() {
                let name = entry.file_name().to_string_lossy().into_owned();
                let pid = name
                    .strip_suffix(".sock")
                    .and_then(|n| n.split('-').next())
                    .and_then(|p| p.parse::<i32>().ok());
                if let Some(pid) = pid
                    && !platform::pid_exists(pid)
                {
                    let _ = std::fs::remove_file(entry.path());
                }
            }
        });
    }

    pub(super) fn open(session: &Arc<Session>) -> std::io::Result<AttachSocket> {
        let dir = socket_dir();
        // The private folder is checked first: the socket folder is only as safe as it.
        crate::host::private::base().map_err(|e| std::io::Error::other(e.to_string()))?;
        prepare_dir(&dir)?;
        let path = socket_path(&dir, &session.id);
        // A socket of the same id in this server belongs to a retired session of that id.
        let _ = std::fs::remove_file(&path);
        let listener = UnixListener::bind(&path)?;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600))?;
        listener.set_nonblocking(true)?;
        let inode = std::fs::symlink_metadata(&path)?.ino();
        let (wake_tx, wake_rx) = UnixStream::pair()?;
        let weak = Arc::downgrade(session);
        std::thread::Builder::new()
            .name(format!("attach-{}", session.id))
            .stack_size(128 * 1024)
            .spawn(move || accept_loop(listener, wake_rx, weak))?;
        Ok(AttachSocket {
            path,
            inode,
            closed: AtomicBool::new(false),
            wake: std::sync::Mutex::new(Some(wake_tx)),
        })
    }

    fn accept_loop(listener: UnixListener, wake: UnixStream, session: Weak<Session>) {
        let fds = [listener.as_raw_fd(), wake.as_raw_fd()];
        loop {
            match platform::wait_readable(&fds) {
                Some(0) => {}
                _ => return,
            }
            let stream = match listener.accept() {
                Ok((stream, _)) => stream,
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => continue,
                Err(e) => {
                    tracing::warn!("attach: accept failed: {e}");
                    return;
                }
            };
            let Some(session) = session.upgrade() else {
                return;
            };
            if let Err(e) = serve(&session, stream) {
                tracing::info!("attach: a client could not join {}: {e}", session.id);
            }
        }
    }

    /// Greets a new client with the redraw and starts its two threads.
    fn serve(session: &Arc<Session>, stream: UnixStream) -> std::io::Result<()> {
        stream.set_nonblocking(false)?;
        stream.set_write_timeout(Some(WRITE_TIMEOUT))?;
        let (tx, rx) = sync_channel::<Vec<u8>>(CLIENT_QUEUE);
        let hang = stream.try_clone()?;
        let hang_up: Box<dyn Fn() + Send> = Box::new(move || {
            let _ = hang.shutdown(std::net::Shutdown::Both);
        });
        let id = {
            let mut s = session.state();
            if s.command.ending() {
                let _ = tx.try_send(redraw(&s.emu));
                let _ = tx.try_send(b"\r\n[termpilot: the session has ended]\r\n".to_vec());
                drop(tx);
                None
            } else if s.attached.count() >= MAX_CLIENTS {
                drop(s);
                tracing::info!(
                    "attach: {} already has {MAX_CLIENTS} people attached; a connection was refused",
                    session.id
                );
                let mut stream = stream;
                let line = format!(
                    "[termpilot: {MAX_CLIENTS} people are already attached to session {}, the most allowed; try again after one detaches]\r\n",
                    session.id
                );
                let _ = stream.write_all(line.as_bytes());
                let _ = stream.shutdown(std::net::Shutdown::Both);
                return Ok(());
            } else {
                let _ = tx.try_send(redraw(&s.emu));
                Some(s.attached.add(tx, hang_up))
            }
        };
        let writer = stream.try_clone()?;
        std::thread::Builder::new()
            .name(format!("attach-out-{}", session.id))
            .stack_size(128 * 1024)
            .spawn(move || write_loop(writer, rx))?;
        if let Some(id) = id {
            let weak = Arc::downgrade(session);
            std::thread::Builder::new()
                .name(format!("attach-in-{}", session.id))
                .stack_size(128 * 1024)
                .spawn(move || read_loop(stream, weak, id))?;
        }
        Ok(())
    }

    fn write_loop(mut stream: UnixStream, rx: Receiver<Vec<u8>>) {
        for chunk in rx {
            if stream.write_all(&chunk).is_err() {
                break;
            }
        }
        let _ = stream.shutdown(std::net::Shutdown::Both);
    }

    /// Reads the client's frames until it leaves; input goes to the program.
    fn read_loop(mut stream: UnixStream, session: Weak<Session>, id: u64) {
        let mut header = [0u8; 3];
        let mut payload = Vec::new();
        loop {
            if stream.read_exact(&mut header).is_err() {
                break;
            }
            let len = u16::from_be_bytes([header[1], header[2]]) as usize;
            payload.resize(len, 0);
            if stream.read_exact(&mut payload).is_err() {
                break;
            }
            let Some(session) = session.upgrade() else {
                break;
            };
            match header[0] {
                FRAME_INPUT => session.send_input(payload.clone()),
                FRAME_DETACH => {
                    session.state().attached.detach(id);
                    session.release_control(SOCKET_HOLDER | id);
                    return;
                }
                FRAME_TAKE => session.take_control(SOCKET_HOLDER | id),
                FRAME_RELEASE => session.release_control(SOCKET_HOLDER | id),
                FRAME_KEYS => {
                    let _ = session.person_keys(SOCKET_HOLDER | id, payload.clone());
                }
                FRAME_RESIZE if len == 4 => {
                    let cols = u16::from_be_bytes([payload[0], payload[1]]);
                    let rows = u16::from_be_bytes([payload[2], payload[3]]);
                    if (2..=1000).contains(&cols) && (1..=500).contains(&rows) {
                        let _ = session.resize(Size { cols, rows });
                    }
                }
                _ => {}
            }
        }
        if let Some(session) = session.upgrade() {
            session.state().attached.remove(id);
            session.release_control(SOCKET_HOLDER | id);
        }
    }
}

/// Encodes one client → server frame.
pub fn frame(kind: u8, payload: &[u8]) -> Vec<u8> {
    let len = payload.len().min(u16::MAX as usize);
    let mut out = Vec::with_capacity(3 + len);
    out.push(kind);
    out.extend_from_slice(&(len as u16).to_be_bytes());
    out.extend_from_slice(&payload[..len]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_are_kind_length_payload() {
        assert_eq!(frame(FRAME_INPUT, b"ab"), b"i\x00\x02ab");
        let big = vec![0u8; 70_000];
        assert_eq!(frame(FRAME_INPUT, &big).len(), 3 + 65_535);
    }

    #[test]
    fn commands_quote_what_the_shell_would_split() {
        let line = command_line(
            "calm-reef",
            Path::new("/run/user/1000/termpilot/1-calm-reef.sock"),
        );
        assert!(
            line.ends_with(" attach calm-reef --socket /run/user/1000/termpilot/1-calm-reef.sock"),
            "{line}"
        );
        let odd = command_line("a b", Path::new("/tmp/x y/1-a b.sock"));
        assert!(
            odd.contains("attach 'a b' --socket '/tmp/x y/1-a b.sock'"),
            "{odd}"
        );
    }

    #[test]
    fn find_lists_only_sockets_of_running_servers() {
        let dir = tempfile::tempdir().unwrap();
        let me = std::process::id() as i32;
        // Pid numbers near the maximum are never in use on a test machine.
        let dead = 4_194_000;
        for name in [
            format!("{me}-calm-reef.sock"),
            format!("{dead}-calm-reef.sock"),
            format!("{me}-other.sock"),
            "notes.txt".to_string(),
        ] {
            std::fs::write(dir.path().join(name), b"").unwrap();
        }
        let found = find(dir.path(), "calm-reef");
        assert_eq!(
            found,
            vec![(me, dir.path().join(format!("{me}-calm-reef.sock")))]
        );
        assert!(find(dir.path(), "reef").is_empty());
    }

    #[test]
    fn a_slow_client_is_dropped_not_waited_for() {
        let mut clients = Clients::default();
        let (tx, _rx) = sync_channel(2);
        let hung = Arc::new(AtomicBool::new(false));
        let flag = hung.clone();
        clients.add(tx, Box::new(move || flag.store(true, Ordering::SeqCst)));
        clients.broadcast(b"1");
        clients.broadcast(b"2");
        assert_eq!(clients.count(), 1);
        clients.broadcast(b"3");
        assert_eq!(clients.count(), 0);
        assert!(hung.load(Ordering::SeqCst), "the dropped client is hung up");
    }
}
