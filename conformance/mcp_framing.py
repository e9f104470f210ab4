"""Raw JSON-RPC framing against `ultragit mcp`: bytes on its stdin, replies read
from its stdout, no SDK in between (an SDK never sends what is tested here).

Usage: python mcp_framing.py PATH/TO/ultragit

In a temporary repository with one commit, one server process is sent, in order:

1. `tools/list` before `initialize`: a `-32600` error naming the request's id
   and saying "server not initialized";
2. `initialize` (answered) and `notifications/initialized`;
3. lines that are not JSON (`{bad`, a 100,000-deep array, invalid UTF-8):
   `-32700` with `"id": null`;
4. JSON that is not JSON-RPC (`[]`, `42`, `"jsonrpc": "1.0"`, no `method`, a
   number as `method`): `-32600`, with the id when it can be read, else `null`;
5. after each of 3 and 4, a `ping` that must be answered: the session goes on;
6. an unknown method: `-32601`;

then stdin is closed and the server must exit 0. Every stdout line must be a
JSON-RPC 2.0 message. Only the standard library is used.

Prints `ok: …` and exits 0, or prints `FAIL: …` and exits 1.
"""

import json
import os
import queue
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

# How long one reply, or the exit after stdin closes, may take before it
# counts as a hang.
TIMEOUT_SECONDS = 60

GIT_ENV = {
    "GIT_CONFIG_GLOBAL": "/dev/null",
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_AUTHOR_NAME": "Conformance",
    "GIT_AUTHOR_EMAIL": "conformance@example.invalid",
    "GIT_COMMITTER_NAME": "Conformance",
    "GIT_COMMITTER_EMAIL": "conformance@example.invalid",
    "GIT_AUTHOR_DATE": "2024-01-01T00:00:00Z",
    "GIT_COMMITTER_DATE": "2024-01-01T00:00:00Z",
}


class Failed(Exception):
    pass


def check(condition, what):
    if not condition:
        raise Failed(what)


def clean_env():
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(GIT_ENV)
    return env


def repository(root):
    def git(*args):
        subprocess.run(["git", *args], cwd=root, env=clean_env(), check=True, capture_output=True)

    git("init", "--quiet", "--initial-branch=main")
    (root / "README").write_text("conformance\n")
    git("add", "README")
    git("commit", "--quiet", "-m", "Add README")


class Server:
    """`ultragit mcp` with its stdout read on a thread, line by line."""

    def __init__(self, binary, repo):
        self.proc = subprocess.Popen(
            [str(binary), "mcp"],
            cwd=repo,
            env=clean_env(),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        self.lines = queue.Queue()
        self.seen = []
        threading.Thread(target=self._read, daemon=True).start()
        self.stderr = []
        threading.Thread(target=lambda: self.stderr.append(self.proc.stderr.read()), daemon=True).start()

    def _read(self):
        for line in self.proc.stdout:
            self.lines.put(line)
        self.lines.put(None)

    def send(self, raw):
        self.proc.stdin.write(raw + b"\n")
        self.proc.stdin.flush()

    def request(self, id, method, params=None):
        message = {"jsonrpc": "2.0", "id": id, "method": method}
        if params is not None:
            message["params"] = params
        self.send(json.dumps(message).encode())
        return self.reply()

    def reply(self):
        try:
            line = self.lines.get(timeout=TIMEOUT_SECONDS)
        except queue.Empty:
            raise Failed(f"no reply within {TIMEOUT_SECONDS} s; seen: {self.seen}")
        check(line is not None, f"ultragit mcp closed stdout; seen: {self.seen}")
        self.seen.append(line)
        try:
            message = json.loads(line)
        except ValueError:
            raise Failed(f"not JSON on stdout: {line!r}")
        check(message.get("jsonrpc") == "2.0", f"not JSON-RPC 2.0: {line!r}")
        return message

    def close(self):
        self.proc.stdin.close()
        try:
            code = self.proc.wait(timeout=TIMEOUT_SECONDS)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            raise Failed(f"ultragit mcp still running {TIMEOUT_SECONDS} s after stdin closed")
        rest = []
        while (line := self.lines.get(timeout=TIMEOUT_SECONDS)) is not None:
            rest.append(line)
        check(not rest, f"unexpected output after the last reply: {rest}")
        check(code == 0, f"exit {code}: {b''.join(self.stderr).decode(errors='replace')}")


def expect_error(message, code, id, says):
    error = message.get("error")
    check(isinstance(error, dict), f"an error expected, got {message}")
    check(error.get("code") == code, f"code {code} expected, got {message}")
    check("id" in message and message["id"] == id, f"id {id!r} expected, got {message}")
    check(says in error.get("message", ""), f"{says!r} not in {message}")


def framing_checks(binary, repo):
    server = Server(binary, repo)
    try:
        listed = server.request(1, "tools/list", {})
        expect_error(listed, -32600, 1, "server not initialized: send `initialize` first")

        init = server.request(
            2,
            "initialize",
            {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "framing", "version": "1"},
            },
        )
        check(init.get("result", {}).get("serverInfo", {}).get("name") == "ultragit", f"initialize: {init}")
        server.send(b'{"jsonrpc":"2.0","method":"notifications/initialized"}')

        cases = [
            (b"{bad", -32700, None, "Parse error"),
            (b"[" * 100_000 + b"]" * 100_000, -32700, None, "deeper than"),
            (b'{"jsonrpc":"2.0","id":3,"method":"ping\xff"}', -32700, None, "UTF-8"),
            (b"[]", -32600, None, "Invalid Request"),
            (b"42", -32600, None, "Invalid Request"),
            (b'{"jsonrpc":"1.0","id":4,"method":"ping"}', -32600, 4, "jsonrpc"),
            (b'{"jsonrpc":"2.0","id":5}', -32600, 5, "`method` is missing"),
            (b'{"jsonrpc":"2.0","id":6,"method":7}', -32600, 6, "`method` must be a string"),
        ]
        ping = 100
        for raw, code, id, says in cases:
            server.send(raw)
            expect_error(server.reply(), code, id, says)
            ping += 1
            pong = server.request(ping, "ping")
            check(pong.get("id") == ping and pong.get("result") == {}, f"after {raw[:40]!r}: {pong}")

        unknown = server.request(200, "tools/frobnicate", {})
        expect_error(unknown, -32601, 200, "")
        server.close()
        return len(cases)
    finally:
        if server.proc.poll() is None:
            server.proc.kill()


def main(binary):
    with tempfile.TemporaryDirectory(prefix="ultragit-mcp-framing-") as tmp:
        repo = Path(tmp)
        repository(repo)
        count = framing_checks(binary, repo)
    print(
        f"ok: pre-initialize request refused (-32600), {count} malformed lines answered "
        "(-32700/-32600) with the session going on, unknown method -32601, exit 0 on EOF"
    )


if __name__ == "__main__":
    if len(sys.argv) != 2:
        print("usage: mcp_framing.py PATH/TO/ultragit", file=sys.stderr)
        sys.exit(2)
    try:
        main(Path(sys.argv[1]).resolve())
    except Failed as failure:
        print(f"FAIL: {failure}")
        sys.exit(1)
