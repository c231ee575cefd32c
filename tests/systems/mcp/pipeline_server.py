"""A hand-written MCP stdio server that answers one request at a time and tells how the client
orders its calls: `python pipeline_server.py` (settings in its environment, below).

It reads one line, answers it, then reads the next (as the simplest stdio servers do: requests
the client sends meanwhile wait in the pipe). Tools: `store(namespace, thoughts)` (the namespace
is made on first use; a thought whose content holds "FAIL" is refused, after the namespace is
made), `search(namespace, query, top_k)` (the namespace's thoughts sharing a word with the query,
most shared words first, then in storing order), `drop(namespace, scenario)` (the namespace is
removed; an error when it does not exist) and `namespaces()` (the namespaces left).

- `HOLD="a,b"`: the reply to the drop of these scenarios is held until the next request comes:
  it is sent just before that request is answered. A client that waits for the drop's reply
  before it sends anything else waits forever (to its own deadline).
- `EXCLUSIVE=SECONDS`: before it answers a drop, the server waits that long for another request;
  one that comes (a client that did not wait for the drop's reply) is answered with the error
  "overlap: …", after the drop's reply.
- `FAIL_DROP="a,b"`: the drop of these scenarios is refused (an error; the namespace stays).
- `LEFT=PATH`: when stdin closes, the namespaces left are written there (a JSON list).
"""

from __future__ import annotations

import json
import os
import re
import select
import sys
import time

HOLD = set(filter(None, os.environ.get("HOLD", "").split(",")))
FAIL_DROP = set(filter(None, os.environ.get("FAIL_DROP", "").split(",")))
EXCLUSIVE = float(os.environ.get("EXCLUSIVE", "0"))
MEMORY: dict[str, list[tuple[str, str]]] = {}  # namespace -> (id, content), in storing order
SCHEMA = {"type": "object"}
TOOLS = ("store", "search", "drop", "namespaces")


class Lines:
    """stdin's lines, read from its file descriptor (so that `call_comes` can wait for one)."""

    def __init__(self) -> None:
        self.buffer = b""

    def call_comes(self, seconds: float) -> bool:
        """Whether the next line is there, or comes within `seconds`, and is a tool call."""
        deadline = time.monotonic() + seconds
        while b"\n" not in self.buffer and (left := deadline - time.monotonic()) > 0:
            if not select.select([0], [], [], left)[0]:
                break
            chunk = os.read(0, 1 << 16)
            if not chunk:
                break
            self.buffer += chunk
        line = self.buffer.partition(b"\n")[0] if b"\n" in self.buffer else b""
        return b'"tools/call"' in line

    def next(self) -> bytes:
        while b"\n" not in self.buffer:
            chunk = os.read(0, 1 << 16)
            if not chunk:
                return b""  # EOF: the client closed stdin
            self.buffer += chunk
        line, _, self.buffer = self.buffer.partition(b"\n")
        return line + b"\n"


def send(message: dict) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def reply(id_: object, structured: object = None, error: str | None = None) -> dict:
    if error is not None:
        body = {"content": [{"type": "text", "text": error}], "isError": True}
    else:
        body = {
            "content": [{"type": "text", "text": json.dumps(structured)}],
            "structuredContent": structured,
        }
    return {"jsonrpc": "2.0", "id": id_, "result": body}


def words(text: str) -> set[str]:
    return {w for w in re.findall(r"[a-z0-9]+", text.lower()) if len(w) >= 3}


def call(id_: object, name: str, arguments: dict) -> dict:
    namespace = arguments.get("namespace", "")
    if name == "store":
        memory = MEMORY.setdefault(namespace, [])
        for thought in arguments["thoughts"]:
            if "FAIL" in thought["content"]:
                return reply(id_, error=f"cannot store thought {thought['id']!r}")
            memory.append((thought["id"], thought["content"]))
        return reply(id_, {"stored": len(arguments["thoughts"])})
    if name == "search":
        asked = words(arguments["query"])
        stored = MEMORY.get(namespace, [])
        scored = [(len(asked & words(content)), n, id_) for n, (id_, content) in enumerate(stored)]
        ranked = sorted((s for s in scored if s[0] > 0), key=lambda s: (-s[0], s[1]))
        return reply(
            id_, {"hits": [{"id": i, "score": shared} for shared, _, i in ranked[: arguments["top_k"]]]}
        )
    if name == "drop":
        if arguments["scenario"] in FAIL_DROP:
            return reply(id_, error=f"cannot drop namespace {namespace!r}")
        if MEMORY.pop(namespace, None) is None:
            return reply(id_, error=f"no namespace {namespace!r}")
        return reply(id_, {"dropped": namespace})
    if name == "namespaces":
        return reply(id_, {"namespaces": sorted(MEMORY)})
    return reply(id_, error=f"unknown tool {name!r}")


def main() -> None:
    lines = Lines()
    held: dict | None = None  # a drop's reply, sent before the next request is answered
    overlap: str | None = None  # the drop a request came before the reply of
    while line := lines.next():
        request = json.loads(line)
        method, id_ = request.get("method"), request.get("id")
        if id_ is None:  # a notification (initialized, cancelled): no reply
            continue
        if held is not None:
            send(held)
            held = None
        if method == "initialize":
            send({"jsonrpc": "2.0", "id": id_, "result": {
                "protocolVersion": request["params"]["protocolVersion"], "capabilities": {"tools": {}},
                "serverInfo": {"name": "pipeline", "version": "1"},
            }})  # fmt: skip
        elif method == "tools/list":
            send(
                {
                    "jsonrpc": "2.0",
                    "id": id_,
                    "result": {"tools": [{"name": n, "inputSchema": SCHEMA} for n in TOOLS]},
                }
            )
        elif method == "tools/call":
            name, arguments = request["params"]["name"], request["params"].get("arguments") or {}
            if overlap is not None:
                send(reply(id_, error=f"overlap: {name!r} came before the reply to {overlap}"))
                overlap = None
                continue
            answer = call(id_, name, arguments)
            if name == "drop" and arguments.get("scenario") in HOLD:
                held = answer
                continue
            if name == "drop" and EXCLUSIVE and lines.call_comes(EXCLUSIVE):
                overlap = f"the drop of scenario {arguments.get('scenario')!r}"
            send(answer)
        else:
            send({"jsonrpc": "2.0", "id": id_, "result": {}})
    if os.environ.get("LEFT"):
        with open(os.environ["LEFT"], "w") as out:
            json.dump(sorted(MEMORY), out)


if __name__ == "__main__":
    main()
