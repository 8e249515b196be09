//! The per-user private folder: where shell-integration scripts and spill files live.
//!
//! `$XDG_RUNTIME_DIR/termpilot` when `$XDG_RUNTIME_DIR` is a real folder of this user that no
//! one else can enter; otherwise `<temp>/termpilot-<uid>`. termpilot creates the folder (and
//! every sub-folder) 0700 itself and, before each use, checks with `lstat` that it is a real
//! directory — not a symlink — owned by this uid with no permission bits for group or
//! others. One that fails is refused with an error naming it: another local user may have
//! made it to swap in their own scripts. Nothing in it is ever read before that check.

use std::path::{Path, PathBuf};

use crate::error::{Error, Result};

/// The private folder itself, created and checked.
pub(crate) fn base() -> Result<PathBuf> {
    let dir = location();
    make_private(&dir)?;
    Ok(dir)
}

/// Where the private folder is (nothing created or checked).
pub(crate) fn location() -> PathBuf {
    #[cfg(unix)]
    {
        if let Some(runtime) = safe_runtime_dir() {
            return runtime.join("termpilot");
        }
        std::env::temp_dir().join(format!("termpilot-{}", crate::platform::uid()))
    }
    #[cfg(windows)]
    {
        let user = std::env::var("USERNAME").unwrap_or_else(|_| "user".into());
        std::env::temp_dir().join(format!("termpilot-{user}"))
    }
}

/// `<base>/<name>` (`name` may hold `/`), each folder created and checked like the base.
pub fn dir(name: &str) -> Result<PathBuf> {
    let mut dir = base()?;
    for part in name.split('/').filter(|p| !p.is_empty()) {
        dir.push(part);
        make_private(&dir)?;
    }
    Ok(dir)
}

/// `$XDG_RUNTIME_DIR` when it is absolute, a real folder, ours, and no one else can write
/// in it (so no one else can replace the `termpilot` folder made in it).
#[cfg(unix)]
fn safe_runtime_dir() -> Option<PathBuf> {
    let dir = PathBuf::from(std::env::var_os("XDG_RUNTIME_DIR")?);
    if !dir.is_absolute() {
        return None;
    }
    match check_mode(&dir, 0o022) {
        Ok(()) => Some(dir),
        Err(why) => {
            static ONCE: std::sync::Once = std::sync::Once::new();
            ONCE.call_once(|| tracing::warn!("not using XDG_RUNTIME_DIR: {why}"));
            None
        }
    }
}

/// Creates `dir` 0700 unless it exists, then checks it.
fn make_private(dir: &Path) -> Result<()> {
    let mut builder = std::fs::DirBuilder::new();
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    match builder.create(dir) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
        Err(e) => {
            return Err(Error::io(
                format!("Could not create the private folder {}", dir.display()),
                "Check that the temp directory (TMPDIR) is writable",
                e,
            ));
        }
    }
    check(dir).map_err(Error::Other)
}

/// Why `dir` is not private to this user, if it is not (`lstat`: a symlink is refused).
#[cfg(unix)]
fn check(dir: &Path) -> std::result::Result<(), String> {
    check_mode(dir, 0o077)
}

/// Why `dir` is not a real folder of this user without any of the `forbidden` mode bits.
#[cfg(unix)]
fn check_mode(dir: &Path, forbidden: u32) -> std::result::Result<(), String> {
    use std::os::unix::fs::MetadataExt;
    let meta = std::fs::symlink_metadata(dir).map_err(|e| {
        format!(
            "Could not inspect the private folder {}: {e}.",
            dir.display()
        )
    })?;
    let uid = crate::platform::uid();
    let advice = "another user may have made it to take over termpilot's files: remove it, or point TMPDIR at a folder of your own";
    if meta.file_type().is_symlink() || !meta.is_dir() {
        return Err(format!(
            "The private folder {} is not a real directory (a symlink or a file); {advice}.",
            dir.display()
        ));
    }
    if meta.uid() != uid {
        return Err(format!(
            "The private folder {} belongs to uid {}, not to this user (uid {uid}); {advice}.",
            dir.display(),
            meta.uid()
        ));
    }
    if meta.mode() & forbidden != 0 {
        return Err(format!(
            "The private folder {} is open to other users (mode {:o}, must be 700); {advice}.",
            dir.display(),
            meta.mode() & 0o7777
        ));
    }
    Ok(())
}

#[cfg(windows)]
fn check(dir: &Path) -> std::result::Result<(), String> {
    match std::fs::symlink_metadata(dir) {
        Ok(m) if m.is_dir() && !m.file_type().is_symlink() => Ok(()),
        _ => Err(format!(
            "The private folder {} is not a real directory; remove it and try again.",
            dir.display()
        )),
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn open_symlinked_and_foreign_folders_are_refused() {
        let tmp = tempfile::tempdir().unwrap();
        let good = tmp.path().join("good");
        make_private(&good).unwrap();
        assert_eq!(
            std::fs::metadata(&good).unwrap().permissions().mode() & 0o777,
            0o700
        );
        make_private(&good).unwrap();
        let open = tmp.path().join("open");
        std::fs::create_dir(&open).unwrap();
        std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o777)).unwrap();
        let e = make_private(&open).unwrap_err().to_string();
        assert!(e.contains("open to other users"), "{e}");
        let link = tmp.path().join("link");
        std::os::unix::fs::symlink(&good, &link).unwrap();
        let e = make_private(&link).unwrap_err().to_string();
        assert!(e.contains("not a real directory"), "{e}");
    }
}
