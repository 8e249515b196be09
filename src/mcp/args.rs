//! Argument parsing: the tool's own schema checks ranges, serde checks types and names.
//!
//! A range is declared once, on the parameter type (`#[schemars(range(..))]`), and enforced
//! here from the generated schema, so what a client reads is what the server applies. Every
//! failure names the field and says what to pass instead.

use rmcp::model::JsonObject;
use serde::de::DeserializeOwned;
use serde_json::Value;

use super::reply::ToolError;

/// Checks `args` against `schema`, then deserializes them into `T`.
pub fn parse<T: DeserializeOwned>(
    tool: &str,
    schema: &JsonObject,
    args: JsonObject,
) -> Result<T, ToolError> {
    let args = Value::Object(args);
    if let Err(problem) = check(schema, &args, "") {
        return Err(ToolError::new(format!(
            "Invalid arguments for {tool}: {problem}."
        )));
    }
    serde_path_to_error::deserialize(&args).map_err(|e| {
        let path = e.path().to_string();
        let inner = e.into_inner().to_string();
        let inner = inner
            .split(" at line ")
            .next()
            .unwrap_or(&inner)
            .to_string();
        if path == "." || path.is_empty() {
            ToolError::new(format!(
                "Invalid arguments for {tool}: {inner}. Call it with the fields its schema lists."
            ))
        } else {
            ToolError::new(format!("Invalid argument `{path}` for {tool}: {inner}."))
        }
    })
}

/// Walks `value` alongside `schema`, checking the bounds serde cannot see.
fn check(schema: &JsonObject, value: &Value, path: &str) -> Result<(), String> {
    let name = if path.is_empty() { "arguments" } else { path };
    match value {
        Value::Number(n) => {
            if let Some(min) = schema.get("minimum").and_then(Value::as_f64)
                && n.as_f64().is_some_and(|v| v < min)
            {
                return Err(format!(
                    "`{name}` is {n}, below the minimum {min}; {}",
                    range_hint(schema)
                ));
            }
            if let Some(max) = schema.get("maximum").and_then(Value::as_f64)
                && n.as_f64().is_some_and(|v| v > max)
            {
                return Err(format!(
                    "`{name}` is {n}, above the maximum {max}; {}",
                    range_hint(schema)
                ));
            }
        }
        Value::String(s) => {
            let len = s.chars().count() as u64;
            if let Some(min) = schema.get("minLength").and_then(Value::as_u64)
                && len < min
            {
                return Err(format!("`{name}` must have at least {min} characters"));
            }
            if let Some(max) = schema.get("maxLength").and_then(Value::as_u64)
                && len > max
            {
                return Err(format!("`{name}` must have at most {max} characters"));
            }
        }
        Value::Array(items) => {
            let len = items.len() as u64;
            if let Some(min) = schema.get("minItems").and_then(Value::as_u64)
                && len < min
            {
                return Err(format!(
                    "`{name}` must have at least {min} items, not {len}"
                ));
            }
            if let Some(max) = schema.get("maxItems").and_then(Value::as_u64)
                && len > max
            {
                return Err(format!("`{name}` must have at most {max} items, not {len}"));
            }
            if let Some(Value::Object(item_schema)) = schema.get("items") {
                for (i, item) in items.iter().enumerate() {
                    check(item_schema, item, &format!("{name}[{i}]"))?;
                }
            }
        }
        Value::Object(fields) => {
            if let Some(Value::Object(props)) = schema.get("properties") {
                for (key, field) in fields {
                    if let Some(Value::Object(field_schema)) = props.get(key) {
                        let child = if path.is_empty() {
                            key.clone()
                        } else {
                            format!("{path}.{key}")
                        };
                        check(field_schema, field, &child)?;
                    }
                }
            }
        }
        _ => {}
    }
    Ok(())
}

fn range_hint(schema: &JsonObject) -> String {
    match (
        schema.get("minimum").and_then(Value::as_f64),
        schema.get("maximum").and_then(Value::as_f64),
    ) {
        (Some(min), Some(max)) => format!("pass a value from {min} to {max}"),
        (Some(min), None) => format!("pass a value of at least {min}"),
        (None, Some(max)) => format!("pass a value of at most {max}"),
        (None, None) => "pass a value in range".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mcp::schema;
    use schemars::JsonSchema;
    use serde::Deserialize;
    use serde_json::json;

    #[derive(Debug, Deserialize, JsonSchema)]
    #[serde(deny_unknown_fields, rename_all = "camelCase")]
    #[allow(dead_code)]
    struct Params {
        #[schemars(range(min = 2, max = 1000))]
        cols: Option<u16>,
        #[serde(default)]
        items: Vec<Item>,
    }

    #[derive(Debug, Deserialize, JsonSchema)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct Item {
        #[schemars(range(max = 10))]
        n: u32,
    }

    fn run(args: Value) -> Result<Params, ToolError> {
        let Value::Object(args) = args else { panic!() };
        parse("t", &schema::input::<Params>(), args)
    }

    #[test]
    fn accepts_values_in_range() {
        let p = run(json!({"cols": 80, "items": [{"n": 3}]})).unwrap();
        assert_eq!(p.cols, Some(80));
    }

    #[test]
    fn names_the_field_out_of_range() {
        let e = run(json!({"cols": 5000})).unwrap_err().message;
        assert!(e.contains("`cols` is 5000, above the maximum 1000"), "{e}");
        let e = run(json!({"items": [{"n": 1}, {"n": 11}]}))
            .unwrap_err()
            .message;
        assert!(e.contains("`items[1].n`"), "{e}");
    }

    #[test]
    fn names_the_field_of_the_wrong_type() {
        let e = run(json!({"cols": "wide"})).unwrap_err().message;
        assert!(e.contains("`cols`") && e.contains("invalid type"), "{e}");
    }

    #[test]
    fn rejects_unknown_fields() {
        let e = run(json!({"colz": 3})).unwrap_err().message;
        assert!(e.contains("unknown field `colz`"), "{e}");
    }
}
