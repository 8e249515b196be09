//! Argument parsing: the tool's own schema checks ranges, serde checks types and names.
//!
//! A range is declared once, on the parameter type (`#[schemars(range(..))]`), and enforced
//! here from the generated schema, so what a client reads is what the server applies. Every
//! failure names the field and says what to pass instead; a number serde refuses (a
//! fraction, a negative count) is described by its schema range, not by a Rust type.
//!
//! Rules every tool shares, by field name, live here too:
//! - a pattern (`pattern`, `…Pattern`, at any depth) holds at most [`MAX_PATTERN`] bytes;
//! - `cmd`, `command`, `cwd`, `shell`, the items of `args` and the keys and values of `env`
//!   hold no NUL byte (no argv, environment or path can), and an `env` key is a non-empty
//!   name without `=`.

use rmcp::model::JsonObject;
use serde::de::DeserializeOwned;
use serde_json::Value;

use super::reply::ToolError;

/// Largest pattern (regex or literal) any tool accepts: 64 KiB.
pub const MAX_PATTERN: usize = 64 << 10;

/// Fields that become a program, an argument, a directory or a shell.
const PROCESS_FIELDS: [&str; 4] = ["cmd", "command", "cwd", "shell"];

/// The default of every boolean parameter that is on unless turned off
/// (`#[serde(default = "yes")]` with this imported).
pub fn yes() -> bool {
    true
}

/// Checks `args` against `schema`, then deserializes them into `T`.
pub fn parse<T: DeserializeOwned>(
    tool: &str,
    schema: &JsonObject,
    args: JsonObject,
) -> Result<T, ToolError> {
    let args = Value::Object(args);
    if let Err(problem) = check(schema, &args, "").and_then(|()| shared_rules(&args)) {
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
        if let Some(range) = whole_number_range(schema, &path, &inner) {
            // "invalid type: floating point `2.5`, expected u16" → "floating point 2.5".
            let given = inner
                .split_once(": ")
                .and_then(|(_, rest)| rest.split(", expected").next())
                .map(|v| format!(", not {}", v.replace('`', "")))
                .unwrap_or_default();
            return ToolError::new(format!(
                "Invalid argument `{path}` for {tool}: it must be {range}{given}."
            ));
        }
        if path == "." || path.is_empty() {
            ToolError::new(format!(
                "Invalid arguments for {tool}: {inner}. Call it with the fields its schema lists."
            ))
        } else {
            ToolError::new(format!("Invalid argument `{path}` for {tool}: {inner}."))
        }
    })
}

/// Checks `args` against `schema` only: names the schema does not list, and ranges. Used
/// by compatibility presets before their arguments are renamed onto a native tool's.
pub fn validate(tool: &str, schema: &JsonObject, args: &JsonObject) -> Result<(), ToolError> {
    if let Some(Value::Object(props)) = schema.get("properties") {
        if let Some(unknown) = args.keys().find(|k| !props.contains_key(*k)) {
            let mut known: Vec<&str> = props.keys().map(String::as_str).collect();
            known.sort_unstable();
            return Err(ToolError::new(format!(
                "Invalid arguments for {tool}: unknown field `{unknown}`; its fields are {}.",
                known.join(", ")
            )));
        }
        if let Some(Value::Array(required)) = schema.get("required")
            && let Some(missing) = required
                .iter()
                .filter_map(Value::as_str)
                .find(|r| !args.contains_key(*r))
        {
            return Err(ToolError::new(format!(
                "Invalid arguments for {tool}: missing field `{missing}`."
            )));
        }
    }
    let args = Value::Object(args.clone());
    check_types(schema, &args, "")
        .and_then(|()| check(schema, &args, ""))
        .map_err(|problem| ToolError::new(format!("Invalid arguments for {tool}: {problem}.")))
}

