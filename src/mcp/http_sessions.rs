//! A cap on HTTP MCP sessions (`Mcp-Session-Id`, the 2025 era): rmcp's
//! [`LocalSessionManager`] keeps each one (about 50 KB) until it has been idle for five
//! minutes, and many clients never send `DELETE /mcp`. [`CappedSessions`] keeps at most
//! [`MAX_SESSIONS`]; a new one past that closes the least recently used first, whose client
//! gets 404 on its next request and, as the spec says, starts a new session.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Instant;

use futures_core::Stream;
use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use rmcp::transport::streamable_http_server::session::ServerSseMessage;
use rmcp::transport::streamable_http_server::session::local::{
    LocalSessionManager, LocalSessionManagerError,
};
use rmcp::transport::streamable_http_server::{SessionId, SessionManager};

/// Most HTTP MCP sessions kept at once.
pub const MAX_SESSIONS: usize = 256;

/// rmcp's session manager, with at most `cap` sessions (least recently used closed first).
pub struct CappedSessions {
    inner: LocalSessionManager,
    cap: usize,
    /// When each session was last used.
    used: Mutex<HashMap<SessionId, Instant>>,
}

impl CappedSessions {
    pub fn new(cap: usize) -> Self {
        CappedSessions {
            inner: LocalSessionManager::default(),
            cap: cap.max(1),
            used: Mutex::new(HashMap::new()),
        }
    }

    fn used(&self) -> std::sync::MutexGuard<'_, HashMap<SessionId, Instant>> {
        self.used.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn touch(&self, id: &SessionId) {
        if let Some(at) = self.used().get_mut(id) {
            *at = Instant::now();
        }
    }

    /// Closes the least recently used sessions until one more fits.
    async fn make_room(&self) {
        loop {
            let live: Vec<SessionId> = self.inner.sessions.read().await.keys().cloned().collect();
            let oldest = {
                let mut used = self.used();
                used.retain(|id, _| live.contains(id));
                if live.len() < self.cap {
                    return;
                }
                live.iter().min_by_key(|id| used.get(*id).copied()).cloned()
            };
            let Some(oldest) = oldest else { return };
            tracing::info!(
                "{} HTTP MCP sessions open (the most kept); closing the least recently used, {oldest}",
                live.len()
            );
            self.used().remove(&oldest);
            if let Err(e) = self.inner.close_session(&oldest).await {
                tracing::warn!("could not close HTTP MCP session {oldest}: {e}");
                self.inner.sessions.write().await.remove(&oldest);
            }
        }
    }
}

impl SessionManager for CappedSessions {
    type Error = LocalSessionManagerError;
    type Transport = <LocalSessionManager as SessionManager>::Transport;

    async fn create_session(&self) -> Result<(SessionId, Self::Transport), Self::Error> {
        self.make_room().await;
        let (id, transport) = self.inner.create_session().await?;
        self.used().insert(id.clone(), Instant::now());
        Ok((id, transport))
    }

    async fn initialize_session(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<ServerJsonRpcMessage, Self::Error> {
        self.touch(id);
        self.inner.initialize_session(id, message).await
    }

    async fn has_session(&self, id: &SessionId) -> Result<bool, Self::Error> {
        self.inner.has_session(id).await
    }

    async fn close_session(&self, id: &SessionId) -> Result<(), Self::Error> {
        self.used().remove(id);
        self.inner.close_session(id).await
    }

    async fn create_stream(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        self.touch(id);
        self.inner.create_stream(id, message).await
    }

    async fn accept_message(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<(), Self::Error> {
        self.touch(id);
        self.inner.accept_message(id, message).await
    }

    async fn create_standalone_stream(
        &self,
        id: &SessionId,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        self.touch(id);
        self.inner.create_standalone_stream(id).await
    }

    async fn resume(
        &self,
        id: &SessionId,
        last_event_id: String,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        self.touch(id);
        self.inner.resume(id, last_event_id).await
    }
}
