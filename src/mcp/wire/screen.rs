//! The screen as JSON: the `theme` parameter and result field of the screenshot tools
//! (`termpilot_core::render::Theme` is the core's), and `view:"screen"`'s text, cursor and
//! highlights (`termpilot_core::session::ScreenText` is the core's).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use termpilot_core::render;
use termpilot_core::session as core;

// A colour theme for screenshots; serialises as its name (`"solarized-dark"`). A plain
// comment, not a doc comment: a doc comment would become a description in every schema
// that names a theme, and tools/list is kept small.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Theme {
    #[default]
    Dark,
    Light,
    SolarizedDark,
    SolarizedLight,
}

impl From<Theme> for render::Theme {
    fn from(t: Theme) -> Self {
        match t {
            Theme::Dark => render::Theme::Dark,
            Theme::Light => render::Theme::Light,
            Theme::SolarizedDark => render::Theme::SolarizedDark,
            Theme::SolarizedLight => render::Theme::SolarizedLight,
        }
    }
}

impl From<render::Theme> for Theme {
    fn from(t: render::Theme) -> Self {
        match t {
            render::Theme::Dark => Theme::Dark,
            render::Theme::Light => Theme::Light,
            render::Theme::SolarizedDark => Theme::SolarizedDark,
            render::Theme::SolarizedLight => Theme::SolarizedLight,
        }
    }
}

/// Where the cursor is (1-based) and what it covers.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct CursorInfo {
    pub row: usize,
    pub col: usize,
    /// The character under the cursor, when there is one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub char: Option<String>,
    pub visible: bool,
}

/// A run of reverse-video or background-coloured cells (1-based row and columns).
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Highlight {
    pub row: usize,
    pub start_col: usize,
    pub end_col: usize,
    pub text: String,
}

/// One page of the screen as text.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ScreenText {
    pub text: String,
    pub cursor: CursorInfo,
    pub highlights: Vec<Highlight>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub highlights_hint: Option<String>,
    pub title: Option<String>,
    pub alt_screen: bool,
    pub cols: usize,
    pub rows: usize,
    pub page: usize,
    /// Pages of scrollback above the current screen.
    pub pages_back: usize,
    /// How the session's program ended (`exit status 3`), when it has: this is its last
    /// screen.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub exited: Option<String>,
}

impl From<core::ScreenText> for ScreenText {
    fn from(s: core::ScreenText) -> Self {
        ScreenText {
            text: s.text,
            cursor: CursorInfo {
                row: s.cursor.row,
                col: s.cursor.col,
                char: s.cursor.char,
                visible: s.cursor.visible,
            },
            highlights: s
                .highlights
                .into_iter()
                .map(|h| Highlight {
                    row: h.row,
                    start_col: h.start_col,
                    end_col: h.end_col,
                    text: h.text,
                })
                .collect(),
            highlights_hint: s.highlights_hint.map(|why| no_highlights(why).into()),
            title: s.title,
            alt_screen: s.alt_screen,
            cols: s.cols,
            rows: s.rows,
            page: s.page,
            pages_back: s.pages_back,
            exited: None,
        }
    }
}

/// The sentence for why highlights were asked for and none are listed.
pub fn no_highlights(why: core::NoHighlights) -> &'static str {
    match why {
        core::NoHighlights::MostlyColoured => {
            "Most of the screen is coloured, so highlights are not listed; use terminal_screenshot to see it."
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_theme_keeps_its_name_both_ways() {
        for core in render::Theme::ALL {
            let wire = Theme::from(core);
            assert_eq!(render::Theme::from(wire), core);
            let json = serde_json::to_value(wire).unwrap();
            assert_eq!(json.as_str(), Some(core.to_string().as_str()));
        }
    }
}
