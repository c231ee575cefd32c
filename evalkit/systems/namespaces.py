"""Isolated memories of one system, by namespace: what `evalkit serve` (HTTP and MCP) keeps.

Each namespace is a fresh `system.open(workdir)` memory in its own temporary directory, created
on demand and removed on `drop` or `close`. The servers call it from their event-loop thread
only (their handlers are `async`), so the reference store's SQLite connections stay in the
thread that opened them and concurrent requests run one at a time; the lock guards the registry
for any other caller. A server for evaluation, not for throughput.
"""

from __future__ import annotations

import tempfile
import threading
import uuid
from contextlib import ExitStack
from pathlib import Path
from typing import Any

from evalkit.errors import UsageError
from evalkit.systems.protocol import MemorySystem


class UnknownNamespace(UsageError):
    """A request named a namespace that does not exist (never created, or dropped)."""


class Namespaces:
    """Memories of `system` by namespace id. Use `lock` around every call on a memory."""

    def __init__(self, system: MemorySystem) -> None:
        self.system = system
        self.lock = threading.RLock()
        self._open: dict[str, ExitStack] = {}
        self._memories: dict[str, Any] = {}

    def create(self, name: str | None = None) -> str:
        """Open a fresh memory under `name` (default: a random id) and return the name.
        UsageError when `name` is already open."""
        namespace = name or uuid.uuid4().hex
        with self.lock:
            if namespace in self._open:
                raise UsageError(f"namespace {namespace!r} already exists; drop it first or use another name")
            stack = ExitStack()
            try:
                workdir = stack.enter_context(tempfile.TemporaryDirectory(prefix="evalkit-serve-"))
                self._memories[namespace] = stack.enter_context(self.system.open(Path(workdir)))
            except BaseException:
                stack.close()
                raise
            self._open[namespace] = stack
        return namespace

    def ensure(self, namespace: str) -> Any:
        """The memory of `namespace`, opened first if it is not open yet (MCP tools name their
        namespace in every call instead of creating one)."""
        with self.lock:
            if namespace not in self._memories:
                self.create(namespace)
            return self._memories[namespace]

    def get(self, namespace: str) -> Any:
        """The memory of `namespace`; UnknownNamespace when it is not open."""
        with self.lock:
            if namespace not in self._memories:
                raise UnknownNamespace(f"no namespace {namespace!r}; create one first")
            return self._memories[namespace]

    def drop(self, namespace: str) -> None:
        """Close `namespace` and delete its files; UnknownNamespace when it is not open."""
        with self.lock:
            if namespace not in self._open:
                raise UnknownNamespace(f"no namespace {namespace!r}; create one first")
            del self._memories[namespace]
            self._open.pop(namespace).close()

    def close(self) -> None:
        """Drop every namespace (server shutdown)."""
        with self.lock:
            for namespace in list(self._open):
                self.drop(namespace)
