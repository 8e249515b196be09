//! One line from the client, judged before rmcp sees it: every request gets an answer.
//!
//! rmcp drops some lines without a word (bytes that are not UTF-8, a lone surrogate escape
//! such as `"\udc00"`, JSON nested too deep), answers others with `id: null`, treats a
//! `tools/call` without a name as an unknown method, and ends the connection when a
//! notification or a response arrives before `initialize`. [`Gate::judge`] looks at each line
//! first and either forwards it to rmcp unchanged, answers it itself with a JSON-RPC error
//! that carries the request's id (scanned from the raw bytes when the line does not parse),
//! or drops it when JSON-RPC says no answer is due (a notification or a response before the
//! lifecycle started).
//!
//! Limits, documented in the README: a line holds at most [`MAX_LINE`] bytes including its
//! newline; a message nests at most [`MAX_DEPTH`] arrays and objects.

use rmcp::model::{
    ClientJsonRpcMessage, ClientRequest, DiscoverRequestParams, GetMeta, InitializeRequestParams,
    PaginatedRequestParams, ProtocolVersion,
};
use serde::Deserialize;
use serde_json::Value;

/// Largest line accepted from the client, newline included (16 MiB, rmcp's own limit).
pub const MAX_LINE: usize = 16 << 20;
/// Deepest nesting of arrays and objects accepted in one message (rmcp gives up near 127).
pub const MAX_DEPTH: usize = 64;

const PARSE_ERROR: i64 = -32700;
const INVALID_REQUEST: i64 = -32600;
const INVALID_PARAMS: i64 = -32602;

const PROTOCOL_VERSION_KEY: &str = "io.modelcontextprotocol/protocolVersion";
const CAPABILITIES_KEY: &str = "io.modelcontextprotocol/clientCapabilities";

/// What to do with one line.
#[derive(Debug, PartialEq)]
pub enum Verdict {
    /// Pass the line to rmcp as it is.
    Forward,
    /// Write this line (a JSON-RPC error) to the client; rmcp never sees the input.
    Answer(Vec<u8>),
    /// Say nothing (a notification or response that would end rmcp before the lifecycle).
    Drop(&'static str),
}

/// The judge of incoming lines, and whether rmcp has started a lifecycle yet.
pub struct Gate {
    /// Set once rmcp has accepted `initialize` or a request with complete inline `_meta`.
    started: bool,
    supported: Vec<ProtocolVersion>,
}

impl Gate {
    /// A gate for a server that speaks `supported` protocol versions.
    pub fn new(supported: Vec<ProtocolVersion>) -> Self {
        Gate {
            started: false,
            supported,
        }
    }

    /// Judges one line (without its newline). `oversized` means the line went past
    /// [`MAX_LINE`] and `line` holds only its start.
    pub fn judge(&mut self, line: &[u8], oversized: bool) -> Verdict {
        let scan = scan(line);
        if oversized {
            return answer(
                scan.id,
                INVALID_REQUEST,
                format!(
                    "The message is larger than {MAX_LINE} bytes (16 MiB), the limit for one line; \
                     send big contents in pieces (terminal_write_file with append: true)"
                ),
            );
        }
        if scan.depth > MAX_DEPTH {
            return answer(
                scan.id,
                INVALID_REQUEST,
                format!(
                    "The message nests {} levels of arrays and objects; the limit is {MAX_DEPTH}, so flatten the arguments",
                    scan.depth
                ),
            );
        }
        let text = match std::str::from_utf8(line) {
            Ok(text) => text,
            Err(e) => {
                return answer(
                    scan.id,
                    PARSE_ERROR,
                    format!(
                        "Parse error: the line is not valid UTF-8 (bad byte at offset {}); send JSON-RPC messages as UTF-8 text",
                        e.valid_up_to()
                    ),
                );
            }
        };
        let value: Value = match serde_json::from_str(text) {
            Ok(value) => value,
            Err(e) => {
                return answer(
                    scan.id,
                    PARSE_ERROR,
                    format!(
                        "Parse error: the line is not valid JSON ({e}); send one JSON-RPC message per line"
                    ),
                );
            }
        };
        if let Some(verdict) = check_shape(&value) {
            return verdict;
        }
        if self.started {
            Verdict::Forward
        } else {
            self.before_lifecycle(value)
        }
    }

