"""The run history: one SQLite file (through `evalkit.sqlite.connect`) to which every `evalkit run`
appends its summary, so a weekly scheduled run leaves a trend, not only a snapshot.

Contract:
- `append_run(path, result)` adds one run — its identity (run id, time, system, mode, top_k, git
  commit, dataset digest), its regression count, its gated pass's gate figures, and every overall
  and per-category metric of each pass the run holds — in one `BEGIN IMMEDIATE` transaction: a reader never
  sees half a run, and concurrent appends (two CI jobs sharing a folder) wait for each other
  (busy timeout 30 s) instead of failing or interleaving. The folder is created if needed.
- A file that is not an evalkit history (not SQLite, damaged, other tables) raises HistoryError
  naming it; the file is never modified, truncated or replaced.
- `load_history(path)` returns one row per run × pass × scope × metric (HISTORY_COLUMNS), in the
  order the runs were appended; an absent file gives an empty frame (no history yet).
"""

from __future__ import annotations

import uuid
from contextlib import closing
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from evalkit.errors import ReportError
from evalkit.harness.results import PassResult, RunResult
from evalkit.sqlite import Connection, DatabaseError, connect

if TYPE_CHECKING:
    import pandas as pd

HISTORY_FILE = "history.sqlite3"
"""The history's file name, in the reports folder by default (next to the JSON report)."""

HISTORY_COLUMNS: tuple[str, ...] = (
    "run_id", "recorded_at", "generated_at", "system", "mode", "top_k", "git_commit", "git_dirty",
    "dataset_digest", "regressions", "min_relevance", "candidates", "dropped_rows", "queries_with_drops",
    "pass", "scope", "name", "metric", "value", "queries",
)  # fmt: skip
"""One row per run × pass × scope × metric. Run fields repeat on each of its rows; `scope` is
"overall" (name "overall") or "category"; the gate figures are the gated pass's (NaN without one)."""

_SCHEMA = """
CREATE TABLE IF NOT EXISTS runs (
    seq INTEGER PRIMARY KEY AUTOINCREMENT, run_id TEXT NOT NULL UNIQUE, recorded_at TEXT NOT NULL,
    generated_at TEXT NOT NULL, system TEXT NOT NULL, mode TEXT NOT NULL, top_k INTEGER NOT NULL,
    git_commit TEXT, git_dirty INTEGER, dataset_digest TEXT NOT NULL, regressions INTEGER NOT NULL,
    min_relevance REAL, candidates INTEGER, dropped_rows INTEGER, queries_with_drops INTEGER
);
CREATE TABLE IF NOT EXISTS metrics (
    run_id TEXT NOT NULL REFERENCES runs(run_id), pass TEXT NOT NULL, scope TEXT NOT NULL,
    name TEXT NOT NULL, metric TEXT NOT NULL, value REAL NOT NULL, queries INTEGER NOT NULL,
    PRIMARY KEY (run_id, pass, scope, name, metric)
);
"""

_SELECT = """
SELECT r.run_id, r.recorded_at, r.generated_at, r.system, r.mode, r.top_k, r.git_commit, r.git_dirty,
       r.dataset_digest, r.regressions, r.min_relevance, r.candidates, r.dropped_rows,
       r.queries_with_drops, m.pass, m.scope, m.name, m.metric, m.value, m.queries
FROM runs r JOIN metrics m ON m.run_id = r.run_id
ORDER BY r.seq, m.pass DESC, m.scope DESC, m.rowid
"""


class HistoryError(ReportError):
    """The history file cannot be used (damaged, or not an evalkit history). It was left as it was."""


def append_run(path: str | Path, result: RunResult, *, run_id: str | None = None) -> str:
    """Append `result` to the history at `path` (created with its folder when absent) in one
    transaction; returns the run id (a new UUID unless given). HistoryError when `path` is not a
    usable history; the file is left untouched then."""
    file = Path(path)
    file.parent.mkdir(parents=True, exist_ok=True)
    identity = run_id or uuid.uuid4().hex
    gate = result.relevance_gate
    run_row = (
        identity,
        datetime.now(UTC).replace(microsecond=0).isoformat(),
        result.generated_at,
        result.system,
        result.mode,
        result.top_k,
        result.provenance.git.commit,
        result.provenance.git.dirty,
        result.provenance.dataset_digest,
        len(result.regressions),
        None if gate is None else gate.min_relevance,
        None if gate is None else gate.candidates,
        None if gate is None else gate.dropped_rows,
        None if gate is None else gate.queries_with_drops,
    )
    metric_rows = [(identity, *row) for one in result.passes for row in _metric_rows(one)]
    with _open(file) as conn:
        try:
            conn.execute("BEGIN IMMEDIATE")
            for statement in _SCHEMA.split(";")[:-1]:  # not executescript: it would commit first
                conn.execute(statement)
            conn.execute(f"INSERT INTO runs VALUES (NULL, {', '.join('?' * len(run_row))})", run_row)
            conn.executemany("INSERT INTO metrics VALUES (?, ?, ?, ?, ?, ?, ?)", metric_rows)
            conn.commit()
        except DatabaseError as exc:
            conn.rollback()
            raise _damaged(file, exc) from exc
    return identity


def load_history(path: str | Path) -> pd.DataFrame:
    """Every run of the history at `path` (HISTORY_COLUMNS, in append order); empty when the
    file does not exist. HistoryError when it is not a usable history (the file is not changed),
    among them a folder or another file that is not a regular one (which read as "no runs yet")."""
    import pandas as pd  # `evalkit run` appends to the history without loading pandas

    file = Path(path)
    if file.exists() and not file.is_file():
        kind = "a folder" if file.is_dir() else "not a regular file"
        hint = f"; did you mean {file / HISTORY_FILE}?" if file.is_dir() else "; give the history file"
        raise HistoryError(f"history {file} is {kind}, not a history file{hint}")
    if not file.exists():
        return pd.DataFrame(columns=list(HISTORY_COLUMNS))
    with _open(file) as conn:
        try:
            rows = conn.execute(_SELECT).fetchall()
        except DatabaseError as exc:
            raise _damaged(file, exc) from exc
    return pd.DataFrame(rows, columns=list(HISTORY_COLUMNS))


def _metric_rows(one: PassResult) -> list[tuple[object, ...]]:
    scopes = [("overall", "overall", one.overall), *(("category", c, a) for c, a in one.categories.items())]
    return [
        (one.name, scope, name, metric, value, aggregate.queries)
        for scope, name, aggregate in scopes
        for metric, value in aggregate.metrics.items()
    ]


def _open(path: Path) -> closing[Connection]:
    """A connection to the history, closed when the `with` block ends."""
    return closing(connect(path))


def _damaged(path: Path, exc: Exception) -> HistoryError:
    return HistoryError(
        f"history {path} is damaged or not an evalkit history ({exc}); it was left as it is: move it "
        "away to start a new history, or choose another file (--history PATH) or none (--history none)"
    )
