//! What the server logs: shapes, never bodies — unless a body log is asked for by name.
//!
//! Tool arguments and results carry secrets (environment values, file contents, typed text,
//! command output). At every level the server logs only their shape: the tool, argument and
//! result sizes, whether it failed, how long it took. rmcp's own logs (which print whole
//! messages at `debug`) are held at `error`. Full bodies are logged only under the target
//! [`WIRE`], and only when `TERMPILOT_LOG` names it (`TERMPILOT_LOG=termpilot::wire=trace`):
//! every line in and out, verbatim; naming it also leaves rmcp's logs to the filter given.

use std::time::Duration;

/// The log target of whole protocol messages.
pub const WIRE: &str = "termpilot::wire";

/// The `EnvFilter` directives for the user's `TERMPILOT_LOG` (default `warn`): bodies stay
/// out unless the spec names [`WIRE`].
pub fn filter(spec: Option<&str>) -> String {
    let spec = spec
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .unwrap_or("warn");
    if spec.contains(WIRE) {
        return spec.to_string();
    }
    let mut directives: Vec<String> = Vec::new();
    for d in spec.split(',').map(str::trim) {
        if d.is_empty() || d.starts_with("rmcp") {
            continue;
        }
        directives.push(d.to_string());
        // `termpilot` names the whole server: the core crate logs as `termpilot_core`.
        if let Some(level) = d.strip_prefix("termpilot=") {
            directives.push(format!("termpilot_core={level}"));
        }
    }
    directives.push("rmcp=error".into());
    directives.push("termpilot::wire=off".into());
    directives.join(",")
}

/// Logs one protocol line, whole, under [`WIRE`] (off unless named).
pub fn wire(direction: &'static str, line: &[u8]) {
    tracing::trace!(
        target: WIRE,
        direction,
        body = %String::from_utf8_lossy(line).trim_end()
    );
}

/// The log's writer: stderr, with the token of every one-time secret link redacted
/// (`web::secret::redact`) — the wire at trace, and rmcp's own trace logs when the wire is
/// named, show each `elicitation/create` whole, and its URL must not be usable from a log.
/// The formatter writes each event whole, so a line is redacted whole.
pub struct Redacting;

impl<'a> tracing_subscriber::fmt::MakeWriter<'a> for Redacting {
    type Writer = RedactingWriter;
    fn make_writer(&'a self) -> Self::Writer {
        RedactingWriter
    }
}

pub struct RedactingWriter;

impl std::io::Write for RedactingWriter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let text = String::from_utf8_lossy(buf);
        std::io::stderr().write_all(crate::web::secret::redact(&text).as_bytes())?;
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        std::io::stderr().flush()
    }
}

/// Logs the shape of one tool call at `debug`: never its arguments or result.
pub fn tool_call(
    tool: &str,
    args: &serde_json::Map<String, serde_json::Value>,
    result: &rmcp::model::CallToolResult,
    took: Duration,
) {
    if !tracing::enabled!(tracing::Level::DEBUG) {
        return;
    }
    tracing::debug!(
        tool,
        arg_keys = args.len(),
        arg_bytes = json_len(args),
        result_bytes = json_len(result),
        is_error = result.is_error.unwrap_or(false),
        ms = took.as_millis() as u64,
        "tool call"
    );
}

/// The length of a value's JSON, counted without keeping it.
fn json_len<T: serde::Serialize>(value: &T) -> usize {
    struct Count(usize);
    impl std::io::Write for Count {
        fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
            self.0 += b.len();
            Ok(b.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut count = Count(0);
    let _ = serde_json::to_writer(&mut count, value);
    count.0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bodies_stay_out_unless_the_wire_is_named() {
        assert_eq!(filter(None), "warn,rmcp=error,termpilot::wire=off");
        assert_eq!(
            filter(Some("termpilot=trace")),
            "termpilot=trace,termpilot_core=trace,rmcp=error,termpilot::wire=off"
        );
        assert_eq!(
            filter(Some("debug,rmcp=trace")),
            "debug,rmcp=error,termpilot::wire=off"
        );
        assert_eq!(
            filter(Some("info,termpilot::wire=trace")),
            "info,termpilot::wire=trace"
        );
    }
}
