//! Agent Skills as resources (`skill://<name>/SKILL.md`) and through the Skills extension
//! (`io.modelcontextprotocol/skills`: `skills/list`, `skills/get`), each entry carrying the
//! file's verbatim frontmatter and its sha256 digest and size, so a host can verify what it
//! reads. termpilot serves its own skill; the terminal-use preset serves that seed's.
//! The skills are compiled into the binary (the same files `termpilot skills-dir` writes).

use rmcp::model::{
    JsonObject, Resource, ResourceContents, Skill, SkillFrontmatter, SkillResource, SkillResources,
};
use serde_json::Value;
use termpilot_core::Core;

use super::Provider;

/// One skill: a single `SKILL.md`.
#[derive(Clone, Copy)]
pub struct SkillDoc {
    md: &'static str,
}

impl SkillDoc {
    /// The skill whose `SKILL.md` is `md` (it must start with a frontmatter holding `name`
    /// and `description`; the unit tests check the two that ship).
    pub const fn new(md: &'static str) -> Self {
        SkillDoc { md }
    }

    /// The frontmatter's fields, as written (`key: value` lines between the `---` lines).
    fn fields(&self) -> JsonObject {
        let mut fields = JsonObject::new();
        let Some(rest) = self.md.strip_prefix("---\n") else {
            return fields;
        };
        for line in rest.lines().take_while(|l| *l != "---") {
            if let Some((key, value)) = line.split_once(':') {
                let value = value.trim().trim_matches('"');
                fields.insert(key.trim().to_string(), Value::String(value.to_string()));
            }
        }
        fields
    }

    fn field(&self, name: &str) -> String {
        self.fields()
            .get(name)
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string()
    }

    pub fn name(&self) -> String {
        self.field("name")
    }

    pub fn uri(&self) -> String {
        format!("skill://{}/SKILL.md", self.name())
    }

    /// The Skills extension's entry: frontmatter, and a manifest of its one file.
    pub fn entry(&self) -> Skill {
        let mut fields = self.fields();
        let name = self.name();
        let description = self.field("description");
        fields.remove("name");
        fields.remove("description");
        let mut frontmatter = SkillFrontmatter::new(name, description);
        frontmatter.extra = fields;
        Skill::new(
            self.uri(),
            frontmatter,
            SkillResources::Files(vec![SkillResource::from_bytes(
                self.uri(),
                self.md.as_bytes(),
            )]),
        )
    }
}

impl Provider for SkillDoc {
    fn list(&self, _core: &Core) -> Vec<Resource> {
        vec![
            Resource::new(self.uri(), format!("{} skill", self.name()))
                .with_description(self.field("description"))
                .with_mime_type("text/markdown")
                .with_size(self.md.len() as u64),
        ]
    }

    fn read(&self, _core: &Core, uri: &str) -> Option<Result<Vec<ResourceContents>, String>> {
        (uri == self.uri()).then(|| {
            Ok(vec![
                ResourceContents::text(self.md, uri).with_mime_type("text/markdown"),
            ])
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shipped_skills_are_valid_entries() {
        for md in [
            crate::skills::SKILL_MD,
            crate::skills::TERMINAL_USE_SKILL_MD,
        ] {
            let skill = SkillDoc::new(md);
            let entry = skill.entry();
            entry
                .validate()
                .unwrap_or_else(|e| panic!("{}: {e}", skill.uri()));
            assert!(!entry.frontmatter.description.is_empty());
        }
        assert_eq!(
            SkillDoc::new(crate::skills::SKILL_MD).uri(),
            "skill://termpilot/SKILL.md"
        );
    }
}
