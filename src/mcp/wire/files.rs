//! The file tools' `encoding` parameter and `grep_files`' result as JSON (`termpilot_core::files`).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use termpilot_core::files;

/// How the `content` string is turned into bytes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, JsonSchema)]
pub enum Encoding {
    /// The text as UTF-8.
    #[default]
    #[serde(rename = "utf-8", alias = "utf8")]
    Utf8,
    /// 7-bit text; any other character is an error.
    #[serde(rename = "ascii")]
    Ascii,
    /// Binary data as base64.
    #[serde(rename = "base64")]
    Base64,
    /// Binary data as hex digits.
    #[serde(rename = "hex")]
    Hex,
    /// One byte per character, U+0000..U+00FF.
    #[serde(rename = "latin1")]
    Latin1,
}

impl From<Encoding> for files::Encoding {
    fn from(e: Encoding) -> Self {
        match e {
            Encoding::Utf8 => files::Encoding::Utf8,
            Encoding::Ascii => files::Encoding::Ascii,
            Encoding::Base64 => files::Encoding::Base64,
            Encoding::Hex => files::Encoding::Hex,
            Encoding::Latin1 => files::Encoding::Latin1,
        }
    }
}

/// One matching line.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct GrepMatch {
    pub file: String,
    pub line_number: u64,
    pub line: String,
    pub before: Vec<String>,
    pub after: Vec<String>,
}

/// Everything a search found.
#[derive(Debug, Clone, Default, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct GrepResult {
    pub matches: Vec<GrepMatch>,
    pub files_scanned: usize,
    /// More matches exist than `max_results`.
    pub truncated: bool,
    pub skipped_binary: usize,
    pub skipped_large: usize,
}

impl From<files::GrepResult> for GrepResult {
    fn from(r: files::GrepResult) -> Self {
        GrepResult {
            matches: r
                .matches
                .into_iter()
                .map(|m| GrepMatch {
                    file: m.file,
                    line_number: m.line_number,
                    line: m.line,
                    before: m.before,
                    after: m.after,
                })
                .collect(),
            files_scanned: r.files_scanned,
            truncated: r.truncated,
            skipped_binary: r.skipped_binary,
            skipped_large: r.skipped_large,
        }
    }
}
