"""A hand-written MCP stdio server misbehaving on purpose: `python mcp_fake.py MODE [PIDFILE]`.

It answers `initialize`, `tools/list` (tools `store`, `search`, `drop`) and `tools/call`; MODE
says what goes wrong: `ok` nothing, `banner` a banner line on stdout first, `hang` never answers
`initialize`, `hang-list` never answers `tools/list`, `exit` exits with status 3 at start,
`thread` crashes in its main thread at start while another thread keeps it alive, `huge` a
search reply of 200 MB on one line, `null-id` a hit `{"id": null}`,
`deep` a deeply nested text result, `crash` exits on search (so the drop fails too), `slow`
never answers a search. With PIDFILE it writes its pid there (to check it was stopped)."""

from __future__ import annotations

import json
import os
import sys
import threading
import time

MODE = sys.argv[1]
if len(sys.argv) > 2:
    with open(sys.argv[2], "w") as out:
        out.write(str(os.getpid()))


def send(message: dict) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def result(id_: object, structured: object = None, text: str | None = None) -> None:
    content = [{"type": "text", "text": text if text is not None else json.dumps(structured)}]
    body: dict = {"content": content, "isError": False}
    if structured is not None:
        body["structuredContent"] = structured
    send({"jsonrpc": "2.0", "id": id_, "result": body})


TOOL = {"inputSchema": {"type": "object"}}
if MODE == "exit":
    sys.exit(3)
if MODE == "thread":
    threading.Thread(target=time.sleep, args=(300,)).start()
    raise RuntimeError("start-up failed")
if MODE == "banner":
    print("my-memory-server v1.0 ready", flush=True)
for line in sys.stdin:
    request = json.loads(line)
    method, id_ = request.get("method"), request.get("id")
    if method == "initialize":
        if MODE == "hang":
            time.sleep(300)
        send({"jsonrpc": "2.0", "id": id_, "result": {
            "protocolVersion": request["params"]["protocolVersion"], "capabilities": {"tools": {}},
            "serverInfo": {"name": "fake", "version": "1"},
        }})  # fmt: skip
    elif method == "tools/list":
        if MODE == "hang-list":
            time.sleep(300)
        tools = [{"name": name, **TOOL} for name in ("store", "search", "drop")]
        send({"jsonrpc": "2.0", "id": id_, "result": {"tools": tools}})
    elif method == "tools/call":
        name = request["params"]["name"]
        if name == "search" and len(sys.argv) > 2:
            open(sys.argv[2] + ".search", "w").close()
        if name == "drop" and MODE == "crash":
            sys.exit(3)
        if name != "search":
            result(id_, {"ok": True})
        elif MODE == "huge":
            head = {"jsonrpc": "2.0", "id": id_, "result": {"content": [{"type": "text", "text": "@"}]}}
            start, end = json.dumps(head).split("@")
            sys.stdout.write(start)
            for _ in range(200):
                sys.stdout.write("x" * 1_000_000)
            sys.stdout.write(end + "\n")
            sys.stdout.flush()
        elif MODE == "null-id":
            result(id_, {"hits": [{"id": None}]})
        elif MODE == "deep":
            result(id_, text="[" * 100_000 + "]" * 100_000)
        elif MODE == "crash":
            sys.exit(3)
        elif MODE == "slow":
            time.sleep(300)
        else:
            result(id_, {"hits": []})
    elif id_ is not None:
        send({"jsonrpc": "2.0", "id": id_, "result": {}})
