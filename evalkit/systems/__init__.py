"""The system under test: the protocol any memory system implements, and the reference store
adapted to it.

Each name is imported from its module on first use (`evalkit.lazy`), so a light module of this
package (`capabilities`, `declaration`, `resolve`) loads without the reference store."""

from typing import TYPE_CHECKING

from evalkit.lazy import lazy_names

if TYPE_CHECKING:
    from evalkit.systems.protocol import MemorySystem, ScenarioMemory
    from evalkit.systems.reference import ReferenceSystem
    from evalkit.systems.replay import ReplaySystem

__getattr__ = lazy_names(
    __name__,
    {
        "evalkit.systems.protocol": ("MemorySystem", "ScenarioMemory"),
        "evalkit.systems.reference": ("ReferenceSystem",),
        "evalkit.systems.replay": ("ReplaySystem",),
    },
)

__all__ = ["MemorySystem", "ReferenceSystem", "ReplaySystem", "ScenarioMemory"]
