"""The exception hierarchy: every error evalkit raises on purpose derives from `EvalkitError`.

Messages name the file or item at fault and say how to fix it. The CLI maps `EvalkitError`
to exit code 2 (bad input or usage) with its one-line message; anything else is a bug, which the
CLI also exits 2 on, after its traceback (exit 1 is regressions only).
"""

from __future__ import annotations

import os
import pickle
from collections.abc import Sequence
from typing import Any

from evalkit.wording import counted

MAX_LISTED_PROBLEMS = 20
"""How many problems one message lists (about a screen) before it only counts the rest."""


def listed(message: str, problems: Sequence[str]) -> str:
    """`message`, then each of `problems` on a line of its own (`  - <problem>`): at most
    `MAX_LISTED_PROBLEMS` of them, then `  - … and N more problems`. The one format of every
    error that reports all the problems of a file (or of a command line) at once, each naming
    its place and its fix; `message` alone when there are none."""
    shown = [f"  - {p}" for p in problems[:MAX_LISTED_PROBLEMS]]
    if len(problems) > MAX_LISTED_PROBLEMS:
        shown.append(f"  - … and {counted(len(problems) - MAX_LISTED_PROBLEMS, 'more problem')}")
    return "\n".join([message, *shown])


def one_or_listed(where: str, problems: Sequence[str], fix: str) -> str:
    """The message of the problems of one file or input `where`: a single problem on one line
    (`<where>: <problem>; <fix>`), several counted and then `listed` (`<where>: 3 problems;
    <fix>`, one per line)."""
    if len(problems) == 1:
        return f"{where}: {problems[0]}; {fix}"
    return listed(f"{where}: {counted(len(problems), 'problem')}; {fix}", problems)


class EvalkitError(Exception):
    """Root of every deliberate evalkit error."""


class StoreError(EvalkitError):
    """A memory store was given a bad argument (unknown id, duplicate id, bad edge type...)."""


class EmbedderError(EvalkitError):
    """An embedder could not be built or loaded (missing model, missing extra)."""


class ProblemsError(EvalkitError):
    """An error reporting every problem found in its input at once: `problems` lists them all,
    each naming its place and its fix; the message is `message` then the problems as `listed`
    shows them (at most a screen, then a count)."""

    def __init__(self, message: str, problems: Sequence[str] | None = None) -> None:
        self.problems = list(problems or [])
        super().__init__(listed(message, self.problems))


class DatasetError(ProblemsError):
    """A scenario dataset or benchmark file is invalid. `problems` lists every problem found."""


class ThresholdsError(ProblemsError):
    """The thresholds file exists but cannot be read or does not match its schema. `problems`
    lists every problem found."""


class ReportError(EvalkitError):
    """A report JSON file cannot be read back, or a notebook report cannot be produced."""


class ReportNewerError(ReportError):
    """A report was written by a newer evalkit (its `schema_version` is above the one this
    evalkit reads): upgrade evalkit to read it."""


class OutputError(EvalkitError):
    """An output file (a report, the thresholds file, an executed notebook) cannot be written:
    the message names the path, the reason (a directory, read-only, a full disk) and the fix."""


class UsageError(EvalkitError):
    """A caller passed an invalid option value (bad mode, bad top_k, unknown parameter...)."""


class StoreOptionError(StoreError, UsageError):
    """A store option has a value the reference store does not offer (both a store error and a
    usage error: the CLI exits 2)."""


class RegressionError(EvalkitError):
    """The run has regressions against its thresholds; the message lists every one of them."""


class AdapterError(UsageError):
    """A memory system under test broke the protocol (wrong return type, unknown or duplicate
    ids, non-finite scores, a malformed HTTP or MCP response). The message names the system, the
    method or endpoint, the field and the fix."""


