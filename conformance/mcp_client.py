"""Drives `ultragit mcp` with the official Python MCP SDK (`mcp` on PyPI).

Usage: python mcp_client.py PATH/TO/ultragit

A client nobody on the team wrote: it builds a temporary repository with one
commit and an ultragit note written by `git notes --ref refs/notes/ultragit add`
(no model involved), starts `ultragit mcp` in it over stdio, and checks that

0. `tools/list` sent before `initialize` fails with the server's clear
   JSON-RPC error (`-32600`, "server not initialized"), as the SDK reports it;
1. `initialize` names the server and offers tools;
2. `tools/list` has `ultragit_read` and `ultragit_context_set`, with strict
   input schemas (`additionalProperties: false`, `paths` required);
3. `ultragit_read` on the annotated function returns the note's intent, in the
   markdown text and in `structuredContent`;
4. `ultragit_context_set` succeeds and `.git/ultragit/pending-context.json`
   holds what was sent;
5. `ultragit_read` on a missing file is a tool error (`isError`) with read's
   message, not a protocol error.

Prints `ok: …` and exits 0, or prints `FAIL: …` and exits 1.
"""

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import anyio
from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp.shared.exceptions import MCPError

INTENT = "Adds two numbers, wrapping on overflow instead of panicking."
SOURCE = "pub fn add(a: i32, b: i32) -> i32 {\n    a.wrapping_add(b)\n}\n"
# How long the whole session may take before it counts as a hang.
TIMEOUT_SECONDS = 120

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


def git(repo, *args):
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(GIT_ENV)
    out = subprocess.run(
        ["git", *args], cwd=repo, env=env, check=True, capture_output=True, text=True
    )
    return out.stdout.strip()


def annotated_repository(root):
    """A repository whose one commit has an ultragit note on `add`."""
    git(root, "init", "--quiet", "--initial-branch=main")
    (root / "src").mkdir()
    (root / "src" / "lib.rs").write_text(SOURCE)
    git(root, "add", "src/lib.rs")
    git(root, "commit", "--quiet", "-m", "Add add")
    commit = git(root, "rev-parse", "HEAD")
    note = {
        "$schema": "ultragit/v1",
        "commit": commit,
        "timestamp": "2024-01-01T00:00:00Z",
        "task": None,
        "summary": "Adds an overflow-safe add.",
        "context_level": "inferred",
        "regions": [
            {
                "file": "src/lib.rs",
                "ast_anchor": {
                    "type": "function",
                    "name": "add",
                    "signature": "pub fn add(a: i32, b: i32) -> i32",
                },
                "lines": {"start": 1, "end": 3},
                "intent": INTENT,
                "constraints": [
                    {"text": "Never panics on overflow.", "source": "inferred"}
                ],
            }
        ],
        "cross_cutting": [],
        "provenance": {"operation": "initial", "original_annotations_preserved": False},
    }
    git(root, "notes", "--ref", "refs/notes/ultragit", "add", "-m", json.dumps(note), commit)
    return commit


def text_of(result):
    check(len(result.content) == 1, f"one content block expected, got {result.content!r}")
    block = result.content[0]
    check(block.type == "text", f"a text block expected, got {block!r}")
    return block.text


async def session_checks(binary, repo):
    params = StdioServerParameters(
        command=str(binary),
        args=["mcp"],
        cwd=str(repo),
        env={"GIT_CONFIG_GLOBAL": "/dev/null", "GIT_CONFIG_NOSYSTEM": "1"},
    )
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            try:
                early = await session.list_tools()
            except MCPError as error:
                check(error.code == -32600, f"tools/list before initialize: code {error.code}")
                check(
                    "server not initialized" in error.error.message,
                    f"tools/list before initialize: {error.error.message!r}",
                )
            else:
                raise Failed(f"tools/list before initialize was answered: {early!r}")

            init = await session.initialize()
            check(init.server_info.name == "ultragit", f"server name: {init.server_info!r}")
            check(init.capabilities.tools is not None, "the server offers no tools")

            listed = await session.list_tools()
            tools = {tool.name: tool for tool in listed.tools}
            for name in ("ultragit_read", "ultragit_context_set"):
                check(name in tools, f"{name} is not listed: {sorted(tools)}")
                schema = tools[name].input_schema
                check(
                    schema.get("additionalProperties") is False,
                    f"{name}'s schema allows unknown properties: {schema}",
                )
            check(
                tools["ultragit_read"].input_schema.get("required") == ["paths"],
                "ultragit_read must require paths",
            )

            read = await session.call_tool(
                "ultragit_read", {"paths": ["src/lib.rs"], "anchor": "add"}
            )
            check(not read.is_error, f"ultragit_read failed: {read.content!r}")
            check(INTENT in text_of(read), f"the intent is not in the text: {text_of(read)}")
            regions = (read.structured_content or {}).get("regions") or []
            check(regions, f"no regions in structuredContent: {read.structured_content}")
            check(
                regions[0]["region"]["intent"] == INTENT,
                f"structuredContent's intent: {regions[0]}",
            )

            context = await session.call_tool(
                "ultragit_context_set",
                {"task": "Conformance task", "tags": ["conformance"]},
            )
            check(not context.is_error, f"ultragit_context_set failed: {context.content!r}")
            pending = json.loads((repo / ".git/ultragit/pending-context.json").read_text())
            check(
                pending.get("task") == "Conformance task"
                and pending.get("tags") == ["conformance"],
                f"pending-context.json holds {pending}",
            )

            missing = await session.call_tool("ultragit_read", {"paths": ["src/missing.rs"]})
            check(missing.is_error, "reading a missing file must be a tool error")
            expected = "File not found: src/missing.rs. Does it exist at HEAD?"
            check(text_of(missing) == expected, f"error text: {text_of(missing)!r}")
            return len(listed.tools), init.protocol_version


async def main(binary):
    with tempfile.TemporaryDirectory(prefix="ultragit-mcp-conformance-") as tmp:
        repo = Path(tmp)
        annotated_repository(repo)
        with anyio.fail_after(TIMEOUT_SECONDS):
            count, version = await session_checks(binary, repo)
    print(
        f"ok: tools/list before initialize refused, initialize (protocol {version}), "
        f"{count} tools listed with strict schemas, read returned the note, context set stored, "
        "missing file is a tool error"
    )


if __name__ == "__main__":
    if len(sys.argv) != 2:
        print("usage: mcp_client.py PATH/TO/ultragit", file=sys.stderr)
        sys.exit(2)
    try:
        anyio.run(main, Path(sys.argv[1]).resolve())
    except Failed as failure:
        print(f"FAIL: {failure}")
        sys.exit(1)
