//! How this process deals with kept sessions (set once at start-up), and the names both
//! sides agree on: the id prefix, the host's serverInfo name and subcommand, the sandbox
//! flags that pick a host. Everything else in `keep/` asks here; nothing here asks them.

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

/// The hidden subcommand.
pub const SUBCOMMAND: &str = "__session-host";

/// This process's uid.
pub fn my_uid() -> u32 {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() }
}
