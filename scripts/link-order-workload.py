#!/usr/bin/env python3
"""The exchanges scripts/link-order profiles: a real MCP client over stdio that starts the
server given after the mode and lists its tools; in mode `idle` that is all, in mode `full`
it goes on to start a bash session, run a few commands, type into a REPL and read the
screen, then stops. What the server runs here is what the linker puts first (see build.rs),
what it runs at rest before the rest.

    link-order-workload.py idle|full SERVER [ARGS...]"""
import json
import os
import subprocess
import sys
import tempfile


class Client:
    def __init__(self, argv):
        # Started as `cargo bench` starts it (a state folder of its own, /bin/sh sessions):
        # parsing those settings runs functions of their own, which the list must hold too.
        self.state = tempfile.TemporaryDirectory()
        env = dict(os.environ, TERMPILOT_STATE_DIR=self.state.name, TERMPILOT_SHELL="/bin/sh")
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
    if mode not in ("idle", "full"):
        sys.exit("usage: link-order-workload.py idle|full SERVER [ARGS...]")
    client = Client(sys.argv[2:])
    client.request("initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                                  "clientInfo": {"name": "link-order", "version": "1"}})
    client.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    client.request("tools/list", {})
    client.call("terminal_list", {})
    if mode == "full":
        drive_a_session(client)
    client.proc.stdin.close()
    client.proc.wait(timeout=120)


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
    client.call("terminal_stop", {"sessionId": sid})


if __name__ == "__main__":
    main()