class MemorySystemError(AdapterError):
    """A memory system under test raised while evalkit called it: any exception from one of its
    protocol methods (`open`, the exit of open()'s context: "close", `add_thoughts`, `add_edges`,
    `search`, `search_many`, `delete_thoughts`, `update_thought`, `settle`, `describe`; an HTTP
    system's first request, `GET /info`: "connect"), including a call its signature cannot take,
    a refused connection and a timeout. The original exception is the `__cause__`
    (`evalkit.systems.checked.call_system` raises it so).

    Fields, also the parts of its one-line message: `system` (its name), `method` (the protocol
    method), `scenario` and `query` (the scenario's name and "query N ('text')"; None where the
    call has none), `problem` (what went wrong: the original's type and message, or the message
    of evalkit's own HTTP or MCP adapter) and `fix` (what to do). `origin` is the original's
    traceback as text, formatted where it was raised (a worker process, a Ray task): the CLI
    prints it under `EVALKIT_TRACEBACK=1` (`TRACEBACK_ENV`). It pickles with its fields, its
    notes, and its cause when the cause pickles, so it crosses worker processes whole."""

    def __init__(
        self, system: str, method: str, scenario: str | None, query: str | None, problem: str, fix: str
    ) -> None:
        super().__init__(system, method, scenario, query, problem, fix)
        self.system, self.method, self.scenario, self.query = system, method, scenario, query
        self.problem, self.fix = problem, fix
        self.origin = ""

    def __str__(self) -> str:
        call = _CALLS_SAID.get(self.method, f"{self.method}()")
        where = ", ".join(
            part for part in (self.scenario and f"scenario {self.scenario!r}", self.query) if part
        )
        at = f" in {where}" if where else ""
        return f"system {self.system!r}: {call}{at}: {self.problem}" + (f"; {self.fix}" if self.fix else "")

    def __reduce__(self) -> tuple[Any, ...]:
        state = dict(self.__dict__)
        cause = self.__cause__
        try:
            pickle.dumps(cause)
        except Exception:  # an original that does not pickle (a socket in its args...) stays behind
            cause = None
        return type(self), self.args, {**state, "__cause__": cause}

    def __setstate__(self, state: dict[str, Any] | None) -> None:
        state = dict(state or {})
        self.__cause__ = state.pop("__cause__", None)
        self.__dict__.update(state)

    def _render_traceback_(self) -> list[str]:
        """What IPython (a notebook cell, papermill) shows for it: the one line, or with
        `EVALKIT_TRACEBACK=1` the original's traceback and then the line."""
        line = f"{type(self).__name__}: {self}"
        return [*self.origin.splitlines(), line] if show_tracebacks() else [line]


_CALLS_SAID = {"close": "the exit of open()'s context", "connect": "connecting"}
"""How a MemorySystemError says the calls that are not a method of the system."""

TRACEBACK_ENV = "EVALKIT_TRACEBACK"
"""The environment variable that, set to 1, makes the CLI (and a notebook cell) print the
traceback of an error beside its one line: for a MemorySystemError, the traceback of the
system's own exception, as it was raised (also in a worker process)."""


def show_tracebacks() -> bool:
    """Whether `TRACEBACK_ENV` asks for tracebacks (any value but empty and 0)."""
    return os.environ.get(TRACEBACK_ENV, "") not in ("", "0")


class SystemOutputError(AdapterError):
    """A memory system's search returned something the harness cannot score or save (a hit id it
    was never given, a duplicate, a NaN or infinite score, a bad count): the message names the
    system, the scenario and the query, the field and the fix."""


class AdapterWarning(UserWarning):
    """A memory system's output was corrected (hits beyond top_k cut); the run goes on."""


def leaf_exceptions(group: BaseExceptionGroup[BaseException]) -> list[BaseException]:
    """The exceptions inside `group`, nested groups looked through."""
    leaves: list[BaseException] = []
    pending: list[BaseException] = [group]
    while pending:
        current = pending.pop()
        if isinstance(current, BaseExceptionGroup):
            pending.extend(reversed(current.exceptions))
        else:
            leaves.append(current)
    return leaves


def sole_evalkit_error(group: BaseExceptionGroup[BaseException]) -> EvalkitError | None:
    """The EvalkitError that is the only leaf of `group` (nested groups are looked through), else
    None: a group with two errors, or with anything but an EvalkitError, is not reduced. (What an
    error becomes when it is raised inside a task group or an anyio portal, the usual way to wrap
    an async client.)"""
    leaves = leaf_exceptions(group)
    return leaves[0] if len(leaves) == 1 and isinstance(leaves[0], EvalkitError) else None
