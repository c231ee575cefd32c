"""Atomic file writes: readers see the old file or the new one, never a partial one."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path


def write_atomic(path: str | Path, data: str | bytes) -> Path:
    """Replace `path` with `data` (str is written as UTF-8) via a temp file in the same folder,
    fsync and rename; the folder is created if needed and the temp file removed on any error.
    The file gets the permissions a plain `open(path, "w")` would give (0o666 minus the umask),
    not mkstemp's private 0o600."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    payload = data.encode("utf-8") if isinstance(data, str) else data
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    try:
        os.fchmod(fd, 0o666 & ~_umask())
        with os.fdopen(fd, "wb") as handle:
            handle.write(payload)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return target


def _umask() -> int:
    """The process umask (reading it requires setting it; restored at once)."""
    mask = os.umask(0)
    os.umask(mask)
    return mask
