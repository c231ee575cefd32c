"""The bounds of evalkit's clients of remote systems (the HTTP and MCP adapters), and where a
user sets them: a wall-clock deadline per request and a cap on a reply's size.

- `$EVALKIT_SYSTEM_TIMEOUT` (seconds): the deadline of one HTTP request (default
  `HTTP_TIMEOUT`), of one MCP call (default `MCP_TIMEOUT`) and of an MCP server's start, its
  handshake included (default `MCP_START_TIMEOUT`).
- `$EVALKIT_SYSTEM_MAX_REPLY_MB` (megabytes, 10^6 bytes): the largest reply body after
  decompression (HTTP) or the longest message line (MCP stdio); default `MAX_REPLY_BYTES`.
A value that is not a positive number is a UsageError naming the variable.
"""

from __future__ import annotations

import os

from evalkit.errors import UsageError

TIMEOUT_ENV = "EVALKIT_SYSTEM_TIMEOUT"
MAX_REPLY_ENV = "EVALKIT_SYSTEM_MAX_REPLY_MB"

HTTP_TIMEOUT = 60.0
"""The default deadline of one HTTP request, in seconds."""

MCP_TIMEOUT = 120.0
"""The default deadline of one MCP tool call (and of starting the server), in seconds."""

MCP_START_TIMEOUT = 60.0
"""The default deadline of an MCP server's start and handshake (`initialize`, `tools/list`), in
seconds: long enough for a server fetched by npx or uvx on first use, short enough that a server
which never answers fails the run well before a CI job's own timeout."""

MAX_REPLY_BYTES = 16 * 1024 * 1024
"""The default cap on one reply: the server's own request limit (a search of 1,000 hits with
long passages is a few MB)."""


def timeout(given: float | None, default: float) -> float:
    """`given`, else $EVALKIT_SYSTEM_TIMEOUT, else `default` (seconds)."""
    return _positive(TIMEOUT_ENV, given, default, 1.0)


def max_reply_bytes(given: int | None) -> int:
    """`given`, else $EVALKIT_SYSTEM_MAX_REPLY_MB megabytes, else MAX_REPLY_BYTES."""
    return int(_positive(MAX_REPLY_ENV, given, MAX_REPLY_BYTES, 1e6))


def _positive(variable: str, given: float | None, default: float, unit: float) -> float:
    if given is not None:
        value = float(given)
    elif os.environ.get(variable):
        try:
            value = float(os.environ[variable]) * unit
        except ValueError:
            raise UsageError(f"${variable} must be a number, got {os.environ[variable]!r}") from None
    else:
        return default
    if not 0 < value < float("inf"):
        raise UsageError(f"${variable} must be a positive number, got {value:g}")
    return value