/// Checks every value against its schema's `type` and `enum` (a preset's schema is all the
/// checking its arguments get before they are renamed: `"1"` is not an integer id).
fn check_types(schema: &JsonObject, value: &Value, path: &str) -> Result<(), String> {
    let name = if path.is_empty() { "arguments" } else { path };
    let kind = match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(n) if n.is_i64() || n.is_u64() => "an integer",
        Value::Number(_) => "a fractional number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    };
    let fits = |t: &str| match t {
        "integer" => matches!(value, Value::Number(n) if n.is_i64() || n.is_u64()),
        "number" => value.is_number(),
        "string" => value.is_string(),
        "boolean" => value.is_boolean(),
        "array" => value.is_array(),
        "object" => value.is_object(),
        "null" => value.is_null(),
        _ => true,
    };
    let wanted: Vec<&str> = match schema.get("type") {
        Some(Value::String(t)) => vec![t.as_str()],
        Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    };
    if !wanted.is_empty() && !wanted.iter().any(|t| fits(t)) {
        let shown = match value {
            Value::String(s) => format!(" {}", serde_json::to_string(s).unwrap_or_default()),
            Value::Number(n) => format!(" {n}"),
            _ => String::new(),
        };
        return Err(format!(
            "`{name}` must be {}, not {kind}{shown}",
            wanted
                .iter()
                .map(|t| match *t {
                    "integer" => "an integer",
                    "number" => "a number",
                    "string" => "a string",
                    "boolean" => "a boolean",
                    "array" => "an array",
                    "object" => "an object",
                    other => other,
                })
                .collect::<Vec<_>>()
                .join(" or ")
        ));
    }
    if let Some(Value::Array(choices)) = schema.get("enum")
        && !choices.contains(value)
    {
        let listed: Vec<String> = choices.iter().map(Value::to_string).collect();
        return Err(format!(
            "`{name}` must be one of {}, not {value}",
            listed.join(", ")
        ));
    }
    match value {
        Value::Array(items) => {
            if let Some(Value::Object(item)) = schema.get("items") {
                for (i, v) in items.iter().enumerate() {
                    check_types(item, v, &format!("{name}[{i}]"))?;
                }
            }
        }
        Value::Object(fields) => {
            if let Some(Value::Object(props)) = schema.get("properties") {
                let required = |key: &str| {
                    schema
                        .get("required")
                        .and_then(Value::as_array)
                        .is_some_and(|r| r.iter().any(|k| k == key))
                };
                for (key, v) in fields {
                    // A null optional field reads as absent, as it does for the native tools.
                    if v.is_null() && !required(key) {
                        continue;
                    }
                    if let Some(Value::Object(field)) = props.get(key) {
                        let child = if path.is_empty() {
                            key.clone()
                        } else {
                            format!("{path}.{key}")
                        };
                        check_types(field, v, &child)?;
                    }
                }
            }
        }
        _ => {}
    }
    Ok(())
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

/// For serde's "expected u64"-style refusal, the range the schema declares, in words:
/// "a whole number from 0 to 600000".
fn whole_number_range(schema: &JsonObject, path: &str, inner: &str) -> Option<String> {
    let rust_int = [
        "u8", "u16", "u32", "u64", "usize", "i8", "i16", "i32", "i64", "isize",
    ];
    let expected = inner.rsplit("expected ").next()?;
    if !inner.contains("expected ") || !rust_int.contains(&expected.trim()) {
        return None;
    }
    let field = field_schema(schema, path);
    let num = |key: &str| field.and_then(|f| f.get(key)).and_then(Value::as_f64);
    let min = num("minimum").unwrap_or(if expected.starts_with('u') {
        0.0
    } else {
        f64::MIN
    });
    Some(match num("maximum") {
        Some(max) if min > f64::MIN => format!("a whole number from {min} to {max}"),
        Some(max) => format!("a whole number of at most {max}"),
        None if min > f64::MIN => format!("a whole number of at least {min}"),
        None => "a whole number".into(),
    })
}

/// The schema of the field at `path` (`a.b`, `items[2].n`), through properties and items.
fn field_schema<'a>(schema: &'a JsonObject, path: &str) -> Option<&'a JsonObject> {
    let mut at = schema;
    for part in path.split('.').filter(|p| !p.is_empty()) {
        let (name, indexed) = match part.find('[') {
            Some(i) => (&part[..i], true),
            None => (part, false),
        };
        at = match at.get("properties").and_then(|p| p.get(name)) {
            Some(Value::Object(field)) => field,
            _ => return None,
        };
        if indexed {
            at = match at.get("items") {
                Some(Value::Object(items)) => items,
                _ => return None,
            };
        }
    }
    Some(at)
}

