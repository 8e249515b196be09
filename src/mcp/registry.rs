//! The tool registry: every tool declared once, and the surface built from the config.
//!
//! A [`ToolDef`] is a tool's whole declaration: name, title, description, annotations, input
//! and output schemas, and its handler. [`Registry::build`] splits the enabled tools into
//! the ones registered directly (full schemas in `tools/list`) and the extras reached
//! through the `terminal_extra` meta-tool, which an agent pays ~30 tokens for until it
//! needs them. A call through `terminal_extra` runs exactly the same parsing and handler as
//! a direct call.

use std::collections::HashMap;
use std::future::Future;
use std::sync::Arc;

use rmcp::model::{JsonObject, Tool, ToolAnnotations};
use schemars::JsonSchema;
use serde::Serialize;
use serde::de::DeserializeOwned;

use super::reply::{Reply, ToolError};
use super::{args, schema};

pub use super::ctx::{BoxFuture, Forward, ToolCtx};
pub type Handler = Arc<dyn Fn(ToolCtx, JsonObject) -> BoxFuture + Send + Sync>;
/// The local parser's verdict on a call's raw arguments (nothing runs).
type Check = Arc<dyn Fn(JsonObject) -> Result<(), ToolError> + Send + Sync>;

/// The behaviour hints a client shows its user before a call.
#[derive(Debug, Clone, Copy)]
pub struct Hints {
    pub read_only: bool,
    pub destructive: bool,
    pub idempotent: bool,
    pub open_world: bool,
}

impl Hints {
    /// Changes things and may destroy them (runs input, kills processes, overwrites files).
    pub const DESTRUCTIVE: Hints = Hints {
        read_only: false,
        destructive: true,
        idempotent: false,
        open_world: false,
    };
    /// Sends input to programs or runs commands: anything may happen, out in the world too.
    pub const RUNS_COMMANDS: Hints = Hints {
        read_only: false,
        destructive: true,
        idempotent: false,
        open_world: true,
    };
    /// Adds something new (starts a session) without harming what exists.
    pub const ADDITIVE: Hints = Hints {
        read_only: false,
        destructive: false,
        idempotent: false,
        open_world: false,
    };
    /// Sets a state; doing it twice is the same as once.
    pub const IDEMPOTENT: Hints = Hints {
        read_only: false,
        destructive: false,
        idempotent: true,
        open_world: false,
    };
    /// Looks, changes nothing.
    pub const READ_ONLY: Hints = Hints {
        read_only: true,
        destructive: false,
        idempotent: true,
        open_world: false,
    };
    /// Ends or removes something; doing it again changes nothing more (stop, kill).
    pub const ENDS: Hints = Hints {
        read_only: false,
        destructive: true,
        idempotent: true,
        open_world: false,
    };
}

/// A result with PNG images shown after its JSON (see [`ToolDef::with_images`]).
pub struct WithImages<R> {
    pub value: R,
    pub images: Vec<Vec<u8>>,
}

/// One tool, declared once.
pub struct ToolDef {
    pub name: &'static str,
    pub title: &'static str,
    pub description: &'static str,
    pub hints: Hints,
    pub input_schema: Arc<JsonObject>,
    /// `None` for a tool whose results are prose text (a preset's), not JSON.
    pub output_schema: Option<Arc<JsonObject>>,
    /// Where its calls may go besides this machine.
    pub forward: Forward,
    handler: Handler,
    /// The parser alone, for a call about to be forwarded.
    check: Option<Check>,
}

impl ToolDef {
    /// Declares a tool whose arguments are `P` and whose structured result is `R`.
    pub fn new<P, R, F, Fut>(
        name: &'static str,
        title: &'static str,
        description: &'static str,
        hints: Hints,
        handler: F,
    ) -> Self
    where
        P: DeserializeOwned + JsonSchema + Send + 'static,
        R: Serialize + JsonSchema + 'static,
        F: Fn(ToolCtx, P) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<R, ToolError>> + Send + 'static,
    {
        Self::declare::<P, R>(name, title, description, hints, move |ctx, p| {
            let fut = handler(ctx, p);
            Box::pin(async move { Reply::json(&fut.await?) }) as BoxFuture
        })
    }

    /// Like [`ToolDef::new`], for a tool whose result also carries PNG images (screenshots),
    /// shown as image blocks after the JSON.
    pub fn with_images<P, R, F, Fut>(
        name: &'static str,
        title: &'static str,
        description: &'static str,
        hints: Hints,
        handler: F,
    ) -> Self
    where
        P: DeserializeOwned + JsonSchema + Send + 'static,
        R: Serialize + JsonSchema + 'static,
        F: Fn(ToolCtx, P) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<WithImages<R>, ToolError>> + Send + 'static,
    {
        Self::declare::<P, R>(name, title, description, hints, move |ctx, p| {
            let fut = handler(ctx, p);
            Box::pin(async move {
                let out = fut.await?;
                let mut reply = Reply::json(&out.value)?;
                reply.images = out.images;
                Ok(reply)
            }) as BoxFuture
        })
    }

