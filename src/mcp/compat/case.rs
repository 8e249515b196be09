//! snake_case for a preset whose seed spells its fields that way (director-shell).
//!
//! The native surface names every parameter and result field in camelCase. A snake_case
//! preset shows the native schemas with snake_case property names, turns its arguments'
//! names back into camelCase before the native tool parses them, and turns every object key
//! of the result (at any depth) into snake_case. Results hold no user-chosen keys (env maps
//! are arguments, never echoed), so converting every key is safe. Sentences (descriptions,
//! errors) name fields too; only the names in [`FIELDS`] are converted there, so that a path
//! or a command quoted in an error is never touched.

use rmcp::model::JsonObject;
use serde_json::Value;

/// `timeoutMs` → `timeout_ms`.
pub fn snake(name: &str) -> String {
    let mut out = String::with_capacity(name.len() + 4);
    for c in name.chars() {
        if c.is_ascii_uppercase() {
            out.push('_');
            out.push(c.to_ascii_lowercase());
        } else {
            out.push(c);
        }
    }
    out
}

/// `timeout_ms` → `timeoutMs`.
pub fn camel(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    let mut upper = false;
    for c in name.chars() {
        if c == '_' {
            upper = true;
        } else if upper {
            out.push(c.to_ascii_uppercase());
            upper = false;
        } else {
            out.push(c);
        }
    }
    out
}

/// Every object key in `value`, at any depth, in snake_case.
pub fn snake_keys(value: Value) -> Value {
    match value {
        Value::Object(map) => Value::Object(
            map.into_iter()
                .map(|(k, v)| (snake(&k), snake_keys(v)))
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.into_iter().map(snake_keys).collect()),
        other => other,
    }
}

/// A result object's keys in snake_case (for errors' partial results).
pub fn snake_object(map: JsonObject) -> JsonObject {
    match snake_keys(Value::Object(map)) {
        Value::Object(map) => map,
        _ => unreachable!("an object stays an object"),
    }
}

/// A tool's input schema with its property names (and `required`) in snake_case.
pub fn snake_schema(mut schema: JsonObject) -> JsonObject {
    if let Some(Value::Object(props)) = schema.get_mut("properties") {
        let old = std::mem::take(props);
        for (key, value) in old {
            props.insert(snake(&key), value);
        }
    }
    if let Some(Value::Array(required)) = schema.get_mut("required") {
        for r in required.iter_mut() {
            if let Value::String(s) = r {
                *s = snake(s);
            }
        }
    }
    schema
}

/// The camelCase field names that sentences mention, as native descriptions and errors
/// spell them.
pub const FIELDS: &[&str] = &[
    "jobId",
    "tailLines",
    "timeoutMs",
    "timedOut",
    "exitCode",
    "runtimeMs",
    "startedAt",
    "endedAt",
    "logPaths",
    "exitMarker",
    "outputTail",
    "waitedMs",
    "oldText",
    "newText",
    "replaceAll",
    "breakLinks",
    "caseSensitive",
    "contextLines",
    "maxResults",
    "filesScanned",
    "skippedBinary",
    "skippedLarge",
    "lineNumber",
    "waitMs",
    "acquiredAt",
    "heldMs",
    "nameFilter",
    "windowTitle",
    "outputPath",
    "workingSetBytes",
    "durationMs",
    "pythonExecutable",
    "totalBytes",
    "fullOutputPath",
    "bytesWritten",
    "createDirs",
    "appName",
    "appType",
];

/// `text` with every whole word of [`FIELDS`] in snake_case.
pub fn snake_text(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 16);
    let mut rest = text;
    let word = |c: char| c.is_ascii_alphanumeric() || c == '_';
    while let Some(start) = rest.find(|c: char| c.is_ascii_alphabetic()) {
        let (before, from) = rest.split_at(start);
        out.push_str(before);
        let end = from.find(|c: char| !word(c)).unwrap_or(from.len());
        let (w, after) = from.split_at(end);
        // A word glued to a path or a dotted name is not a field name.
        let glued = out.ends_with(['/', '.', '\\']) || after.starts_with(['/', '\\']);
        if !glued && FIELDS.contains(&w) {
            out.push_str(&snake(w));
        } else {
            out.push_str(w);
        }
        rest = after;
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn names_both_ways() {
        for (c, s) in [
            ("timeoutMs", "timeout_ms"),
            ("workingSetBytes", "working_set_bytes"),
            ("path", "path"),
        ] {
            assert_eq!(snake(c), s);
            assert_eq!(camel(s), c);
        }
    }

    #[test]
    fn keys_at_every_depth_and_no_values() {
        let v = json!({"jobId": "j", "logPaths": {"stdoutPath": "/a/bC"}, "matches": [{"lineNumber": 3, "text": "oldText"}]});
        assert_eq!(
            snake_keys(v),
            json!({"job_id": "j", "log_paths": {"stdout_path": "/a/bC"}, "matches": [{"line_number": 3, "text": "oldText"}]})
        );
    }

    #[test]
    fn sentences_change_field_names_only() {
        assert_eq!(
            snake_text("`oldText` was not found in `/tmp/oldText/x.txt`; pass replaceAll true."),
            "`old_text` was not found in `/tmp/oldText/x.txt`; pass replace_all true."
        );
        assert_eq!(
            snake_text("raise timeoutMs (max 600000)"),
            "raise timeout_ms (max 600000)"
        );
    }
}
