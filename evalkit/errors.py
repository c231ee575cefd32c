"""The exception hierarchy: every error evalkit raises on purpose derives from `EvalkitError`.

Messages name the file or item at fault and say how to fix it. The CLI maps `EvalkitError`
to exit code 2 (bad input or usage); anything else is a bug and propagates.
"""

from __future__ import annotations


class EvalkitError(Exception):
    """Root of every deliberate evalkit error."""


class StoreError(EvalkitError):
    """A memory store was given a bad argument (unknown id, duplicate id, bad edge type...)."""


class EmbedderError(EvalkitError):
    """An embedder could not be built or loaded (missing model, missing extra)."""


class DatasetError(EvalkitError):
    """A scenario dataset or benchmark file is invalid. `problems` lists every problem found."""

    def __init__(self, message: str, problems: list[str] | None = None) -> None:
        self.problems = list(problems or [])
        body = message if not self.problems else message + "\n" + "\n".join(f"  - {p}" for p in self.problems)
        super().__init__(body)


class ThresholdsError(EvalkitError):
    """The thresholds file exists but cannot be read or does not match its schema."""


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


class SystemOutputError(AdapterError):
    """A memory system's search returned something the harness cannot score or save (a hit id it
    was never given, a duplicate, a NaN or infinite score, a bad count): the message names the
    system, the scenario and the query, the field and the fix."""


class AdapterWarning(UserWarning):
    """A memory system's output was corrected (hits beyond top_k cut); the run goes on."""
