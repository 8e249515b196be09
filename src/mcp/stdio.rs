//! The stdio transport, framed so that a malformed line gets an answer.
//!
//! rmcp silently drops a line that is not JSON. An agent's client deserves better: this
//! layer reads stdin line by line, answers a line that does not parse with a JSON-RPC parse
//! error (`-32700`, `id: null`) and passes every other line to rmcp unchanged. All output —
//! rmcp's and ours — goes through one writer, a whole line at a time, so nothing interleaves.
//! stdout carries nothing but protocol.

use rmcp::ServiceExt;
use serde::de::IgnoredAny;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::sync::mpsc;

use super::server::Server;

/// Largest line accepted from the client (16 MiB); longer lines are answered with an error.
const MAX_LINE: usize = 16 << 20;
/// Buffer between this layer and rmcp, each way.
const PIPE_BUFFER: usize = 1 << 16;

/// Serves MCP on stdin/stdout until the client closes stdin.
pub async fn serve(server: Server) -> anyhow::Result<()> {
    let (mut to_rmcp, rmcp_in) = tokio::io::duplex(PIPE_BUFFER);
    let (rmcp_out, from_rmcp) = tokio::io::duplex(PIPE_BUFFER);
    let (lines_tx, mut lines_rx) = mpsc::unbounded_channel::<Vec<u8>>();

    let writer = tokio::spawn(async move {
        let mut stdout = tokio::io::stdout();
        while let Some(line) = lines_rx.recv().await {
            super::logging::wire("out", &line);
            if stdout.write_all(&line).await.is_err() || stdout.flush().await.is_err() {
                break;
            }
        }
    });

    let rmcp_lines = lines_tx.clone();
    tokio::spawn(async move {
        let mut reader = BufReader::new(from_rmcp);
        loop {
            let mut line = Vec::new();
            match reader.read_until(b'\n', &mut line).await {
                Ok(0) | Err(_) => break,
                Ok(_) => {
                    if !line.ends_with(b"\n") {
                        line.push(b'\n');
                    }
                    if rmcp_lines.send(line).is_err() {
                        break;
                    }
                }
            }
        }
    });

    tokio::spawn(async move {
        let mut stdin = BufReader::new(tokio::io::stdin());
        let mut line = Vec::new();
        loop {
            line.clear();
            // Read at most one byte past the limit, so an endless line cannot fill memory.
            let mut limited = (&mut stdin).take(MAX_LINE as u64 + 1);
            match limited.read_until(b'\n', &mut line).await {
                Ok(0) | Err(_) => break,
                Ok(_) => {}
            }
            if line.len() > MAX_LINE && !line.ends_with(b"\n") {
                // Drop the rest of the oversized line, then answer it.
                let mut rest = Vec::new();
                loop {
                    rest.clear();
                    let mut chunk = (&mut stdin).take(1 << 20);
                    match chunk.read_until(b'\n', &mut rest).await {
                        Ok(0) | Err(_) => break,
                        Ok(_) if rest.ends_with(b"\n") => break,
                        Ok(_) => {}
                    }
                }
            }
            let body = line.trim_ascii();
            if body.is_empty() {
                continue;
            }
            super::logging::wire("in", body);
            if let Some(problem) = malformed(body) {
                tracing::debug!("answering a malformed line: {problem}");
                let _ = lines_tx.send(parse_error(&problem));
                continue;
            }
            if to_rmcp.write_all(body).await.is_err() || to_rmcp.write_all(b"\n").await.is_err() {
                break;
            }
        }
        // Dropping `to_rmcp` tells rmcp the client has gone.
    });

    let service = server.serve((rmcp_in, rmcp_out)).await?;
    let _ = service.waiting().await;
    writer.abort();
    Ok(())
}

/// Why a line cannot be a JSON-RPC message, if it cannot.
fn malformed(body: &[u8]) -> Option<String> {
    if body.len() > MAX_LINE {
        return Some(format!("the message is larger than {MAX_LINE} bytes"));
    }
    match serde_json::from_slice::<IgnoredAny>(body) {
        Ok(_) => None,
        Err(e) => Some(format!("the line is not valid JSON ({e})")),
    }
}

fn parse_error(problem: &str) -> Vec<u8> {
    let response = serde_json::json!({
        "jsonrpc": "2.0",
        "id": null,
        "error": {
            "code": -32700,
            "message": format!("Parse error: {problem}. Send one JSON-RPC message per line."),
        }
    });
    let mut line = response.to_string().into_bytes();
    line.push(b'\n');
    line
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn detects_malformed_lines() {
        assert!(malformed(br#"{"jsonrpc":"2.0","method":"ping","id":1}"#).is_none());
        assert!(malformed(b"{not json").is_some());
        assert!(malformed(b"\xff\xfe").is_some());
    }

    #[test]
    fn parse_error_is_a_jsonrpc_error_with_null_id() {
        let v: serde_json::Value = serde_json::from_slice(&parse_error("x")).unwrap();
        assert_eq!(v["error"]["code"], -32700);
        assert!(v["id"].is_null());
    }
}