    /// The shared part of the constructors: schemas from `P` and `R`, parsing, the handler.
    fn declare<P, R>(
        name: &'static str,
        title: &'static str,
        description: &'static str,
        hints: Hints,
        typed: impl Fn(ToolCtx, P) -> BoxFuture + Send + Sync + 'static,
    ) -> Self
    where
        P: DeserializeOwned + JsonSchema + Send + 'static,
        R: JsonSchema + 'static,
    {
        let input_schema = schema::input::<P>();
        let output_schema = schema::output::<R>();
        let typed = Arc::new(typed);
        let parse_schema = input_schema.clone();
        let check_schema = input_schema.clone();
        let local: Handler = Arc::new(move |ctx: ToolCtx, raw: JsonObject| {
            let parsed = args::parse::<P>(name, &parse_schema, raw);
            match parsed {
                Ok(p) => typed(ctx, p),
                Err(e) => Box::pin(async move { Err(e) }) as BoxFuture,
            }
        });
        let check: Check =
            Arc::new(move |raw: JsonObject| args::parse::<P>(name, &check_schema, raw).map(|_| ()));
        ToolDef {
            name,
            title,
            description,
            hints,
            input_schema,
            output_schema: Some(output_schema),
            forward: Forward::Sessions,
            handler: local,
            check: Some(check),
        }
    }

    /// Declares where the tool's calls may go besides this machine (default:
    /// [`Forward::Sessions`]).
    pub fn forward(mut self, forward: Forward) -> Self {
        self.forward = forward;
        self
    }

    /// Declares a tool from a ready schema and an untyped handler: what a compatibility
    /// preset builds when it reshapes a native tool's parameters (see `mcp::compat`).
    /// `json_results: false` declares no output schema (the results are prose).
    pub fn raw(
        name: &'static str,
        title: &'static str,
        description: &'static str,
        hints: Hints,
        input_schema: JsonObject,
        json_results: bool,
        handler: Handler,
    ) -> Self {
        let mut output = JsonObject::new();
        output.insert("type".into(), "object".into());
        ToolDef {
            name,
            title,
            description,
            hints,
            input_schema: Arc::new(input_schema),
            output_schema: json_results.then(|| Arc::new(output)),
            forward: Forward::Never,
            handler,
            check: None,
        }
    }

    /// Runs the tool: forwarded when its [`Forward`] and the arguments say so (a `host`, a
    /// session on a remote termpilot), else parse, validate, handle, shape here.
    pub async fn call(&self, ctx: ToolCtx, args: JsonObject) -> Result<Reply, ToolError> {
        use crate::mcp::remote::forward;
        if forward::wants(self.forward, &args) {
            let checked = self
                .check
                .as_ref()
                .map_or(Ok(()), |check| check(args.clone()));
            let local = self.handler.clone();
            return forward::call(
                self.name,
                self.forward,
                ctx,
                args,
                checked,
                move |ctx, raw| local(ctx, raw),
            )
            .await;
        }
        (self.handler)(ctx, args).await
    }

    /// The declaration as `tools/list` shows it.
    pub fn to_tool(&self) -> Tool {
        let annotations = ToolAnnotations::new()
            .read_only(self.hints.read_only)
            .destructive(self.hints.destructive)
            .idempotent(self.hints.idempotent)
            .open_world(self.hints.open_world);
        let tool = Tool::new(self.name, self.description, self.input_schema.clone())
            .with_title(self.title)
            .with_annotations(annotations);
        match &self.output_schema {
            Some(schema) => tool.with_raw_output_schema(schema.clone()),
            None => tool,
        }
    }
}

/// The tool surface: which tools are registered directly, which sit behind `terminal_extra`,
/// and which are gone.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Surface {
    /// Tools registered directly with full schemas; `None` = the default core set.
    pub core_tools: Option<Vec<String>>,
    /// Tools removed entirely.
    pub disabled_tools: Vec<String>,
    /// Every enabled tool registered directly and no `terminal_extra` (set by
    /// `--core-tools all` or an explicitly empty `--disabled-tools ""`).
    pub all_direct: bool,
}

/// The name of the meta-tool.
pub const EXTRA: &str = "terminal_extra";

/// The tools registered directly unless the config says otherwise (SPEC §1).
pub const DEFAULT_CORE: &[&str] = &[
    "terminal_start",
    "terminal_exec",
    "terminal_run",
    "terminal_read",
    "terminal_write",
    "terminal_wait",
    "terminal_stop",
    "terminal_list",
];

