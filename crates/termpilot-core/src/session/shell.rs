//! Which shell a session runs, and how it is started.
//!
//! Order (SPEC §4): the call's `shell` > `TERMPILOT_SHELL` (or the preset's variable) > auto:
//! `$SHELL` > bash > sh on Unix; pwsh > powershell > cmd on Windows. A configured shell that
//! cannot be found is ignored (with a log line), as smart-terminal does; an explicit one that
//! cannot be found is an error.

use std::path::{Path, PathBuf};

use crate::error::{Error, Result};

/// The shells termpilot knows how to talk to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ShellKind {
    Bash,
    Zsh,
    Fish,
    Sh,
    PowerShell,
    Cmd,
    Other,
}

impl ShellKind {
    pub fn of(program: &Path) -> ShellKind {
        let name = program
            .file_stem()
            .and_then(|s| s.to_str())
            .unwrap_or("")
            .to_ascii_lowercase();
        match name.as_str() {
            "bash" => ShellKind::Bash,
            "zsh" => ShellKind::Zsh,
            "fish" => ShellKind::Fish,
            "sh" | "dash" | "ash" | "ksh" | "mksh" | "busybox" => ShellKind::Sh,
            "pwsh" | "powershell" => ShellKind::PowerShell,
            "cmd" => ShellKind::Cmd,
            _ => ShellKind::Other,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            ShellKind::Bash => "bash",
            ShellKind::Zsh => "zsh",
            ShellKind::Fish => "fish",
            ShellKind::Sh => "sh",
            ShellKind::PowerShell => "powershell",
            ShellKind::Cmd => "cmd",
            ShellKind::Other => "other",
        }
    }
}

/// A shell found on this machine.
#[derive(Debug, Clone)]
pub struct SessionShell {
    pub program: PathBuf,
    pub kind: ShellKind,
}

impl SessionShell {
    /// Arguments for an interactive session.
    pub fn interactive_args(&self, login: bool) -> Vec<String> {
        match self.kind {
            ShellKind::PowerShell => vec!["-NoLogo".into(), "-NoProfile".into()],
            ShellKind::Cmd => Vec::new(),
            ShellKind::Bash | ShellKind::Zsh | ShellKind::Fish | ShellKind::Sh if login => {
                vec!["-l".into()]
            }
            _ => Vec::new(),
        }
    }

    /// Arguments that run one command line through this shell; a login shell (`-l`) reads
    /// the profile files first, as an interactive login session does.
    pub fn command_args(&self, command: &str, login: bool) -> Vec<String> {
        match self.kind {
            ShellKind::Bash | ShellKind::Zsh | ShellKind::Fish | ShellKind::Sh if login => {
                vec!["-l".into(), "-c".into(), command.into()]
            }
            ShellKind::PowerShell => vec![
                "-NoLogo".into(),
                "-NoProfile".into(),
                "-Command".into(),
                command.into(),
            ],
            ShellKind::Cmd => vec!["/d".into(), "/s".into(), "/c".into(), command.into()],
            _ => vec!["-c".into(), command.into()],
        }
    }
}

pub(crate) use crate::host::path::find;

/// Picks the shell for a new session.
pub fn resolve(explicit: Option<&str>, configured: Option<&str>) -> Result<SessionShell> {
    if let Some(name) = explicit.filter(|s| !s.trim().is_empty()) {
        let program = find(name).ok_or_else(|| {
            Error::InvalidInput(format!(
                "The shell `{name}` was not found; pass a shell on PATH (e.g. bash, sh) or an absolute path, or omit shell for the default."
            ))
        })?;
        return Ok(SessionShell {
            kind: ShellKind::of(&program),
            program,
        });
    }
    if let Some(name) = configured.filter(|s| !s.trim().is_empty()) {
        match find(name) {
            Some(program) => {
                return Ok(SessionShell {
                    kind: ShellKind::of(&program),
                    program,
                });
            }
            None => tracing::warn!("configured shell `{name}` not found; using the default"),
        }
    }
    auto()
}

fn auto() -> Result<SessionShell> {
    let mut candidates: Vec<String> = Vec::new();
    #[cfg(unix)]
    {
        if let Ok(shell) = std::env::var("SHELL") {
            candidates.push(shell);
        }
        candidates.extend(["bash".into(), "sh".into(), "/bin/sh".into()]);
    }
    #[cfg(windows)]
    candidates.extend(["pwsh".into(), "powershell".into(), "cmd".into()]);
    for c in candidates.iter().filter(|c| !c.is_empty()) {
        if let Some(program) = find(c) {
            return Ok(SessionShell {
                kind: ShellKind::of(&program),
                program,
            });
        }
    }
    Err(Error::Other(
        "No shell was found on this machine; set TERMPILOT_SHELL to a shell's path.".into(),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds() {
        assert_eq!(ShellKind::of(Path::new("/bin/bash")), ShellKind::Bash);
        assert_eq!(ShellKind::of(Path::new("/usr/bin/dash")), ShellKind::Sh);
        assert_eq!(
            ShellKind::of(Path::new("/opt/x/pwsh.exe")),
            ShellKind::PowerShell
        );
    }

    #[test]
    fn explicit_beats_configured_and_missing_explicit_is_an_error() {
        let s = resolve(Some("/bin/sh"), Some("bash")).unwrap();
        assert_eq!(s.program, PathBuf::from("/bin/sh"));
        let e = resolve(Some("no-such-shell-xyz"), None)
            .unwrap_err()
            .to_string();
        assert!(e.contains("no-such-shell-xyz"), "{e}");
        // A configured shell that is missing is ignored.
        assert!(resolve(None, Some("no-such-shell-xyz")).is_ok());
    }
}
