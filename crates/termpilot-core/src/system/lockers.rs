//! Which processes hold a file open.
//!
//! Linux: every `/proc/<pid>/fd/*` that names the same file (device and inode) as `path`.
//! Processes whose descriptors we may not read are skipped and counted, so a result says
//! whether it is complete. Windows: the Restart Manager (`RmGetList`), as director-shell
//! does. Elsewhere: a clear "not supported".

use std::path::Path;

use crate::error::{Error, Result};

/// One process holding the file.
#[derive(Debug, Clone)]
pub struct Locker {
    pub pid: u32,
    pub app_name: String,
    /// `process` on Linux; the Restart Manager's application type on Windows.
    pub app_type: String,
}

/// Who holds `path` open.
#[derive(Debug, Clone)]
pub struct Lockers {
    pub path: String,
    pub lockers: Vec<Locker>,
    /// Processes whose open files could not be read (another user's, without privilege).
    pub skipped_processes: usize,
    /// False when some processes were skipped: a holder may be among them.
    pub complete: bool,
}

/// Checks `path` is an absolute path to an existing file.
fn check(path: &Path) -> Result<()> {
    if !path.is_absolute() {
        return Err(Error::InvalidInput(format!(
            "`{}` is not absolute; pass the file's absolute path.",
            path.display()
        )));
    }
    match std::fs::metadata(path) {
        Ok(m) if m.is_dir() => Err(Error::InvalidInput(format!(
            "`{}` is a directory; pass a file.",
            path.display()
        ))),
        Ok(_) => Ok(()),
        Err(e) => Err(Error::io(
            format!("Cannot read `{}`", path.display()),
            "Pass the absolute path of an existing file.",
            e,
        )),
    }
}

/// The processes holding `path` open.
pub fn find(path: &Path) -> Result<Lockers> {
    check(path)?;
    imp::find(path)
}

#[cfg(target_os = "linux")]
mod imp {
    use std::os::unix::fs::MetadataExt;
    use std::path::Path;

    use super::{Locker, Lockers};
    use crate::error::{Error, Result};

    pub(super) fn find(path: &Path) -> Result<Lockers> {
        let target = std::fs::metadata(path).map_err(|e| {
            Error::io(
                format!("Cannot read `{}`", path.display()),
                "Pass an existing file.",
                e,
            )
        })?;
        let key = (target.dev(), target.ino());
        let mut lockers = Vec::new();
        let mut skipped = 0;
        let proc = std::fs::read_dir("/proc")
            .map_err(|e| Error::io("Cannot read /proc", "Is /proc mounted?", e))?;
        for entry in proc.flatten() {
            let Some(pid) = entry
                .file_name()
                .to_str()
                .and_then(|n| n.parse::<u32>().ok())
            else {
                continue;
            };
            let fds = match std::fs::read_dir(entry.path().join("fd")) {
                Ok(fds) => fds,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue, // gone
                Err(_) => {
                    skipped += 1;
                    continue;
                }
            };
            let holds = fds
                .flatten()
                .any(|fd| std::fs::metadata(fd.path()).is_ok_and(|m| (m.dev(), m.ino()) == key));
            if holds {
                lockers.push(Locker {
                    pid,
                    app_name: crate::platform::process_name(pid as i32).unwrap_or_default(),
                    app_type: "process".into(),
                });
            }
        }
        lockers.sort_by_key(|l| l.pid);
        Ok(Lockers {
            path: path.display().to_string(),
            lockers,
            skipped_processes: skipped,
            complete: skipped == 0,
        })
    }
}

/// Windows (not compiled here): the Restart Manager lists the processes using the file.
#[cfg(windows)]
mod imp {
    use std::os::windows::ffi::OsStrExt;
    use std::path::Path;

    use windows_sys::Win32::System::RestartManager::{
        CCH_RM_SESSION_KEY, RM_PROCESS_INFO, RmEndSession, RmGetList, RmRegisterResources,
        RmStartSession,
    };

    use super::{Locker, Lockers};
    use crate::error::{Error, Result};

