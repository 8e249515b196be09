//! The MCP face: turns tool calls into calls on the core and core results into MCP results.
//!
//! - [`server`] is the rmcp handler (tools/list, tools/call, server info).
//! - [`registry`] declares every tool once and decides which are direct, which sit behind
//!   `terminal_extra`, and which are disabled.
//! - [`schema`] makes the compact JSON schemas; [`args`] parses and validates arguments
//!   against them, so a range is declared once.
//! - [`reply`] shapes results (`structuredContent` + the same JSON as text) and errors.
//! - [`tools`] holds the native handlers, one small file per group of tools; [`wire`] the
//!   JSON counterparts of the core values they take and return.
//! - [`http`] serves MCP over Streamable HTTP (and the web page) with a bearer token.
//! - [`remote`] routes calls that name a `host` to SSH hosts, containers and pods.
//! - [`stdio`] frames the stdio transport; [`frame`] judges each line so every request is
//!   answered.
//! - [`logging`]: shapes of calls at every level; whole messages only under `termpilot::wire`.
//! - [`resources`] serves sessions, jobs and skills as MCP resources (one provider each).
//! - [`secrets`]: a person answers secret prompts through URL-mode elicitation.
//! - [`compat`] holds the `--compat` presets: other servers' surfaces over the same tools.
//!
//! Nothing here owns state: the [`termpilot_core::Core`] handle does.

pub mod args;
pub mod compat;
pub mod ctx;
pub mod drain;
pub mod frame;
pub mod http;
pub mod http_quick;
pub mod http_serve;
pub mod http_sessions;
pub mod logging;
pub mod progress;
pub mod registry;
pub mod remote;
pub mod reply;
pub mod resources;
pub mod schema;
pub mod secrets;
pub mod server;
pub mod stdio;
pub mod tools;
pub mod wire;
