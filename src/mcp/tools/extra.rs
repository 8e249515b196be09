//! `terminal_extra`: the meta-tool in front of the tools not registered directly.
//!
//! `{list: true}` returns the extras' full declarations; `{tool, args}` calls one through
//! the very same [`ToolDef::call`] a direct call uses, so validation and errors match.

use std::sync::Arc;

use rmcp::model::{JsonObject, Tool, ToolAnnotations};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use crate::mcp::registry::{EXTRA, Registry, ToolCtx};
use crate::mcp::reply::{Reply, ToolError};
use crate::mcp::{args, schema};

#[cfg(test)]
mod tests {
    #[test]
    fn names_are_grouped_by_prefix() {
        let names = [
            "terminal_resize",
            "terminal_reset",
            "edit_file",
            "job_start",
            "job_wait",
            "screenshot",
        ];
        assert_eq!(
            super::compact_names(&names),
            "terminal_{resize,reset}, edit_file, job_{start,wait}, screenshot"
        );
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ExtraParams {
    #[serde(default)]
    pub list: bool,
    pub tool: Option<String>,
    pub args: Option<JsonObject>,
}

/// The declaration of `terminal_extra`, naming the extras so an agent knows they exist.
pub fn declaration(extras: &[&'static str]) -> Tool {
    let description = format!(
        "More tools; {{list:true}} for schemas, {{tool,args}} to call: {}.",
        compact_names(extras)
    );
    let mut output = JsonObject::new();
    output.insert("type".into(), "object".into());
    Tool::new(EXTRA, description, schema::input::<ExtraParams>())
        .with_title("More tools")
        .with_raw_output_schema(Arc::new(output))
        .with_annotations(
            ToolAnnotations::new()
                .read_only(false)
                .destructive(true)
                .idempotent(false)
                .open_world(true),
        )
}

/// Names grouped by their first word, `terminal_{resize,reset}, edit_file`: the same
/// information as a plain list in far fewer tokens.
fn compact_names(names: &[&str]) -> String {
    let mut groups: Vec<(&str, Vec<&str>)> = Vec::new();
    for name in names {
        let (prefix, rest) = name.split_once('_').unwrap_or((name, ""));
        match groups.iter_mut().find(|(p, _)| *p == prefix) {
            Some((_, rests)) => rests.push(rest),
            None => groups.push((prefix, vec![rest])),
        }
    }
    groups
        .into_iter()
        .map(|(prefix, rests)| match rests.as_slice() {
            [""] => prefix.to_string(),
            [only] => format!("{prefix}_{only}"),
            many => format!("{prefix}_{{{}}}", many.join(",")),
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// Handles a `terminal_extra` call.
pub async fn call(registry: &Registry, ctx: ToolCtx, raw: JsonObject) -> Result<Reply, ToolError> {
    let p: ExtraParams = args::parse(EXTRA, &schema::input::<ExtraParams>(), raw)?;
    match (p.list, p.tool) {
        (true, None) => {
            let tools: Vec<Value> = registry
                .extras()
                .map(|t| {
                    json!({
                        "name": t.name,
                        "title": t.title,
                        "description": t.description,
                        "inputSchema": &*t.input_schema,
                    })
                })
                .collect();
            Ok(Reply {
                value: json!({ "tools": tools }),
                images: Vec::new(),
            })
        }
        (false, Some(name)) => {
            let Some(tool) = registry.enabled(&name) else {
                let why = if registry.is_disabled(&name) {
                    "is disabled on this server"
                } else {
                    "does not exist"
                };
                let names: Vec<&str> = registry.extras().map(|t| t.name).collect();
                return Err(ToolError::new(format!(
                    "The tool `{name}` {why}; the extra tools are: {}.",
                    names.join(", ")
                )));
            };
            tool.call(ctx, p.args.unwrap_or_default()).await
        }
        (true, Some(_)) => Err(ToolError::new(
            "Pass either list:true or tool (with args), not both.",
        )),
        (false, None) => Err(ToolError::new(
            "Pass list:true to see the extra tools, or tool and args to call one.",
        )),
    }
}
