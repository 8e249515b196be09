//! Reshaping a native tool into a preset's tool at the JSON level.
//!
//! An [`Adapt`] says how a preset's tool differs from the native tool it drives: its name
//! and description, native parameters it hides, parameters it renames, its own defaults,
//! arguments it always passes, and how the native result is reshaped. The preset's schema
//! is the native one edited accordingly, and its arguments are checked against that schema
//! (unknown names refused, ranges enforced) before they are renamed and handed to the
//! native tool's own parsing and handler. No behaviour lives here: only names and shapes.

use std::sync::Arc;

use rmcp::model::JsonObject;
use serde_json::Value;

use super::case;
use crate::mcp::args;
use crate::mcp::registry::{BoxFuture, ToolCtx, ToolDef};
use crate::mcp::reply::{Reply, ToolError};

/// Turns the native result into the preset's (the call's arguments, as the preset got them,
/// come along for results that echo them).
pub type Reshape = Arc<dyn Fn(Value, &JsonObject) -> Result<Value, ToolError> + Send + Sync>;
/// Refuses arguments the preset's contract forbids (checked before the native call).
pub type Check = fn(&JsonObject) -> Result<(), ToolError>;
/// Edits the native arguments just before the call (values whose type or meaning differs).
pub type Pre = fn(&mut JsonObject);
/// Replaces "call the native tool, then reshape": gets the native tool, the native
/// arguments and the preset's, and makes the whole reply (prose presets read more).
pub type Finish =
    Arc<dyn Fn(ToolCtx, Arc<ToolDef>, JsonObject, JsonObject) -> BoxFuture + Send + Sync>;

