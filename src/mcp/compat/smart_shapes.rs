//! smart-terminal-mcp's result shapes for the session tools (`src/tools.js`,
//! `src/pty-session.js` v1.2.28) over the native results: `terminal_list` entries
//! `{id, name, cwd, alive, busy}` plus, verbose, `{shell, shellType, cols, rows, createdAt,
//! lastActivity, idleSeconds}`; `terminal_wait` `{output, matched, timedOut, position}`;
//! `terminal_resize` `{success, cols, rows}`; `terminal_write_file` `{success, path, size,
//! append}`; `terminal_stop` `{success, message: "Session <id> stopped.", …}`. The native
//! list has no creation time or shell type, so the preset notes both when
//! `terminal_start` answers (and forgets them at `terminal_stop`).

use std::collections::HashMap;
use std::sync::{LazyLock, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use rmcp::model::JsonObject;
use serde_json::{Value, json};

/// When each session was started and its shell type, by session id.
static STARTED: LazyLock<Mutex<HashMap<String, (SystemTime, String)>>> =
    LazyLock::new(|| Mutex::new(HashMap::new()));

fn started() -> std::sync::MutexGuard<'static, HashMap<String, (SystemTime, String)>> {
    STARTED.lock().unwrap_or_else(|e| e.into_inner())
}

/// Notes a `terminal_start` result's session.
pub fn note_start(result: &Value) {
    if let Some(id) = result["sessionId"].as_str() {
        let kind = result["shellType"].as_str().unwrap_or_default().to_string();
        started().insert(id.to_string(), (SystemTime::now(), kind));
    }
}

/// `terminal_stop`: upstream's message; the snapshot and transcript (seed) stay.
pub fn stopped(mut v: Value, given: &JsonObject) -> Value {
    let id = given
        .get("sessionId")
        .and_then(Value::as_str)
        .unwrap_or_default();
    started().remove(id);
    v["message"] = json!(format!("Session {id} stopped."));
    v
}

/// `time` as ISO 8601 UTC with milliseconds (JavaScript's `toISOString`).
fn iso(time: SystemTime) -> String {
    let since = time.duration_since(UNIX_EPOCH).unwrap_or_default();
    let secs = since.as_secs() as i64;
    let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{:03}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60,
        since.subsec_millis()
    )
}

/// `terminal_list`: each entry in upstream's `getInfo` shape.
pub fn listed(mut v: Value, given: &JsonObject) -> Value {
    let verbose = given
        .get("verbose")
        .and_then(Value::as_bool)
        .unwrap_or(true);
    let now = SystemTime::now();
    let notes = started();
    if let Some(sessions) = v["sessions"].as_array_mut() {
        for s in sessions.iter_mut() {
            let mut out = json!({
                "id": s["id"], "name": s["name"], "cwd": s["cwd"],
                "alive": s["alive"], "busy": s["busy"],
            });
            if verbose {
                let idle = Duration::from_millis(s["idleMs"].as_u64().unwrap_or(0));
                let note = s["id"].as_str().and_then(|id| notes.get(id));
                let kind = note.map(|(_, k)| k.clone()).unwrap_or_else(|| {
                    let shell = s["shell"].as_str().unwrap_or_default();
                    shell.rsplit('/').next().unwrap_or(shell).to_string()
                });
                out["shell"] = s["shell"].clone();
                out["shellType"] = json!(kind);
                out["cols"] = s["cols"].clone();
                out["rows"] = s["rows"].clone();
                out["createdAt"] = note.map_or(Value::Null, |(at, _)| json!(iso(*at)));
                out["lastActivity"] = json!(iso(now.checked_sub(idle).unwrap_or(now)));
                out["idleSeconds"] = json!((idle.as_millis() as f64 / 1000.0).round() as u64);
            }
            *s = out;
        }
    }
    v
}

/// Keeps only `keys` of a result object.
pub fn only(v: Value, keys: &[&str]) -> Value {
    match v {
        Value::Object(map) => Value::Object(
            map.into_iter()
                .filter(|(k, _)| keys.contains(&k.as_str()))
                .collect(),
        ),
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn iso_dates() {
        assert_eq!(iso(UNIX_EPOCH), "1970-01-01T00:00:00.000Z");
        let t = UNIX_EPOCH + Duration::from_millis(1_709_251_199_123);
        assert_eq!(iso(t), "2024-02-29T23:59:59.123Z");
    }
}
