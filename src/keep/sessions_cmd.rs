//! `termpilot sessions`: the kept sessions of this user, listed from a shell.
//!
//! Asks every running session host in the private folder (one per sandbox policy) for its
//! list, over the same socket and checks a server uses, and says which kept sessions ended
//! with a host that died. Starts no host.

use std::path::PathBuf;
use std::time::Duration;

use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::link::{KeepLink, NoLink};
use super::paths::{self, Files};
use super::record;

/// Lists the kept sessions on stdout, one a line; `socket` asks only that host.
pub fn run(socket: Option<PathBuf>) -> Result<(), String> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| e.to_string())?;
    runtime.block_on(async move {
        let hosts: Vec<(PathBuf, Option<PathBuf>)> = match socket {
            Some(s) => vec![(s, None)],
            None => {
                let dir = paths::dir().map_err(|e| e.to_string())?;
                paths::keys(&dir)
                    .into_iter()
                    .map(|k| {
                        let f = Files::of(&dir, &k);
                        (f.socket, Some(f.record))
                    })
                    .collect()
            }
        };
        let mut lines = Vec::new();
        for (socket, record_path) in hosts {
            match KeepLink::connect(&socket).await {
                Ok(link) => {
                    let mut args = rmcp::model::JsonObject::new();
                    args.insert("verbose".into(), Value::Bool(true));
                    let result = tokio::time::timeout(
                        Duration::from_secs(10),
                        link.call("terminal_list", args, &CancellationToken::new()),
                    )
                    .await
                    .map_err(|_| "the session host did not answer within 10 s".to_string())?
                    .map_err(|e| e.message)?;
                    let value = super::forward::reply_of(result)
                        .map_err(|e| e.message)?
                        .value;
                    for s in value["sessions"].as_array().cloned().unwrap_or_default() {
                        let ends = link.keep_idle_secs.map(|idle| {
                            idle.saturating_sub(s["idleMs"].as_u64().unwrap_or(0) / 1000)
                        });
                        lines.push(format!(
                            "{}\t{}\t{}\t{}\t{}",
                            s["id"].as_str().unwrap_or("?"),
                            s["name"].as_str().unwrap_or("-"),
                            if s["busy"] == true { "busy" } else { "idle" },
                            ends.map_or("-".into(), |e| format!("ends in {e} s if left alone")),
                            s["cwd"].as_str().unwrap_or(""),
                        ));
                    }
                }
                Err(NoLink::NoHost) => {
                    if let Some(rec) = record_path.as_deref().and_then(record::read)
                        && !record::alive(rec.pid)
                        && !rec.ids.is_empty()
                    {
                        for id in &rec.ids {
                            lines.push(format!(
                                "{id}\tended: its session host (pid {}) is gone",
                                rec.pid
                            ));
                        }
                    }
                }
                Err(NoLink::Unusable(why)) => return Err(why),
            }
        }
        if lines.is_empty() {
            eprintln!("termpilot: no kept sessions (terminal_start with keep: true keeps one)");
        }
        for line in lines {
            println!("{line}");
        }
        Ok(())
    })
}
