"""What a memory system declares about itself, recorded in every report's provenance
(`SystemDeclaration`) so that the gate sweep and the views read the run's own declaration
instead of naming one system or its constants:

- `capabilities`: what `declared_capabilities` gives (`evalkit.systems.capabilities`). With
  `regate`, the system promises that its gate keeps a row it reported (`GateCandidate`) exactly
  when `REGATE_RULE` does — the reference store's rule, whose inputs a candidate's signals are —
  so the gate sweep may re-apply its gate at other values.
- `confidence_floor`: the similarity under which the system calls a vector-only hit
  low-confidence (None: it declares none, or lacks the `confidence` capability); the rank chart
  draws it.
- `mutation_testing`: the mutation suite measures this system's own search, so its detection
  power applies to it.

- `embedder`: the embedding model the system embeds with by itself (`own_embedder`; None: the
  run's embedder, or none).
- `hits_by`: how its hits name the thoughts they found (`id`, or `content`: mapped by the harness).

A system declares them with attributes of those names (`evalkit.systems.base.MemorySystem`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from evalkit.records import GateCandidate
from evalkit.systems.capabilities import declared_capabilities
from evalkit.systems.reference import gate_keeps
from evalkit.validation import FrozenModel

if TYPE_CHECKING:
    from evalkit.systems.base import MemorySystem

REGATE_RULE: Callable[[GateCandidate, float], bool] = gate_keeps
"""Whether the gate of a system declaring `regate` keeps a reported candidate at a gate value:
the reference system's rule (`evalkit.systems.reference.gate_keeps`)."""


class SystemDeclaration(FrozenModel):
    """What a run's system declared (see the module docstring)."""

    capabilities: list[str]
    confidence_floor: float | None = None
    mutation_testing: bool = False
    embedder: str | None = None
    hits_by: str = "id"

    @property
    def regates(self) -> bool:
        """The system's gate can be re-applied to the rows it reported (`regate`)."""
        return "regate" in self.capabilities


def declaration_of(system: MemorySystem) -> SystemDeclaration:
    """What `system` declares: its capabilities (sorted), `confidence_floor`, `mutation_testing`
    and `own_embedder` (AdapterError for capabilities it declares badly)."""
    capabilities = declared_capabilities(system)
    return SystemDeclaration(
        capabilities=sorted(capabilities),
        confidence_floor=system.confidence_floor if "confidence" in capabilities else None,
        mutation_testing=bool(system.mutation_testing),
        embedder=system.own_embedder,
        hits_by=system.hits_by,
    )
