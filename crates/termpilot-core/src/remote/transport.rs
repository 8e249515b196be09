//! The argv of a transport: `ssh`, `docker exec`, `podman exec` or `kubectl exec`.
//!
//! SSH always runs with `BatchMode=yes` (never a password or passphrase prompt) and
//! `StrictHostKeyChecking=yes` (never a key accepted silently); these two come first on the
//! command line, and for ssh the first value of an option wins, so neither the user's ssh
//! config nor `--ssh-option` can weaken them. `--ssh-option` values come next, then
//! termpilot's defaults (a connect timeout and keep-alives, so a dead link ends a session
//! instead of freezing it), which the user can therefore override.

use std::path::PathBuf;

use super::script::quote;
use super::target::Target;
use crate::error::{Error, Result};

/// Options that make SSH safe to run unattended; they cannot be overridden.
const FIXED_SSH_OPTIONS: [&str; 2] = ["BatchMode=yes", "StrictHostKeyChecking=yes"];
/// Defaults the user may override with `--ssh-option`.
const DEFAULT_SSH_OPTIONS: [&str; 3] = [
    "ConnectTimeout=10",
    "ServerAliveInterval=15",
    "ServerAliveCountMax=3",
];

/// How remote targets are reached: what the user configured at start-up.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RemoteOptions {
    /// `ssh -F FILE` instead of `~/.ssh/config` (`--ssh-config`).
    pub ssh_config: Option<PathBuf>,
    /// `KEY=VALUE` options passed to every `ssh` (`--ssh-option`).
    pub ssh_options: Vec<String>,
    /// termpilot's path on the targets (`--remote-bin`); `None` = probe for it on PATH.
    pub remote_bin: Option<String>,
}

/// Checks a `--remote-bin` value: a non-empty path without control characters.
pub fn check_remote_bin(bin: &str) -> Result<()> {
    if bin.trim().is_empty() || bin.chars().any(|c| c.is_control()) || bin.starts_with('-') {
        return Err(Error::InvalidInput(format!(
            "--remote-bin `{bin}` is not a program path; pass termpilot's path on the targets, e.g. --remote-bin /usr/local/bin/termpilot."
        )));
    }
    Ok(())
}

impl RemoteOptions {
    /// Checks the user's `--ssh-option` values: `KEY=VALUE`, and not one of the fixed ones.
    pub fn check(&self) -> Result<()> {
        for option in &self.ssh_options {
            let Some((key, value)) = option.split_once('=') else {
                return Err(Error::InvalidInput(format!(
                    "--ssh-option `{option}` is not KEY=VALUE; write e.g. --ssh-option ConnectTimeout=5."
                )));
            };
            let key = key.trim();
            if key.is_empty() || !key.chars().all(|c| c.is_ascii_alphanumeric()) || value.is_empty()
            {
                return Err(Error::InvalidInput(format!(
                    "--ssh-option `{option}` is not KEY=VALUE with an ssh_config keyword; write e.g. --ssh-option ConnectTimeout=5."
                )));
            }
            if FIXED_SSH_OPTIONS.iter().any(|f| {
                f.split('=')
                    .next()
                    .is_some_and(|k| k.eq_ignore_ascii_case(key))
            }) {
                return Err(Error::InvalidInput(format!(
                    "--ssh-option `{option}` cannot be changed: termpilot always runs ssh with BatchMode=yes and StrictHostKeyChecking=yes; add host keys to known_hosts (ssh-keyscan) and keys to the agent (ssh-add) instead."
                )));
            }
        }
        Ok(())
    }
}

/// Whether the remote side gets a terminal.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tty {
    /// No terminal: exit code, stdout and stderr stay separate (one-shot runs, MCP over stdio).
    No,
    /// A terminal (`ssh -tt`, `exec -it`): the transport runs on a local PTY.
    Yes,
}

