//! Remote targets (issue 16): `terminal_exec` `echo hi` in a plain-terminal session over ssh
//! to a loopback sshd the bench starts itself (the tests' harness), next to the same call
//! in a local bash session, and the same through a remote termpilot (the same binary,
//! started over `ssh -T` with `--remote-bin`, calls forwarded over one MCP link); and a
//! one-shot `terminal_run` over ssh, which pays a whole connection (key exchange, login) per
//! call.

#[path = "../tests/common/sshd.rs"]
mod sshd;
use crate::procs;

use std::time::Instant;

use serde_json::json;

use crate::Row;
use crate::client::{Client, percentile};

const WARM_UP: usize = 5;
const CALLS: usize = 100;
const CONNECTS: usize = 10;

fn exec_p50(client: &mut Client, id: &str) -> f64 {
    let call = |client: &mut Client| {
        let start = Instant::now();
        let r = client.call_ok(
            "terminal_exec",
            json!({"sessionId": id, "command": "echo hi", "timeout": 30000}),
        );
        assert_eq!(r["output"], "hi", "echo hi gave {r}");
        start.elapsed().as_secs_f64() * 1000.0
    };
    for _ in 0..WARM_UP {
        call(client);
    }
    percentile((0..CALLS).map(|_| call(client)).collect(), 0.5)
}

pub fn run() -> Vec<Row> {
    let Some(sshd) = sshd::Sshd::start() else {
        return vec![Row {
            figure: "remote: sshd not installed".into(),
            value: "–".into(),
            target: "",
        }];
    };
    let mut client = Client::spawn(&["--ssh-config", sshd.config_arg()]);
    client.initialize();
    let local = client.start_session(json!({"shell": "bash"}));
    let local_ms = exec_p50(&mut client, &local);
    let remote = client.start_session(json!({"host": "alpha"}));
    let remote_ms = exec_p50(&mut client, &remote);
    let connects: Vec<f64> = (0..CONNECTS)
        .map(|_| {
            let start = Instant::now();
            let r = client.call_ok(
                "terminal_run",
                json!({"cmd": "echo", "args": ["hi"], "host": "alpha"}),
            );
            assert_eq!(r["stdout"]["raw"], "hi\n", "{r}");
            start.elapsed().as_secs_f64() * 1000.0
        })
        .collect();
    client.close();
    // The remote-termpilot way: the first call on the host opens the link (not timed).
    let bin = crate::client::server_bin();
    let mut forwarding = Client::spawn(&["--ssh-config", sshd.config_arg(), "--remote-bin", &bin]);
    forwarding.initialize();
    let started = forwarding.call_ok("terminal_start", json!({"host": "alpha"}));
    assert_eq!(started["via"], "termpilot", "{started}");
    let via_id = started["sessionId"]
        .as_str()
        .expect("a session id")
        .to_string();
    let via_ms = exec_p50(&mut forwarding, &via_id);
    forwarding.close();
    vec![
        Row {
            figure: format!("terminal_exec `echo hi`, local bash, p50 of {CALLS}"),
            value: format!("{local_ms:.2} ms"),
            target: "",
        },
        Row {
            figure: format!(
                "terminal_exec `echo hi`, plain terminal over ssh to localhost, p50 of {CALLS}"
            ),
            value: format!("{remote_ms:.2} ms (+{:.2})", remote_ms - local_ms),
            target: "≤ local + 3 ms + the link",
        },
        Row {
            figure: format!(
                "terminal_run `echo hi` with host (a new ssh connection each), p50 of {CONNECTS}"
            ),
            value: format!("{:.1} ms", percentile(connects, 0.5)),
            target: "",
        },
        Row {
            figure: format!(
                "terminal_exec `echo hi`, remote termpilot over ssh to localhost, p50 of {CALLS}"
            ),
            value: format!("{via_ms:.2} ms (+{:.2} over plain)", via_ms - remote_ms),
            target: "≤ plain + 2 ms",
        },
    ]
}
