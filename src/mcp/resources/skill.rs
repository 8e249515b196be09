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

/// One skill: its `SKILL.md` and the files it links to.
#[derive(Clone, Copy)]
pub struct SkillDoc {
    md: &'static str,
    /// `(path inside the skill, text)`, e.g. `references/keys.md`.
    files: &'static [(&'static str, &'static str)],
}

impl SkillDoc {
    /// The skill whose `SKILL.md` is `md` (it must start with a frontmatter holding `name`
    /// and `description`; the unit tests check the two that ship), with the files it links
    /// to ([`crate::skills::references_of`]).
    pub fn new(md: &'static str) -> Self {
        SkillDoc {
            md,
            files: crate::skills::references_of(md),
        }
    }

    /// Every file of the skill: `(uri, text)`, `SKILL.md` first.
    fn all(&self) -> Vec<(String, &'static str)> {
        let name = self.name();
        std::iter::once((self.uri(), self.md))
            .chain(
                self.files
                    .iter()
                    .map(|(path, text)| (format!("skill://{name}/{path}"), *text)),
            )
            .collect()
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
            SkillResources::Files(
                self.all()
                    .into_iter()
                    .map(|(uri, text)| SkillResource::from_bytes(uri, text.as_bytes()))
                    .collect(),
            ),
        )
    }
}

impl Provider for SkillDoc {
    fn list(&self, _core: &Core) -> Vec<Resource> {
        let mut all = vec![
            Resource::new(self.uri(), format!("{} skill", self.name()))
                .with_description(self.field("description"))
                .with_mime_type("text/markdown")
                .with_size(self.md.len() as u64),
        ];
        for (uri, text) in self.all().into_iter().skip(1) {
            let file = uri.rsplit('/').next().unwrap_or_default().to_string();
            all.push(
                Resource::new(uri, format!("{} skill: {file}", self.name()))
                    .with_mime_type("text/markdown")
                    .with_size(text.len() as u64),
            );
        }
        all
    }

    fn read(&self, _core: &Core, uri: &str) -> Option<Result<Vec<ResourceContents>, String>> {
        self.all()
            .into_iter()
            .find(|(u, _)| u == uri)
            .map(|(u, text)| {
                Ok(vec![
                    ResourceContents::text(text, u).with_mime_type("text/markdown"),
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

    #[test]
    fn every_relative_link_of_a_skill_is_one_of_its_files() {
        for md in [
            crate::skills::SKILL_MD,
            crate::skills::TERMINAL_USE_SKILL_MD,
        ] {
            let skill = SkillDoc::new(md);
            let files: Vec<String> = skill.all().into_iter().map(|(u, _)| u).collect();
            let name = skill.name();
            for link in md.split("](").skip(1).filter_map(|l| l.split(')').next()) {
                if link.contains(':') || link.starts_with('#') {
                    continue;
                }
                let uri = format!("skill://{name}/{link}");
                assert!(files.contains(&uri), "{name}: {link} is not served");
            }
        }
        let tu = SkillDoc::new(crate::skills::TERMINAL_USE_SKILL_MD);
        assert_eq!(tu.all().len(), 4, "SKILL.md and three references");
    }
}
