//! Shell command lines for one-shot commands: which program runs a command string, and how.
//!
//! A small public API shared by everything that runs a command *string* rather than an argv:
//! `terminal_run` with `shell:true` (`sh -c` on Unix, `cmd /d /s /c` on Windows), the
//! presets' `shell_run`/`execute_command` (bash, PowerShell or cmd), and `job_start`'s
//! `shell` parameter. On Windows, bash is Git Bash found at fixed install paths — never
//! `System32\bash.exe`, which is the WSL launcher and runs in another machine.

use std::path::PathBuf;

use crate::error::{Error, Result};

/// A shell that can run one command string.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shell {
    /// POSIX `sh` (`/bin/sh`; Git Bash on Windows).
    Sh,
    /// bash (`bash` on PATH; Git Bash from fixed paths on Windows).
    Bash,
    /// PowerShell (`pwsh`, else Windows PowerShell), `-NoLogo -NoProfile`.
    PowerShell,
    /// cmd.exe (Windows only).
    Cmd,
}

/// A program and its arguments that run one command string.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShellCommand {
    pub program: String,
    pub args: Vec<String>,
    /// On Windows, pass `args` verbatim (cmd.exe's own quoting); ignored elsewhere.
    pub verbatim: bool,
}

impl Shell {
    /// The shell of one-shot `shell:true` commands: `sh` on Unix, cmd.exe on Windows.
    pub fn one_shot() -> Shell {
        if cfg!(windows) { Shell::Cmd } else { Shell::Sh }
    }

    /// The scripting default of director-shell: PowerShell on Windows, bash elsewhere.
    pub fn scripting() -> Shell {
        if cfg!(windows) {
            Shell::PowerShell
        } else {
            Shell::Bash
        }
    }

    /// Parses a shell name: `sh`, `bash`, `powershell`/`pwsh`, `cmd`.
    pub fn from_name(name: &str) -> Result<Shell> {
        match name.trim().to_ascii_lowercase().as_str() {
            "sh" => Ok(Shell::Sh),
            "bash" => Ok(Shell::Bash),
            "powershell" | "pwsh" => Ok(Shell::PowerShell),
            "cmd" | "cmd.exe" => Ok(Shell::Cmd),
            other => Err(Error::InvalidInput(format!(
                "Unknown shell `{other}`; pass sh, bash, powershell or cmd."
            ))),
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Shell::Sh => "sh",
            Shell::Bash => "bash",
            Shell::PowerShell => "powershell",
            Shell::Cmd => "cmd",
        }
    }

    /// `word` quoted so this shell passes it as one argument, unexpanded: POSIX single
    /// quotes for sh and bash, single quotes (`''` inside) for PowerShell, double quotes
    /// (`\"` inside, as programs parse their command line) for cmd.exe.
    pub fn quote(self, word: &str) -> String {
        match self {
            Shell::Sh | Shell::Bash => posix_quote(word),
            Shell::PowerShell => format!("'{}'", word.replace('\'', "''")),
            Shell::Cmd => {
                if !word.is_empty()
                    && !word
                        .chars()
                        .any(|c| c.is_whitespace() || "\"&|<>^%!()".contains(c))
                {
                    word.to_string()
                } else {
                    format!("\"{}\"", word.replace('"', "\\\""))
                }
            }
        }
    }

    /// The program and arguments that run `command` in this shell.
    pub fn command(self, command: &str) -> Result<ShellCommand> {
        let plain = |program: String, flag: &str| ShellCommand {
            program,
            args: vec![flag.into(), command.into()],
            verbatim: false,
        };
        match self {
            Shell::Sh if cfg!(unix) => Ok(plain("/bin/sh".into(), "-c")),
            Shell::Bash if cfg!(unix) => Ok(plain("bash".into(), "-c")),
            Shell::Sh | Shell::Bash => Ok(plain(git_bash()?.display().to_string(), "-c")),
            Shell::PowerShell => Ok(ShellCommand {
                program: powershell(),
                args: [
                    "-NoLogo",
                    "-NoProfile",
                    "-NonInteractive",
                    "-Command",
                    command,
                ]
                .map(String::from)
                .to_vec(),
                verbatim: false,
            }),
            Shell::Cmd if cfg!(windows) => Ok(ShellCommand {
                program: std::env::var("ComSpec").unwrap_or_else(|_| "cmd.exe".into()),
                args: vec![
                    "/d".into(),
                    "/s".into(),
                    "/c".into(),
                    format!("\"{command}\""),
                ],
                verbatim: true,
            }),
            Shell::Cmd => Err(Error::InvalidInput(
                "cmd runs only on Windows; pass sh or bash here.".into(),
            )),
        }
    }
}

