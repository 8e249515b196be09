//! The `theme` parameter and result field of the screenshot tools, as JSON
//! (`termpilot_core::render::Theme` is the core's).
//!
//! Not wired yet: `tools/screen.rs` and `tools/sessions.rs` (the session side) still take the
//! core's `Theme`, whose serde and schema derives stay until they switch to this one.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use termpilot_core::render;

/// A colour theme for screenshots. Serialises as its name (`"solarized-dark"`), so tool
/// parameters can use it directly.
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
