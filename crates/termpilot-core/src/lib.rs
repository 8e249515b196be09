//! termpilot's core: terminals, processes, files and locks for AI agents.
//!
//! This library knows nothing of the Model Context Protocol. The binary's MCP face
//! (`src/mcp/`) turns tool calls into calls on [`Core`] and its parts, and shapes what they
//! return. Keep it that way: nothing under `src/` except `main.rs`, `cli.rs` and `mcp/`
//! may name `rmcp`.

pub mod config;
pub mod core;
pub mod ended;
pub mod error;
pub mod exec;
pub mod files;
pub mod jobs;
pub mod locks;
pub mod platform;
pub mod progress;
pub mod remote;
pub mod render;
pub mod sandbox;
pub mod session;
pub mod session_manager;
pub mod system;

pub use crate::config::Config;
pub use crate::core::Core;
pub use crate::error::{Error, Result};
