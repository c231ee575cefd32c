"""What a memory system can do, and how a system declares it.

A scenario that needs a capability its system lacks is reported `not_applicable` rather than
scored (see `evalkit.scenarios.requirements` for what each scenario needs). The vocabulary:

- `projects`: a search can be filtered to one project.
- `global_thoughts`: `is_global` thoughts are returned across projects when `include_global`.
- `supersession`: `replaces` edges hide the superseded thought (agent-facing `suppress`).
- `contradiction`: `contradicts` edges are flagged (`contradicted_by`) and ranked below
  undisputed rows.
- `recency`: `recency_weight`/`recency_half_life_days` favour recent thoughts.
- `relevance_gate`: `min_relevance` > 0 removes weak rows (the report-only gated pass needs it).
- `confidence`: hits carry `low_confidence`.
- `deletion`: `ScenarioMemory.delete_thoughts` forgets thoughts in every index (a scenario's
  `delete` steps need it).
- `update`: `ScenarioMemory.update_thought` replaces a thought's content (re-embedded and
  re-indexed) or status (a scenario's `update` steps need it).
- `regate`: the gate keeps a row it reports in `gate_candidates` exactly when
  `evalkit.systems.declaration.REGATE_RULE` does (the reference store's rule), so the gate sweep
  may re-apply the gate at other values; no scenario needs it.
"""

from __future__ import annotations

from typing import Any, Literal, get_args

from evalkit.errors import AdapterError

Capability = Literal[
    "projects", "global_thoughts", "supersession", "contradiction", "recency", "relevance_gate", "confidence",
    "regate", "deletion", "update",
]  # fmt: skip
CAPABILITIES: tuple[str, ...] = get_args(Capability)
"""Every capability a system may declare and a scenario may require."""

CAPABILITY_MEANINGS: dict[str, str] = {
    "projects": "a search can be filtered to one project",
    "global_thoughts": "`is_global` thoughts are returned across projects when `include_global`",
    "supersession": "`replaces` edges hide the superseded thought",
    "contradiction": "`contradicts` edges are flagged (`contradicted_by`) and ranked below undisputed rows",
    "recency": "`recency_weight`/`recency_half_life_days` favour recent thoughts",
    "relevance_gate": "`min_relevance` > 0 removes weak rows",
    "confidence": "hits carry `low_confidence`",
    "regate": "the gate keeps a row it reports in `gate_candidates` exactly as the reference store's rule",
    "deletion": "`delete_thoughts` forgets thoughts in every index (a scenario's delete steps)",
    "update": "`update_thought` replaces a thought's content (re-embedded, re-indexed) or status",
}
"""Each capability in one line (the module docstring says more; the HTTP contract's OpenAPI
document lists these)."""

ALL_CAPABILITIES: frozenset[str] = frozenset(CAPABILITIES)
"""What the reference store offers."""

OPERATION_CAPABILITIES: frozenset[str] = frozenset({"deletion", "update"})
"""The capabilities that need methods beyond the three every memory has (`delete_thoughts`,
`update_thought`): a system must declare them to be asked for them."""

UNDECLARED_CAPABILITIES: frozenset[str] = ALL_CAPABILITIES - OPERATION_CAPABILITIES
"""What a system that declares nothing is taken to offer: every capability but the operations
(systems written before capabilities existed keep being scored on every scenario they could be
scored on; a scenario with delete or update steps is not applicable to them)."""


def declared_capabilities(system: Any) -> frozenset[str]:
    """The capabilities a `MemorySystem` declares in its `capabilities` attribute (any iterable of
    names; the base class's default is UNDECLARED_CAPABILITIES). AdapterError for an unknown name
    or a non-iterable."""
    declared = system.capabilities
    name = system.name or type(system).__name__
    if isinstance(declared, str) or not hasattr(declared, "__iter__"):
        raise AdapterError(
            f"system {name!r}: `capabilities` must be a set of names such as {{'projects', 'recency'}}, "
            f"got {declared!r}"
        )
    unknown = sorted(set(declared) - ALL_CAPABILITIES)
    if unknown:
        raise AdapterError(
            f"system {name!r}: unknown capabilities {', '.join(map(repr, unknown))} in `capabilities`; "
            f"known: {', '.join(CAPABILITIES)}"
        )
    return frozenset(declared)
