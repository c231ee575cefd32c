"""A small real MCP memory server (the official `mcp` SDK, stdio) that ignores its namespace.

`python leaky_server.py` serves tools `store(namespace, thoughts)`, `search(namespace, query,
top_k)`, `forget(namespace, ids)` and `drop(namespace)`. Every tool takes `namespace`, as an
isolating server's would, but one memory holds every namespace's thoughts, so scenarios leak into
each other unless something else isolates them (`forget` of the seeded ids, or one process per
scenario). Search: the stored thoughts sharing a word (lower case, 3+ letters) with the query,
most shared words first, then in storing order; the first top_k.
"""

from __future__ import annotations

import re

from mcp.server.mcpserver import MCPServer
from pydantic import BaseModel

server = MCPServer("leaky-memory")
MEMORY: list[tuple[str, str]] = []  # (id, content), every namespace's


class ThoughtIn(BaseModel):
    id: str
    content: str


def words(text: str) -> set[str]:
    return {w for w in re.findall(r"[a-z0-9]+", text.lower()) if len(w) >= 3}


@server.tool(description="Store thoughts (the namespace is accepted and ignored).")
def store(namespace: str, thoughts: list[ThoughtIn]) -> dict:
    MEMORY.extend((t.id, t.content) for t in thoughts)
    return {"stored": len(thoughts)}


@server.tool(description="Search by shared words.")
def search(namespace: str, query: str, top_k: int = 5) -> dict:
    asked = words(query)
    scored = [(len(asked & words(content)), n, id_) for n, (id_, content) in enumerate(MEMORY)]
    ranked = sorted((s for s in scored if s[0] > 0), key=lambda s: (-s[0], s[1]))
    return {"hits": [{"id": id_, "score": shared} for shared, _, id_ in ranked[:top_k]]}


@server.tool(description="Delete the thoughts with these ids.")
def forget(namespace: str, ids: list[str]) -> dict:
    before = len(MEMORY)
    MEMORY[:] = [(i, c) for i, c in MEMORY if i not in set(ids)]
    return {"deleted": before - len(MEMORY)}


@server.tool(description="Drop a namespace (does nothing: there is one memory).")
def drop(namespace: str) -> dict:
    return {"dropped": 0}


if __name__ == "__main__":
    server.run(transport="stdio")
