//! Windows program resolution: PATH and PATHEXT, and `.cmd`/`.bat` wrappers run through
//! cmd.exe with their arguments escaped (the rules of cross-spawn, which smart-terminal uses).
//!
//! The functions are plain string and path logic so they are unit-tested on every platform;
//! only [`windows_program`] touches the real environment, and only on Windows.

use std::path::{Path, PathBuf};

/// The extensions Windows tries when PATHEXT is unset.
pub const DEFAULT_PATHEXT: &str = ".COM;.EXE;.BAT;.CMD";

/// Finds `name` the way Windows does: a name with a directory part is checked where it is;
/// a bare name is looked for in each `;`-separated entry of `path_var`. When `name` has no
/// extension of `pathext`, each extension is tried in turn.
pub fn search(
    name: &str,
    path_var: &str,
    pathext: &str,
    is_file: impl Fn(&Path) -> bool,
) -> Option<PathBuf> {
    let exts: Vec<String> = pathext
        .split(';')
        .filter(|e| !e.is_empty())
        .map(|e| e.to_ascii_lowercase())
        .collect();
    let lower = name.to_ascii_lowercase();
    let has_ext = exts.iter().any(|e| lower.ends_with(e.as_str()));
    let candidates = |base: PathBuf| -> Option<PathBuf> {
        if has_ext && is_file(&base) {
            return Some(base);
        }
        exts.iter()
            .map(|e| PathBuf::from(format!("{}{e}", base.display())))
            .find(|p| is_file(p))
    };
    if name.contains(['/', '\\']) || Path::new(name).is_absolute() {
        return candidates(PathBuf::from(name));
    }
    path_var
        .split(';')
        .map(|d| d.trim().trim_matches('"'))
        .filter(|d| !d.is_empty())
        .find_map(|dir| candidates(Path::new(dir).join(name)))
}

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
    let path_var = std::env::var("PATH").unwrap_or_default();
    let pathext = std::env::var("PATHEXT").unwrap_or_else(|_| DEFAULT_PATHEXT.to_string());
    match search(name, &path_var, &pathext, |p| p.is_file()) {
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