/// The enabled tools of this server, split into direct ones and extras.
pub struct Registry {
    tools: HashMap<&'static str, Arc<ToolDef>>,
    direct: Vec<&'static str>,
    extras: Vec<&'static str>,
    disabled: Vec<String>,
    listing: Vec<Tool>,
}

impl Registry {
    /// Builds the surface; an unknown tool name in the config is an error at start-up.
    /// `extra` declares `terminal_extra` for the extras' names (`tools::extra::declaration`).
    pub fn build(
        all: Vec<ToolDef>,
        surface: &Surface,
        extra: fn(&[&'static str]) -> Tool,
    ) -> Result<Self, String> {
        let known: Vec<&'static str> = all.iter().map(|t| t.name).collect();
        let check = |names: &[String], flag: &str| -> Result<(), String> {
            for n in names {
                if !known.contains(&n.as_str()) {
                    return Err(format!(
                        "Unknown tool `{n}` in {flag}; known tools are: {}.",
                        known.join(", ")
                    ));
                }
            }
            Ok(())
        };
        check(&surface.disabled_tools, "--disabled-tools")?;
        if let Some(core) = &surface.core_tools {
            check(core, "--core-tools")?;
        }
        let enabled: Vec<ToolDef> = all
            .into_iter()
            .filter(|t| !surface.disabled_tools.iter().any(|d| d == t.name))
            .collect();
        let is_direct = |name: &str| -> bool {
            if surface.all_direct {
                return true;
            }
            match &surface.core_tools {
                Some(core) => core.iter().any(|c| c == name),
                None => DEFAULT_CORE.contains(&name),
            }
        };
        let mut direct = Vec::new();
        let mut extras = Vec::new();
        let mut tools = HashMap::new();
        for tool in enabled {
            if is_direct(tool.name) {
                direct.push(tool.name);
            } else {
                extras.push(tool.name);
            }
            tools.insert(tool.name, Arc::new(tool));
        }
        let mut registry = Registry {
            tools,
            direct,
            extras,
            disabled: surface.disabled_tools.clone(),
            listing: Vec::new(),
        };
        registry.listing = registry.make_listing(extra);
        Ok(registry)
    }

    fn make_listing(&self, extra: fn(&[&'static str]) -> Tool) -> Vec<Tool> {
        let mut listing: Vec<Tool> = self
            .direct
            .iter()
            .map(|name| self.tools[name].to_tool())
            .collect();
        if !self.extras.is_empty() {
            listing.push(extra(&self.extras));
        }
        listing
    }

    /// What `tools/list` returns.
    pub fn listing(&self) -> &[Tool] {
        &self.listing
    }

    /// Any enabled tool, direct or extra, by name.
    pub fn enabled(&self, name: &str) -> Option<&Arc<ToolDef>> {
        self.tools.get(name)
    }

    /// The extras, in declaration order.
    pub fn extras(&self) -> impl Iterator<Item = &Arc<ToolDef>> {
        self.extras.iter().map(|n| &self.tools[n])
    }

    pub fn has_extras(&self) -> bool {
        !self.extras.is_empty()
    }

    pub fn is_disabled(&self, name: &str) -> bool {
        self.disabled.iter().any(|d| d == name)
    }
}

#[cfg(test)]
mod tests {
    use super::Forward;

    /// A tool that takes a `host` parameter (in its schema, or hidden from it as
    /// `terminal_start`'s is) but is not forwardable would run a remote call here, on the
    /// wrong machine. (Tools forwarded to a remote termpilot only, such as `run_python`,
    /// take `host` without declaring it: the forward happens before their parser.)
    #[test]
    fn every_tool_with_a_host_parameter_is_forwardable() {
        let tools = crate::mcp::tools::all();
        let mut with_host = Vec::new();
        for tool in &tools {
            let mut host = rmcp::model::JsonObject::new();
            host.insert("host".into(), "box".into());
            let check = tool
                .check
                .as_ref()
                .expect("a native tool parses its arguments");
            let takes_host = match check(host) {
                Ok(()) => true,
                Err(e) => !e.message.contains("unknown field `host`"),
            };
            if takes_host {
                with_host.push(tool.name);
            }
            assert!(
                !takes_host || tool.forward.takes_host(),
                "{} has a `host` parameter but is not forwardable ({:?}); declare its Forward",
                tool.name,
                tool.forward
            );
            assert_ne!(
                tool.forward,
                Forward::Never,
                "{}: native tools forward",
                tool.name
            );
        }
        for name in ["terminal_start", "terminal_run", "terminal_run_paged"] {
            assert!(with_host.contains(&name), "{name}: {with_host:?}");
        }
    }
}
