//! File tools: `terminal_write_file`, `edit_file` and `grep_files`.
//!
//! Parameters in, one call to `termpilot_core::files`, results out. Relative paths of
//! `terminal_write_file` resolve against the session's cwd when a `sessionId` is given.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use termpilot_core::files::{self, GrepOptions};

use crate::mcp::args::yes;
use crate::mcp::registry::{Forward, Hints, ToolCtx, ToolDef};
use crate::mcp::reply::ToolError;
use crate::mcp::wire::files::{Encoding, GrepResult};

pub fn tools() -> Vec<ToolDef> {
    vec![
        ToolDef::new(
            "terminal_write_file",
            "Write a file",
            "Write content to a file atomically (or append). Path absolute, or relative to the session's cwd with sessionId. Encodings utf-8, ascii, base64, hex, latin1.",
            Hints::DESTRUCTIVE,
            write_file,
        )
        .forward(Forward::Termpilot),
        ToolDef::new(
            "edit_file",
            "Edit a file",
            "Replace oldText with newText in a UTF-8 file (absolute path). Exactly one match unless replaceAll; otherwise an error and the file unchanged.",
            Hints::DESTRUCTIVE,
            edit_file,
        )
        .forward(Forward::Termpilot),
        ToolDef::new(
            "grep_files",
            "Search files",
            "Search a file or directory (absolute) for a regex, ripgrep-style. Skips node_modules, .git, bin, obj, dist, target, binary files and files over 5 MiB.",
            Hints::READ_ONLY,
            grep_files,
        )
        .forward(Forward::Termpilot),
    ]
}

fn default_max_results() -> usize {
    200
}

/// Runs blocking file work off the async threads.
async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> termpilot_core::Result<T> + Send + 'static,
) -> Result<T, ToolError> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| ToolError::new(format!("The file operation failed unexpectedly ({e}).")))?
        .map_err(ToolError::from)
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct WriteParams {
    /// Resolve a relative path against this session's cwd.
    pub session_id: Option<String>,
    pub path: String,
    pub content: String,
    #[serde(default)]
    pub encoding: Encoding,
    #[serde(default)]
    pub append: bool,
    #[serde(default = "yes")]
    pub create_dirs: bool,
    /// Replace a file that has other hard links (they keep the old contents).
    #[serde(default)]
    pub break_links: bool,
}

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct WriteResult {
    pub success: bool,
    /// Absolute path written.
    pub path: String,
    /// File size afterwards.
    pub size: u64,
    pub bytes_written: u64,
    pub created: bool,
    pub append: bool,
}

async fn write_file(ctx: ToolCtx, p: WriteParams) -> Result<WriteResult, ToolError> {
    let base = match &p.session_id {
        Some(id) => Some(ctx.core.sessions.cwd_of(id)?),
        None => None,
    };
    let target = files::resolve_path(&p.path, base.as_deref())?;
    termpilot_core::sandbox::check_write(&target)?;
    let bytes = files::decode(&p.content, p.encoding.into())?;
    let opts = files::WriteOptions {
        append: p.append,
        create_dirs: p.create_dirs,
        break_links: p.break_links,
    };
    let w = blocking(move || {
        // Under the sandbox the file's folder is held open from the check to the write.
        let pinned = termpilot_core::sandbox::pin_write(&target, opts.create_dirs)?;
        let at = pinned.as_ref().map(|p| p.at());
        let pin = pinned
            .as_ref()
            .zip(at.as_deref())
            .map(|(p, at)| files::Pin { at, real: p.real() });
        files::write_at(&target, pin, &bytes, opts)
    })
    .await?;
    Ok(WriteResult {
        success: true,
        path: w.path.display().to_string(),
        size: w.size,
        bytes_written: w.bytes_written,
        created: w.created,
        append: w.appended,
    })
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct EditParams {
    /// Absolute path.
    pub path: String,
    /// Exact text to find (non-empty).
    #[schemars(length(min = 1))]
    pub old_text: String,
    pub new_text: String,
    #[serde(default)]
    pub replace_all: bool,
    /// Replace a file that has other hard links (they keep the old contents).
    #[serde(default, alias = "breakLinks")]
    pub break_links: bool,
}

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct EditResult {
    pub path: String,
    pub replacements: usize,
}

async fn edit_file(_ctx: ToolCtx, p: EditParams) -> Result<EditResult, ToolError> {
    let target = files::resolve_path(&p.path, None)?;
    termpilot_core::sandbox::check_write(&target)?;
    let e = blocking(move || {
        let pinned = termpilot_core::sandbox::pin_write(&target, false)?;
        let at = pinned.as_ref().map(|p| p.at());
        let pin = pinned
            .as_ref()
            .zip(at.as_deref())
            .map(|(p, at)| files::Pin { at, real: p.real() });
        files::edit_at(
            &target,
            pin,
            &p.old_text,
            &p.new_text,
            p.replace_all,
            p.break_links,
        )
    })
    .await?;
    Ok(EditResult {
        path: e.path.display().to_string(),
        replacements: e.replacements,
    })
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct GrepParams {
    /// Regex (JavaScript-style: lookaround and backreferences work).
    #[schemars(length(min = 1))]
    pub pattern: String,
    /// Absolute file or directory.
    pub path: String,
    /// File-name filter, e.g. *.rs
    pub glob: Option<String>,
    #[serde(default)]
    pub case_sensitive: bool,
    #[serde(default = "default_max_results")]
    #[schemars(range(min = 1, max = 1000))]
    pub max_results: usize,
    #[serde(default)]
    #[schemars(range(min = 0, max = 5))]
    pub context_lines: usize,
}

async fn grep_files(ctx: ToolCtx, p: GrepParams) -> Result<GrepResult, ToolError> {
    termpilot_core::sandbox::check_read(&files::resolve_path(&p.path, None)?)?;
    let opts = GrepOptions {
        pattern: p.pattern,
        path: files::resolve_path(&p.path, None)?,
        glob: p.glob,
        case_sensitive: p.case_sensitive,
        max_results: p.max_results,
        context_lines: p.context_lines,
    };
    let cancel = ctx.cancel.clone();
    blocking(move || files::grep(&opts, &cancel))
        .await
        .map(Into::into)
}
