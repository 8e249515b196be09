//! Kept sessions: terminals that outlive the MCP server (and client) that started them.
//!
//! One owner holds them: the user's **session host**, this same binary started as
//! `termpilot __session-host` ([`host`]). It runs its own [`termpilot_core::Core`] and the
//! native tools, and serves MCP on a Unix socket in the private runtime folder ([`paths`]).
//! Servers are its clients ([`link`]): a `terminal_start` with `keep: true` (or every native
//! start under `--keep-sessions`) goes there ([`start`]), as does every call naming a kept
//! session id ([`forward`]); `terminal_list` merges the host's list ([`list`]). The host
//! names its sessions `k-…`, a namespace no server's own sessions use, so every server calls
//! a kept session by the same id without a mapping. The host writes a small record of the
//! ids it holds ([`record`]), which lets a later server say plainly that kept sessions ended
//! when their host died. `termpilot sessions` lists them from a shell ([`sessions_cmd`]).
//! The protocol is written down in ARCHITECTURE.md ("Kept sessions").

pub mod forward;
pub mod host;
pub mod link;
pub mod list;
pub mod paths;
pub mod record;
pub mod sessions_cmd;
pub mod start;

use std::sync::OnceLock;
use std::time::Duration;

/// The prefix of every kept session id (the host's `SessionIds::Kept`).
pub const PREFIX: &str = "k-";
/// The version of the server ↔ host protocol, in the host's serverInfo name.
pub const PROTOCOL: u32 = 1;
/// The serverInfo name a host answers with: `termpilot-session-host/<PROTOCOL>`.
pub fn host_name() -> String {
    format!("termpilot-session-host/{PROTOCOL}")
}
/// Kept sessions end after this long with no call, no output and no attached person.
pub const DEFAULT_KEEP_IDLE: Duration = Duration::from_secs(24 * 3600);

/// How this process deals with kept sessions.
#[derive(Debug, Clone, Default)]
pub struct Settings {
    /// `--keep-sessions`: every native `terminal_start` is kept.
    pub keep_all: bool,
    /// `--keep-idle`, given to a host this server starts.
    pub keep_idle: Option<Duration>,
    /// This process is a session host: nothing is forwarded anywhere.
    pub is_host: bool,
    /// The sandbox flags of this server, given to a host it starts (see [`paths::key`]).
    pub policy: Vec<String>,
}

static SETTINGS: OnceLock<Settings> = OnceLock::new();

/// Sets this process's settings (once, at start-up).
pub fn configure(settings: Settings) {
    let _ = SETTINGS.set(settings);
}

/// This process's settings (the defaults when never configured).
pub fn settings() -> &'static Settings {
    static DEFAULT: OnceLock<Settings> = OnceLock::new();
    SETTINGS
        .get()
        .unwrap_or_else(|| DEFAULT.get_or_init(Settings::default))
}

/// True for an id of the kept namespace.
pub fn is_kept_id(id: &str) -> bool {
    id.starts_with(PREFIX) && id.len() > PREFIX.len()
}

/// The sandbox flags that describe `config`'s policy, as a host is started with them
/// (empty when the sandbox is off).
pub fn policy_args(config: &termpilot_core::Config) -> Vec<String> {
    use termpilot_core::sandbox::Mode;
    let s = &config.sandbox;
    if s.mode == Mode::Off {
        return Vec::new();
    }
    let mut args = vec!["--sandbox".to_string(), s.mode.as_str().to_string()];
    for w in &s.writable {
        args.push("--writable".into());
        args.push(w.display().to_string());
    }
    if let Some(n) = s.network {
        args.push("--network".into());
        args.push(n.as_str().into());
    }
    for d in &s.deny_read {
        args.push("--deny-read".into());
        args.push(d.display().to_string());
    }
    // The write roots default to the working directory: it is part of the policy.
    let cwd = config
        .cwd
        .clone()
        .or_else(|| std::env::current_dir().ok())
        .unwrap_or_default();
    args.push("--cwd".into());
    args.push(cwd.display().to_string());
    args
}
