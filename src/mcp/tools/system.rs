//! System tools: process_list, file_lockers, screenshot (the desktop, not a terminal).

use std::path::PathBuf;

use schemars::JsonSchema;
use serde::Deserialize;
use termpilot_core::system::{self, DEFAULT_MAX_RESULTS, MAX_RESULTS};

use crate::mcp::registry::{Forward, Hints, ToolCtx, ToolDef, WithImages};
use crate::mcp::reply::ToolError;
use crate::mcp::wire::system::{Lockers, ProcessList, Shot, Target};

pub fn tools() -> Vec<ToolDef> {
    vec![
        ToolDef::new(
            "process_list",
            "List processes",
            "Running processes (pid, name, path, startedAt, workingSetBytes), filtered by a case-insensitive name or path substring.",
            Hints::READ_ONLY,
            process_list,
        )
        .forward(Forward::Termpilot),
        ToolDef::new(
            "file_lockers",
            "Who holds a file open",
            "The processes holding a file open (pid, appName, appType); an unlocked file gives an empty list.",
            Hints::READ_ONLY,
            file_lockers,
        ),
        ToolDef::with_images(
            "screenshot",
            "Desktop screenshot",
            "Capture the whole screen or one window (title substring) to a PNG file and return it as an image.",
            Hints::ADDITIVE,
            take_screenshot,
        ),
    ]
}

/// Runs a blocking core call off the async workers.
pub(super) async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> termpilot_core::Result<T> + Send + 'static,
) -> Result<T, ToolError> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| ToolError::new(format!("The call failed unexpectedly ({e}); try again.")))?
        .map_err(ToolError::from)
}

fn default_max() -> usize {
    DEFAULT_MAX_RESULTS
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ProcessListParams {
    /// Case-insensitive substring of the name or executable path.
    pub name_filter: Option<String>,
    #[serde(default = "default_max")]
    #[schemars(range(min = 1, max = MAX_RESULTS))]
    pub max_results: usize,
}

async fn process_list(_ctx: ToolCtx, p: ProcessListParams) -> Result<ProcessList, ToolError> {
    blocking(move || system::list_processes(p.name_filter.as_deref(), p.max_results))
        .await
        .map(Into::into)
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct FileLockersParams {
    /// Absolute path of an existing file.
    pub path: PathBuf,
}

async fn file_lockers(_ctx: ToolCtx, p: FileLockersParams) -> Result<Lockers, ToolError> {
    blocking(move || system::find_lockers(&p.path))
        .await
        .map(Into::into)
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ScreenshotParams {
    /// Default screen.
    #[serde(default)]
    pub target: Target,
    /// For target window: a case-insensitive part of its title.
    pub window_title: Option<String>,
    /// Absolute .png path (default: a timestamped temp file).
    pub output_path: Option<PathBuf>,
}

async fn take_screenshot(
    _ctx: ToolCtx,
    p: ScreenshotParams,
) -> Result<WithImages<Shot>, ToolError> {
    let mut shot = blocking(move || {
        system::take_screenshot(
            p.target.into(),
            p.window_title.as_deref(),
            p.output_path.as_deref(),
        )
    })
    .await?;
    let png = std::mem::take(&mut shot.png);
    Ok(WithImages {
        value: Shot::from(&shot),
        images: vec![png],
    })
}
