//! The rmcp handler: server identity, `tools/list` and `tools/call`.
//!
//! The handler is a cheap clone of two `Arc`s. rmcp may build one per request (Streamable
//! HTTP, the stateless 2026-07-28 revision), which is fine: all state is in [`Core`].

use std::sync::Arc;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, Implementation, ListToolsResult,
    PaginatedRequestParams, ServerCapabilities, ServerConfig,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler};
use termpilot::Core;

use super::progress;
use super::registry::{EXTRA, Registry, ToolCtx};
use super::tools;

/// What the server tells a client about how to use it.
const INSTRUCTIONS: &str = "termpilot gives you real terminals. Core tools are listed directly; \
more sit behind terminal_extra ({list:true} shows them). Every call returns JSON; errors say what to do next.";

/// The MCP server: one per connection (or per request), all sharing one core.
#[derive(Clone)]
pub struct Server {
    core: Arc<Core>,
    registry: Arc<Registry>,
}

impl Server {
    pub fn new(core: Arc<Core>, registry: Arc<Registry>) -> Self {
        Server { core, registry }
    }

    fn ctx(&self, context: &RequestContext<RoleServer>) -> ToolCtx {
        ToolCtx {
            core: self.core.clone(),
            cancel: context.ct.clone(),
            progress: progress::for_request(&context.peer, context.meta.get_progress_token()),
        }
    }
}

impl ServerHandler for Server {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(
                Implementation::new("termpilot", env!("CARGO_PKG_VERSION")).with_title("termpilot"),
            )
            .with_instructions(INSTRUCTIONS)
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

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let ctx = self.ctx(&context);
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
            Err(error) => error.into_result(),
        };
        if let Some(args) = &logged_args {
            super::logging::tool_call(name, args, &result, started.elapsed());
        }
        Ok(result.into())
    }
}
