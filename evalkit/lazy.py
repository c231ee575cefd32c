"""Package facades that import each public name from its home module on first use (PEP 562).

A package's `__init__` lists its public names (`__all__`) and says which module provides each;
importing the package, or any one of its modules, then runs none of the others. So a light module
(`evalkit.memory.options`, `evalkit.embedders.hashing`) can be imported without the heavy
siblings its package re-exports (the store's numpy and SQLite extensions), and `evalkit lint` or
`evalkit config` never load them. Type checkers read the same names from the package's
`if TYPE_CHECKING:` imports.
"""

from __future__ import annotations

import importlib
import sys
import types
from collections.abc import Callable, Mapping, Sequence
from typing import Any


def lazy_names(package: str, homes: Mapping[str, Sequence[str]]) -> Callable[[str], Any]:
    """The module `__getattr__` of `package`: each name of `homes` (home module → names) is
    imported from its home module on first access, then cached in the package's namespace (so it
    is looked up once); any other name raises AttributeError, as a missing attribute does."""
    home_of = {name: module for module, names in homes.items() for name in names}

    def __getattr__(name: str) -> Any:
        if name not in home_of:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(home_of[name]), name)
        setattr(sys.modules[package], name, value)
        return value

    return __getattr__


class _LazyModule(types.ModuleType):
    """A stand-in for a module, imported on the first attribute read (`lazy_module`)."""

    def __getattr__(self, name: str) -> Any:
        module = importlib.import_module(self.__name__)
        self.__dict__.update(module.__dict__)  # later reads are plain attribute hits
        return getattr(module, name)


def lazy_module(name: str) -> Any:
    """The module `name`, imported when one of its attributes is first read, not now: a module
    that needs pandas in some functions only writes `pd = lazy_module("pandas")` (beside the
    real import under `if TYPE_CHECKING:`), so importing it loads no pandas, and a command that
    calls none of those functions (`evalkit run`'s console summary) never does."""
    return _LazyModule(name)
