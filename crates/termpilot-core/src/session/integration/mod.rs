//! Shell integration: how a session learns exactly when a command starts and ends, its exit
//! status and the new working directory — without typing anything into the command line.
//!
//! Shells are started with prompt hooks that print OSC 133 marks (`A` prompt start, `B`
//! command line start, `C` output start, `D;<status>` command end) and OSC 7 (the cwd). They
//! are invisible: the emulator ignores them and the text renderer drops them. The user's own
//! startup files are still read:
//! - bash: `--rcfile` pointing at ours, which sources the usual files first;
//! - zsh: `ZDOTDIR` pointing at ours, whose files source the user's;
//! - fish: `--init-command` after the user's configuration;
//! - PowerShell: a prompt function dot-sourced at start (written, not testable here);
//! - dash (and bash started as `sh`): an `$ENV` file sets a `PS1` that itself carries `D`,
//!   OSC 7, `A` and `B`, since those shells expand `$?` and `$PWD` in prompts (there is no
//!   `C`: output starts after the echoed command line).
//!
//! Other shells get nothing and are followed through the foreground process group instead.
//! [`Scanner`] finds the marks in the byte stream.
//!
//! Every OSC 133 mark our hooks print is signed with a nonce made for the session
//! (`tp=<nonce>`), handed to the shell in `__TP_NONCE` and unset there at once, so the
//! programs it runs do not inherit it. A hooked session honours only signed marks: a program
//! that prints `133;D` (or `cat`s a log full of marks) cannot end a command early. OSC 7
//! (the cwd) carries no signature; it is honoured only where the hook prints it, right after
//! a signed `D` or before the first mark.

mod scanner;

pub(super) use scanner::{Mark, MarkKind, Scanner};

use std::path::Path;

use super::shell::{SessionShell, ShellKind};
use crate::error::Result;
use crate::host::spill;

const BASH: &str = include_str!("bash.sh");
const ZSHENV: &str = include_str!("zshenv.zsh");
const ZPROFILE: &str = include_str!("zprofile.zsh");
const ZSHRC: &str = include_str!("zshrc.zsh");
const ZLOGIN: &str = include_str!("zlogin.zsh");
const FISH: &str = include_str!("fish.fish");
const POWERSHELL: &str = include_str!("powershell.ps1");
const SH: &str = include_str!("sh.sh");

/// How a session's commands are followed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// OSC 133 marks from the shell's prompt hooks.
    Osc133,
    /// The terminal's foreground process group, plus a short settle.
    ProcessGroup,
}

impl Mode {
    pub fn as_str(self) -> &'static str {
        match self {
            Mode::Osc133 => "osc133",
            Mode::ProcessGroup => "process-group",
        }
    }
}

/// What to add to an interactive shell's start so it prints the marks.
#[derive(Debug, Default)]
pub(super) struct Launch {
    /// Replaces the shell's usual interactive arguments.
    pub args: Vec<String>,
    pub env: Vec<(String, String)>,
    /// Variables the shell must not inherit.
    pub remove_env: Vec<String>,
    /// The nonce that signs this session's marks.
    pub nonce: String,
}

/// A fresh nonce: 64 bits from the OS's randomness (std's hasher keys), as hex.
pub(crate) fn new_nonce() -> String {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u128(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or_default(),
    );
    format!("{:016x}", h.finish())
}

