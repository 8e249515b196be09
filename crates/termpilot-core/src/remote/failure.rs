//! Telling a failed link from a failed command, and saying what to do about it.
//!
//! `ssh` exits 255 when it could not connect or log in (and a remote command may exit 255
//! too), so a link failure is recognised by exit status *and* by the client's own message
//! on stderr: unknown or changed host keys, refused keys, names that do not resolve, hosts
//! that do not answer. Container engines and kubectl are recognised by their messages.

use super::target::Target;

/// Why a target could not be used.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LinkFailure {
    /// The host key is not in known_hosts.
    UnknownHostKey,
    /// The host key differs from the one recorded.
    ChangedHostKey,
    /// The server refused every key (or wanted a password).
    LoginRefused,
    /// The host, container or pod could not be reached; the transport's own words.
    Unreachable(String),
}

impl LinkFailure {
    /// A short tag for fleet results.
    pub fn kind(&self) -> &'static str {
        match self {
            LinkFailure::UnknownHostKey => "unknownHostKey",
            LinkFailure::ChangedHostKey => "changedHostKey",
            LinkFailure::LoginRefused => "loginRefused",
            LinkFailure::Unreachable(_) => "unreachable",
        }
    }

    /// One sentence for the agent: what happened on which target, and what to do.
    pub fn sentence(&self, target: &Target) -> String {
        let keyscan = match target {
            Target::Ssh {
                host,
                port: Some(p),
                ..
            } => format!("ssh-keyscan -p {p} {host} >> ~/.ssh/known_hosts"),
            Target::Ssh { host, .. } => format!("ssh-keyscan {host} >> ~/.ssh/known_hosts"),
            _ => String::new(),
        };
        match self {
            LinkFailure::UnknownHostKey => format!(
                "The host key of `{target}` is not in known_hosts and termpilot never accepts a key unchecked; verify its fingerprint and add it (`{keyscan}`, or connect once with `ssh {target}`), then retry."
            ),
            LinkFailure::ChangedHostKey => format!(
                "The host key of `{target}` has CHANGED since it was recorded in known_hosts (a reinstalled host, or someone in the middle), so termpilot refused to connect; confirm the new key with the host's owner, remove the old one (`ssh-keygen -R`), add the new one and retry."
            ),
            LinkFailure::LoginRefused => format!(
                "`{target}` refused the login (permission denied; termpilot never answers password prompts); load the right key into your agent (`ssh-add`) or set IdentityFile and User for this host in ~/.ssh/config, then retry."
            ),
            LinkFailure::Unreachable(why) => match target {
                Target::Ssh { .. } => format!(
                    "`{target}` could not be reached ({why}); check the host name, your network and that sshd runs there."
                ),
                Target::Container { engine, .. } => format!(
                    "`{target}` could not be reached ({why}); check that the container runs (`{} ps`).",
                    engine.program()
                ),
                Target::Pod { .. } => format!(
                    "`{target}` could not be reached ({why}); check the pod, namespace and kubectl context (`kubectl get pods`)."
                ),
            },
        }
    }
}

/// The link failure an exit status and stderr show, if they show one.
pub(crate) fn classify(
    target: &Target,
    exit_code: Option<i32>,
    stderr: &str,
) -> Option<LinkFailure> {
    match target {
        Target::Ssh { .. } => classify_ssh(exit_code, stderr),
        Target::Container { .. } => classify_engine(exit_code, stderr),
        Target::Pod { .. } => classify_kubectl(exit_code, stderr),
    }
}

fn classify_ssh(exit_code: Option<i32>, stderr: &str) -> Option<LinkFailure> {
    if exit_code != Some(255) {
        return None;
    }
    if stderr.contains("REMOTE HOST IDENTIFICATION HAS CHANGED")
        || stderr.contains("Host key for") && stderr.contains("has changed")
    {
        return Some(LinkFailure::ChangedHostKey);
    }
    if stderr.contains("Host key verification failed") {
        return Some(LinkFailure::UnknownHostKey);
    }
    if stderr.contains("Permission denied") {
        return Some(LinkFailure::LoginRefused);
    }
    const UNREACHABLE: [&str; 8] = [
        "Could not resolve hostname",
        "Connection refused",
        "Connection timed out",
        "No route to host",
        "Network is unreachable",
        "Connection closed by",
        "Connection reset",
        "kex_exchange_identification",
    ];
    UNREACHABLE
        .iter()
        .any(|m| stderr.contains(m))
        .then(|| LinkFailure::Unreachable(first_line(stderr)))
}

