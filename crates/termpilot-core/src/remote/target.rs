//! Where a call runs: the `host` strings an agent passes, parsed into a [`Target`].
//!
//! `user@box`, `box` (an alias of the user's ssh config) and `ssh://user@box:2222` go through
//! the system `ssh`; `docker://NAME` and `podman://NAME` through `docker exec` / `podman
//! exec`; `k8s://[NAMESPACE/]POD[/CONTAINER]` through `kubectl exec`. Every part is checked
//! against a conservative character set, so nothing parsed here can be taken for an option
//! of the transport (`-oProxyCommand=…`) or split by a shell.

use std::fmt;

use crate::error::{Error, Result};

/// A container engine reached with `<engine> exec`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Engine {
    Docker,
    Podman,
}

impl Engine {
    /// The engine's program (and URL scheme).
    pub fn program(self) -> &'static str {
        match self {
            Engine::Docker => "docker",
            Engine::Podman => "podman",
        }
    }
}

/// One machine, container or pod a command can run on.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Target {
    /// An SSH host: a name from the user's ssh config, a host name or an address.
    Ssh {
        user: Option<String>,
        host: String,
        port: Option<u16>,
    },
    /// A running container.
    Container { engine: Engine, name: String },
    /// A pod (and optionally one of its containers) in the current kubectl context.
    Pod {
        namespace: Option<String>,
        pod: String,
        container: Option<String>,
    },
}

const SCHEMES: &str = "ssh://, docker://, podman:// or k8s://";

impl Target {
    /// Parses a `host` parameter.
    pub fn parse(text: &str) -> Result<Target> {
        let text = text.trim();
        if text.is_empty() {
            return Err(invalid(
                "host is empty; pass user@box, an ssh config alias, ssh://user@box:port, docker://NAME, podman://NAME or k8s://NAMESPACE/POD.",
            ));
        }
        match text.split_once("://") {
            Some(("ssh", rest)) => parse_ssh(text, rest, true),
            Some(("docker", rest)) => container(text, Engine::Docker, rest),
            Some(("podman", rest)) => container(text, Engine::Podman, rest),
            Some(("k8s", rest)) => pod(text, rest),
            Some((scheme, _)) => Err(invalid(&format!(
                "host `{text}` has the unknown scheme `{scheme}://`; use {SCHEMES}, or user@box for SSH."
            ))),
            None => parse_ssh(text, text, false),
        }
    }

    /// Whether this target goes through SSH.
    pub fn is_ssh(&self) -> bool {
        matches!(self, Target::Ssh { .. })
    }
}

/// The canonical spelling (what results name the host by).
impl fmt::Display for Target {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Target::Ssh { user, host, port } => {
                let host = if host.contains(':') {
                    format!("[{host}]")
                } else {
                    host.clone()
                };
                let user = user.as_ref().map(|u| format!("{u}@")).unwrap_or_default();
                match port {
                    Some(p) => write!(f, "ssh://{user}{host}:{p}"),
                    None => write!(f, "{user}{host}"),
                }
            }
            Target::Container { engine, name } => write!(f, "{}://{name}", engine.program()),
            Target::Pod {
                namespace,
                pod,
                container,
            } => {
                write!(f, "k8s://")?;
                if let Some(ns) = namespace {
                    write!(f, "{ns}/")?;
                }
                write!(f, "{pod}")?;
                if let Some(c) = container {
                    write!(f, "/{c}")?;
                }
                Ok(())
            }
        }
    }
}

fn invalid(message: &str) -> Error {
    Error::InvalidInput(message.to_string())
}

/// A name part: letters, digits, `.`, `_`, `-`, not starting with `-`.
fn plain_name(part: &str) -> bool {
    !part.is_empty()
        && !part.starts_with('-')
        && part
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'))
}

fn parse_ssh(text: &str, rest: &str, url: bool) -> Result<Target> {
    let rest = if url {
        rest.strip_suffix('/').unwrap_or(rest)
    } else {
        rest
    };
    let (user, hostport) = match rest.rsplit_once('@') {
        Some((u, h)) => (Some(u), h),
        None => (None, rest),
    };
    if let Some(u) = user
        && !plain_name(u)
    {
        return Err(invalid(&format!(
            "host `{text}` has the user name `{u}`, which is not a plain name (letters, digits, . _ -); pass user@box."
        )));
    }
    let (host, port) = split_port(text, hostport, url)?;
    let ipv6 = host.contains(':');
    let host_ok = if ipv6 {
        host.chars().all(|c| c.is_ascii_hexdigit() || c == ':')
    } else {
        plain_name(host)
    };
    if !host_ok {
        return Err(invalid(&format!(
            "host `{text}` does not name a machine (letters, digits, . _ -, or an address); pass user@box, an ssh config alias or ssh://user@box:port."
        )));
    }
    Ok(Target::Ssh {
        user: user.map(String::from),
        host: host.to_string(),
        port,
    })
}