/// Prepares `shell` for integration; `None` when this shell gets none. `env` is the session's
/// own environment: its `PS1` is kept inside the marks, its `ZDOTDIR` (or the server's) is
/// where a zsh user's files are.
pub(super) fn prepare(
    shell: &SessionShell,
    login: bool,
    env: &[(String, String)],
) -> Result<Option<Launch>> {
    let asked = |name: &str| env.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone());
    let ps1 = asked("PS1");
    let ps1 = ps1.as_deref();
    let mut launch = Launch {
        nonce: new_nonce(),
        ..Launch::default()
    };
    launch.env.push(("__TP_NONCE".into(), launch.nonce.clone()));
    if let Some(ps1) = ps1 {
        launch.env.push(("__TP_PS1".into(), ps1.into()));
    }
    match shell.kind {
        ShellKind::Bash => {
            let rc = write("bash.sh", BASH)?;
            if login {
                launch.env.push(("__TP_LOGIN".into(), "1".into()));
            }
            launch.args = vec!["--rcfile".into(), path_arg(&rc), "-i".into()];
        }
        ShellKind::Zsh => {
            let dir = spill::private_dir("shell-integration/zsh")?;
            for (name, body) in [
                (".zshenv", ZSHENV),
                (".zprofile", ZPROFILE),
                (".zshrc", ZSHRC),
                (".zlogin", ZLOGIN),
            ] {
                write_in(&dir, name, body)?;
            }
            // Without one, the script uses the shell's own $HOME (which `env` may set).
            if let Some(user) = asked("ZDOTDIR")
                .or_else(|| std::env::var("ZDOTDIR").ok())
                .filter(|d| !d.is_empty())
            {
                launch.env.push(("__TP_USER_ZDOTDIR".into(), user));
            }
            launch.env.push(("ZDOTDIR".into(), path_arg(&dir)));
            launch.args = if login {
                vec!["-l".into()]
            } else {
                vec!["-i".into()]
            };
        }
        ShellKind::Fish => {
            let script = write("termpilot.fish", FISH)?;
            launch.args = vec![
                "--init-command".into(),
                format!("source '{}'", path_arg(&script)),
            ];
            if login {
                launch.args.push("-l".into());
            }
        }
        ShellKind::PowerShell => {
            let script = write("termpilot.ps1", POWERSHELL)?;
            launch.args = vec![
                "-NoLogo".into(),
                "-NoProfile".into(),
                "-NoExit".into(),
                "-Command".into(),
                format!(". '{}'", path_arg(&script)),
            ];
        }
        ShellKind::Sh if expands_prompt(&shell.program) => {
            let env_file = write("sh.sh", SH)?;
            launch.env.retain(|(k, _)| k != "__TP_PS1");
            launch.env.push(("__TP_PS1".into(), sh_prompt_text(ps1)));
            if let Ok(user_env) = std::env::var("ENV") {
                launch.env.push(("__TP_USER_ENV".into(), user_env));
            }
            launch.env.push(("ENV".into(), path_arg(&env_file)));
            // The prompt is set by the ENV file, unexported.
            launch.remove_env.push("PS1".into());
            launch.args = if login {
                vec!["-l".into()]
            } else {
                vec!["-i".into()]
            };
        }
        _ => return Ok(None),
    }
    Ok(Some(launch))
}

/// dash and bash (run as `sh`) expand `$?` and `$PWD` in `PS1`; other `sh`s may not.
fn expands_prompt(program: &Path) -> bool {
    let real = std::fs::canonicalize(program).unwrap_or_else(|_| program.to_path_buf());
    matches!(
        real.file_name().and_then(|n| n.to_str()),
        Some("dash") | Some("bash")
    )
}

/// The prompt text dash shows inside its marks: the caller's, else `$ ` (`# ` for root).
fn sh_prompt_text(ps1: Option<&str>) -> String {
    ps1.map(String::from).unwrap_or_else(|| {
        // SAFETY: geteuid has no preconditions.
        #[cfg(unix)]
        let root = unsafe { libc::geteuid() } == 0;
        #[cfg(not(unix))]
        let root = false;
        if root { "# " } else { "$ " }.to_string()
    })
}

fn write(name: &str, body: &str) -> Result<std::path::PathBuf> {
    let dir = spill::private_dir("shell-integration")?;
    write_in(&dir, name, body)
}

/// Writes a script into the checked private folder `dir`: a new file created exclusively
/// (`O_EXCL`, `O_NOFOLLOW`, 0600) under a random name, then renamed over `name`, so no one
/// can slip a file or a symlink in its place and concurrent servers never see half a file.
/// An existing script is reused only when it is a regular file of ours with the same text.
fn write_in(dir: &Path, name: &str, body: &str) -> Result<std::path::PathBuf> {
    let path = dir.join(name);
    if read_own(&path).as_deref() == Some(body) {
        return Ok(path);
    }
    let failed = |e: std::io::Error| {
        crate::error::Error::io(
            format!(
                "Could not write the shell integration script {}",
                path.display()
            ),
            "check that the temp directory is writable",
            e,
        )
    };
    let tmp = dir.join(format!(
        ".{name}.{}.{}",
        std::process::id(),
        uuid::Uuid::new_v4().simple()
    ));
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600).custom_flags(libc::O_NOFOLLOW);
    }
    let written = options.open(&tmp).and_then(|mut f| {
        use std::io::Write;
        f.write_all(body.as_bytes())?;
        f.sync_all()
    });
    if let Err(e) = written.and_then(|_| std::fs::rename(&tmp, &path)) {
        let _ = std::fs::remove_file(&tmp);
        return Err(failed(e));
    }
    Ok(path)
}

/// The text of `path` when it is a regular file (not followed if a symlink) owned by us.
fn read_own(path: &Path) -> Option<String> {
    let meta = std::fs::symlink_metadata(path).ok()?;
    if !meta.is_file() {
        return None;
    }
    #[cfg(unix)]
    if std::os::unix::fs::MetadataExt::uid(&meta) != crate::platform::uid() {
        return None;
    }
    std::fs::read_to_string(path).ok()
}

fn path_arg(path: &Path) -> String {
    path.display().to_string()
}
