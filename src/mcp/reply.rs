//! Result and error shaping: what an agent sees for every call.
//!
//! A success is `structuredContent` plus the same JSON, compact, as a text block (and image
//! blocks for screenshots). A failure is a tool error (`isError: true`) whose text is one
//! sentence saying what was wrong and what to do.

use base64::Engine;
use rmcp::model::{CallToolResult, ContentBlock};
use serde::Serialize;
use serde_json::Value;

/// A successful tool result before it is put on the wire.
#[derive(Debug)]
pub struct Reply {
    pub value: Value,
    /// PNG images shown after the JSON.
    pub images: Vec<Vec<u8>>,
}

impl Reply {
    pub fn json<T: Serialize>(value: &T) -> Result<Self, ToolError> {
        let value = serde_json::to_value(value)
            .map_err(|e| ToolError::new(format!("The result could not be encoded ({e}).")))?;
        Ok(Reply {
            value,
            images: Vec::new(),
        })
    }

    /// A result that is prose for the agent to read (a preset whose server answers in
    /// sentences): text blocks only, no `structuredContent`.
    pub fn prose(text: impl Into<String>) -> Self {
        Reply {
            value: Value::String(text.into()),
            images: Vec::new(),
        }
    }

    pub fn into_result(self) -> CallToolResult {
        if let Value::String(prose) = self.value {
            let mut content = vec![ContentBlock::text(prose)];
            for png in self.images {
                let b64 = base64::engine::general_purpose::STANDARD.encode(png);
                content.push(ContentBlock::image(b64, "image/png"));
            }
            return CallToolResult::success(content);
        }
        let text = self.value.to_string();
        let mut content = vec![ContentBlock::text(text)];
        for png in self.images {
            let b64 = base64::engine::general_purpose::STANDARD.encode(png);
            content.push(ContentBlock::image(b64, "image/png"));
        }
        let mut result = CallToolResult::success(content);
        result.structured_content = Some(self.value);
        result
    }
}

/// A failure phrased for the agent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolError {
    pub message: String,
    /// What the call produced before it failed (a timed-out run's output), for presets
    /// whose errors carry it as fields.
    pub partial: Option<serde_json::Map<String, Value>>,
}

impl ToolError {
    pub fn new(message: impl Into<String>) -> Self {
        ToolError {
            message: message.into(),
            partial: None,
        }
    }

    /// The error with what the call produced before it failed.
    pub fn with_partial(mut self, partial: serde_json::Map<String, Value>) -> Self {
        self.partial = Some(partial);
        self
    }

    /// The error as a JSON object `{"error": message, ...partial}` (director-shell's shape).
    pub fn into_json_result(self) -> CallToolResult {
        let mut object = serde_json::Map::new();
        object.insert("error".into(), Value::String(self.message));
        for (k, v) in self.partial.unwrap_or_default() {
            object.entry(k).or_insert(v);
        }
        let value = Value::Object(object);
        let mut result = CallToolResult::error(vec![ContentBlock::text(value.to_string())]);
        result.structured_content = Some(value);
        result
    }

    pub fn into_result(self) -> CallToolResult {
        CallToolResult::error(vec![ContentBlock::text(self.message)])
    }
}

impl From<termpilot_core::Error> for ToolError {
    fn from(e: termpilot_core::Error) -> Self {
        ToolError::new(crate::mcp::wire::errors::message(&e))
    }
}

impl std::fmt::Display for ToolError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

/// The concatenated text blocks of a result.
pub fn text_of(result: &CallToolResult) -> String {
    result
        .content
        .iter()
        .filter_map(|c| c.as_text().map(|t| t.text.as_str()))
        .collect::<Vec<_>>()
        .join("\n")
}

/// A successful result from the other side of a link (a remote termpilot, the session host)
/// as a reply: its structured content (or its text, parsed when it is JSON) and its images.
pub fn forwarded(result: &CallToolResult) -> Reply {
    let value = match &result.structured_content {
        Some(v) => v.clone(),
        None => {
            let text = text_of(result);
            serde_json::from_str(&text).unwrap_or(Value::String(text))
        }
    };
    let images = result
        .content
        .iter()
        .filter_map(|c| c.as_image())
        .filter_map(|i| {
            base64::engine::general_purpose::STANDARD
                .decode(&i.data)
                .ok()
        })
        .collect();
    Reply { value, images }
}
