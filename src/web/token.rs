//! The bearer token every HTTP request needs: given (`--token`, `TERMPILOT_TOKEN`) or made
//! up at start (256 random bits), and then written to a 0600 file for local clients to read.

use std::io::Write;
use std::path::{Path, PathBuf};

/// Shortest token accepted from the command line.
pub const MIN_TOKEN_LEN: usize = 16;

/// `n` random bytes as lowercase hex.
pub fn random_hex(n: usize) -> anyhow::Result<String> {
    let mut bytes = vec![0u8; n];
    getrandom::fill(&mut bytes)
        .map_err(|e| anyhow::anyhow!("the system gave no random bytes ({e})"))?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

/// Checks a token given on the command line.
pub fn check_given(token: &str) -> anyhow::Result<()> {
    if token.len() < MIN_TOKEN_LEN || token.chars().any(|c| c.is_whitespace() || c.is_control()) {
        anyhow::bail!(
            "the token must be at least {MIN_TOKEN_LEN} characters without spaces; omit --token to have one made up"
        );
    }
    Ok(())
}

/// Compares two tokens in time that does not depend on where they differ.
pub fn same(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// The folder for the token file: `$XDG_RUNTIME_DIR/termpilot` when that names a folder,
/// else the private `<temp>/termpilot-<uid>/run`.
fn runtime_dir() -> anyhow::Result<PathBuf> {
    if let Some(runtime) = std::env::var_os("XDG_RUNTIME_DIR").map(PathBuf::from)
        && runtime.is_absolute()
        && runtime.is_dir()
    {
        let dir = runtime.join("termpilot");
        let mut builder = std::fs::DirBuilder::new();
        builder.recursive(true);
        #[cfg(unix)]
        std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
        builder.create(&dir)?;
        return Ok(dir);
    }
    Ok(termpilot_core::exec::spill::private_dir("run")?)
}

/// The token file of the server listening on `port`; removed when dropped.
pub struct TokenFile {
    path: PathBuf,
}

impl TokenFile {
    /// Writes `token` to `<runtime dir>/http-token-<port>`, readable by this user only.
    pub fn write(token: &str, port: u16) -> anyhow::Result<TokenFile> {
        let path = runtime_dir()?.join(format!("http-token-{port}"));
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
