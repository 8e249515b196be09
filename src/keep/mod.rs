//! Kept sessions: terminals that outlive the MCP server (and client) that started them.
//!
//! One owner holds them: the user's **session host**, this same binary started as
//! `termpilot __session-host` ([`host`]). It runs its own [`termpilot_core::Core`] and the
//! native tools, and serves MCP on a Unix socket in the private runtime folder ([`paths`]).
//! Servers are its clients ([`link`]): a `terminal_start` with `keep: true` (or every native
//! start under `--keep-sessions`) goes there ([`start`]), as does every call naming a kept
//! session id ([`forward`]); `terminal_list` merges the host's list ([`list`]). The host
//! names its sessions `k-…`, a namespace no server's own sessions use, so every server calls
//! a kept session by the same id without a mapping. The host writes a small record of the
//! ids it holds ([`record`]), which lets a later server say plainly that kept sessions ended
//! when their host died. `termpilot sessions` lists them from a shell ([`sessions_cmd`]).
//! The protocol is written down in ARCHITECTURE.md ("Kept sessions").

pub mod forward;
pub mod host;
pub mod link;
pub mod list;
pub mod paths;
pub mod record;
pub mod rest;
pub mod sessions_cmd;
pub mod settings;
pub mod start;

pub use settings::{Settings, configure, policy_args};
