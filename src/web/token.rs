//! The bearer token every HTTP request needs: given (`TERMPILOT_TOKEN`, `--token-file`) or
//! made up at start (256 random bits), and written to a 0600 file for local clients to read
//! (`termpilot token` prints it).
//!
//! Never on the command line: every local user can read another's argv (`ps`), so
//! `--token VALUE` is refused. The token's file lives in `run/` of the private folder
//! (`termpilot_core::host::private`): a real directory of this user, mode 0700, checked
//! before each use, so no other user can swap or read it.

use std::io::Write;
use std::path::{Path, PathBuf};

/// Shortest token accepted from the environment or a file.
pub const MIN_TOKEN_LEN: usize = 16;
/// The environment variable a token may come from (removed from the process at start).
pub const ENV: &str = "TERMPILOT_TOKEN";
/// The sub-folder of the private folder that holds the token files.
const RUN: &str = "run";

/// `n` random bytes as lowercase hex.
pub fn random_hex(n: usize) -> anyhow::Result<String> {
    let mut bytes = vec![0u8; n];
    getrandom::fill(&mut bytes)
        .map_err(|e| anyhow::anyhow!("the system gave no random bytes ({e})"))?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

/// Checks a token given in `TERMPILOT_TOKEN` or a token file.
pub fn check_given(token: &str) -> anyhow::Result<()> {
    if token.len() < MIN_TOKEN_LEN || token.chars().any(|c| c.is_whitespace() || c.is_control()) {
        anyhow::bail!(
            "the token must be at least {MIN_TOKEN_LEN} characters without spaces; unset {ENV} and drop --token-file to have one made up"
        );
    }
    Ok(())
}

/// The refusal of `--token VALUE`: the value would be readable by every local user.
pub fn refuse_on_command_line() -> String {
    format!(
        "--token puts the token on the command line, where every local user can read it (ps); set {ENV} in the environment or pass --token-file PATH (a file only you can read) instead, or give neither to have one made up"
    )
}

/// Reads the token from `path`: a file of this user that no one else can read, holding the
/// token (surrounding white space ignored).
pub fn read_file(path: &Path) -> anyhow::Result<String> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        let meta = std::fs::metadata(path).map_err(|e| {
            anyhow::anyhow!("--token-file {}: could not read it ({e})", path.display())
        })?;
        let uid = termpilot_core::platform::uid();
        if meta.uid() != uid {
            anyhow::bail!(
                "--token-file {}: it belongs to uid {}, not to you (uid {uid}), so its owner can change your token; use a file of your own",
                path.display(),
                meta.uid()
            );
        }
        if meta.mode() & 0o077 != 0 {
            anyhow::bail!(
                "--token-file {}: other users may read it (mode {:o}); run chmod 600 on it first",
                path.display(),
                meta.mode() & 0o777
            );
        }
    }
    let text = std::fs::read_to_string(path)
        .map_err(|e| anyhow::anyhow!("--token-file {}: could not read it ({e})", path.display()))?;
    let token = text.trim().to_string();
    check_given(&token).map_err(|e| anyhow::anyhow!("--token-file {}: {e}", path.display()))?;
    Ok(token)
}

/// Compares two tokens in time that does not depend on where they differ.
pub fn same(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// The folder of the token files, created 0700 and checked (refused, with a sentence
/// naming it, when it is a symlink, another user's, or open to others).
fn runtime_dir() -> anyhow::Result<PathBuf> {
    termpilot_core::host::private_dir(RUN).map_err(|e| anyhow::anyhow!("{e}"))
}

fn file_name(port: u16) -> String {
    format!("http-token-{port}")
}

/// The token file of the server listening on `port`; removed when dropped.
pub struct TokenFile {
    path: PathBuf,
}

impl TokenFile {
    /// Writes `token` to `<private>/run/http-token-<port>`, readable by this user only.
    pub fn write(token: &str, port: u16) -> anyhow::Result<TokenFile> {
        let path = runtime_dir()?.join(file_name(port));
        let _ = std::fs::remove_file(&path);
        let mut options = std::fs::OpenOptions::new();
        options.write(true).create_new(true);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
        let mut file = options.open(&path).map_err(|e| {
            anyhow::anyhow!("could not write the token file {}: {e}", path.display())
        })?;
        file.write_all(token.as_bytes())?;
        file.write_all(b"\n")?;
        // No sandboxed process may read it (SPEC §8), before any child can start.
        termpilot_core::sandbox::deny_read_also(&path);
        Ok(TokenFile { path })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for TokenFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

/// A running server's token, as `termpilot token` finds it.
pub struct Found {
    pub port: u16,
    /// Whether something answers on the loopback port (a server killed outright leaves
    /// its file behind).
    pub listening: bool,
    pub path: PathBuf,
    pub token: String,
}

/// The port of `--http`'s default address (`mcp::http::DEFAULT_ADDR`), where [`find`] looks
/// first.
pub const DEFAULT_PORT: u16 = 8765;

/// The token of the server on `port`; without a port, 8765's, else the only one there is.
pub fn find(port: Option<u16>) -> anyhow::Result<Found> {
    let dir = runtime_dir()?;
    let port = match port {
        Some(port) => port,
        None => {
            let default = DEFAULT_PORT;
            let mut ports: Vec<u16> = std::fs::read_dir(&dir)
                .map(|entries| {
                    entries
                        .filter_map(|e| e.ok())
                        .filter_map(|e| {
                            e.file_name()
                                .to_str()?
                                .strip_prefix("http-token-")?
                                .parse()
                                .ok()
                        })
                        .collect()
                })
                .unwrap_or_default();
            ports.sort_unstable();
            if ports.is_empty() || ports.contains(&default) {
                default
            } else if let [only] = ports[..] {
                only
            } else {
                let list: Vec<String> = ports.iter().map(u16::to_string).collect();
                anyhow::bail!(
                    "servers of yours serve HTTP on ports {}; name one with --port N",
                    list.join(", ")
                );
            }
        }
    };
    let path = dir.join(file_name(port));
    let text = std::fs::read_to_string(&path).map_err(|e| {
        if e.kind() == std::io::ErrorKind::NotFound {
            anyhow::anyhow!(
                "no termpilot server of yours serves HTTP on port {port} (there is no {}); start one with `termpilot --http` or `termpilot --web`, or name its port with --port N",
                path.display()
            )
        } else {
            anyhow::anyhow!("could not read the token file {}: {e}", path.display())
        }
    })?;
    let listening = [
        std::net::SocketAddr::from(([127, 0, 0, 1], port)),
        std::net::SocketAddr::from((std::net::Ipv6Addr::LOCALHOST, port)),
    ]
    .iter()
    .any(|addr| {
        std::net::TcpStream::connect_timeout(addr, std::time::Duration::from_secs(2)).is_ok()
    });
    Ok(Found {
        port,
        listening,
        path,
        token: text.trim().to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_compare_whole() {
        assert!(same("abcdef", "abcdef"));
        assert!(!same("abcdef", "abcdeg"));
        assert!(!same("abc", "abcdef"));
    }

    #[test]
    fn random_tokens_are_256_bits_of_hex() {
        let t = random_hex(32).unwrap();
        assert_eq!(t.len(), 64);
        assert!(t.chars().all(|c| c.is_ascii_hexdigit()));
        assert_ne!(t, random_hex(32).unwrap());
    }

    #[test]
    fn short_tokens_are_refused() {
        assert!(check_given("short").is_err());
        assert!(check_given("with a space in the middle").is_err());
        assert!(check_given("a-long-enough-token").is_ok());
    }
}
