//! Windows program resolution: the program found by the one PATH lookup
//! ([`crate::host::path::find`], PATHEXT honoured), and `.cmd`/`.bat` wrappers run through
//! cmd.exe with their arguments escaped (the rules of cross-spawn, which smart-terminal uses).
//!
//! The functions are plain string and path logic so they are unit-tested on every platform;
//! only [`windows_program`] touches the real environment, and only on Windows.

use std::path::Path;

pub use crate::host::path::{DEFAULT_PATHEXT, search};

/// True for batch files, which only cmd.exe can run.
pub fn needs_cmd(program: &Path) -> bool {
    program
        .extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| e.eq_ignore_ascii_case("cmd") || e.eq_ignore_ascii_case("bat"))
}

const CMD_META: &[char] = &[
    '(', ')', '[', ']', '%', '!', '^', '"', '`', '<', '>', '&', '|', ';', ',', ' ', '*', '?',
];

fn caret_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len() * 2);
    for c in s.chars() {
        if CMD_META.contains(&c) {
            out.push('^');
        }
        out.push(c);
    }
    out
}

/// One argument quoted for the C runtime and escaped for cmd.exe.
pub fn escape_argument(arg: &str) -> String {
    let mut quoted = String::with_capacity(arg.len() + 2);
    let mut backslashes = 0;
    for c in arg.chars() {
        match c {
            '\\' => backslashes += 1,
            '"' => {
                quoted.push_str(&"\\".repeat(backslashes * 2 + 1));
                quoted.push('"');
                backslashes = 0;
            }
            _ => {
                quoted.push_str(&"\\".repeat(backslashes));
                quoted.push(c);
                backslashes = 0;
            }
        }
    }
    quoted.push_str(&"\\".repeat(backslashes * 2));
    caret_escape(&format!("\"{quoted}\""))
}

/// The arguments of `cmd.exe` that run batch file `program` with `args` untouched:
/// `/d /s /c "<program> <args…>"`, to be passed verbatim (not re-quoted).
pub fn cmd_wrapper_args(program: &Path, args: &[String]) -> Vec<String> {
    let mut line = caret_escape(&program.display().to_string());
    for a in args {
        line.push(' ');
        line.push_str(&escape_argument(a));
    }
    vec!["/d".into(), "/s".into(), "/c".into(), format!("\"{line}\"")]
}

/// How a program named by the caller is started on Windows: its resolved path, or cmd.exe
/// around a batch file. Returns `(program, args, verbatim)`.
#[cfg(windows)]
pub fn windows_program(name: &str, args: &[String]) -> (String, Vec<String>, bool) {
    match crate::host::path::find(name) {
        Some(found) if needs_cmd(&found) => {
            let comspec = std::env::var("ComSpec").unwrap_or_else(|_| "cmd.exe".into());
            (comspec, cmd_wrapper_args(&found, args), true)
        }
        Some(found) => (found.display().to_string(), args.to_vec(), false),
        None => (name.to_string(), args.to_vec(), false),
    }
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use super::*;

    fn fake(files: &'static [&'static str]) -> impl Fn(&Path) -> bool {
        move |p: &Path| files.iter().any(|f| Path::new(f) == p)
    }

    #[test]
    fn bare_names_try_each_dir_and_extension_in_order() {
        let files = fake(&["/b/npm.cmd", "/c/npm.exe", "/c/git.exe"]);
        let found = search("npm", "/a;/b;/c", DEFAULT_PATHEXT, &files);
        assert_eq!(found, Some(PathBuf::from("/b/npm.cmd")));
        assert_eq!(
            search("git", "/a;\"/c\"", DEFAULT_PATHEXT, &files),
            Some(PathBuf::from("/c/git.exe"))
        );
        assert_eq!(search("nope", "/a;/b", DEFAULT_PATHEXT, &files), None);
    }

    #[test]
    fn names_with_an_extension_or_a_directory() {
        let files = fake(&["/c/git.exe", "/tools/x.bat"]);
        assert_eq!(
            search("git.exe", "/c", DEFAULT_PATHEXT, &files),
            Some(PathBuf::from("/c/git.exe"))
        );
        assert_eq!(
            search("/tools/x", "", DEFAULT_PATHEXT, &files),
            Some(PathBuf::from("/tools/x.bat"))
        );
    }

    #[test]
    fn batch_files_go_through_cmd_with_escaped_arguments() {
        assert!(needs_cmd(Path::new("C:/x/npm.CMD")) && !needs_cmd(Path::new("a.exe")));
        let args = cmd_wrapper_args(
            Path::new("C:/Program Files/n/npm.cmd"),
            &[
                "a b".into(),
                "x&y".into(),
                "say \"hi\"".into(),
                "end\\".into(),
            ],
        );
        assert_eq!(&args[..3], &["/d", "/s", "/c"]);
        assert_eq!(
            args[3],
            r#""C:/Program^ Files/n/npm.cmd ^"a^ b^" ^"x^&y^" ^"say^ \^"hi\^"^" ^"end\\^"""#
        );
    }
}
