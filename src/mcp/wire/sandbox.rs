//! The `sandbox` parameter of `terminal_start`, as JSON (`termpilot_core::sandbox::Mode` is the
//! core's).
//!
//! Not wired yet: `tools/sessions.rs` (the session side) still takes the core's `Mode`, whose
//! serde and schema derives stay until it switches to this one.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use termpilot_core::sandbox;

/// What sandboxed processes may write.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Mode {
    /// No sandbox.
    #[default]
    Off,
    /// Read anywhere but the deny-read paths; write only under the write roots, the private
    /// temp dir, the terminal and /dev/null.
    WorkspaceWrite,
    /// As workspace-write without the write roots.
    ReadOnly,
}

impl From<Mode> for sandbox::Mode {
    fn from(m: Mode) -> Self {
        match m {
            Mode::Off => sandbox::Mode::Off,
            Mode::WorkspaceWrite => sandbox::Mode::WorkspaceWrite,
            Mode::ReadOnly => sandbox::Mode::ReadOnly,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_mode_keeps_its_name() {
        for m in [Mode::Off, Mode::WorkspaceWrite, Mode::ReadOnly] {
            let json = serde_json::to_value(m).unwrap();
            assert_eq!(json.as_str(), Some(sandbox::Mode::from(m).as_str()));
        }
    }
}
