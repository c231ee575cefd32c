"""Built-in systems for the memory libraries agents are built with: `--system langgraph`,
`langgraph-sqlite`, `langgraph-postgres`, `mem0`, `txtai` (each with its optional extra,
`pip install 'evalkit-memory[langgraph]'`…).

`LIBRARIES` maps each name to its extra and class, as `evalkit.systems.stores.STORES` does for
the vector stores; `evalkit.systems.resolve` builds both the same way (a library's module imports
the library, so it is imported only when named). What they share — the run's embedder handed to
the library, a namespace per scenario, filters, tie order, deletion and update, pickling — is in
`evalkit.systems.libraries.common`.
"""

LIBRARIES: dict[str, tuple[str, str]] = {
    "langgraph": ("libraries.langgraph", "LangGraphSystem"),
    "langgraph-sqlite": ("libraries.langgraph_sqlite", "LangGraphSqliteSystem"),
    "langgraph-postgres": ("libraries.langgraph_postgres", "LangGraphPostgresSystem"),
    "mem0": ("libraries.mem0", "Mem0System"),
    "txtai": ("libraries.txtai", "TxtaiSystem"),
}
"""Library system name (also the name of its extra) → (module under `evalkit.systems`, class)."""

LIBRARY_SPECS = "'langgraph', 'langgraph-sqlite', 'langgraph-postgres[:hnsw]', 'mem0', 'txtai'"
"""The library specs, as error messages and help list them."""
