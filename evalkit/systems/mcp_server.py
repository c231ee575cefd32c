"""A memory system as an MCP server (`evalkit serve --mcp`, stdio), with the official `mcp` SDK.

Tools (arguments and results are the shapes of `evalkit.systems.wire`; every result is
structured output, and the same JSON as text):
- `info()` → SystemInfo
- `store_thoughts(namespace, thoughts)` → AddedOut — the namespace is opened on first use
- `add_edges(namespace, edges)` → AddedOut
- `search(namespace, query, top_k, now, project?, include_global?, min_relevance?,
  recency_weight?, recency_half_life_days?)` → SearchOut
- `drop_namespace(namespace)` → AddedOut (added = 0): the namespace and its files are gone
`datasets/mcp/reference.toml` is the mapping file that lets the MCP adapter evaluate it.
Tools are `async`, so the store is used from the server's event-loop thread only.
"""

from __future__ import annotations

from datetime import datetime

from mcp.server.mcpserver import MCPServer

from evalkit.systems.capabilities import declared_capabilities
from evalkit.systems.namespaces import Namespaces
from evalkit.systems.protocol import MemorySystem
from evalkit.systems.wire import (
    AddedOut,
    EdgeIn,
    EdgesIn,
    SearchIn,
    SearchOut,
    SystemInfo,
    ThoughtIn,
    ThoughtsIn,
    edges_out,
    search_out,
    thoughts_out,
)


def create_server(system: MemorySystem) -> MCPServer:
    """An MCP server exposing `system`'s memories by namespace through the tools above."""
    namespaces = Namespaces(system)
    server = MCPServer("evalkit-memory", instructions="Isolated memories by namespace: store, link, search.")

    @server.tool(description="The system's name, capabilities and description.")
    async def info() -> SystemInfo:
        return SystemInfo(
            name=system.name, capabilities=sorted(declared_capabilities(system)), describe=system.describe()
        )

    @server.tool(description="Store thoughts in a namespace (opened on first use).")
    async def store_thoughts(namespace: str, thoughts: list[ThoughtIn]) -> AddedOut:
        namespaces.ensure(namespace).add_thoughts(thoughts_out(ThoughtsIn(thoughts=thoughts)))
        return AddedOut(added=len(thoughts))

    @server.tool(description="Link thoughts of a namespace with typed edges (replaces, contradicts, ...).")
    async def add_edges(namespace: str, edges: list[EdgeIn]) -> AddedOut:
        namespaces.ensure(namespace).add_edges(edges_out(EdgesIn(edges=edges)))
        return AddedOut(added=len(edges))

    @server.tool(description="Search a namespace; min_relevance null = the default gate, 0 = none.")
    async def search(
        namespace: str,
        query: str,
        top_k: int,
        now: datetime,
        project: str | None = None,
        include_global: bool = False,
        min_relevance: float | None = None,
        recency_weight: float = 0.0,
        recency_half_life_days: float = 30.0,
    ) -> SearchOut:
        options = SearchIn(
            query=query,
            top_k=top_k,
            now=now,
            project=project,
            include_global=include_global,
            min_relevance=min_relevance,
            recency_weight=recency_weight,
            recency_half_life_days=recency_half_life_days,
        ).model_dump()
        return search_out(namespaces.ensure(namespace).search(options.pop("query"), **options))

    @server.tool(description="Delete a namespace and its files.")
    async def drop_namespace(namespace: str) -> AddedOut:
        namespaces.drop(namespace)
        return AddedOut(added=0)

    return server
