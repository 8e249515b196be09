//! `termpilot skills-dir`: puts the Agent Skill shipped in the binary on disk and says where.
//!
//! The skill (`skills/termpilot/SKILL.md` in the repository) is compiled in, so an installed
//! binary can hand it out without its source tree.

use std::path::PathBuf;

pub const SKILL_MD: &str = include_str!("../skills/termpilot/SKILL.md");
/// The skill for `--compat terminal-use`: the same guidance in terms of that preset's tools.
pub const TERMINAL_USE_SKILL_MD: &str = include_str!("../skills/terminal-use/SKILL.md");
/// The files `terminal-use/SKILL.md` links to, by their path inside the skill.
pub const TERMINAL_USE_REFERENCES: &[(&str, &str)] = &[
    (
        "references/keys.md",
        include_str!("../skills/terminal-use/references/keys.md"),
    ),
    (
        "references/recipes.md",
        include_str!("../skills/terminal-use/references/recipes.md"),
    ),
    (
        "references/troubleshooting.md",
        include_str!("../skills/terminal-use/references/troubleshooting.md"),
    ),
];

/// The files a skill's `SKILL.md` links to (none for termpilot's own).
pub fn references_of(md: &str) -> &'static [(&'static str, &'static str)] {
    if md == TERMINAL_USE_SKILL_MD {
        TERMINAL_USE_REFERENCES
    } else {
        &[]
    }
}

/// Writes the skill under the user's data dir and returns the folder that holds `termpilot/`.
pub fn install() -> std::io::Result<PathBuf> {
    install_named("termpilot", SKILL_MD, &[])
}

/// `--compat terminal-use skills-dir`: the folder that holds `terminal-use/SKILL.md`.
pub fn install_terminal_use() -> std::io::Result<PathBuf> {
    install_named(
        "terminal-use",
        TERMINAL_USE_SKILL_MD,
        TERMINAL_USE_REFERENCES,
    )
}

fn install_named(
    name: &str,
    content: &str,
    references: &[(&str, &str)],
) -> std::io::Result<PathBuf> {
    let base = match std::env::var_os("XDG_DATA_HOME").filter(|d| !d.is_empty()) {
        Some(dir) => PathBuf::from(dir),
        None => match std::env::var_os("HOME").filter(|d| !d.is_empty()) {
            Some(home) => PathBuf::from(home).join(".local/share"),
            None => std::env::temp_dir(),
        },
    };
    let dir = base.join("termpilot/skills");
    let skill = dir.join(name);
    std::fs::create_dir_all(&skill)?;
    for (file, text) in std::iter::once(&("SKILL.md", content)).chain(references) {
        let path = skill.join(file);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)?;
        }
        if std::fs::read_to_string(&path).ok().as_deref() != Some(*text) {
            std::fs::write(&path, text)?;
        }
    }
    Ok(dir)
}
