//! `skill://termpilot/SKILL.md`: termpilot's own Agent Skill (the one `termpilot skills-dir`
//! writes out), compiled into the binary.

use rmcp::model::{Resource, ResourceContents};
use termpilot::Core;

use super::Provider;

const URI: &str = "skill://termpilot/SKILL.md";

pub struct OwnSkill;

impl Provider for OwnSkill {
    fn list(&self, _core: &Core) -> Vec<Resource> {
        vec![
            Resource::new(URI, "termpilot skill")
                .with_description("How to drive termpilot's terminals well (an Agent Skill)")
                .with_mime_type("text/markdown")
                .with_size(crate::skills::SKILL_MD.len() as u64),
        ]
    }

    fn read(&self, _core: &Core, uri: &str) -> Option<Result<Vec<ResourceContents>, String>> {
        (uri == URI).then(|| {
            Ok(vec![
                ResourceContents::text(crate::skills::SKILL_MD, URI)
                    .with_mime_type("text/markdown"),
            ])
        })
    }
}