/// `box`, `box:2222`, `[::1]:2222` → host and port (ports only in the `ssh://` form).
fn split_port<'a>(text: &str, hostport: &'a str, url: bool) -> Result<(&'a str, Option<u16>)> {
    let (host, port) = if let Some(inner) = hostport.strip_prefix('[') {
        match inner.split_once(']') {
            Some((h, "")) => (h, None),
            Some((h, p)) if p.starts_with(':') => (h, Some(&p[1..])),
            _ => {
                return Err(invalid(&format!(
                    "host `{text}` has an unclosed `[`; write an IPv6 address as ssh://[::1]:22."
                )));
            }
        }
    } else if hostport.matches(':').count() == 1 {
        let (h, p) = hostport.split_once(':').expect("one colon");
        (h, Some(p))
    } else {
        (hostport, None)
    };
    let Some(port) = port else {
        return Ok((host, None));
    };
    if !url {
        return Err(invalid(&format!(
            "host `{text}` has a port, which only the URL form takes; write ssh://{hostport}."
        )));
    }
    match port.parse::<u16>() {
        Ok(p) if p > 0 => Ok((host, Some(p))),
        _ => Err(invalid(&format!(
            "host `{text}` has the port `{port}`, which is not a number from 1 to 65535."
        ))),
    }
}

fn container(text: &str, engine: Engine, name: &str) -> Result<Target> {
    if !plain_name(name) {
        return Err(invalid(&format!(
            "host `{text}` does not name a container (letters, digits, . _ -); pass {}://NAME with the name or id `{} ps` shows.",
            engine.program(),
            engine.program()
        )));
    }
    Ok(Target::Container {
        engine,
        name: name.to_string(),
    })
}

fn pod(text: &str, rest: &str) -> Result<Target> {
    let parts: Vec<&str> = rest.split('/').collect();
    if parts.len() > 3 || parts.iter().any(|p| !plain_name(p)) {
        return Err(invalid(&format!(
            "host `{text}` is not k8s://[NAMESPACE/]POD[/CONTAINER] (each part letters, digits, . _ -)."
        )));
    }
    let owned = |s: &str| s.to_string();
    let (namespace, pod, container) = match parts.as_slice() {
        [pod] => (None, owned(pod), None),
        [ns, pod] => (Some(owned(ns)), owned(pod), None),
        [ns, pod, c] => (Some(owned(ns)), owned(pod), Some(owned(c))),
        _ => unreachable!("checked above"),
    };
    Ok(Target::Pod {
        namespace,
        pod,
        container,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ssh(user: Option<&str>, host: &str, port: Option<u16>) -> Target {
        Target::Ssh {
            user: user.map(String::from),
            host: host.into(),
            port,
        }
    }

    #[test]
    fn ssh_forms() {
        assert_eq!(Target::parse("box").unwrap(), ssh(None, "box", None));
        assert_eq!(
            Target::parse("root@box.lan").unwrap(),
            ssh(Some("root"), "box.lan", None)
        );
        assert_eq!(
            Target::parse("ssh://me@box:2222").unwrap(),
            ssh(Some("me"), "box", Some(2222))
        );
        assert_eq!(
            Target::parse("ssh://[::1]:22").unwrap(),
            ssh(None, "::1", Some(22))
        );
        assert_eq!(
            Target::parse("ssh://me@box:2222").unwrap().to_string(),
            "ssh://me@box:2222"
        );
        assert_eq!(Target::parse(" me@box ").unwrap().to_string(), "me@box");
    }

    #[test]
    fn containers_and_pods() {
        assert_eq!(
            Target::parse("docker://web-1").unwrap(),
            Target::Container {
                engine: Engine::Docker,
                name: "web-1".into()
            }
        );
        assert_eq!(
            Target::parse("podman://db").unwrap().to_string(),
            "podman://db"
        );
        assert_eq!(
            Target::parse("k8s://ns/pod/c").unwrap(),
            Target::Pod {
                namespace: Some("ns".into()),
                pod: "pod".into(),
                container: Some("c".into())
            }
        );
        assert_eq!(Target::parse("k8s://pod").unwrap().to_string(), "k8s://pod");
    }

    #[test]
    fn bad_targets_are_one_sentence_errors() {
        for (bad, says) in [
            ("", "empty"),
            ("-oProxyCommand=x", "does not name a machine"),
            ("box:22", "only the URL form"),
            ("ssh://box:0", "not a number"),
            ("ssh://box:99999", "not a number"),
            ("ftp://box", "unknown scheme"),
            ("docker://", "does not name a container"),
            ("docker://a b", "does not name a container"),
            ("k8s://a/b/c/d", "k8s://[NAMESPACE/]POD"),
            ("k8s://a//c", "k8s://[NAMESPACE/]POD"),
            ("bad user@box", "not a plain name"),
            ("box;rm -rf /", "does not name a machine"),
            ("ssh://[::1", "unclosed"),
        ] {
            let e = Target::parse(bad).unwrap_err().to_string();
            assert!(e.contains(says), "{bad}: {e}");
        }
    }
}
