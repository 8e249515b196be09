//! The system tools' results and the screenshot `target` parameter, as JSON
//! (`termpilot_core::system` in, camelCase out).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use termpilot_core::system;

/// One process.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
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
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ProcessList {
    pub processes: Vec<ProcessInfo>,
    /// How many processes matched (more than returned when truncated).
    pub matched: usize,
    pub truncated: bool,
}

impl From<system::ProcessList> for ProcessList {
    fn from(l: system::ProcessList) -> Self {
        ProcessList {
            processes: l
                .processes
                .into_iter()
                .map(|p| ProcessInfo {
                    pid: p.pid,
                    name: p.name,
                    path: p.path,
                    started_at: p.started_at,
                    working_set_bytes: p.working_set_bytes,
                })
                .collect(),
            matched: l.matched,
            truncated: l.truncated,
        }
    }
}

/// One process holding the file.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Locker {
    pub pid: u32,
    pub app_name: String,
    /// `process` on Linux; the Restart Manager's application type on Windows.
    pub app_type: String,
}

/// Who holds `path` open.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Lockers {
    pub path: String,
    pub lockers: Vec<Locker>,
    /// Processes whose open files could not be read (another user's, without privilege).
    pub skipped_processes: usize,
    /// False when some processes were skipped: a holder may be among them.
    pub complete: bool,
}

impl From<system::Lockers> for Lockers {
    fn from(l: system::Lockers) -> Self {
        Lockers {
            path: l.path,
            lockers: l
                .lockers
                .into_iter()
                .map(|k| Locker {
                    pid: k.pid,
                    app_name: k.app_name,
                    app_type: k.app_type,
                })
                .collect(),
            skipped_processes: l.skipped_processes,
            complete: l.complete,
        }
    }
}

/// What to capture.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Target {
    #[default]
    Screen,
    Window,
}

impl From<Target> for system::ScreenshotTarget {
    fn from(t: Target) -> Self {
        match t {
            Target::Screen => system::ScreenshotTarget::Screen,
            Target::Window => system::ScreenshotTarget::Window,
        }
    }
}

impl From<system::ScreenshotTarget> for Target {
    fn from(t: system::ScreenshotTarget) -> Self {
        match t {
            system::ScreenshotTarget::Screen => Target::Screen,
            system::ScreenshotTarget::Window => Target::Window,
        }
    }
}

/// A screenshot saved to disk.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Shot {
    pub path: String,
    pub width: u32,
    pub height: u32,
    pub target: Target,
    /// The title of the window captured.
    pub window_title: Option<String>,
}

impl From<&system::Shot> for Shot {
    fn from(s: &system::Shot) -> Self {
        Shot {
            path: s.path.clone(),
            width: s.width,
            height: s.height,
            target: s.target.into(),
            window_title: s.window_title.clone(),
        }
    }
}
