"""PostgreSQL with pgvector as the system under test: `--system pgvector:postgresql://…` (your
database; the role needs CREATE on its schema, and the `vector` extension installed or the right
to create it) or `--system pgvector` (a private PostgreSQL started from the `pgserver` wheel in a
temporary directory, on a Unix socket, stopped when the run ends). Needs the `pgvector` extra.

Each scenario is a table `evalkit_<hex>` (id, seeding position, project, is_global,
`vector(dim)`), dropped afterwards. A search is an exact scan ordered by the cosine distance
(`<=>`; no index, so no approximation), the project filter a WHERE clause; pgvector's NaN
distance for an all-zero vector is read as distance 1 (similarity 0). What is shared by every
store is in `evalkit.systems.stores.common`.

Workers: a copy of the system connects to the same database; for the private server the copy
reuses the server this process started (the copy never stops it), so the server starts before
the system is first pickled.
"""

from __future__ import annotations

import contextlib
import os
import re
import tempfile
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import psycopg
from psycopg import sql

from evalkit.embedders import Embedder
from evalkit.errors import AdapterError, UsageError
from evalkit.systems.stores.common import Collection, Row, Scope, StoreSystem


class PgCollection:
    """One scenario's table."""

    def __init__(self, conn: psycopg.Connection[Any], name: str, dim: int) -> None:
        self._conn = conn
        self._table = sql.Identifier(name)
        conn.execute(
            sql.SQL(
                "CREATE TABLE {} (id text PRIMARY KEY, key integer NOT NULL, project text NOT NULL, "
                "is_global boolean NOT NULL, embedding vector({}) NOT NULL)"
            ).format(self._table, sql.Literal(dim))
        )

    def insert(self, rows: Sequence[Row]) -> None:
        with self._conn.cursor() as cursor:
            cursor.executemany(
                sql.SQL("INSERT INTO {} VALUES (%s, %s, %s, %s, %s::vector)").format(self._table),
                [(r.id, r.key, r.project, r.is_global, _literal(r.vector)) for r in rows],
            )

    def nearest(self, vector: list[float], limit: int, scope: Scope) -> list[tuple[str, float]]:
        where, params = _where(scope)
        query = sql.SQL(
            "SELECT id, COALESCE(NULLIF(embedding <=> %s::vector, 'NaN'::float8), 1.0) AS distance "
            "FROM {} {} ORDER BY distance LIMIT %s"
        ).format(self._table, where)
        found = self._conn.execute(query, (_literal(vector), *params, limit)).fetchall()
        return [(id_, 1.0 - distance) for id_, distance in found]

    def drop(self) -> None:
        self._conn.execute(sql.SQL("DROP TABLE IF EXISTS {}").format(self._table))


def _where(scope: Scope) -> tuple[sql.Composable, tuple[Any, ...]]:
    if scope.project is None:
        return sql.SQL(""), ()
    if scope.include_global:
        return sql.SQL("WHERE project = %s OR is_global"), (scope.project,)
    return sql.SQL("WHERE project = %s"), (scope.project,)


def _ensure_vector(conn: psycopg.Connection[Any]) -> None:
    """The `vector` extension in the database, created when missing (workers connecting at the same
    moment may race to create it: the loser finds it there)."""
    if conn.execute("SELECT 1 FROM pg_extension WHERE extname = 'vector'").fetchone():
        return
    with contextlib.suppress(psycopg.errors.UniqueViolation):
        conn.execute("CREATE EXTENSION IF NOT EXISTS vector")


def _literal(vector: list[float]) -> str:
    return "[" + ",".join(repr(x) for x in vector) + "]"


def _start_private_server(pgserver: Any) -> Any:
    """A private PostgreSQL in a new `evalkit-pg-*` temporary folder. When its start fails or is
    interrupted (Ctrl-C, SIGTERM: any BaseException), every process still running on that folder
    (a postmaster that `pg_ctl` had already spawned) is killed and the folder removed before the
    error goes on: pgserver's own clean-up only knows a server that finished starting."""
    folder = tempfile.mkdtemp(prefix="evalkit-pg-")
    try:
        return pgserver.get_server(folder, cleanup_mode="delete")
    except BaseException:
        _discard_private_server(folder)
        raise


def _discard_private_server(folder: str) -> None:
    """Kill the processes whose command line names `folder` (SIGKILL: PostgreSQL's children exit
    with their postmaster), wait for them, and remove `folder`."""
    import shutil

    import psutil  # pgserver's own dependency

    names = {folder, os.path.realpath(folder)}  # pgserver names the folder resolved
    running = []
    for process in psutil.process_iter(attrs=["cmdline"]):
        if any(name in part for part in process.info["cmdline"] or () for name in names):
            with contextlib.suppress(psutil.Error):
                process.kill()
                running.append(process)
    psutil.wait_procs(running, timeout=5)
    shutil.rmtree(folder, ignore_errors=True)


class PgvectorSystem(StoreSystem):
    """pgvector in the PostgreSQL database at `location` (a `postgresql://` URL), or in a private
    server (`pgserver`) when `location` is None."""

    name = "pgvector"
    package = "psycopg"
    location_form = "postgresql://…"

    def __init__(self, location: str | None = None, embedder: Embedder | None = None) -> None:
        if location is not None and not location.startswith(("postgresql://", "postgres://")):
            raise UsageError(
                f"system 'pgvector:{location}': give a database URL, pgvector:postgresql://USER@HOST/DB, "
                "or plain 'pgvector' for a private server"
            )
        super().__init__(location, embedder)
        self._server: Any = None  # the private server this process started (its owner)
        self._url: str | None = location

    def location_label(self) -> str:
        if self.location is None:
            return "private PostgreSQL (pgserver), Unix socket"
        return re.sub(r"(://[^:/@]*):[^@/]*@", r"\1:***@", self.location)

    def url(self) -> str:
        """The database URL; starts the private server on the first call when there is no location."""
        if self._url is None:
            with warnings.catch_warnings():  # platformdirs warns that XDG_RUNTIME_DIR is unset
                warnings.simplefilter("ignore")
                try:
                    import pgserver
                except ImportError as exc:
                    raise UsageError(
                        f"'--system pgvector' without a URL needs pgserver ({exc}); "
                        "pip install 'evalkit-memory[pgvector]'"
                    ) from exc
                server = _start_private_server(pgserver)
            self._server, self._url = server, str(server.get_uri())
        return self._url

    def _connect(self) -> psycopg.Connection[Any]:
        url = self.url()
        try:
            conn = psycopg.connect(url, autocommit=True)
        except psycopg.Error as exc:
            raise AdapterError(
                f"system 'pgvector': cannot connect to {self.location_label()}: {exc}"
            ) from exc
        try:
            _ensure_vector(conn)
        except psycopg.Error as exc:
            conn.close()
            raise AdapterError(
                f"system 'pgvector': the database at {self.location_label()} has no pgvector extension "
                f"and it cannot be created ({exc}); install pgvector on the server, or CREATE EXTENSION "
                "vector as the database's owner"
            ) from exc
        return conn

    def _create(self, client: Any, name: str, workdir: Path) -> Collection:
        return PgCollection(client, name, self.embedder.dim)

    def _disconnect(self, client: Any) -> None:
        client.close()

    def close(self) -> None:
        """Close the connection, and stop and delete the private server if this process started it."""
        super().close()
        server, self._server = self._server, None
        if server is not None:
            server.cleanup()
            self._url = None

    def __getstate__(self) -> dict[str, Any]:
        """The URL (the private server started first) without the connection or the server handle."""
        self.url()
        return {**super().__getstate__(), "_server": None}
