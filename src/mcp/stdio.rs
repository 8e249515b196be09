//! The stdio transport, framed so that every request gets an answer.
//!
//! This layer reads stdin a line at a time (at most [`frame::MAX_LINE`] bytes each), lets
//! [`frame::Gate`] judge each line — forward it to rmcp, answer it with a JSON-RPC error
//! carrying the request's id, or drop it — and passes the rest to rmcp unchanged. All output,
//! rmcp's and ours, goes through one writer a whole line at a time, so nothing interleaves;
//! stdout carries nothing but protocol. A client that leaves before `initialize` is a normal
//! end, not an error.

use std::time::Duration;

use rmcp::ServerHandler;
use rmcp::ServiceExt;
use rmcp::service::ServerInitializeError;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::sync::mpsc;

use super::frame::{Gate, MAX_LINE, Verdict};
use super::server::Server;

/// Buffer between this layer and rmcp, each way.
const PIPE_BUFFER: usize = 1 << 16;
/// How long the last lines may take to reach stdout once the service has ended.
const FLUSH_GRACE: Duration = Duration::from_secs(2);

/// Serves MCP on stdin/stdout until the client closes stdin.
pub async fn serve(server: Server) -> anyhow::Result<()> {
    let (mut to_rmcp, rmcp_in) = tokio::io::duplex(PIPE_BUFFER);
    let (rmcp_out, from_rmcp) = tokio::io::duplex(PIPE_BUFFER);
    let (lines_tx, mut lines_rx) = mpsc::unbounded_channel::<Vec<u8>>();
    let mut gate = Gate::new(server.supported_protocol_versions().to_vec());

    let mut writer = tokio::spawn(async move {
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
            // Read at most the limit, so an endless line cannot fill memory.
            let mut limited = (&mut stdin).take(MAX_LINE as u64);
            match limited.read_until(b'\n', &mut line).await {
                Ok(0) | Err(_) => break,
                Ok(_) => {}
            }
            let oversized = line.len() == MAX_LINE && !line.ends_with(b"\n");
            if oversized {
                // Drop the rest of the oversized line; its start is enough to answer it.
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
            match gate.judge(body, oversized) {
                Verdict::Forward => {
                    if to_rmcp.write_all(body).await.is_err()
                        || to_rmcp.write_all(b"\n").await.is_err()
                    {
                        break;
                    }
                }
                Verdict::Answer(reply) => {
                    tracing::debug!("answering a line of {} bytes rmcp would not", body.len());
                    let _ = lines_tx.send(reply);
                }
                Verdict::Drop(why) => tracing::debug!("dropping {why}"),
            }
        }
        // Dropping `to_rmcp` tells rmcp the client has gone.
    });

    let result = match server.serve((rmcp_in, rmcp_out)).await {
        Ok(service) => {
            let _ = service.waiting().await;
            Ok(())
        }
        // The client left before choosing a lifecycle: nothing went wrong.
        Err(ServerInitializeError::ConnectionClosed(_)) => Ok(()),
        Err(e) => Err(e.into()),
    };
    // Every sender is gone once rmcp's output and stdin have ended: let the writer finish.
    if tokio::time::timeout(FLUSH_GRACE, &mut writer)
        .await
        .is_err()
    {
        writer.abort();
    }
    result
}
