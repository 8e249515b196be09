//! The server's configuration: one plain value built once at start-up.
//!
//! The command line (`src/cli.rs`) fills it from flags and environment variables; the core
//! only reads it. Defaults live here, as named constants, so they are documented once.

use std::path::PathBuf;
use std::time::Duration;

/// Default terminal width of a new session.
pub const DEFAULT_COLS: u16 = 120;
/// Default terminal height of a new session.
pub const DEFAULT_ROWS: u16 = 30;
/// Default number of scrollback lines kept by a session's emulator.
pub const DEFAULT_SCROLLBACK: usize = 5000;
/// Default limit on concurrent sessions.
pub const DEFAULT_MAX_SESSIONS: usize = 50;
/// Default time after which a session with no calls and no output is ended (6 hours).
pub const DEFAULT_IDLE_TIMEOUT: Duration = Duration::from_secs(6 * 60 * 60);

/// Default cap on one spill file of a one-shot command's stream (1 GiB).
pub const DEFAULT_MAX_SPILL_BYTES: u64 = 1 << 30;

/// Everything the server was told at start-up.
#[derive(Debug, Clone)]
pub struct Config {
    /// Shell for new sessions when a call names none (`--shell` / `TERMPILOT_SHELL`).
    pub shell: Option<String>,
    /// Working directory for new sessions and one-shot commands when a call names none.
    pub cwd: Option<PathBuf>,
    pub cols: u16,
    pub rows: u16,
    pub scrollback: usize,
    /// Start shells as login shells (they read the user's profile files).
    pub login: bool,
    pub max_sessions: usize,
    pub idle_timeout: Duration,
    /// Where jobs and locks live on disk.
    pub state_dir: PathBuf,
    /// How SSH hosts, containers and pods are reached (`--ssh-option`, `--ssh-config`, …).
    pub remote: crate::remote::RemoteOptions,
    /// What `--sandbox`, `--writable`, `--network` and `--deny-read` asked for.
    pub sandbox: crate::sandbox::Settings,
    /// The most bytes one spill file of a one-shot stream takes (`--max-spill-bytes`).
    pub max_spill_bytes: u64,
    /// How session ids look: readable words (native) or numbers from 1 (terminal-use).
    pub session_ids: SessionIds,
    /// At the session limit, end the least recently used session (its id reserved, the next
    /// call on it told so) instead of refusing the new one.
    pub evict_lru: bool,
}

/// The form of new session ids.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum SessionIds {
    /// Two readable words, `calm-reef`.
    #[default]
    Words,
    /// `1`, `2`, `3`… in start order, never reused while the server runs.
    Numbers,
    /// `k-calm-reef`: a session host's kept sessions, in a namespace no server's own
    /// sessions use (see the binary's `keep` module).
    Kept,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            shell: None,
            cwd: None,
            cols: DEFAULT_COLS,
            rows: DEFAULT_ROWS,
            scrollback: DEFAULT_SCROLLBACK,
            login: false,
            max_sessions: DEFAULT_MAX_SESSIONS,
            idle_timeout: DEFAULT_IDLE_TIMEOUT,
            state_dir: default_state_dir(),
            remote: Default::default(),
            sandbox: Default::default(),
            max_spill_bytes: DEFAULT_MAX_SPILL_BYTES,
            session_ids: SessionIds::default(),
            evict_lru: false,
        }
    }
}

/// `$XDG_STATE_HOME/termpilot`, else `~/.local/state/termpilot` (`%LOCALAPPDATA%\termpilot`
/// on Windows), else a folder in the temp dir.
pub fn default_state_dir() -> PathBuf {
    #[cfg(windows)]
    if let Some(dir) = std::env::var_os("LOCALAPPDATA") {
        return PathBuf::from(dir).join("termpilot");
    }
    if let Some(dir) = std::env::var_os("XDG_STATE_HOME").filter(|d| !d.is_empty()) {
        return PathBuf::from(dir).join("termpilot");
    }
    if let Some(home) = std::env::var_os("HOME").filter(|d| !d.is_empty()) {
        return PathBuf::from(home).join(".local/state/termpilot");
    }
    std::env::temp_dir().join("termpilot-state")
}

/// Creates the state dir `dir` (mode 0700 on Unix) when it does not exist yet; its parents
/// are created as usual. An existing folder is left as the user made it.
pub fn prepare_state_dir(dir: &std::path::Path) -> std::io::Result<()> {
    if dir.is_dir() {
        return Ok(());
    }
    if let Some(parent) = dir.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent)?;
    }
    let mut builder = std::fs::DirBuilder::new();
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    match builder.create(dir) {
        Err(e) if e.kind() != std::io::ErrorKind::AlreadyExists => Err(e),
        _ => Ok(()),
    }
}