impl ShellCommand {
    /// The command as one argv: the program, then its arguments.
    pub fn argv(&self) -> Vec<String> {
        std::iter::once(self.program.clone())
            .chain(self.args.iter().cloned())
            .collect()
    }

    /// Checks that the program exists (a path, or a name found on PATH), for callers that
    /// cannot see a failed spawn themselves, such as a detached job's wrapper.
    pub fn require_installed(&self) -> Result<()> {
        if crate::host::path::find(&self.program).is_some() {
            return Ok(());
        }
        Err(Error::InvalidInput(format!(
            "`{}` was not found on PATH; install it or pass another shell.",
            self.program
        )))
    }
}

/// `pwsh` when it is on PATH, else Windows PowerShell (`powershell`).
fn powershell() -> String {
    let found = crate::host::path::find("pwsh").is_some();
    if found || !cfg!(windows) {
        "pwsh".into()
    } else {
        "powershell".into()
    }
}

/// Where Git for Windows puts bash, in the order they are tried; `var` reads the environment.
pub(crate) fn git_bash_candidates(var: impl Fn(&str) -> Option<String>) -> Vec<PathBuf> {
    let mut roots: Vec<PathBuf> = Vec::new();
    let program_files = var("ProgramFiles").unwrap_or_else(|| r"C:\Program Files".into());
    let program_files_x86 =
        var("ProgramFiles(x86)").unwrap_or_else(|| r"C:\Program Files (x86)".into());
    roots.push(PathBuf::from(program_files).join("Git"));
    roots.push(PathBuf::from(program_files_x86).join("Git"));
    if let Some(local) = var("LOCALAPPDATA") {
        roots.push(PathBuf::from(local).join("Programs").join("Git"));
    }
    roots
        .into_iter()
        .flat_map(|root| {
            [
                root.join("bin").join("bash.exe"),
                root.join("usr").join("bin").join("bash.exe"),
            ]
        })
        .collect()
}

/// Git Bash, from its fixed install paths; an error naming them when none exists.
pub(crate) fn git_bash() -> Result<PathBuf> {
    let candidates = git_bash_candidates(|k| std::env::var(k).ok());
    if let Some(found) = candidates.iter().find(|p| p.is_file()) {
        return Ok(found.clone());
    }
    let tried: Vec<String> = candidates.iter().map(|p| p.display().to_string()).collect();
    Err(Error::Other(format!(
        "Git Bash was not found (tried {}); install Git for Windows from https://git-scm.com/download/win or use powershell or cmd.",
        tried.join(", ")
    )))
}

/// `word` in single quotes, safe for any POSIX shell (and fish): `it's` → `'it'\''s'`.
pub(crate) fn posix_quote(word: &str) -> String {
    if !word.is_empty()
        && word.chars().all(|c| {
            c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | '/' | '=' | ':' | ',')
        })
    {
        return word.to_string();
    }
    format!("'{}'", word.replace('\'', r"'\''"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_parse_and_unknown_ones_are_errors() {
        assert_eq!(Shell::from_name("PWSH").unwrap(), Shell::PowerShell);
        assert_eq!(Shell::from_name("bash").unwrap(), Shell::Bash);
        let e = Shell::from_name("fish").unwrap_err().to_string();
        assert!(e.contains("Unknown shell `fish`"), "{e}");
    }

    #[cfg(unix)]
    #[test]
    fn unix_one_shot_is_sh_dash_c() {
        let c = Shell::one_shot().command("echo $HOME | wc -c").unwrap();
        assert_eq!(c.program, "/bin/sh");
        assert_eq!(c.args, vec!["-c", "echo $HOME | wc -c"]);
        assert!(Shell::Cmd.command("dir").is_err());
    }

    #[cfg(unix)]
    #[test]
    fn argv_and_installed_check() {
        let c = Shell::Sh.command("true").unwrap();
        assert_eq!(c.argv(), vec!["/bin/sh", "-c", "true"]);
        assert!(c.require_installed().is_ok());
        let missing = ShellCommand {
            program: "no-such-shell-termpilot".into(),
            args: vec![],
            verbatim: false,
        };
        let e = missing.require_installed().unwrap_err().to_string();
        assert!(e.contains("not found on PATH"), "{e}");
    }

    #[test]
    fn git_bash_candidates_never_include_system32() {
        let env = |k: &str| match k {
            "ProgramFiles" => Some("P".to_string()),
            "LOCALAPPDATA" => Some("L".to_string()),
            _ => None,
        };
        let c = git_bash_candidates(env);
        assert_eq!(c.len(), 6);
        assert_eq!(
            c[0],
            PathBuf::from("P").join("Git").join("bin").join("bash.exe")
        );
        assert!(
            c.iter()
                .all(|p| !p.display().to_string().contains("System32"))
        );
    }
}
