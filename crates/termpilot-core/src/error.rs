//! The core's errors: values that carry one sentence for the agent.
//!
//! Every message says what was wrong and what to do next. The MCP face turns them into tool
//! errors (`isError: true`) without rewording them.

/// A failure the agent can act on.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A parameter was missing, malformed or out of range.
    #[error("{0}")]
    InvalidInput(String),
    /// No session has this id or name.
    #[error(
        "No session is called `{0}`. Call terminal_list to see the sessions, or terminal_start to open one."
    )]
    UnknownSession(String),
    /// The session had ended and was started afresh; the call's action was not performed.
    #[error("{0}")]
    Respawned(String),
    /// A limit was reached (sessions, sizes, counts).
    #[error("{0}")]
    Limit(String),
    /// The operating system refused something.
    #[error("{context}: {source}. {hint}")]
    Io {
        context: String,
        hint: String,
        #[source]
        source: std::io::Error,
    },
    /// Anything else, already phrased for the agent.
    #[error("{0}")]
    Other(String),
}

impl Error {
    /// An I/O failure with what was being done and what the agent can try.
    pub fn io(context: impl Into<String>, hint: impl Into<String>, source: std::io::Error) -> Self {
        Error::Io {
            context: context.into(),
            hint: hint.into(),
            source,
        }
    }
}

pub type Result<T, E = Error> = std::result::Result<T, E>;
