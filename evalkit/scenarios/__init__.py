"""Scenarios: the labelled worlds a run seeds and queries (SPEC §2).

`model` is the file format (pydantic), `parsing` reads YAML/JSON strictly, `references` checks
cross-references, `loading` turns a dataset directory into a validated `Suite`, `dates` and
`seeding` give the runner what to seed.
"""

from evalkit.scenarios.loading import Suite, load_suite
from evalkit.scenarios.model import (
    BUILTIN_CATEGORIES,
    EdgeSpec,
    QuerySpec,
    Scenario,
    ThoughtSpec,
    legacy_query_id,
    stable_query_id,
)

__all__ = [
    "BUILTIN_CATEGORIES",
    "EdgeSpec",
    "QuerySpec",
    "Scenario",
    "Suite",
    "ThoughtSpec",
    "legacy_query_id",
    "load_suite",
    "stable_query_id",
]