/// How one preset tool maps onto one native tool.
pub struct Adapt {
    pub name: &'static str,
    pub description: &'static str,
    /// Native parameters the preset neither shows nor accepts.
    pub hide: &'static [&'static str],
    /// `(preset name, native name)` pairs.
    pub rename: &'static [(&'static str, &'static str)],
    /// Parameters the preset requires although the native tool does not.
    pub require: &'static [&'static str],
    /// The preset's defaults, by preset name: shown in the schema, passed when absent.
    pub defaults: Vec<(&'static str, Value)>,
    /// Native arguments always passed, not visible in the preset's schema.
    pub fixed: Vec<(&'static str, Value)>,
    pub check: Option<Check>,
    pub reshape: Option<Reshape>,
    /// Property schemas replaced or added, by preset name.
    pub props: Vec<(&'static str, Value)>,
    pub pre: Option<Pre>,
    pub finish: Option<Finish>,
    /// The preset spells fields in snake_case (see [`super::case`]): its schema, arguments,
    /// results, descriptions and error sentences are converted from the native camelCase.
    pub snake: bool,
}

impl Adapt {
    /// A preset tool that is the native tool under the same name, with nothing changed
    /// except the description.
    pub fn same(name: &'static str, description: &'static str) -> Self {
        Adapt {
            name,
            description,
            hide: &[],
            rename: &[],
            require: &[],
            defaults: Vec::new(),
            fixed: Vec::new(),
            check: None,
            reshape: None,
            props: Vec::new(),
            pre: None,
            finish: None,
            snake: false,
        }
    }

    /// Builds the preset's tool over `native`.
    pub fn build(self, native: Arc<ToolDef>) -> ToolDef {
        let mut schema = self.schema(&native.input_schema);
        let Adapt {
            name,
            mut description,
            rename,
            defaults,
            fixed,
            check,
            reshape,
            pre,
            finish,
            snake,
            ..
        } = self;
        if snake {
            schema = case::snake_schema(schema);
            // Built once per tool at start-up and kept for the server's life.
            description = Box::leak(case::snake_text(description).into_boxed_str());
        }
        let json_results = finish.is_none();
        let shown = Arc::new(schema.clone());
        let defaults = Arc::new(defaults);
        let fixed = Arc::new(fixed);
        let target = native.clone();
        let handler = Arc::new(move |ctx: ToolCtx, raw: JsonObject| {
            let (native, shown, defaults, fixed, reshape, finish) = (
                target.clone(),
                shown.clone(),
                defaults.clone(),
                fixed.clone(),
                reshape.clone(),
                finish.clone(),
            );
            Box::pin(async move {
                args::validate(name, &shown, &raw)?;
                if let Some(check) = check {
                    check(&raw)?;
                }
                let mut given = raw;
                for (key, value) in defaults.iter() {
                    given
                        .entry(key.to_string())
                        .or_insert_with(|| value.clone());
                }
                let mut call = JsonObject::new();
                for (key, value) in &given {
                    let native_key = match rename.iter().find(|(p, _)| p == key) {
                        Some((_, n)) => n.to_string(),
                        None if snake => case::camel(key),
                        None => key.clone(),
                    };
                    call.insert(native_key, value.clone());
                }
                for (key, value) in fixed.iter() {
                    call.insert(key.to_string(), value.clone());
                }
                if let Some(pre) = pre {
                    pre(&mut call);
                }
                if let Some(finish) = finish {
                    return finish(ctx, native, call, given).await;
                }
                let mut reply = native.call(ctx, call).await.map_err(|e| {
                    if !snake {
                        return e;
                    }
                    let partial = e.partial.map(case::snake_object);
                    let mut e = ToolError::new(case::snake_text(&e.message));
                    if let Some(partial) = partial {
                        e = e.with_partial(partial);
                    }
                    e
                })?;
                if snake {
                    reply.value = case::snake_keys(reply.value);
                }
                match reshape {
                    Some(reshape) => Ok(Reply {
                        value: reshape(reply.value, &given)?,
                        images: reply.images,
                    }),
                    None => Ok(reply),
                }
            }) as BoxFuture
        });
        ToolDef::raw(
            name,
            native.title,
            description,
            native.hints,
            schema,
            json_results,
            handler,
        )
    }

    /// The native schema with this adapter's edits.
    fn schema(&self, native: &JsonObject) -> JsonObject {
        let mut schema = native.clone();
        let preset_name = |native_name: &str| -> String {
            self.rename
                .iter()
                .find(|(_, n)| *n == native_name)
                .map_or(native_name, |(p, _)| p)
                .to_string()
        };
        if let Some(Value::Object(props)) = schema.get_mut("properties") {
            let old = std::mem::take(props);
            for (key, mut value) in old {
                if self.hide.contains(&key.as_str()) {
                    continue;
                }
                let key = preset_name(&key);
                if let Some((_, default)) = self.defaults.iter().find(|(k, _)| *k == key)
                    && let Value::Object(prop) = &mut value
                {
                    prop.insert("default".into(), default.clone());
                }
                props.insert(key, value);
            }
            for (key, value) in &self.props {
                props.insert(key.to_string(), value.clone());
            }
        }
        let mut required: Vec<String> = match schema.get("required") {
            Some(Value::Array(r)) => r
                .iter()
                .filter_map(Value::as_str)
                .filter(|r| !self.hide.contains(r))
                .map(preset_name)
                .collect(),
            _ => Vec::new(),
        };
        for r in self.require {
            if !required.iter().any(|x| x == r) {
                required.push(r.to_string());
            }
        }
        if required.is_empty() {
            schema.remove("required");
        } else {
            schema.insert(
                "required".into(),
                Value::Array(required.into_iter().map(Value::String).collect()),
            );
        }
        schema
    }
}

/// Moves `from` to `to` in a result object (when present).
pub fn rename_field(value: &mut Value, from: &str, to: &str) {
    if let Value::Object(map) = value
        && let Some(v) = map.remove(from)
    {
        map.insert(to.to_string(), v);
    }
}

/// Removes fields from a result object.
pub fn drop_fields(value: &mut Value, fields: &[&str]) {
    if let Value::Object(map) = value {
        for f in fields {
            map.remove(*f);
        }
    }
}
