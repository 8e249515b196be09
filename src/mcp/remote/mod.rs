//! The face of remote targets: calls that name a `host` (or `hosts`) routed away from this
//! machine.
//!
//! [`route`] turns the parameter into a [`Target`] and refuses what cannot go there;
//! [`run`] is `terminal_run` on one target or a fleet, through the transport without a
//! terminal (`via: "terminal"`); [`session`] is `terminal_start` with `host`.

pub mod run;
pub mod session;

use termpilot::remote::Target;

use crate::mcp::reply::ToolError;

/// How a call was carried out on its target, as results say it (`via`).
pub const VIA_TERMINAL: &str = "terminal";

/// Parses a `host` parameter, or says in one sentence why it cannot be used.
pub fn route(host: &str) -> Result<Target, ToolError> {
    Ok(Target::parse(host)?)
}
