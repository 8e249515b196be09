//! JSON schemas for tool inputs and outputs, generated from the Rust types and slimmed.
//!
//! Every byte of `tools/list` is paid for in every agent's context window, so schemas keep
//! only what a client or a model uses: types, required fields, defaults, ranges, enums and
//! short descriptions on inputs. Titles, formats and `$schema` go.

use std::sync::Arc;

use rmcp::model::JsonObject;
use schemars::JsonSchema;
use schemars::generate::SchemaSettings;
use serde_json::{Map, Value};

/// The schema of a tool's arguments.
pub fn input<T: JsonSchema>() -> Arc<JsonObject> {
    Arc::new(generate::<T>())
}

/// The schema of a tool's structured result: an object. Every byte of `tools/list` is paid
/// for in every agent's context window, and a result's fields are self-describing JSON that
/// the agent reads anyway, so the field list is left to the README (SPEC §6: the default
/// surface must stay under 6 KB). `T` is still named so each tool declares its result type.
#[allow(clippy::extra_unused_type_parameters)] // names the result type at the declaration
pub fn output<T: JsonSchema>() -> Arc<JsonObject> {
    let mut out = Map::new();
    out.insert("type".into(), "object".into());
    Arc::new(out)
}

fn generate<T: JsonSchema>() -> JsonObject {
    let schema = SchemaSettings::draft2020_12()
        .into_generator()
        .into_root_schema_for::<T>();
    let mut value = serde_json::to_value(schema).expect("a schema is always JSON");
    inline_refs(&mut value);
    slim(&mut value);
    match value {
        Value::Object(mut map) => {
            map.entry("type").or_insert_with(|| "object".into());
            map
        }
        _ => {
            let mut map = Map::new();
            map.insert("type".into(), "object".into());
            map
        }
    }
}

/// Replaces every local `$ref` by the schema it names and drops `$defs`: for the small,
/// non-recursive parameter types of tools this is shorter and easier for a model to read.
fn inline_refs(root: &mut Value) {
    let Some(Value::Object(defs)) = root.as_object_mut().and_then(|m| m.remove("$defs")) else {
        return;
    };
    fn walk(value: &mut Value, defs: &Map<String, Value>, depth: usize) {
        match value {
            Value::Object(map) => {
                if let Some(Value::String(r)) = map.get("$ref")
                    && let Some(def) = r.strip_prefix("#/$defs/").and_then(|n| defs.get(n))
                    && depth < 8
                {
                    let mut def = def.clone();
                    walk(&mut def, defs, depth + 1);
                    map.remove("$ref");
                    if let Value::Object(inner) = def {
                        for (k, v) in inner {
                            map.entry(k).or_insert(v);
                        }
                    }
                }
                for child in map.values_mut() {
                    walk(child, defs, depth);
                }
            }
            Value::Array(items) => items.iter_mut().for_each(|i| walk(i, defs, depth)),
            _ => {}
        }
    }
    walk(root, &defs, 0);
}

/// Removes what no client needs, in place.
fn slim(value: &mut Value) {
    match value {
        Value::Object(map) => {
            for key in ["$schema", "title", "format", "additionalProperties"] {
                map.remove(key);
            }
            // Bounds that only restate the Rust integer type (u16, u32, …) say nothing.
            if map.get("minimum") == Some(&Value::from(0)) {
                map.remove("minimum");
            }
            if let Some(max) = map.get("maximum").and_then(Value::as_u64)
                && [u8::MAX as u64, u16::MAX as u64, u32::MAX as u64, u64::MAX].contains(&max)
            {
                map.remove("maximum");
            }
            // An enum of documented constants becomes a plain `enum` list.
            if let Some(Value::Array(options)) = map.get("oneOf")
                && options.iter().all(|o| o.get("const").is_some())
            {
                let values: Vec<Value> = options
                    .iter()
                    .filter_map(|o| o.get("const").cloned())
                    .collect();
                map.remove("oneOf");
                map.insert("type".into(), "string".into());
                map.insert("enum".into(), Value::Array(values));
            }
            // `Option<T>` fields: the null is accepted anyway; say the real type.
            if let Some(Value::Array(types)) = map.get_mut("type") {
                types.retain(|t| t != "null");
                if types.len() == 1 {
                    let only = types.remove(0);
                    map.insert("type".into(), only);
                }
            }
            if let Some(Value::Array(any_of)) = map.get("anyOf")
                && any_of.len() == 2
                && any_of
                    .iter()
                    .any(|s| s.get("type") == Some(&Value::from("null")))
            {
                let keep = any_of
                    .iter()
                    .find(|s| s.get("type") != Some(&Value::from("null")))
                    .cloned();
                if let Some(Value::Object(inner)) = keep {
                    map.remove("anyOf");
                    for (k, v) in inner {
                        map.entry(k).or_insert(v);
                    }
                }
            }
            // `null`, `false` and empty defaults are what a client assumes anyway.
            let empty_default = match map.get("default") {
                Some(Value::Null) | Some(Value::Bool(false)) => true,
                Some(Value::Array(a)) => a.is_empty(),
                Some(Value::Object(o)) => o.is_empty(),
                Some(Value::String(s)) => s.is_empty(),
                _ => false,
            };
            if empty_default {
                map.remove("default");
            }
            // Property names are data, not schema keywords: recurse into their schemas only.
            for (key, child) in map.iter_mut() {
                if key == "properties" || key == "$defs" {
                    if let Value::Object(props) = child {
                        for schema in props.values_mut() {
                            slim(schema);
                        }
                    }
                } else {
                    slim(child);
                }
            }
        }
        Value::Array(items) => {
            for item in items {
                slim(item);
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;

    #[derive(Deserialize, JsonSchema)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct Sample {
        /// How wide.
        #[schemars(range(min = 2, max = 1000))]
        cols: Option<u16>,
        name: String,
    }

    #[test]
    fn input_schema_is_slim_but_keeps_ranges_and_descriptions() {
        let schema = Value::Object((*input::<Sample>()).clone());
        let cols = &schema["properties"]["cols"];
        assert_eq!(cols["type"], "integer");
        assert_eq!(cols["minimum"], 2);
        assert_eq!(cols["maximum"], 1000);
        assert_eq!(cols["description"], "How wide.");
        assert!(cols.get("format").is_none());
        assert!(schema.get("$schema").is_none());
        assert!(schema.get("title").is_none());
        assert_eq!(schema["required"], serde_json::json!(["name"]));
        assert!(schema.get("additionalProperties").is_none());
    }

    #[test]
    fn output_schema_is_an_object() {
        let schema = Value::Object((*output::<Sample>()).clone());
        assert_eq!(schema, serde_json::json!({"type": "object"}));
    }
}
