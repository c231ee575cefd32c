"""One resolver from a system spec (the `--system` flag, `RunConfig.system`) to a MemorySystem.

Specs, tried in this order:
- `reference` — evalkit's reference store, built by the caller's `reference` factory (it knows
  the embedder and store options of the run);
- `http://HOST:PORT[/PREFIX]` or `https://…` — a service speaking evalkit's HTTP contract
  (`evalkit.systems.http.client.HttpSystem`; a bearer token is read from $EVALKIT_SYSTEM_TOKEN);
- `mcp:PATH` — an MCP server described by the mapping file PATH (TOML; see
  `evalkit.systems.mcp.adapter`), or `mcp:NAME`, a preset shipped with evalkit
  (`evalkit.systems.mcp.mapping.presets`: server-memory, mcp-kb-sqlite, reference);
- `chroma`, `qdrant`, `lancedb`, `pgvector[:postgresql://…]` — a built-in vector-store
  system (`evalkit.systems.stores`), and `langgraph`, `langgraph-sqlite`, `langgraph-postgres`
  — a built-in memory-library system (`evalkit.systems.libraries`), each embedding with the
  caller's `embedder` factory (the run's embedder); these names win over a Python module of the
  same name;
- `MODULE:ATTRIBUTE` — a Python object: `ATTRIBUTE` (dots allowed) of the importable `MODULE`;
  a class or factory function is called without arguments, anything else is used as it is;
- `NAME` — a plugin registered in the entry-point group `evalkit.systems` under NAME (its
  object is treated like `MODULE:ATTRIBUTE`).
`HOST:PORT` (a URL without its scheme) is a UsageError asking "did you mean http://HOST:PORT?";
anything else is a UsageError listing these forms.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable
from importlib.metadata import entry_points
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evalkit.errors import EvalkitError, UsageError
from evalkit.systems.base import MemorySystem
from evalkit.systems.libraries import LIBRARIES, LIBRARY_SPECS
from evalkit.systems.stores import STORE_SPECS, STORES
from evalkit.validation import did_you_mean

if TYPE_CHECKING:
    from evalkit.embedders import Embedder

REFERENCE_SPEC = "reference"
"""The spec naming evalkit's reference store."""

DEFAULT_SYSTEM = REFERENCE_SPEC
"""The system a run evaluates unless told otherwise (`RunConfig.system`): the reference store."""

ENTRY_POINT_GROUP = "evalkit.systems"
"""The entry-point group a plugin registers its memory system in."""

SPEC_FORMS = (
    f"'reference', 'http://HOST:PORT[/PREFIX]', 'mcp:MAPPING.toml', 'mcp:PRESET', {STORE_SPECS}, "
    f"{LIBRARY_SPECS}, "
    f"'MODULE:FACTORY' or the name of an installed plugin (entry-point group {ENTRY_POINT_GROUP!r})"
)


def resolve_system(
    spec: str, reference: Callable[[], MemorySystem], embedder: Callable[[], Embedder] | None = None
) -> MemorySystem:
    """The memory system `spec` names (see the module docstring). `embedder` builds the embedder
    of a store system (default: the hashing embedder). UsageError for an unknown spec, a module
    that cannot be imported (or fails while importing) or an attribute it lacks, a factory that
    raises, a store whose extra is not installed; AdapterError (a UsageError) for an MCP mapping
    file that is invalid."""
    if spec == REFERENCE_SPEC:
        return reference()
    store, _, location = spec.partition(":")
    built_in = STORES.get(store) or LIBRARIES.get(store)
    if built_in:
        module, name = built_in
        if embedder is None:
            from evalkit.embedders import HashingEmbedder  # numpy: loaded for a store system only

            embedder = HashingEmbedder
        return from_extra(store, module, name)(location or None, embedder())
    if spec.startswith(("http://", "https://")):
        return from_extra("http", "http.client", "HttpSystem")(spec)
    if spec.startswith("mcp:"):
        return from_extra("mcp", "mcp.adapter", "McpSystem").from_mapping(spec.removeprefix("mcp:"))
    host, _, port = spec.rpartition(":")
    if host and port.isdigit():  # no Python attribute is all digits: a URL without its scheme
        raise UsageError(
            f"unknown system {spec!r}: did you mean http://{spec}? (an HTTP system is named by its URL)"
        )
    if ":" in spec:
        module, _, attribute = spec.partition(":")
        return _instantiate(spec, _load(spec, module, attribute))
    plugins = {ep.name: ep for ep in entry_points(group=ENTRY_POINT_GROUP)}
    if spec in plugins:
        return _instantiate(spec, plugins[spec].load())
    module, dot, attribute = spec.rpartition(".")
    if dot and module and attribute.isidentifier():  # `module.Class` for `module:Class`
        raise UsageError(
            f"unknown system {spec!r}: did you mean '{module}:{attribute}'? (a Python object is named "
            "MODULE:FACTORY, with a colon)"
        )
    hint = did_you_mean(spec, [REFERENCE_SPEC, *STORES, *plugins])
    raise UsageError(f"unknown system {spec!r}{hint}; a system is {SPEC_FORMS}")


