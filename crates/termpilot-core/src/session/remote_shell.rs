//! A plain-terminal session on a target: the transport on a local PTY (`ssh -tt`, `docker
//! exec -it`, `kubectl exec -it`), with termpilot's prompt hooks delivered in band.
//!
//! The hooks travel inside the transport's own command line, never through the terminal:
//! a small `sh` program writes them to a private temporary folder on the target (which the
//! hook removes as soon as the shell has read it) and `exec`s the shell with them, with a
//! nonce made for this start. Nothing is typed, so the hook text is never echoed and never
//! appears in any output; the shell's marks then give `terminal_exec` the exact output,
//! exit code and cwd, as on this machine. What needs the target's `/proc` (a program
//! waiting for input) is not looked for: the local `/proc` only shows the transport.

use crate::error::{Error, Result};
use crate::remote::script::quote;
use crate::remote::target::Target;
use crate::remote::transport::{self, RemoteOptions, Tty};
use crate::session::new_nonce;
use crate::session::shell::ShellKind;

const BASH: &str = include_str!("integration/bash.sh");
const SH: &str = include_str!("integration/sh.sh");

/// What a remote plain-terminal session runs; kept in the session's shape, so a restart
/// (reserved id) connects again the same way.
#[derive(Debug, Clone)]
pub struct RemoteShell {
    pub target: Target,
    pub options: RemoteOptions,
    /// bash or sh on the target.
    pub kind: ShellKind,
    /// The directory on the target; `None` = the login directory.
    pub cwd: Option<String>,
    /// Set in the remote shell (`PS1` becomes the prompt inside the marks).
    pub env: Vec<(String, String)>,
}

/// The local program that runs the remote shell, and the nonce its marks are signed with.
#[derive(Debug, Clone)]
pub struct RemoteLaunch {
    pub argv: Vec<String>,
    pub nonce: String,
}

impl RemoteShell {
    /// The remote shell kind a `shell` parameter names (default bash).
    pub fn kind_of(shell: Option<&str>) -> Result<ShellKind> {
        match shell.map(str::trim) {
            None | Some("") | Some("bash") => Ok(ShellKind::Bash),
            Some("sh") | Some("dash") => Ok(ShellKind::Sh),
            Some(other) => Err(Error::InvalidInput(format!(
                "A remote session runs bash or sh on the target, not `{other}`; pass shell \"bash\" or \"sh\"."
            ))),
        }
    }

    /// The transport command line of one start, with a fresh nonce.
    /// Checks the names of `env` (they become shell variables on the target).
    pub fn check_env(env: &[(String, String)]) -> Result<()> {
        for (key, _) in env {
            if !crate::remote::script::is_name(key) {
                return Err(Error::InvalidInput(format!(
                    "env name `{key}` is not a shell variable name (letters, digits, _); rename it."
                )));
            }
        }
        Ok(())
    }

    /// The shell on the target carries the session's marker `mark`, so what it starts there
    /// is found and ended with it ([`super::ending`]).
    pub fn launch(&self, mark: &str) -> RemoteLaunch {
        crate::remote::ending::remember_for_undertaker(&self.target, &self.options);
        let nonce = new_nonce();
        let script = self.script(&nonce, mark);
        let argv = transport::argv(
            &self.target,
            &self.options,
            Tty::Yes,
            &["sh".into(), "-c".into(), script],
        );
        RemoteLaunch { argv, nonce }
    }

    /// Ends what carries the session's marker `mark` on the target (see [`super::ending`]):
    /// what could not be ended, or checked.
    pub async fn end(&self, mark: &str) -> Vec<crate::host::marker::Survivor> {
        crate::remote::ending::end(&self.target, &self.options, mark).await
    }

    /// [`RemoteShell::end`], blocking.
    pub fn end_blocking(&self, mark: &str) -> Vec<crate::host::marker::Survivor> {
        crate::remote::ending::end_blocking(&self.target, &self.options, mark)
    }

    /// The `sh` program run on the target: hooks to a private folder, then the shell.
    fn script(&self, nonce: &str, mark: &str) -> String {
        let cleanup = "rm -rf -- \"$__TP_DIR\"; unset __TP_DIR\n";
        let (hook, start) = match self.kind {
            ShellKind::Sh => (SH, "ENV=\"$d/rc\" exec sh -i"),
            _ => (BASH, "__TP_LOGIN=1 exec bash --rcfile \"$d/rc\" -i"),
        };
        let mut lines = vec![
            "umask 077".to_string(),
            "d=$(mktemp -d \"${TMPDIR:-/tmp}/termpilot.XXXXXX\") || exit 1".to_string(),
            format!(
                "printf '%s' {} > \"$d/rc\" || exit 1",
                quote(&format!("{cleanup}{hook}"))
            ),
        ];
        if let Some(dir) = &self.cwd {
            lines.push(format!("cd -- {} || exit 1", quote(dir)));
        }
        for (key, value) in &self.env {
            lines.push(format!("export {}", quote(&format!("{key}={value}"))));
            if key == "PS1" {
                lines.push(format!("export {}", quote(&format!("__TP_PS1={value}"))));
            }
        }
        lines.push(format!(
            "export __TP_DIR=\"$d\" __TP_NONCE={} {}={}",
            quote(nonce),
            crate::host::marker::MARKER,
            quote(mark)
        ));
        lines.push(format!("umask 022; {start}"));
        lines.join("\n")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_launch_carries_the_hook_and_its_nonce_in_the_command_line() {
        let shell = RemoteShell {
            target: Target::parse("docker://web").unwrap(),
            options: RemoteOptions::default(),
            kind: ShellKind::Bash,
            cwd: Some("/srv".into()),
            env: vec![("PS1".into(), "$ ".into())],
        };
        let launch = shell.launch("7.s1");
        assert_eq!(&launch.argv[..5], ["docker", "exec", "-it", "web", "sh"]);
        let script = &launch.argv[6];
        assert!(
            script.contains(&format!("__TP_NONCE={}", launch.nonce)),
            "{script}"
        );
        assert!(
            script.contains("133;A;tp="),
            "the hook itself travels: {script}"
        );
        assert!(script.contains("cd -- /srv || exit 1"));
        assert!(script.contains("TERMPILOT_RUN_ID=7.s1"), "{script}");
        assert!(script.contains("export '__TP_PS1=$ '"), "{script}");
        assert!(
            script.ends_with("exec bash --rcfile \"$d/rc\" -i"),
            "{script}"
        );
        assert_ne!(
            shell.launch("7.s1").nonce,
            launch.nonce,
            "a fresh nonce per start"
        );
    }

    #[test]
    fn remote_shell_kinds() {
        assert_eq!(RemoteShell::kind_of(None).unwrap(), ShellKind::Bash);
        assert_eq!(RemoteShell::kind_of(Some("sh")).unwrap(), ShellKind::Sh);
        let e = RemoteShell::kind_of(Some("fish")).unwrap_err().to_string();
        assert!(e.contains("bash or sh"), "{e}");
    }
}