    const ERROR_MORE_DATA: u32 = 234;

    fn app_type(t: i32) -> &'static str {
        match t {
            1 => "MainWindow",
            2 => "OtherWindow",
            3 => "Service",
            4 => "Explorer",
            5 => "Console",
            1000 => "Critical",
            _ => "Unknown",
        }
    }

    fn rm_err(what: &str, code: u32) -> Error {
        Error::Other(format!(
            "The Restart Manager failed to {what} (error {code}); try again, or check the path."
        ))
    }

    pub fn find(path: &Path) -> Result<Lockers> {
        let wide: Vec<u16> = path.as_os_str().encode_wide().chain(Some(0)).collect();
        let mut session: u32 = 0;
        let mut key = [0u16; CCH_RM_SESSION_KEY as usize + 1];
        // SAFETY: out-pointers to locals of the documented sizes.
        let rc = unsafe { RmStartSession(&mut session, 0, key.as_mut_ptr()) };
        if rc != 0 {
            return Err(rm_err("start a session", rc));
        }
        let result = (|| {
            let files = [wide.as_ptr()];
            // SAFETY: one NUL-terminated wide path; no applications or services.
            let rc = unsafe {
                RmRegisterResources(
                    session,
                    1,
                    files.as_ptr(),
                    0,
                    std::ptr::null(),
                    0,
                    std::ptr::null(),
                )
            };
            if rc != 0 {
                return Err(rm_err("register the file", rc));
            }
            let mut infos: Vec<RM_PROCESS_INFO> = Vec::new();
            loop {
                let mut needed: u32 = 0;
                let mut count: u32 = infos.len() as u32;
                let mut reasons: u32 = 0;
                // SAFETY: `infos` has room for `count` entries.
                let rc = unsafe {
                    RmGetList(
                        session,
                        &mut needed,
                        &mut count,
                        if infos.is_empty() {
                            std::ptr::null_mut()
                        } else {
                            infos.as_mut_ptr()
                        },
                        &mut reasons,
                    )
                };
                if rc == ERROR_MORE_DATA {
                    // SAFETY: RM_PROCESS_INFO is plain data; zeroed is a valid value.
                    infos = vec![unsafe { std::mem::zeroed() }; needed as usize];
                    continue;
                }
                if rc != 0 {
                    return Err(rm_err("list the processes", rc));
                }
                infos.truncate(count as usize);
                break;
            }
            Ok(infos
                .iter()
                .map(|i| {
                    let name = &i.strAppName;
                    let len = name.iter().position(|&c| c == 0).unwrap_or(name.len());
                    Locker {
                        pid: i.Process.dwProcessId,
                        app_name: String::from_utf16_lossy(&name[..len]),
                        app_type: app_type(i.ApplicationType).into(),
                    }
                })
                .collect::<Vec<_>>())
        })();
        // SAFETY: ends the session started above.
        unsafe { RmEndSession(session) };
        let lockers = result?;
        Ok(Lockers {
            path: path.display().to_string(),
            lockers,
            skipped_processes: 0,
            complete: true,
        })
    }
}

#[cfg(not(any(target_os = "linux", windows)))]
mod imp {
    use std::path::Path;

    use super::Lockers;
    use crate::error::{Error, Result};

    pub fn find(_path: &Path) -> Result<Lockers> {
        Err(crate::error::Fault::FileLockersUnsupported.into())
    }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    #[test]
    fn finds_this_process_holding_a_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("held");
        let _held = std::fs::File::create(&path).unwrap();
        let found = find(&path).unwrap();
        let me = std::process::id();
        assert!(found.lockers.iter().any(|l| l.pid == me), "{found:?}");
    }

    #[test]
    fn bad_paths_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        assert!(
            find(Path::new("relative"))
                .unwrap_err()
                .to_string()
                .contains("absolute")
        );
        assert!(
            find(dir.path())
                .unwrap_err()
                .to_string()
                .contains("directory")
        );
        assert!(find(&dir.path().join("missing")).is_err());
    }
}