    /// The rules rmcp applies before a lifecycle exists, answered in words that say what to
    /// send, and never ending the connection.
    fn before_lifecycle(&mut self, value: Value) -> Verdict {
        let id = value.get("id").cloned();
        let message = match serde_json::from_value::<ClientJsonRpcMessage>(value) {
            Ok(message) => message,
            Err(e) => {
                return answer(
                    id,
                    INVALID_REQUEST,
                    format!("Invalid request: {}", clean(&e)),
                );
            }
        };
        let request = match message {
            ClientJsonRpcMessage::Request(request) => request,
            ClientJsonRpcMessage::Notification(_) => {
                return Verdict::Drop("a notification before initialize");
            }
            _ => return Verdict::Drop("a response before initialize"),
        };
        match &request.request {
            ClientRequest::PingRequest(_) => return Verdict::Forward,
            ClientRequest::InitializeRequest(_) => {
                self.started = true;
                return Verdict::Forward;
            }
            _ => {}
        }
        let meta = request.request.get_meta();
        let version = meta.protocol_version();
        let complete = meta
            .missing_required_keys(&ProtocolVersion::V_2026_07_28)
            .is_empty();
        let is_discover = request.request.method() == "server/discover";
        let Some(version) = version.filter(|_| complete) else {
            let what = if is_discover {
                "server/discover needs params._meta"
            } else {
                "No protocol version is set yet: send `initialize` first (protocol 2025-11-25 and older), or give this request params._meta"
            };
            return answer(
                id,
                INVALID_PARAMS,
                format!(
                    "{what} with \"{PROTOCOL_VERSION_KEY}\": \"2026-07-28\" and \"{CAPABILITIES_KEY}\": {{}} (protocol 2026-07-28)"
                ),
            );
        };
        if !is_discover && self.supported.contains(&version) {
            self.started = true;
        }
        Verdict::Forward
    }
}

/// Checks what rmcp would get wrong whatever the lifecycle: the JSON-RPC envelope, and the
/// params of the methods this server serves (rmcp takes a bad one for an unknown method).
fn check_shape(value: &Value) -> Option<Verdict> {
    let Value::Object(fields) = value else {
        let what = if value.is_array() {
            "Invalid request: batches are not supported; send one JSON-RPC message per line"
        } else {
            "Invalid request: a JSON-RPC message is an object; send one per line"
        };
        return Some(answer(None, INVALID_REQUEST, what.into()));
    };
    let id = fields.get("id").cloned();
    if fields.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return Some(answer(
            id,
            INVALID_REQUEST,
            "Invalid request: a message needs \"jsonrpc\": \"2.0\"".into(),
        ));
    }
    let Some(method) = fields.get("method") else {
        if fields.contains_key("result") || fields.contains_key("error") {
            return None;
        }
        return Some(answer(
            id,
            INVALID_REQUEST,
            "Invalid request: a message needs a \"method\" (a request or a notification) or a \"result\" or \"error\" (a response)".into(),
        ));
    };
    let Some(method) = method.as_str() else {
        return Some(answer(
            id,
            INVALID_REQUEST,
            "Invalid request: \"method\" must be a string such as \"tools/call\"".into(),
        ));
    };
    id.as_ref()?;
    let params = fields.get("params").unwrap_or(&Value::Null);
    let problem = params_problem(method, params)?;
    Some(answer(id, INVALID_PARAMS, problem))
}

/// Why `params` do not fit `method`, for the methods this server serves.
fn params_problem(method: &str, params: &Value) -> Option<String> {
    if method == "tools/call" {
        return call_problem(params);
    }
    // The request wrapper, not the params type, takes `_meta`; these params are small.
    let mut params = params.clone();
    if let Value::Object(fields) = &mut params {
        fields.remove("_meta");
    }
    let params = &params;
    let typed = match method {
        "initialize" => InitializeRequestParams::deserialize(params).err(),
        "tools/list" => Option::<PaginatedRequestParams>::deserialize(params).err(),
        "server/discover" if !params.is_null() => DiscoverRequestParams::deserialize(params).err(),
        _ => None,
    }?;
    let hint = match method {
        "initialize" => " (send protocolVersion, capabilities {} and clientInfo {name, version})",
        _ => "",
    };
    Some(format!(
        "Invalid params for {method}: {}{hint}",
        clean(&typed)
    ))
}

