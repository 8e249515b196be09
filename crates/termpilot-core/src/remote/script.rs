//! POSIX shell text for targets: quoting, and the script a one-shot remote run executes.
//!
//! A remote run is always `sh -c SCRIPT` on the target, whatever the transport, so a
//! command behaves the same over ssh (whose remote login shell may be fish or tcsh), in a
//! container and in a pod: the working directory, the environment and then the command.

use crate::error::{Error, Result};
pub(crate) use crate::exec::shell::posix_quote as quote;

/// A shell variable name: a letter or `_`, then letters, digits, `_`.
pub(crate) fn is_name(key: &str) -> bool {
    key.chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// What runs on the target, before it is wrapped in a transport.
#[derive(Debug, Clone, Default)]
pub struct RemoteCommand {
    /// The program, or with `shell` a command line for `sh -c`.
    pub cmd: String,
    pub args: Vec<String>,
    /// `cmd` is a shell command line, each of `args` one word appended to it (quoted).
    pub shell: bool,
    /// The directory on the target; `None` = the login directory.
    pub cwd: Option<String>,
    pub env: Vec<(String, String)>,
}

impl RemoteCommand {
    /// The argv run on the target: `sh -c SCRIPT`.
    pub fn argv(&self) -> Result<Vec<String>> {
        let mut lines = Vec::new();
        if let Some(dir) = &self.cwd {
            lines.push(format!("cd -- {} || exit 1", quote(dir)));
        }
        for (key, value) in &self.env {
            if !is_name(key) {
                return Err(Error::InvalidInput(format!(
                    "env name `{key}` is not a shell variable name (letters, digits, _); rename it."
                )));
            }
            lines.push(format!("export {}", quote(&format!("{key}={value}"))));
        }
        if self.shell {
            let mut line = self.cmd.clone();
            for a in &self.args {
                line.push(' ');
                line.push_str(&quote(a));
            }
            lines.push(line);
        } else {
            let words: Vec<String> = std::iter::once(&self.cmd)
                .chain(&self.args)
                .map(|w| quote(w))
                .collect();
            lines.push(format!("exec {}", words.join(" ")));
        }
        Ok(vec!["sh".into(), "-c".into(), lines.join("\n")])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoting() {
        assert_eq!(quote("plain/path-1.txt"), "plain/path-1.txt");
        assert_eq!(quote(""), "''");
        assert_eq!(quote("a b"), "'a b'");
        assert_eq!(quote("it's"), r"'it'\''s'");
        assert_eq!(quote("$HOME;rm"), "'$HOME;rm'");
    }

    #[test]
    fn scripts() {
        let direct = RemoteCommand {
            cmd: "printf".into(),
            args: vec!["%s\n".into(), "a b".into()],
            cwd: Some("/tmp".into()),
            env: vec![("X".into(), "1 2".into())],
            ..Default::default()
        };
        assert_eq!(
            direct.argv().unwrap()[2],
            "cd -- /tmp || exit 1\nexport 'X=1 2'\nexec printf '%s\n' 'a b'"
        );
        let line = RemoteCommand {
            cmd: "echo hi | tr a-z A-Z".into(),
            shell: true,
            ..Default::default()
        };
        assert_eq!(line.argv().unwrap()[2], "echo hi | tr a-z A-Z");
        let with_args = RemoteCommand {
            cmd: "printf '%s\\n'".into(),
            args: vec!["a b".into(), "$HOME".into()],
            shell: true,
            ..Default::default()
        };
        assert_eq!(with_args.argv().unwrap()[2], "printf '%s\\n' 'a b' '$HOME'");
        let bad = RemoteCommand {
            cmd: "true".into(),
            env: vec![("A-B".into(), "1".into())],
            ..Default::default()
        };
        assert!(bad.argv().unwrap_err().to_string().contains("env name"));
    }
}
