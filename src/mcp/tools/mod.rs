//! The native tools, one small file per group. [`all`] is the single list of declarations
//! the registry is built from; add a tool by adding its `ToolDef` here.

pub mod exec;
pub mod extra;
pub mod files;
pub mod jobs;
pub mod locks;
pub mod run;
pub mod run_remote;
pub mod screen;
pub mod secret_watch;
pub(crate) mod session_call;
pub mod sessions;
pub mod system;
pub mod terminal_io;
pub mod waits;

use super::registry::ToolDef;

/// Every native tool this build implements, in the order they are listed.
pub fn all() -> Vec<ToolDef> {
    let mut tools = Vec::new();
    tools.extend(sessions::tools());
    tools.extend(terminal_io::tools());
    tools.extend(waits::tools());
    tools.extend(exec::tools());
    tools.extend(screen::tools());
    tools.extend(run::tools());
    tools.extend(files::tools());
    tools.extend(jobs::tools());
    tools.extend(locks::tools());
    tools.extend(system::tools());
    tools
}
