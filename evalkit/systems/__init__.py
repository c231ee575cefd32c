"""The system under test: the base classes any memory system subclasses (`evalkit.systems.base`),
and the reference store built on them.

Each name is imported from its module on first use (`evalkit.lazy`), so a light module of this
package (`capabilities`, `declaration`, `resolve`) loads without the reference store."""

from typing import TYPE_CHECKING

from evalkit.lazy import lazy_names

if TYPE_CHECKING:
    from evalkit.systems.base import MemorySystem, OpenContext, ScenarioMemory, SearchOptions
    from evalkit.systems.reference import ReferenceSystem
    from evalkit.systems.replay import ReplaySystem

__getattr__ = lazy_names(
    __name__,
    {
        "evalkit.systems.base": ("MemorySystem", "OpenContext", "ScenarioMemory", "SearchOptions"),
        "evalkit.systems.reference": ("ReferenceSystem",),
        "evalkit.systems.replay": ("ReplaySystem",),
    },
)

__all__ = [
    "MemorySystem",
    "OpenContext",
    "ReferenceSystem",
    "ReplaySystem",
    "ScenarioMemory",
    "SearchOptions",
]
