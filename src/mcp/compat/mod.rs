//! Compatibility presets: `--compat NAME` makes termpilot a drop-in for another server.
//!
//! Each preset is one file mapping that server's surface (tool names, parameters and their
//! defaults, result shapes, descriptions in our own words, server name, limits, environment
//! variables) onto the native tools and the core. No preset has process, terminal, job or
//! file code of its own: it renames and reshapes (see [`adapt`]), or calls the same core
//! functions the native handlers call. The seed documents in `shared/seeds/` are the
//! contract; `shared/COMPAT.md` maps them.
//!
//! | preset | replaces |
//! |---|---|
//! | `director-shell` | director-shell-mcp (15 tools, snake_case, `{"error": …}` errors) |
//! | `cowork` | cowork-terminal-mcp (`execute_command` only) |
//! | `smart-terminal` | smart-terminal-mcp (16 `terminal_*` tools, 8 direct) |
//! | `terminal-use` | terminal-use (13 tools, integer ids, prose results, LRU eviction) |

pub mod adapt;
pub mod case;
pub mod cowork;
pub mod director_shell;
pub mod smart_parse;
pub mod smart_run;
pub mod smart_shapes;
pub mod smart_terminal;
pub mod terminal_use;
pub mod terminal_use_io;
pub mod terminal_use_text;

use std::collections::HashMap;
use std::sync::Arc;

use termpilot_core::Config;

use super::registry::{Surface, ToolDef};

/// The presets, by their `--compat` names.
pub const NAMES: &[&str] = &["smart-terminal", "terminal-use", "cowork", "director-shell"];

/// One other server's surface.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Preset {
    SmartTerminal,
    TerminalUse,
    Cowork,
    DirectorShell,
}

/// How errors look on the wire.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorShape {
    /// A tool error whose text is one sentence (native).
    Sentence,
    /// A tool error whose text is the JSON object `{"error": "…"}` (director-shell).
    JsonObject,
}

/// What the server says about itself, and how it phrases errors.
#[derive(Debug, Clone)]
pub struct Identity {
    pub name: &'static str,
    pub title: &'static str,
    pub instructions: &'static str,
    pub errors: ErrorShape,
    /// Native tool names the preset calls otherwise, rewritten in error sentences.
    pub tool_names: &'static [(&'static str, &'static str)],
    /// The seed's Agent Skill (its `SKILL.md`), served as its only resource through the
    /// Skills extension; `None` for a preset that serves tools only.
    pub skill: Option<&'static str>,
}

impl Identity {
    /// `message` with native tool names replaced by the preset's (whole names only).
    pub fn reword(&self, message: &str) -> String {
        let mut out = message.to_string();
        for (native, preset) in self.tool_names {
            let mut result = String::with_capacity(out.len());
            let mut rest = out.as_str();
            while let Some(i) = rest.find(native) {
                let end = i + native.len();
                let next = rest[end..].chars().next();
                let whole = !next.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_');
                result.push_str(&rest[..i]);
                result.push_str(if whole { preset } else { native });
                rest = &rest[end..];
            }
            result.push_str(rest);
            out = result;
        }
        out
    }
}

/// Which start-up settings the user gave explicitly (a preset's defaults yield to them).
#[derive(Debug, Clone, Copy, Default)]
pub struct Explicit {
    pub shell_flag: bool,
    pub max_sessions: bool,
    pub idle_timeout: bool,
    pub state_dir: bool,
    pub surface: bool,
}

impl Preset {
    /// The preset named `name`, or a sentence listing the names.
    pub fn from_name(name: &str) -> Result<Preset, String> {
        match name.trim() {
            "smart-terminal" | "smart-terminal-mcp" => Ok(Preset::SmartTerminal),
            "terminal-use" => Ok(Preset::TerminalUse),
            "cowork" | "cowork-terminal" | "cowork-terminal-mcp" => Ok(Preset::Cowork),
            "director-shell" | "director-shell-mcp" => Ok(Preset::DirectorShell),
            other => Err(format!(
                "Unknown --compat preset `{other}`; use one of: {}.",
                NAMES.join(", ")
            )),
        }
    }

    pub fn identity(self) -> Identity {
        match self {
            Preset::SmartTerminal => smart_terminal::identity(),
            Preset::TerminalUse => terminal_use::identity(),
            Preset::Cowork => cowork::identity(),
            Preset::DirectorShell => director_shell::identity(),
        }
    }

    /// Applies the preset's limits, environment variables and surface to `config`, leaving
    /// alone what the user set explicitly. Returns a sentence on a bad preset variable.
    pub fn configure(
        self,
        config: &mut Config,
        surface: &mut Surface,
        explicit: Explicit,
    ) -> Result<(), String> {
        match self {
            Preset::SmartTerminal => smart_terminal::configure(config, surface, explicit),
            Preset::TerminalUse => terminal_use::configure(config, surface, explicit),
            Preset::Cowork => {
                surface.all_direct = true;
                Ok(())
            }
            Preset::DirectorShell => director_shell::configure(config, surface, explicit),
        }
    }

    /// The preset's tools, built over the native ones.
    pub fn tools(self, native: Vec<ToolDef>) -> Vec<ToolDef> {
        let natives = Natives::new(native);
        match self {
            Preset::SmartTerminal => smart_terminal::tools(&natives),
            Preset::TerminalUse => terminal_use::tools(&natives),
            Preset::Cowork => cowork::tools(&natives),
            Preset::DirectorShell => director_shell::tools(&natives),
        }
    }
}

/// The native tools by name, for presets to build on.
pub struct Natives(HashMap<&'static str, Arc<ToolDef>>);

impl Natives {
    fn new(all: Vec<ToolDef>) -> Self {
        Natives(all.into_iter().map(|t| (t.name, Arc::new(t))).collect())
    }

    /// The native tool `name`; every preset names only tools this build has.
    pub fn get(&self, name: &str) -> Arc<ToolDef> {
        self.0
            .get(name)
            .unwrap_or_else(|| panic!("a preset names the native tool `{name}`, which is missing"))
            .clone()
    }
}
