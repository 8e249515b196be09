//! Resolving the path an agent gave: absolute, or relative to a base directory.

use std::path::{Component, Path, PathBuf};

use crate::error::{Error, Fault, Result};

/// `path` made absolute against `base`; without a base a relative path is an error.
/// `.` and `..` are resolved lexically so the result names the file plainly.
pub fn resolve(path: &str, base: Option<&Path>) -> Result<PathBuf> {
    if path.trim().is_empty() {
        return Err(Error::InvalidInput(
            "`path` is empty; pass the file's path.".into(),
        ));
    }
    let given = Path::new(path);
    let full = if given.is_absolute() {
        given.to_path_buf()
    } else {
        match base {
            Some(base) => base.join(given),
            None => {
                return Err(Fault::RelativePath { path: path.into() }.into());
            }
        }
    };
    Ok(clean(&full))
}

/// Removes `.` and resolves `..` without touching the disk.
fn clean(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for part in path.components() {
        match part {
            Component::CurDir => {}
            Component::ParentDir => {
                if !out.pop() {
                    out.push(part);
                }
            }
            other => out.push(other),
        }
    }
    out
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    #[test]
    fn absolute_relative_and_errors() {
        assert_eq!(resolve("/a/./b/../c", None).unwrap(), PathBuf::from("/a/c"));
        assert_eq!(
            resolve("x/y.txt", Some(Path::new("/home/u"))).unwrap(),
            PathBuf::from("/home/u/x/y.txt")
        );
        let e = resolve("x.txt", None).unwrap_err().to_string();
        assert!(e.contains("relative path"), "{e}");
        assert!(resolve(" ", None).is_err());
    }
}
