"""Importers of public benchmarks into evalkit scenarios: BEIR-layout retrieval sets (e.g.
SciFact) and LoCoMo long-conversation memory QA. Each returns the scenarios plus a load report
that accounts for everything left out or repaired."""

from evalkit.importers.beir import BeirReport, BeirSet, QrelRow, load_beir
from evalkit.importers.locomo import (
    LOCOMO_CATEGORIES,
    STANDARD_CATEGORIES,
    EvidenceRepair,
    EvidenceResolution,
    LocomoReport,
    LocomoSet,
    SkippedQuestion,
    UnresolvedEvidence,
    load_locomo,
    parse_session_datetime,
    resolve_evidence,
)

__all__ = [
    "LOCOMO_CATEGORIES",
    "STANDARD_CATEGORIES",
    "BeirReport",
    "BeirSet",
    "EvidenceRepair",
    "EvidenceResolution",
    "LocomoReport",
    "LocomoSet",
    "QrelRow",
    "SkippedQuestion",
    "UnresolvedEvidence",
    "load_beir",
    "load_locomo",
    "parse_session_datetime",
    "resolve_evidence",
]