/// A `tools/call` needs a tool name and, if any, an object of arguments.
fn call_problem(params: &Value) -> Option<String> {
    const WHAT: &str = "tools/call needs params.name, the tool to call (tools/list lists them), \
                        and params.arguments, an object of its arguments";
    let Value::Object(params) = params else {
        return Some(format!("{WHAT}; this request has no params object"));
    };
    match params.get("name") {
        Some(Value::String(_)) => {}
        Some(_) => return Some(format!("{WHAT}; params.name is not a string")),
        None => return Some(format!("{WHAT}; params.name is missing")),
    }
    match params.get("arguments") {
        None | Some(Value::Null) | Some(Value::Object(_)) => None,
        Some(_) => Some(format!("{WHAT}; params.arguments is not an object")),
    }
}

/// A serde error without its position suffix.
fn clean(e: &serde_json::Error) -> String {
    let text = e.to_string();
    text.split(" at line ").next().unwrap_or(&text).to_string()
}

fn answer(id: Option<Value>, code: i64, message: String) -> Verdict {
    Verdict::Answer(error_line(id, code, &message))
}

/// A JSON-RPC error response as one line; `id` is kept only when it is a number or string.
pub fn error_line(id: Option<Value>, code: i64, message: &str) -> Vec<u8> {
    let id = id
        .filter(|id| id.is_number() || id.is_string())
        .unwrap_or(Value::Null);
    let response = serde_json::json!({
        "jsonrpc": "2.0",
        "id": id,
        "error": {"code": code, "message": format!("{message}.")},
    });
    let mut line = response.to_string().into_bytes();
    line.push(b'\n');
    line
}

/// What a raw scan of a line found, whether or not it parses.
#[derive(Debug, Default, PartialEq)]
struct Scan {
    /// The top-level `"id"`, when it is a number or a string that decodes.
    id: Option<Value>,
    /// The deepest nesting of arrays and objects.
    depth: usize,
}

/// Reads the raw bytes of a line as JSON tokens, tolerating anything inside strings, to find
/// the top-level `"id"` and the nesting depth. One pass, no allocation but the id.
fn scan(b: &[u8]) -> Scan {
    let mut out = Scan::default();
    let mut depth = 0usize;
    let mut top_object = false;
    // At depth 1 of the top object: the next string is a key / the last key was "id" /
    // a ':' after "id" was seen, so the next token is its value.
    let (mut expect_key, mut key_is_id, mut id_value_next) = (false, false, false);
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        match c {
            b'"' => {
                let end = string_end(b, i);
                let token = &b[i..end];
                if depth == 1 && top_object {
                    if expect_key {
                        expect_key = false;
                        key_is_id = token == b"\"id\"";
                    } else if id_value_next {
                        id_value_next = false;
                        if out.id.is_none() {
                            out.id = serde_json::from_slice::<String>(token)
                                .ok()
                                .map(Value::String);
                        }
                    }
                }
                i = end;
                continue;
            }
            b'{' | b'[' => {
                if depth == 0 && i == first_token(b) {
                    top_object = c == b'{';
                }
                depth += 1;
                out.depth = out.depth.max(depth);
                expect_key = depth == 1 && c == b'{';
                id_value_next = false;
            }
            b'}' | b']' => {
                depth = depth.saturating_sub(1);
                id_value_next = false;
            }
            b',' if depth == 1 => {
                expect_key = true;
                id_value_next = false;
            }
            b':' if depth == 1 && key_is_id => {
                key_is_id = false;
                id_value_next = true;
            }
            b'-' | b'0'..=b'9' if depth == 1 && id_value_next => {
                let end = b[i..]
                    .iter()
                    .position(|c| !matches!(c, b'-' | b'+' | b'.' | b'e' | b'E' | b'0'..=b'9'))
                    .map_or(b.len(), |n| i + n);
                id_value_next = false;
                if out.id.is_none() {
                    out.id = serde_json::from_slice::<serde_json::Number>(&b[i..end])
                        .ok()
                        .map(Value::Number);
                }
                i = end;
                continue;
            }
            b' ' | b'\t' | b'\r' | b'\n' => {}
            _ => id_value_next = false,
        }
        i += 1;
    }
    out
}