/// The rules every tool shares by field name (see the module doc).
fn shared_rules(args: &Value) -> Result<(), String> {
    patterns_fit(args, "")?;
    let Value::Object(fields) = args else {
        return Ok(());
    };
    let nul = |field: &str| {
        format!(
            "`{field}` contains a NUL byte, which no program, argument, environment variable \
             or path can hold; remove it"
        )
    };
    for name in PROCESS_FIELDS {
        if let Some(Value::String(s)) = fields.get(name)
            && s.contains('\0')
        {
            return Err(nul(name));
        }
    }
    if let Some(Value::Array(items)) = fields.get("args") {
        for (i, item) in items.iter().enumerate() {
            if item.as_str().is_some_and(|s| s.contains('\0')) {
                return Err(nul(&format!("args[{i}]")));
            }
        }
    }
    if let Some(Value::Object(env)) = fields.get("env") {
        for (key, value) in env {
            if key.contains('\0') {
                return Err(nul(&format!("env key {key:?}")));
            }
            if key.is_empty() || key.contains('=') {
                return Err(format!(
                    "`env` key {key:?} is not a variable name (it is empty or holds `=`); \
                     pass {{\"NAME\": \"value\"}}"
                ));
            }
            if value.as_str().is_some_and(|s| s.contains('\0')) {
                return Err(nul(&format!("env.{key}")));
            }
        }
    }
    Ok(())
}

/// Every `pattern` / `…Pattern` string, at any depth, within [`MAX_PATTERN`] bytes.
fn patterns_fit(value: &Value, path: &str) -> Result<(), String> {
    match value {
        Value::Object(fields) => {
            for (key, field) in fields {
                let child = if path.is_empty() {
                    key.clone()
                } else {
                    format!("{path}.{key}")
                };
                let is_pattern =
                    key == "pattern" || key.ends_with("Pattern") || key.ends_with("_pattern");
                if is_pattern
                    && let Value::String(s) = field
                    && s.len() > MAX_PATTERN
                {
                    return Err(format!(
                        "`{child}` is {} bytes; a pattern holds at most {MAX_PATTERN} bytes (64 KiB), \
                         so match a shorter, distinctive part",
                        s.len()
                    ));
                }
                patterns_fit(field, &child)?;
            }
        }
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                patterns_fit(item, &format!("{path}[{i}]"))?;
            }
        }
        _ => {}
    }
    Ok(())
}

fn range_hint(schema: &JsonObject) -> String {
    let whole = match schema.get("type") {
        Some(Value::String(t)) => t == "integer",
        Some(Value::Array(types)) => types.iter().any(|t| t == "integer"),
        _ => false,
    };
    if whole {
        let min = schema.get("minimum").and_then(Value::as_f64).unwrap_or(0.0);
        if let Some(max) = schema.get("maximum").and_then(Value::as_f64) {
            return format!("pass a whole number from {min} to {max}");
        }
    }
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
        assert!(
            e.contains("`cols`") && e.contains("whole number") && e.contains("\"wide\""),
            "{e}"
        );
    }

    #[test]
    fn numbers_serde_refuses_are_described_by_their_range() {
        let e = run(json!({"cols": 2.5})).unwrap_err().message;
        assert!(
            e.contains("`cols`")
                && e.contains("a whole number from 2 to 1000, not floating point 2.5"),
            "{e}"
        );
        let e = run(json!({"items": [{"n": -1}]})).unwrap_err().message;
        assert!(
            e.contains("`items[0].n`") && e.contains("a whole number from 0 to 10"),
            "{e}"
        );
    }

    #[test]
    fn shared_rules_name_the_field() {
        let rule = |v: Value| shared_rules(&v).unwrap_err();
        assert!(rule(json!({"args": ["a", "b\0"]})).contains("`args[1]`"));
        assert!(rule(json!({"env": {"A": "x\0"}})).contains("`env.A`"));
        assert!(rule(json!({"env": {"A=B": "x"}})).contains("holds `=`"));
        let long = "x".repeat(MAX_PATTERN + 1);
        assert!(rule(json!({"triggers": [{"pattern": long}]})).contains("`triggers[0].pattern`"));
        assert!(shared_rules(&json!({"data": "\0", "pattern": "x".repeat(MAX_PATTERN)})).is_ok());
    }

    #[test]
    fn rejects_unknown_fields() {
        let e = run(json!({"colz": 3})).unwrap_err().message;
        assert!(e.contains("unknown field `colz`"), "{e}");
    }
}
