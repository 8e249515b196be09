//! The rmcp handler: server identity, `tools/list` and `tools/call`.
//!
//! The handler is a cheap clone of two `Arc`s. rmcp may build one per request (Streamable
//! HTTP, the stateless 2026-07-28 revision), which is fine: all state is in [`Core`].

use std::sync::Arc;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, GetSkillRequestParams, GetSkillResult, Implementation,
    InitializeRequestParams, InitializeResult, ListResourcesResult, ListSkillsResult,
    ListToolsResult, PaginatedRequestParams, ReadResourceRequestParams, ReadResourceResponse,
    ServerCapabilities, ServerConfig, SubscriptionFilter,
};
use rmcp::service::{NotificationContext, RequestContext, SubscriptionContext};
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler};
use termpilot_core::Core;

use super::compat::{ErrorShape, Identity};
use super::drain::{Call, Drain};
use super::progress;
use super::registry::{EXTRA, Registry, ToolCtx};
use super::resources::Resources;
use super::tools;

/// What the server tells a client about how to use it.
const INSTRUCTIONS: &str = "termpilot gives you real terminals. Core tools are listed directly; \
more sit behind terminal_extra ({list:true} shows them). Every call returns JSON; errors say what to do next.";

/// The MCP server: one per connection (or per request), all sharing one core.
#[derive(Clone)]
pub struct Server {
    core: Arc<Core>,
    registry: Arc<Registry>,
    resources: Arc<Resources>,
    /// The server's name, instructions and error shape (a `--compat` preset's, or native).
    identity: Option<Arc<Identity>>,
    /// The calls in flight, answered before the transport closes (see [`Drain`]).
    drain: Drain,
}

impl Server {
    pub fn new(core: Arc<Core>, registry: Arc<Registry>) -> Self {
        Server {
            core,
            registry,
            resources: Arc::new(Resources::standard()),
            identity: None,
            drain: Drain::default(),
        }
    }

    /// What a stop uses to answer the calls in flight first.
    pub fn drain(&self) -> Drain {
        self.drain.clone()
    }

    /// Speaks as a compatibility preset: its server name, instructions and error shape.
    pub fn with_identity(mut self, identity: Identity) -> Self {
        if let Some(md) = identity.skill {
            self.resources = Arc::new(Resources::only_skill(md));
        }
        self.identity = Some(Arc::new(identity));
        self
    }

    fn ctx(&self, context: &RequestContext<RoleServer>, call: &Call) -> ToolCtx {
        ToolCtx {
            core: self.core.clone(),
            cancel: call.cancel.clone(),
            progress: progress::for_request(&context.peer, context.meta.get_progress_token()),
            person: super::secrets::asker(&context.peer, &self.core),
        }
    }
}

impl ServerHandler for Server {
    fn get_info(&self) -> ServerConfig {
        let (name, title, instructions) = match &self.identity {
            Some(id) => (id.name, id.title, id.instructions),
            None => ("termpilot", "termpilot", INSTRUCTIONS),
        };
        // A preset serves exactly its seed's surface: tools, and its skill if it has one.
        let capabilities = match self.identity.as_deref() {
            Some(Identity { skill: None, .. }) => {
                ServerCapabilities::builder().enable_tools().build()
            }
            Some(_) => ServerCapabilities::builder()
                .enable_tools()
                .enable_resources()
                .enable_skills()
                .build(),
            None => ServerCapabilities::builder()
                .enable_tools()
                .enable_resources()
                .enable_resources_list_changed()
                .enable_skills()
                .build(),
        };
        ServerConfig::new(capabilities)
            .with_server_info(
                Implementation::new(name, env!("CARGO_PKG_VERSION")).with_title(title),
            )
            .with_instructions(instructions)
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        Ok(ListToolsResult::with_all_items(
            self.registry.listing().to_vec(),
        ))
    }

    async fn initialize(
        &self,
        request: InitializeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<InitializeResult, McpError> {
        context.peer.set_peer_info(request.clone());
        self.resources.start_notifier(&self.core, &self.resources);
        self.negotiate_initialize(&request)
    }

    async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
        self.resources
            .remember(context.peer, &self.core, &self.resources);
    }

    /// `subscriptions/listen` (2026-07-28): resource list changes, when resources are served.
    fn accepted_subscription_filter(
        &self,
        _requested: &SubscriptionFilter,
    ) -> Option<SubscriptionFilter> {
        self.identity.is_none().then(|| {
            SubscriptionFilter::builder()
                .resources_list_changed()
                .build()
        })
    }

    async fn listen(&self, context: SubscriptionContext) -> Result<(), McpError> {
        if context.accepted().resources_list_changed == Some(true) {
            self.resources
                .listen(context.sink().clone(), &self.core, &self.resources);
        }
        tokio::select! {
            _ = context.cancelled() => {}
            _ = self.drain.stopping() => {}
        }
        Ok(())
    }

    async fn list_skills(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListSkillsResult, McpError> {
        Ok(self.resources.list_skills())
    }

    async fn get_skill(
        &self,
        request: GetSkillRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<GetSkillResult, McpError> {
        self.resources.get_skill(&request.uri)
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, McpError> {
        Ok(self.resources.list(&self.core))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, McpError> {
        self.resources
            .read(&self.core, &request.uri)
            .map(Into::into)
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let call = self.drain.enter(&context.ct);
        let ctx = self.ctx(&context, &call);
        let args = request.arguments.unwrap_or_default();
        let name = request.name.as_ref();
        let started = std::time::Instant::now();
        let logged_args = tracing::enabled!(tracing::Level::DEBUG).then(|| args.clone());
        let outcome = if name == EXTRA && self.registry.has_extras() {
            tools::extra::call(&self.registry, ctx, args).await
        } else if let Some(tool) = self.registry.enabled(name) {
            tool.call(ctx, args).await
        } else if self.registry.is_disabled(name) {
            Err(super::reply::ToolError::new(format!(
                "The tool `{name}` is disabled on this server; remove it from --disabled-tools to use it."
            )))
        } else {
            return Err(McpError::invalid_params(
                format!("Unknown tool: {name}. Call tools/list to see the tools."),
                None,
            ));
        };
        let result = match outcome {
            Ok(reply) => reply.into_result(),
            Err(mut error) => match self.identity.as_deref() {
                Some(id) => {
                    error.message = id.reword(&error.message);
                    match id.errors {
                        ErrorShape::JsonObject => error.into_json_result(),
                        ErrorShape::Sentence => error.into_result(),
                    }
                }
                None => error.into_result(),
            },
        };
        if let Some(args) = &logged_args {
            super::logging::tool_call(name, args, &result, started.elapsed());
        }
        Ok(result.into())
    }
}
