#!/usr/bin/env python3
"""The exchanges scripts/link-order profiles: a real MCP client over stdio that starts the
server given after the mode and lists its tools; in mode `idle` that is all, in mode `full`
it goes on to start a bash session, run a few commands, type into a REPL and read the
screen, then stops. What the server runs here is what the linker puts first (see build.rs),
what it runs at rest before the rest.

In mode `host` the command given is the session host's (`__session-host` is added; its last
word is the binary, which also serves as the plain server): the host is started first, in a
runtime folder of its own, a server (not profiled) starts a kept session in it and drives it,
then the host is left at rest; once it has settled, its callgrind counters are zeroed and,
after a minute at rest (a blocking-pool thread ends after 10 s, the idle sweep runs each
minute, the host settles again), dumped: that dump (`callgrind.<pid>.1`) is what the host
runs at rest.

    link-order-workload.py idle|full SERVER [ARGS...]
    link-order-workload.py host valgrind --tool=callgrind ... BINARY"""
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time


class Client:
    def __init__(self, argv, env=None):
        # Started as `cargo bench` starts it (a state folder of its own, /bin/sh sessions):
        # parsing those settings runs functions of their own, which the list must hold too.
        self.state = tempfile.TemporaryDirectory()
        env = dict(env or os.environ, TERMPILOT_STATE_DIR=self.state.name,
                   TERMPILOT_SHELL="/bin/sh")
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env)
        self.next_id = 0

    def send(self, message):
        self.proc.stdin.write((json.dumps(message) + "\n").encode())
        self.proc.stdin.flush()

    def request(self, method, params):
        self.next_id += 1
        self.send({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        while True:
            line = self.proc.stdout.readline()
            if not line:
                sys.exit(f"the server closed its output during {method}")
            reply = json.loads(line)
            if reply.get("id") == self.next_id:
                return reply

    def call(self, name, arguments):
        reply = self.request("tools/call", {"name": name, "arguments": arguments})
        result = reply.get("result") or sys.exit(f"{name} failed: {reply}")
        return result.get("structuredContent", {})


def main():
    mode = sys.argv[1] if len(sys.argv) > 2 else ""
    if mode not in ("idle", "full", "host"):
        sys.exit("usage: link-order-workload.py idle|full|host SERVER [ARGS...]")
    if mode == "host":
        profile_host(sys.argv[2:])
        return
    client = start(sys.argv[2:])
    if mode == "full":
        drive_a_session(client)
    client.proc.stdin.close()
    client.proc.wait(timeout=120)


def start(argv, env=None):
    client = Client(argv, env)
    client.request("initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                                  "clientInfo": {"name": "link-order", "version": "1"}})
    client.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    client.request("tools/list", {})
    client.call("terminal_list", {})
    return client


def profile_host(argv):
    with tempfile.TemporaryDirectory() as runtime, tempfile.TemporaryDirectory() as home:
        env = dict(os.environ, XDG_RUNTIME_DIR=runtime)
        host = subprocess.Popen(argv + ["__session-host", "--keep-idle", "86400"], env=env,
                                stdin=subprocess.DEVNULL, stdout=subprocess.PIPE)
        try:
            said = host.stdout.readline().decode().strip()
            if said != "ready":
                sys.exit(f"the session host said {said!r}, not ready")
            client = start([argv[-1]], env)
            sid = client.call("terminal_start", {"shell": "bash", "env": {"HOME": home},
                                                 "keep": True})["sessionId"]
            for _ in range(10):
                client.call("terminal_exec", {"sessionId": sid, "command": "echo hi",
                                              "timeout": 60000})
            client.call("terminal_read", {"sessionId": sid})
            client.call("terminal_list", {})
            # Settled (after 1 s of quiet, slower under callgrind), then a minute at rest.
            time.sleep(5)
            subprocess.run(["callgrind_control", "-z", str(host.pid)], check=True,
                           stdout=subprocess.DEVNULL)
            time.sleep(70)
            subprocess.run(["callgrind_control", "-d", "rest", str(host.pid)], check=True,
                           stdout=subprocess.DEVNULL)
            client.call("terminal_stop", {"sessionId": sid})
            client.proc.stdin.close()
            client.proc.wait(timeout=120)
        finally:
            host.send_signal(signal.SIGTERM)
            host.wait(timeout=300)


def drive_a_session(client):
    sid = client.call("terminal_start", {"shell": "bash", "env": {"PS1": "$ "}})["sessionId"]
    for command in ["echo hi", "cd /tmp && ls -la", "seq 1 20000", "false"]:
        client.call("terminal_exec", {"sessionId": sid, "command": command, "timeout": 60000})
    client.call("terminal_exec", {"sessionId": sid, "command": "python3 -q", "timeout": 60000})
    for data in ["2+2\r", "print('x' * 300)\r", "exit()\r"]:
        client.call("terminal_write", {"sessionId": sid, "data": data})
    client.call("terminal_read", {"sessionId": sid})
    client.call("terminal_read", {"sessionId": sid, "view": "screen"})
    client.call("terminal_send_key", {"sessionId": sid, "key": "Ctrl+C"})
    # A full-screen program, as the bench's peer workload has (its first screen, trimmed).
    if shutil.which("vim"):
        client.call("terminal_exec", {"sessionId": sid, "command": "vim -Nu NONE",
                                      "timeout": 60000})
        client.call("terminal_write", {"sessionId": sid, "data": ":q!\r"})
    client.call("terminal_stop", {"sessionId": sid})


if __name__ == "__main__":
    main()
