//! The one PATH lookup: where a program named by the caller is, as the system would find it.
//!
//! A name with a directory part is checked where it is; a bare name is looked for in each
//! entry of `PATH` in turn. On Unix a candidate must be an executable file; on Windows each
//! extension of `PATHEXT` is tried ([`search`], plain string logic, tested everywhere).
//! Sessions (their shell), one-shot runs (a program on Windows, PowerShell) and the shell
//! check of jobs all ask [`find`].

use std::path::{Path, PathBuf};

/// The extensions Windows tries when PATHEXT is unset.
pub const DEFAULT_PATHEXT: &str = ".COM;.EXE;.BAT;.CMD";

/// Finds `name` (a path, or a program name searched on PATH).
#[cfg(not(windows))]
pub(crate) fn find(name: &str) -> Option<PathBuf> {
    let candidate = Path::new(name);
    if candidate.components().count() > 1 || candidate.is_absolute() {
        return is_executable(candidate).then(|| candidate.to_path_buf());
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(name))
        .find(|full| is_executable(full))
}

/// Finds `name` (a path, or a program name searched on PATH, PATHEXT honoured).
#[cfg(windows)]
pub(crate) fn find(name: &str) -> Option<PathBuf> {
    let path_var = std::env::var("PATH").unwrap_or_default();
    let pathext = std::env::var("PATHEXT").unwrap_or_else(|_| DEFAULT_PATHEXT.to_string());
    search(name, &path_var, &pathext, |p| p.is_file())
}

#[cfg(not(windows))]
fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    path.metadata()
        .map(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        .unwrap_or(false)
}

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

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    #[test]
    fn a_bare_name_is_found_on_path_and_a_path_where_it_is() {
        let sh = find("sh").expect("sh is on PATH");
        assert!(sh.is_absolute() && sh.ends_with("sh"), "{}", sh.display());
        assert_eq!(find(&sh.display().to_string()), Some(sh));
        assert_eq!(find("termpilot-no-such-program-anywhere"), None);
        assert_eq!(find("/etc/passwd"), None, "not executable");
    }
}
