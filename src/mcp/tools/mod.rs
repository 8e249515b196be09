//! The native tools, one small file per group. [`all`] is the single list of declarations
//! the registry is built from; add a tool by adding its `ToolDef` here.

pub mod extra;
pub mod jobs;
pub mod locks;
pub mod sessions;
pub mod system;

use super::registry::ToolDef;

/// Every native tool this build implements, in the order they are listed.
pub fn all() -> Vec<ToolDef> {
    let mut tools = Vec::new();
    tools.extend(sessions::tools());
    tools.extend(jobs::tools());
    tools.extend(locks::tools());
    tools.extend(system::tools());
    tools
}
