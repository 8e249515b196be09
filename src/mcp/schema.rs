//! JSON schemas for tool inputs and outputs, generated from the Rust types and slimmed.
//!
//! Every byte of `tools/list` is paid for in every agent's context window, so schemas keep
//! only what a client or a model uses: types, required fields, defaults, ranges, enums and
//! short descriptions on inputs. Titles, formats and `$schema` go; outputs also drop
//! descriptions.

use std::sync::Arc;

use rmcp::model::JsonObject;
use schemars::JsonSchema;
use schemars::generate::SchemaSettings;
use serde_json::{Map, Value};

/// The schema of a tool's arguments.
pub fn input<T: JsonSchema>() -> Arc<JsonObject> {
    Arc::new(generate::<T>(SchemaSettings::draft2020_12(), true))
}

/// The schema of a tool's structured result.
pub fn output<T: JsonSchema>() -> Arc<JsonObject> {
    Arc::new(generate::<T>(
        SchemaSettings::draft2020_12().for_serialize(),
        false,
    ))
}

fn generate<T: JsonSchema>(settings: SchemaSettings, input: bool) -> JsonObject {
    let schema = settings.into_generator().into_root_schema_for::<T>();
    let mut value = serde_json::to_value(schema).expect("a schema is always JSON");
    slim(&mut value, input);
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

/// Removes what no client needs, in place. Inputs keep descriptions and lose `null` types
/// (an omitted optional argument says the same); outputs lose descriptions but keep `null`,
/// because a result really carries it (e.g. `exitCode: null` after a timeout) and a client
/// validating `structuredContent` against the output schema must accept it.
fn slim(value: &mut Value, input: bool) {
    let keep_descriptions = input;
    match value {
        Value::Object(map) => {
            for key in ["$schema", "title", "format"] {
                map.remove(key);
            }
            if !keep_descriptions {
                map.remove("description");
            }
            // `Option<T>` fields: the null is accepted anyway; say the real type.
            if input && let Some(Value::Array(types)) = map.get_mut("type") {
                types.retain(|t| t != "null");
                if types.len() == 1 {
                    let only = types.remove(0);
                    map.insert("type".into(), only);
                }
            }
            if input
                && let Some(Value::Array(any_of)) = map.get("anyOf")
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
            if map.get("default") == Some(&Value::Null) {
                map.remove("default");
            }
            // Property names are data, not schema keywords: recurse into their schemas only.
            for (key, child) in map.iter_mut() {
                if key == "properties" || key == "$defs" {
                    if let Value::Object(props) = child {
                        for schema in props.values_mut() {
                            slim(schema, input);
                        }
                    }
                } else {
                    slim(child, input);
                }
            }
        }
        Value::Array(items) => {
            for item in items {
                slim(item, input);
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
        assert_eq!(schema["additionalProperties"], false);
    }

    #[test]
    fn output_schema_drops_descriptions() {
        let schema = Value::Object((*output::<Sample>()).clone());
        assert!(schema["properties"]["cols"].get("description").is_none());
        assert_eq!(schema["type"], "object");
        // A result may carry null for an Option; the output schema must admit it.
        assert_eq!(
            schema["properties"]["cols"]["type"],
            serde_json::json!(["integer", "null"])
        );
    }
}
