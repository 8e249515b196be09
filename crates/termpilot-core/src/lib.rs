//! termpilot's core: terminals, processes, files and locks for AI agents.
//!
//! This crate knows nothing of the Model Context Protocol, and cannot: its `Cargo.toml` has no
//! `rmcp`. The `termpilot` binary's MCP face (`src/mcp/` at the workspace root) turns tool
//! calls into calls on [`Core`] and its parts, and shapes what they return. A session is used
//! through [`session::SessionCall`], which [`SessionManager::call`]
//! hands out.

#![warn(unreachable_pub)]

pub mod config;
pub mod core;
pub mod ended;
pub(crate) mod error;
pub mod exec;
pub mod files;
pub mod host;
pub mod jobs;
pub mod locks;
pub mod platform;
pub(crate) mod progress;
pub mod remote;
pub mod render;
pub mod sandbox;
pub mod session;
pub(crate) mod session_manager;
pub mod system;

pub use crate::config::Config;
pub use crate::core::Core;
pub use crate::ended::MAX_ENDED;
pub use crate::error::{Error, Fault, Result};
pub use crate::progress::{NoProgress, Progress};
pub use crate::session_manager::{
    ReservedSummary, SessionManager, SessionSummary, StartRequest, Stopped,
};