/// The program and arguments that run `remote` (an argv run on the target, directly) on
/// `target`. For ssh the argv is joined into one shell-quoted string, which the remote
/// user's shell splits back into the same words. `remote` empty = the target's login shell.
pub fn argv(target: &Target, options: &RemoteOptions, tty: Tty, remote: &[String]) -> Vec<String> {
    match target {
        Target::Ssh { user, host, port } => {
            let mut argv = vec!["ssh".to_string()];
            if let Some(config) = &options.ssh_config {
                argv.push("-F".into());
                argv.push(config.display().to_string());
            }
            for option in FIXED_SSH_OPTIONS
                .iter()
                .map(|s| s.to_string())
                .chain(options.ssh_options.iter().cloned())
                .chain(DEFAULT_SSH_OPTIONS.iter().map(|s| s.to_string()))
            {
                argv.push("-o".into());
                argv.push(option);
            }
            if let Some(port) = port {
                argv.push("-p".into());
                argv.push(port.to_string());
            }
            if let Some(user) = user {
                argv.push("-l".into());
                argv.push(user.clone());
            }
            argv.push(match tty {
                Tty::No => "-T".into(),
                Tty::Yes => "-tt".into(),
            });
            argv.push("--".into());
            argv.push(host.clone());
            if !remote.is_empty() {
                let line: Vec<String> = remote.iter().map(|w| quote(w)).collect();
                argv.push(line.join(" "));
            }
            argv
        }
        Target::Container { engine, name } => {
            let mut argv = vec![engine.program().to_string(), "exec".into()];
            argv.push(match tty {
                Tty::No => "-i".into(),
                Tty::Yes => "-it".into(),
            });
            argv.push(name.clone());
            argv.extend(or_login_shell(remote));
            argv
        }
        Target::Pod {
            namespace,
            pod,
            container,
        } => {
            let mut argv = vec!["kubectl".to_string(), "exec".into()];
            argv.push(match tty {
                Tty::No => "-i".into(),
                Tty::Yes => "-it".into(),
            });
            if let Some(ns) = namespace {
                argv.push("-n".into());
                argv.push(ns.clone());
            }
            argv.push(pod.clone());
            if let Some(c) = container {
                argv.push("-c".into());
                argv.push(c.clone());
            }
            argv.push("--".into());
            argv.extend(or_login_shell(remote));
            argv
        }
    }
}

/// Containers and pods have no login shell of their own to fall back on: `sh`.
fn or_login_shell(remote: &[String]) -> Vec<String> {
    if remote.is_empty() {
        vec!["sh".into()]
    } else {
        remote.to_vec()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn ssh_argv_is_strict_and_quotes_the_remote_words() {
        let target = Target::parse("ssh://me@box:2222").unwrap();
        let options = RemoteOptions {
            ssh_config: Some("/tmp/cfg".into()),
            ssh_options: vec!["ConnectTimeout=3".into()],
            remote_bin: None,
        };
        let argv = argv(
            &target,
            &options,
            Tty::No,
            &words(&["sh", "-c", "echo 'hi'; exit 3"]),
        );
        assert_eq!(
            argv,
            words(&[
                "ssh",
                "-F",
                "/tmp/cfg",
                "-o",
                "BatchMode=yes",
                "-o",
                "StrictHostKeyChecking=yes",
                "-o",
                "ConnectTimeout=3",
                "-o",
                "ConnectTimeout=10",
                "-o",
                "ServerAliveInterval=15",
                "-o",
                "ServerAliveCountMax=3",
                "-p",
                "2222",
                "-l",
                "me",
                "-T",
                "--",
                "box",
                r#"sh -c 'echo '\''hi'\''; exit 3'"#,
            ])
        );
        let tty = super::argv(&target, &RemoteOptions::default(), Tty::Yes, &[]);
        assert_eq!(&tty[tty.len() - 3..], &words(&["-tt", "--", "box"]));
    }

    #[test]
    fn container_and_pod_argv() {
        let remote = words(&["sh", "-c", "id"]);
        let docker = Target::parse("docker://web").unwrap();
        assert_eq!(
            argv(&docker, &RemoteOptions::default(), Tty::No, &remote),
            words(&["docker", "exec", "-i", "web", "sh", "-c", "id"])
        );
        let pod = Target::parse("k8s://prod/api-0/app").unwrap();
        assert_eq!(
            argv(&pod, &RemoteOptions::default(), Tty::Yes, &[]),
            words(&[
                "kubectl", "exec", "-it", "-n", "prod", "api-0", "-c", "app", "--", "sh"
            ])
        );
    }

    #[test]
    fn ssh_options_are_checked() {
        let with = |o: &str| RemoteOptions {
            ssh_options: vec![o.into()],
            ..Default::default()
        };
        assert!(with("ConnectTimeout=5").check().is_ok());
        for (bad, says) in [
            ("ConnectTimeout", "KEY=VALUE"),
            ("=5", "KEY=VALUE"),
            ("Bad Key=1", "KEY=VALUE"),
            ("stricthostkeychecking=no", "cannot be changed"),
            ("BatchMode=no", "cannot be changed"),
        ] {
            let e = with(bad).check().unwrap_err().to_string();
            assert!(e.contains(says), "{bad}: {e}");
        }
    }
}
