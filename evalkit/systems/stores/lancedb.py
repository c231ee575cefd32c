"""LanceDB as the system under test: `--system lancedb`, a database in each scenario's working
directory (removed by the runner). Needs the `lancedb` extra.

Tables hold the thought's id, vector, project and is_global; a search is LanceDB's exhaustive
(flat) nearest-neighbour search with the cosine distance, the project filter a `where` clause
applied before the search. LanceDB leaves out rows whose vector is all zeros (text with nothing to
embed): their cosine distance is undefined. What is shared by every store is in
`evalkit.systems.stores.common`.

`lancedb` itself is imported when a process first connects, not with this module: LanceDB warns
of (and risks) a deadlock in processes forked after its runtime was set up — a worker forked from
a process that had used it crashed with a segmentation fault. `--workers` no longer forks from
the caller (its workers start from the forkserver, which never used LanceDB; see
`evalkit.harness.executors`), so that concerns only a process the user forks: such a process
raises AdapterError instead (`fork_safe = False`).
The module checks at import that the package is installed, so a missing extra is still reported
when the system is named.
"""

from __future__ import annotations

import importlib
import importlib.util
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pyarrow as pa

from evalkit.packaged import forget_namespace_datasets
from evalkit.systems.stores.common import Collection, Row, Scope, WorkdirStoreSystem

if importlib.util.find_spec("lancedb") is None:
    raise ImportError("No module named 'lancedb'")


class LanceCollection:
    """One scenario's LanceDB table (created on the first insert: LanceDB needs its schema)."""

    def __init__(self, db: Any, name: str, dim: int) -> None:
        self._db = db
        self._name = name
        schema = pa.schema(
            [
                pa.field("id", pa.string()),
                pa.field("vector", pa.list_(pa.float32(), dim)),
                pa.field("project", pa.string()),
                pa.field("is_global", pa.bool_()),
            ]
        )
        self._table = db.create_table(name, schema=schema)

    def insert(self, rows: Sequence[Row]) -> None:
        self._table.add(
            [{"id": r.id, "vector": r.vector, "project": r.project, "is_global": r.is_global} for r in rows]
        )

    def nearest(self, vector: list[float], limit: int, scope: Scope) -> list[tuple[str, float]]:
        search = self._table.search(vector).distance_type("cosine").select(["id", "_distance"]).limit(limit)
        where = _where(scope)
        if where is not None:
            search = search.where(where, prefilter=True)
        return [(row["id"], 1.0 - row["_distance"]) for row in search.to_list()]

    def names(self) -> list[str]:
        """The tables the scenario's database holds (for tests)."""
        return list(self._db.table_names())

    def drop(self) -> None:
        self._db.drop_table(self._name)


def _where(scope: Scope) -> str | None:
    if scope.project is None:
        return None
    project = "project = '" + scope.project.replace("'", "''") + "'"
    return f"({project} OR is_global)" if scope.include_global else project


class LanceDbSystem(WorkdirStoreSystem):
    """LanceDB (`lancedb`), a database per scenario in its working directory."""

    name = "lancedb"
    package = "lancedb"

    def _create(self, client: Any, name: str, workdir: Path) -> Collection:
        forget_namespace_datasets()  # lancedb takes any imported `datasets` for Hugging Face's
        return LanceCollection(
            importlib.import_module("lancedb").connect(workdir / "lancedb"), name, self.embedder.dim
        )
