"""Built-in systems for the vector stores agents' memories are built on: `--system chroma`,
`qdrant`, `lancedb`, `pgvector` (each with its optional extra, `pip install 'evalkit-memory[chroma]'`…).

`STORES` maps each name to its extra and class; `evalkit.systems.resolve` builds them (a store's
module imports its client library, so it is imported only when the store is named). What they
share — embedding with the run's embedder, a collection per scenario, metadata filters, tie
order, pickling — is in `evalkit.systems.stores.common`.
"""

STORES: dict[str, tuple[str, str]] = {
    "chroma": ("stores.chroma", "ChromaSystem"),
    "qdrant": ("stores.qdrant", "QdrantSystem"),
    "lancedb": ("stores.lancedb", "LanceDbSystem"),
    "pgvector": ("stores.pgvector", "PgvectorSystem"),
}
"""Store name (also the name of its extra) → (module under `evalkit.systems`, class)."""

STORE_SPECS = "'chroma', 'qdrant', 'lancedb', 'pgvector[:postgresql://…]'"
"""The store specs, as error messages and help list them."""