/// The index just past the string starting at `start` (a `"`), or the end of the line.
fn string_end(b: &[u8], start: usize) -> usize {
    let mut i = start + 1;
    while i < b.len() {
        match b[i] {
            b'\\' => i += 2,
            b'"' => return i + 1,
            _ => i += 1,
        }
    }
    b.len()
}

/// The index of the first byte that is not whitespace or a UTF-8 byte order mark.
fn first_token(b: &[u8]) -> usize {
    let start = if b.starts_with(b"\xEF\xBB\xBF") { 3 } else { 0 };
    b[start..]
        .iter()
        .position(|c| !c.is_ascii_whitespace())
        .map_or(b.len(), |n| start + n)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn gate() -> Gate {
        Gate::new(ProtocolVersion::KNOWN_VERSIONS.to_vec())
    }

    fn reply(v: Verdict) -> Value {
        match v {
            Verdict::Answer(line) => serde_json::from_slice(&line).unwrap(),
            other => panic!("expected an answer, got {other:?}"),
        }
    }

    #[test]
    fn scan_finds_the_top_level_id_anywhere() {
        assert_eq!(
            scan(br#"{"jsonrpc":"2.0","id":7,"x":1}"#).id,
            Some(json!(7))
        );
        assert_eq!(
            scan(br#"{"params":{"id":1},"id":"a\"b"}"#).id,
            Some(json!("a\"b"))
        );
        assert_eq!(scan(b"{\"x\":\"\xff\",\"id\": -3 }").id, Some(json!(-3)));
        assert_eq!(scan(br#"{"id":null}"#).id, None);
        assert_eq!(scan(br#"[{"id":1}]"#).id, None);
        assert_eq!(scan(br#"{"id":12,"p":[[[[]]]]}"#).depth, 5);
        // A cut line still gives up its id.
        assert_eq!(
            scan(br#"{"id":9,"params":{"data":"aaaa"#).id,
            Some(json!(9))
        );
    }

    #[test]
    fn bad_lines_are_answered_with_their_id() {
        let mut g = gate();
        let r = reply(g.judge(
            b"{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"ping\",\"params\":{\"x\":\"\xff\"}}",
            false,
        ));
        assert_eq!(
            (r["id"].clone(), r["error"]["code"].clone()),
            (json!(5), json!(-32700))
        );
        let r = reply(g.judge(
            br#"{"jsonrpc":"2.0","id":6,"method":"ping","params":{"x":"\udc00"}}"#,
            false,
        ));
        assert_eq!(
            (r["id"].clone(), r["error"]["code"].clone()),
            (json!(6), json!(-32700))
        );
        let deep = format!(
            r#"{{"jsonrpc":"2.0","id":"d","method":"ping","params":{{"x":{}{}}}}}"#,
            "[".repeat(130),
            "]".repeat(130)
        );
        let r = reply(g.judge(deep.as_bytes(), false));
        assert_eq!(
            (r["id"].clone(), r["error"]["code"].clone()),
            (json!("d"), json!(-32600))
        );
    }

    #[test]
    fn notifications_before_initialize_are_dropped_then_forwarded() {
        let mut g = gate();
        let note = br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
        assert!(matches!(g.judge(note, false), Verdict::Drop(_)));
        let init = br#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}"#;
        assert_eq!(g.judge(init, false), Verdict::Forward);
        assert_eq!(g.judge(note, false), Verdict::Forward);
    }

    #[test]
    fn error_lines_keep_only_number_or_string_ids() {
        let v: Value =
            serde_json::from_slice(&error_line(Some(json!({"a": 1})), -32700, "x")).unwrap();
        assert!(v["id"].is_null());
        assert_eq!(v["error"]["code"], -32700);
    }

    #[test]
    fn tools_call_without_a_name_says_what_to_send() {
        let r = reply(gate().judge(
            br#"{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"arguments":{}}}"#,
            false,
        ));
        assert_eq!(r["id"], 8);
        assert!(
            r["error"]["message"]
                .as_str()
                .unwrap()
                .contains("params.name"),
            "{r}"
        );
    }
}
