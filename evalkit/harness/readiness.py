"""Time to searchable: how long after seeding a system that indexes later (it declares
`indexes_later`, `evalkit.systems.base`) finds what it was given.

After a scenario's seeding, the runner searches such a system for the content of the last
thought seeded (every project, no gate, `PROBE_TOP_K` hits) until that thought is among the
hits, waiting `FIRST_PAUSE` seconds after the first miss and twice as long after each next one
(at most `MAX_PAUSE`), and gives up after `SEARCHABLE_TIMEOUT` seconds (an AdapterError naming
the thought and the bound). The probe's searches are checked like any other but scored and
timed as none: the wait is reported apart (`LatencyReport.searchable`).
"""

from __future__ import annotations

import time
from datetime import datetime

from evalkit.errors import AdapterError
from evalkit.records import Thought
from evalkit.systems.base import SearchOptions
from evalkit.systems.checked import CheckedMemory
from evalkit.validation import shown_value

SEARCHABLE_TIMEOUT = 30.0
"""Seconds a system that indexes later has to find the last thought seeded."""

PROBE_TOP_K = 10
"""Hits a probe asks for: the probed thought need not rank first (equal contents tie)."""

FIRST_PAUSE = 0.01
MAX_PAUSE = 1.0


def time_to_searchable(
    memory: CheckedMemory, thought: Thought, clock: datetime, timeout: float | None = None
) -> float:
    """Milliseconds from now until a search of `memory` for `thought`'s content returns it
    (see the module docstring); AdapterError when it does not within `timeout` seconds
    (None: `SEARCHABLE_TIMEOUT`)."""
    timeout = SEARCHABLE_TIMEOUT if timeout is None else timeout
    options = SearchOptions(top_k=PROBE_TOP_K, now=clock, min_relevance=0.0)
    start = time.monotonic()
    pause = FIRST_PAUSE
    while True:
        found = memory.search(thought.content, options, asked="the probe for time to searchable").response
        waited = time.monotonic() - start
        if thought.id in found.ids:
            return waited * 1000.0
        if waited > timeout:
            raise AdapterError(
                f"system {memory.system!r} declares indexes_later, but a search for the content of "
                f"thought {shown_value(thought.id)} (the last seeded) did not return it within "
                f"{timeout:g} s of seeding; is it indexed at all? (a search must find a thought by its "
                "exact content for the probe to see it)"
            )
        time.sleep(min(pause, max(0.0, timeout - waited) + 0.001))
        pause = min(pause * 2, MAX_PAUSE)
