"""The one place evalkit opens SQLite: a driver that can load extensions, with sqlite-vec loaded.

The stdlib `sqlite3` of many Python builds cannot load extensions, so evalkit uses `sqlean-py`
(SQLite with FTS5 built in, `enable_load_extension` available) and loads `sqlite-vec` into it.
"""

from __future__ import annotations

from pathlib import Path
from typing import TypeAlias

import sqlean
import sqlite_vec

from evalkit.errors import StoreError

Connection: TypeAlias = sqlean.Connection
DatabaseError = sqlean.DatabaseError
IntegrityError = sqlean.IntegrityError
OperationalError = sqlean.OperationalError


def connect(path: str | Path, *, timeout: float = 30.0) -> Connection:
    """Open `path` (":memory:" allowed) with sqlite-vec loaded and autocommit off.

    Raises StoreError when the file cannot be opened or the extension cannot be loaded.
    """
    try:
        conn = sqlean.connect(str(path), timeout=timeout)
    except sqlean.Error as exc:
        raise StoreError(
            f"cannot open SQLite database {path} ({exc}); check that its folder exists and is writable"
        ) from exc
    try:
        conn.enable_load_extension(True)
        sqlite_vec.load(conn)
        conn.enable_load_extension(False)
    except (sqlean.Error, AttributeError) as exc:
        conn.close()
        raise StoreError(
            f"cannot load the sqlite-vec extension into {path} ({exc}); reinstall evalkit's "
            "dependencies sqlean-py and sqlite-vec (pip install evalkit-memory)"
        ) from exc
    return conn