def checked_system(system: object, given: str) -> MemorySystem:
    """`system` when it is a `MemorySystem`; UsageError telling what was `given` instead (e.g.
    "system 'mod:Thing' gave") and to subclass `evalkit.MemorySystem`."""
    if not isinstance(system, MemorySystem):
        raise UsageError(
            f"{given} {type(system).__name__}, not a memory system: subclass evalkit.MemorySystem "
            "(name, open(context), and the hooks of evalkit.systems.base; see the docs page 'Your "
            "system: Python', docs/system/python.md)"
        )
    return system


def from_extra(extra: str, module: str, name: str) -> Any:
    """`name` from `evalkit.systems.<module>`, whose dependencies come with the optional `extra`
    (the HTTP and MCP adapters and servers, the vector stores, the libraries); UsageError saying
    which extra to install when they are missing, instead of an ImportError traceback."""
    try:
        return getattr(importlib.import_module(f"evalkit.systems.{module}"), name)
    except ImportError as exc:
        raise UsageError(
            f"evalkit's {extra} support needs the '{extra}' extra ({exc}); "
            f"pip install 'evalkit-memory[{extra}]'"
        ) from exc


def _load(spec: str, module: str, attribute: str) -> Any:
    """`attribute` of `module`; UsageError when the module cannot be imported (missing, or it
    raises while importing: a SyntaxError, a failing top-level statement) or lacks it."""
    try:
        target: Any = importlib.import_module(module)
    except ImportError as exc:
        top = module.split(".")[0]
        here = (Path(top).is_dir() or Path(f"{top}.py").is_file()) and "" not in sys.path
        fix = (
            f"it is in this folder, which Python does not search: prefix the command with PYTHONPATH=. "
            f"(e.g. `PYTHONPATH=. evalkit run --system {spec}`)"
            if here
            else "put its folder on PYTHONPATH (`PYTHONPATH=DIR evalkit ...`) or install it"
        )
        raise UsageError(f"system {spec!r}: cannot import module {module!r} ({exc}); {fix}") from exc
    except SyntaxError as exc:
        where = f"{exc.filename}, line {exc.lineno}" if exc.filename else f"line {exc.lineno}"
        raise UsageError(
            f"system {spec!r}: module {module!r} has a syntax error ({where}: {exc.msg}); fix the module"
        ) from exc
    except Exception as exc:
        raise UsageError(
            f"system {spec!r}: importing module {module!r} raised {type(exc).__name__}: {exc}; fix the module"
        ) from exc
    for part in attribute.split("."):
        if not hasattr(target, part):
            raise UsageError(f"system {spec!r}: module {module!r} has no attribute {attribute!r}")
        target = getattr(target, part)
    return target


def _instantiate(spec: str, target: Any) -> MemorySystem:
    """A class or a factory function is called without arguments (an exception it raises is a
    UsageError naming it); an object with `open` is used as it is."""
    is_factory = isinstance(target, type) or (callable(target) and not isinstance(target, MemorySystem))
    try:
        system = target() if is_factory else target
    except EvalkitError:
        raise  # already says what is wrong
    except Exception as exc:
        name = getattr(target, "__qualname__", type(target).__name__)
        raise UsageError(
            f"system {spec!r}: calling {name}() raised {type(exc).__name__}: {exc}; fix the factory "
            "(it is called without arguments)"
        ) from exc
    return checked_system(system, f"system {spec!r} gave")