fn classify_engine(exit_code: Option<i32>, stderr: &str) -> Option<LinkFailure> {
    if exit_code == Some(0) {
        return None;
    }
    const MARKS: [&str; 7] = [
        "No such container",
        "no such container",
        "is not running",
        // podman, for a stopped (or paused) container.
        "can only create exec sessions on running containers",
        "container state improper",
        "Cannot connect to the Docker daemon",
        "Error response from daemon",
    ];
    MARKS
        .iter()
        .any(|m| stderr.contains(m))
        .then(|| LinkFailure::Unreachable(first_line(stderr)))
}

fn classify_kubectl(exit_code: Option<i32>, stderr: &str) -> Option<LinkFailure> {
    if exit_code == Some(0) {
        return None;
    }
    const MARKS: [&str; 5] = [
        "cannot exec into a container in a completed pod",
        "Error from server",
        "The connection to the server",
        "unable to upgrade connection",
        "error: unable to",
    ];
    MARKS
        .iter()
        .any(|m| stderr.contains(m))
        .then(|| LinkFailure::Unreachable(first_line(stderr)))
}

/// The transport's message, one line, without a trailing full stop.
fn first_line(stderr: &str) -> String {
    let line = stderr
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or("no message");
    let line: String = line.chars().take(200).collect();
    line.trim_end_matches('.').to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ssh_messages() {
        let t = Target::parse("box").unwrap();
        let unknown = "No ED25519 host key is known for [127.0.0.1]:2222 and you have requested strict checking.\r\nHost key verification failed.\r\n";
        assert_eq!(
            classify(&t, Some(255), unknown),
            Some(LinkFailure::UnknownHostKey)
        );
        let changed = "@@@@@\r\n@    WARNING: REMOTE HOST IDENTIFICATION HAS CHANGED!     @\r\nHost key verification failed.\r\n";
        assert_eq!(
            classify(&t, Some(255), changed),
            Some(LinkFailure::ChangedHostKey)
        );
        assert_eq!(
            classify(
                &t,
                Some(255),
                "root@127.0.0.1: Permission denied (publickey).\r\n"
            ),
            Some(LinkFailure::LoginRefused)
        );
        assert_eq!(
            classify(
                &t,
                Some(255),
                "ssh: connect to host 127.0.0.1 port 1: Connection refused\r\n"
            ),
            Some(LinkFailure::Unreachable(
                "ssh: connect to host 127.0.0.1 port 1: Connection refused".into()
            ))
        );
        // A remote command exiting 255, or saying these words with another status, is not
        // a link failure.
        assert_eq!(classify(&t, Some(255), "my own error\n"), None);
        assert_eq!(classify(&t, Some(1), "Permission denied\n"), None);
        let s = LinkFailure::UnknownHostKey.sentence(&Target::parse("ssh://h:2222").unwrap());
        assert!(s.contains("ssh-keyscan -p 2222 h"), "{s}");
    }

    #[test]
    fn engine_and_kubectl_messages() {
        let d = Target::parse("docker://x").unwrap();
        assert!(matches!(
            classify(
                &d,
                Some(1),
                "Error response from daemon: No such container: x\n"
            ),
            Some(LinkFailure::Unreachable(_))
        ));
        assert_eq!(classify(&d, Some(1), "grep: nothing\n"), None);
        let stopped = "Error: can only create exec sessions on running containers: container state improper\n";
        assert!(matches!(
            classify(&Target::parse("podman://x").unwrap(), Some(255), stopped),
            Some(LinkFailure::Unreachable(_))
        ));
        let k = Target::parse("k8s://p").unwrap();
        assert!(matches!(
            classify(
                &k,
                Some(1),
                "Error from server (NotFound): pods \"p\" not found\n"
            ),
            Some(LinkFailure::Unreachable(_))
        ));
    }
}
