//! `termpilot://sessions/{id}/screen` (the screen as text) and `…/screenshot` (a PNG) for
//! every live session. Reads go through [`termpilot_core::SessionManager::peek`], so
//! they move no read cursor and restart nothing.

use base64::Engine as _;
use rmcp::model::{Resource, ResourceContents};
use termpilot_core::Core;

use super::Provider;

const PREFIX: &str = "termpilot://sessions/";

pub struct Sessions;

impl Provider for Sessions {
    fn list(&self, core: &Core) -> Vec<Resource> {
        let mut out = Vec::new();
        for s in core.sessions.list() {
            let label = s.name.clone().unwrap_or_else(|| s.id.clone());
            out.push(
                Resource::new(
                    format!("{PREFIX}{}/screen", s.id),
                    format!("{label} screen"),
                )
                .with_description(format!(
                    "The screen of session {} ({}×{}) as text",
                    s.id, s.cols, s.rows
                ))
                .with_mime_type("text/plain"),
            );
            out.push(
                Resource::new(
                    format!("{PREFIX}{}/screenshot", s.id),
                    format!("{label} screenshot"),
                )
                .with_description(format!("The screen of session {} as a PNG", s.id))
                .with_mime_type("image/png"),
            );
        }
        out
    }

    fn read(&self, core: &Core, uri: &str) -> Option<Result<Vec<ResourceContents>, String>> {
        let rest = uri.strip_prefix(PREFIX)?;
        let (id, what) = rest.rsplit_once('/')?;
        if what != "screen" && what != "screenshot" {
            return None;
        }
        let Some(session) = core.sessions.peek(id) else {
            return Some(Err(format!(
                "No live session is called `{id}`; call resources/list (or terminal_list) to see them."
            )));
        };
        Some(if what == "screen" {
            let text = session.screen_text();
            Ok(vec![ResourceContents::text(text, uri)])
        } else {
            session
                .screenshot(None, None)
                .map(|png| {
                    let b64 = base64::engine::general_purpose::STANDARD.encode(&png.bytes);
                    vec![ResourceContents::blob(b64, uri).with_mime_type("image/png")]
                })
                .map_err(|e| e.to_string())
        })
    }
}
