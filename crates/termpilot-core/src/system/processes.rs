//! The process list (sysinfo, every platform): pid, name, path, start time, memory.

use std::time::{Duration, UNIX_EPOCH};

use sysinfo::{ProcessRefreshKind, ProcessesToUpdate, System, UpdateKind};

use crate::error::{Error, Result};
use crate::jobs::store::rfc3339;

/// Default and maximum `max_results`.
pub const DEFAULT_MAX_RESULTS: usize = 100;
pub const MAX_RESULTS: usize = 1000;

/// One process.
#[derive(Debug, Clone)]
pub struct ProcessInfo {
    pub pid: u32,
    pub name: String,
    /// The executable, when it can be read.
    pub path: Option<String>,
    /// RFC 3339, UTC.
    pub started_at: Option<String>,
    /// Resident memory.
    pub working_set_bytes: Option<u64>,
}

/// Matching processes, by pid.
#[derive(Debug, Clone)]
pub struct ProcessList {
    pub processes: Vec<ProcessInfo>,
    /// How many processes matched (more than returned when truncated).
    pub matched: usize,
    pub truncated: bool,
}

/// Processes whose name or executable path contains `filter` (case-insensitive), at most
/// `max` of them, by pid.
pub fn list(filter: Option<&str>, max: usize) -> Result<ProcessList> {
    let mut sys = System::new()
        .map_err(|e| Error::Other(format!("The process list cannot be read ({e:?}).")))?;
    sys.refresh_processes_specifics(
        ProcessesToUpdate::All,
        true,
        ProcessRefreshKind::nothing()
            .with_memory()
            .with_exe(UpdateKind::OnlyIfNotSet),
    );
    let needle = filter.map(str::to_lowercase).filter(|f| !f.is_empty());
    let mut found: Vec<ProcessInfo> = sys
        .processes()
        .values()
        .filter(|p| p.thread_kind().is_none())
        .filter_map(|p| {
            let name = p.name().to_string_lossy().into_owned();
            let path = p.exe().map(|e| e.display().to_string());
            if let Some(needle) = &needle {
                let hit = name.to_lowercase().contains(needle)
                    || path
                        .as_ref()
                        .is_some_and(|x| x.to_lowercase().contains(needle));
                if !hit {
                    return None;
                }
            }
            let start = p.start_time();
            Some(ProcessInfo {
                pid: p.pid().as_u32(),
                name,
                path,
                started_at: (start > 0).then(|| rfc3339(UNIX_EPOCH + Duration::from_secs(start))),
                working_set_bytes: Some(p.memory()),
            })
        })
        .collect();
    found.sort_by_key(|p| p.pid);
    let matched = found.len();
    found.truncate(max);
    Ok(ProcessList {
        truncated: matched > found.len(),
        processes: found,
        matched,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_this_test_process() {
        let me = std::process::id();
        let all = list(None, MAX_RESULTS * 100).unwrap();
        let mine = all.processes.iter().find(|p| p.pid == me).expect("self");
        assert!(mine.started_at.is_some());
        let by_name = list(Some(&mine.name.to_uppercase()), MAX_RESULTS).unwrap();
        assert!(by_name.processes.iter().any(|p| p.pid == me));
        let one = list(None, 1).unwrap();
        assert_eq!(one.processes.len(), 1);
        assert!(one.truncated && one.matched > 1);
    }
}
