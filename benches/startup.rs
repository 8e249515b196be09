//! Cold start, the size of the default tool surface, and idle memory.

use std::time::Instant;

use serde_json::json;

use crate::Row;
use crate::client::{Client, median};

pub fn run() -> Vec<Row> {
    let mut times = Vec::new();
    let mut payload = 0;
    for _ in 0..10 {
        let start = Instant::now();
        let mut client = Client::spawn(&[]);
        client.initialize();
        let line = client.request_raw("tools/list", json!({}));
        times.push(start.elapsed().as_secs_f64() * 1000.0);
        let reply: serde_json::Value = serde_json::from_str(&line).unwrap();
        payload = reply["result"].to_string().len();
        client.close();
    }
    let mut client = Client::spawn(&[]);
    client.initialize();
    let rss = client.rss_kib();
    client.close();
    vec![
        Row {
            figure: "cold start to tools/list answered (median of 10)".into(),
            value: format!("{:.1} ms", median(times)),
            target: "≤ 8 ms",
        },
        Row {
            figure: "tools/list payload, default surface".into(),
            value: format!("{payload} B"),
            target: "≤ 6 KB",
        },
        Row {
            figure: "server RSS after initialize".into(),
            value: format!("{:.1} MiB", rss as f64 / 1024.0),
            target: "≤ 6 MiB",
        },
    ]
}
