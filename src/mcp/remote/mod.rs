//! The face of remote targets: calls that name a `host` (or `hosts`), or a session that
//! lives on a remote termpilot, routed away from this machine.
//!
//! [`route`] turns the parameter into a [`Target`] and refuses what cannot go there;
//! [`forward`] decides, per call, between the two ways: a remote termpilot ([`links`],
//! [`link`], with session ids mapped by [`ids`]; `via: "termpilot"`) or the plain terminal:
//! `terminal_run` on one target or a fleet goes through the transport without a terminal
//! (`mcp::tools::run_remote`, with the tools), and [`session`] is `terminal_start` with
//! `host` (`via: "terminal"`). [`secret_relay`]: a remote session's secret prompts answered
//! by the person behind the local call.

pub mod forward;
pub mod forward_list;
pub mod ids;
pub mod link;
pub mod links;
pub mod secret_relay;
pub mod session;

use termpilot_core::remote::Target;
use termpilot_core::sandbox::Network;

use crate::mcp::reply::ToolError;

/// How a call was carried out on its target, as results say it (`via`).
pub const VIA_TERMINAL: &str = "terminal";
pub const VIA_TERMPILOT: &str = "termpilot";

/// Parses a `host` parameter, or says in one sentence why it cannot be used: a bad host
/// string, or a sandbox with the network off (every transport is a network client).
pub fn route(host: &str) -> Result<Target, ToolError> {
    let target = Target::parse(host)?;
    if termpilot_core::sandbox::server().is_some_and(|p| p.network == Network::Off) {
        return Err(ToolError::new(format!(
            "`{target}` cannot be reached: this server's sandbox has the network off, and ssh, docker and kubectl all need it; start termpilot with --network on to use remote targets."
        )));
    }
    Ok(target)
}
