"""mem0 as the system under test: `--system mem0`, the `mem0ai` package's `Memory` with
`infer=False` (each thought stored as it is: no LLM extracts facts from it), a local Qdrant in
memory, telemetry off. Needs the `mem0` extra.

mem0 is configured as a user runs it offline: its vector store is Qdrant's local mode in memory
(a `QdrantClient(":memory:")` handed to it, one per process), its history database in memory
too, so it writes no file a worker could leave behind, and its embedding model replaced by the
run's embedder (`EmbedderEmbedding`, a `mem0.embeddings.base.EmbeddingBase`: thoughts embedded
as passages on `add` and `update`, queries as queries on `search`). mem0's configuration has no
provider for an embedder object of one's own (its `langchain` provider needs the `langchain`
package and embeds everything as a query), so the memory is built with the OpenAI provider —
pointed at a closed loopback port, with a placeholder key, never called — and its
`embedding_model` set after. The LLM is configured the same way and never called
(`infer=False`). `MEM0_TELEMETRY` is set to False and, unless set already, `MEM0_DIR` (where
mem0 writes a `config.json` when imported) to `evalkit-mem0` in the temporary directory, before
mem0 is imported.

Each scenario is a `run_id` of its own (`evalkit_<32 hex>`), its memories deleted when it closes;
a hit of any other run is an AdapterError. mem0 makes its own ids: the thought's id travels in the
memory's metadata (`evalkit_id`) and hits are mapped back through it. The project filter is a
metadata filter (`{"OR": [{"project": p}, {"is_global": True}]}` with global thoughts).

What mem0 does to the ranking, recorded in the report (`provenance.system.scoring`):
- its score is semantic similarity plus, when their optional packages are there, BM25 (the
  `fastembed` package and its `Qdrant/bm25` model) and an entity boost (spaCy), divided by the
  number of parts on; both switch off silently (a log line) without them. This extra installs
  neither, so the score is the cosine similarity;
- it drops every row whose semantic similarity is below its `threshold`, whose lowest allowed
  value is 0: rows of negative similarity are never returned, so a search can return fewer
  rows than it holds.
"""

from __future__ import annotations

import importlib.util
import logging
import os
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

os.environ["MEM0_TELEMETRY"] = "False"  # read by mem0 when imported
os.environ.setdefault("MEM0_DIR", os.path.join(tempfile.gettempdir(), "evalkit-mem0"))

from mem0 import Memory
from mem0.embeddings.base import EmbeddingBase
from qdrant_client import QdrantClient

from evalkit.embedders import Embedder
from evalkit.errors import AdapterError
from evalkit.systems.libraries.common import LibrarySystem, Note, floats
from evalkit.systems.stores.common import Scope

_UNCALLED = {"api_key": "evalkit-offline-unused", "openai_base_url": "http://127.0.0.1:9/v1"}
"""OpenAI settings that make a client mem0 builds but never calls (the discard port refuses)."""


class EmbedderEmbedding(EmbeddingBase):
    """evalkit's embedder as mem0's embedding model: passages on add and update, queries on search."""

    def __init__(self, embedder: Embedder) -> None:
        super().__init__()
        self.embedder = embedder

    def embed(
        self, text: str, memory_action: Literal["add", "search", "update"] | None = None
    ) -> list[float]:
        if memory_action == "search":
            return floats(self.embedder.embed_query(text))
        return floats(self.embedder.embed_passages([text])[0])


class Mem0Run:
    """One scenario's memories in mem0: a `run_id` of its own."""

    def __init__(self, memory: Memory, run_id: str, system: str) -> None:
        self._memory = memory
        self._run_id = run_id
        self._system = system
        self._ids: dict[str, str] = {}
        """evalkit id → mem0's id."""

    def put(self, notes: Sequence[Note]) -> None:
        for note in notes:
            if note.id in self._ids:
                self._memory.update(self._ids[note.id], text=note.content, metadata={"status": note.status})
                continue
            added = self._memory.add(
                [{"role": "user", "content": note.content}],
                run_id=self._run_id,
                metadata=note.metadata(),
                infer=False,
            )
            (result,) = added["results"]
            self._ids[note.id] = result["id"]

    def nearest(self, query: str, limit: int, scope: Scope) -> list[tuple[str, float]]:
        filters: dict[str, Any] = {"run_id": self._run_id}
        if scope.project is not None and scope.include_global:
            filters["OR"] = [{"project": scope.project}, {"is_global": True}]
        elif scope.project is not None:
            filters["project"] = scope.project
        found = self._memory.search(query, filters=filters, top_k=limit, threshold=0.0)["results"]
        pairs = []
        for result in found:
            if result.get("run_id") != self._run_id:
                raise AdapterError(
                    f"system {self._system!r}: a search of run {self._run_id!r} returned memory "
                    f"{result['id']!r} of run {result.get('run_id')!r}: scenarios are not isolated"
                )
            pairs.append((str((result.get("metadata") or {}).get("evalkit_id")), float(result["score"])))
        return pairs

    def delete(self, ids: Sequence[str]) -> None:
        for id_ in ids:
            self._memory.delete(self._ids.pop(id_))

    def drop(self) -> None:
        self._memory.delete_all(run_id=self._run_id)
        self._ids.clear()


class Mem0System(LibrarySystem):
    """mem0's `Memory` (`infer=False`, local Qdrant, the run's embedder), one per process."""

    name = "mem0"
    package = "mem0ai"
    index = "exact cosine (Qdrant local mode), mem0's score"
    needs_workdir = False

    def describe(self) -> dict[str, Any]:
        """The library, its embedder, and which of mem0's scoring parts are on."""
        return {**super().describe(), "scoring": scoring_parts()}

    def location_label(self) -> str:
        return "in this process, in memory (Qdrant's local mode)"

    def _connect(self) -> Memory:
        for name in ("mem0", "mem0.memory.main", "mem0.vector_stores.qdrant", "mem0.utils.spacy_models"):
            logging.getLogger(name).setLevel(logging.ERROR)  # "spaCy is not installed" on every search
        memory = Memory.from_config(self.mem0_config())
        memory.embedding_model = EmbedderEmbedding(self.embedder)
        return memory

    def mem0_config(self) -> dict[str, Any]:
        """mem0's configuration (`Memory.from_config`) as the module docstring says: the OpenAI
        embedder and LLM pointed at a closed port (`_connect` replaces the embedding model), a
        local Qdrant in memory, the history database in memory. A fresh dict (and Qdrant client)
        per call."""
        return {
            "embedder": {"provider": "openai", "config": {**_UNCALLED, "embedding_dims": self.embedder.dim}},
            "llm": {"provider": "openai", "config": dict(_UNCALLED)},
            "vector_store": {
                "provider": "qdrant",
                "config": {
                    "collection_name": "evalkit",
                    "embedding_model_dims": self.embedder.dim,
                    "client": QdrantClient(location=":memory:"),
                },
            },
            "history_db_path": ":memory:",
        }

    def _create(self, client: Any, name: str, workdir: Path) -> Any:
        return Mem0Run(client, name, self.name)

    def _disconnect(self, client: Any) -> None:
        client.vector_store.client.close()
        client.db.close()


def scoring_parts() -> dict[str, str]:
    """Which parts of mem0's score are on in this environment (see the module docstring)."""
    return {
        "semantic": "on: cosine similarity; rows below 0 are dropped (threshold 0, mem0's lowest)",
        "bm25": "on (fastembed)" if importlib.util.find_spec("fastembed") else "off: fastembed not installed",
        "entity_boost": "on (spaCy)" if importlib.util.find_spec("spacy") else "off: spaCy not installed",
    }
