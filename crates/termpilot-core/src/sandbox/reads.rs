//! termpilot's own reads for the agent under the sandbox (`successFile`, `grep_files`),
//! race-free: the file is opened first, then the file actually opened is judged by the name
//! the kernel gives its descriptor (`/proc/self/fd/<n>`), so a link swapped in after a check
//! cannot make the server read a deny-read path.

use std::fs::File;
use std::io;
use std::path::Path;

use super::paths;
use super::policy::Policy;

/// `path` opened for reading (without blocking on a FIFO, never becoming the controlling
/// terminal), refused with `PermissionDenied` when what was opened lies in a deny-read path.
pub(super) fn open(policy: Option<&Policy>, path: &Path) -> io::Result<File> {
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    std::os::unix::fs::OpenOptionsExt::custom_flags(
        &mut options,
        libc::O_NONBLOCK | libc::O_NOCTTY,
    );
    let file = options.open(path)?;
    let Some(policy) = policy.filter(|p| p.active()) else {
        return Ok(file);
    };
    let fd = std::os::fd::AsRawFd::as_raw_fd(&file);
    let real = std::fs::read_link(format!("/proc/self/fd/{fd}"))?;
    if paths::check_read(policy, &real).is_err() {
        return Err(io::Error::new(
            io::ErrorKind::PermissionDenied,
            format!(
                "the sandbox denies reading `{}` (it is `{}`, in a deny-read path)",
                path.display(),
                real.display()
            ),
        ));
    }
    Ok(file)
}
