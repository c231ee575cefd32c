"""evalkit.scenarios.lint: each rule flags the suite that cannot fail, and stays quiet on the fix."""

from __future__ import annotations

from pathlib import Path

import pytest

from evalkit.errors import DatasetError
from evalkit.harness.config import RunConfig
from evalkit.scenarios import load_suite
from evalkit.scenarios.lint import Finding, lint_dataset, lint_suite
from evalkit.suites.mutations import run_mutants
from tests.shared import DATASETS

OLD_INIT_EXAMPLE = """\
name: deploy-facts
category: facts
distractors: false
thoughts:
  - {id: region, content: Production runs in the eu-west-1 region.}
  - {id: deploy-day, content: Deploys happen on Tuesdays after the standup.}
  - {id: db-old, content: The orders database runs PostgreSQL 14., created_at: -90d}
  - {id: db-new, content: The orders database was upgraded and runs PostgreSQL 16 now.}
  - {id: oncall, content: The on-call rotation changes every Monday at 09:00.}
  - {id: lunch, content: The team lunch is on Fridays.}
edges:
  - {source: db-new, target: db-old, type: replaces}
queries:
  - {query: "Which region does production run in?", relevant: [region]}
  - query: Which PostgreSQL version does the orders database run?
    relevant: [db-new]
    forbid: [db-old]
"""
"""The `evalkit init` example before this lint existed: 6 thoughts at top_k 5, no distractors —
the newcomer's suite of the issue, whose superseded row ranks 6th when kept."""


def _suite(root: Path, scenarios: dict[str, str], distractors: str | None = None) -> Path:
    (root / "scenarios").mkdir(parents=True)
    (root / "suite.yaml").write_text("categories: [facts]\n")
    for name, text in scenarios.items():
        (root / "scenarios" / f"{name}.yaml").write_text(text)
    if distractors is not None:
        (root / "distractors.yaml").write_text(distractors)
    return root


def _codes(findings: list[Finding]) -> list[tuple[str, str | None, int | None]]:
    return [(f.code, f.scenario, f.query) for f in findings]


def test_the_six_thought_forbid_case_is_flagged_and_escapes_the_mutant(tmp_path):
    root = _suite(tmp_path / "s", {"deploy-facts": OLD_INIT_EXAMPLE})
    (finding,) = lint_dataset(root, 5)
    assert _codes([finding]) == [("forbid-out-of-reach", "deploy-facts", 2)]
    assert finding.file == root / "scenarios" / "deploy-facts.yaml"
    assert "'db-old' is superseded" in finding.message and "5 thoughts of better standing" in finding.message
    assert str(finding).startswith(f"{finding.file}: scenario 'deploy-facts' query 2: [forbid-out-of-reach] ")
    assert "fewer than 5 thoughts are current" in finding.fix
    # what the finding predicts: the kept superseded row never shows, the bug escapes
    detection = run_mutants(load_suite(root), RunConfig(thresholds=None), ["supersession-not-suppressed"])
    assert detection.escaped and detection.escaped[0].mutation == "supersession-not-suppressed"
    # at top_k 6 the kept row would rank inside: no forbid finding (but all 6 thoughts now fit)
    assert _codes(lint_dataset(root, 6)) == [("small-corpus", "deploy-facts", 1)]


def test_a_corpus_that_fits_in_top_k_is_flagged_unless_a_forbid_or_rank_before_can_fail(tmp_path):
    text = """\
name: tiny
category: facts
distractors: false
thoughts:
  - {id: a, content: Alpha is the first letter.}
  - {id: b, content: Beta is the second letter.}
  - {id: old, content: Gamma used to be the third letter.}
edges:
  - {source: b, target: old, type: replaces}
queries:
  - {query: "Which is the first letter?", relevant: [a]}
  - {query: "Which is the second letter?", relevant: [b], forbid: [old]}
  - query: Which is the first letter?
    relevant: [a]
    rank_before: {before: a, after: b}
"""
    findings = lint_dataset(_suite(tmp_path / "s", {"tiny": text}), 5)
    assert _codes(findings) == [("small-corpus", "tiny", 1)]
    assert "holds 3 thoughts, no more than its top_k 5" in findings[0].message
    # at top_k 2 the three compete, but the two current ones keep a kept `old` out of reach
    assert _codes(lint_dataset(tmp_path / "s", 2)) == [("forbid-out-of-reach", "tiny", 2)]


def test_a_project_typo_makes_ids_unreachable_but_an_isolation_forbid_does_not(tmp_path):
    text = """\
name: scoped
category: facts
distractors: false
thoughts:
  - {id: acme-ci, project: acmee, content: Acme CI runs on Buildkite agents.}
  - {id: acme-owner, project: acme, content: Acme CI is owned by Lena.}
  - {id: acme-old, project: acmee, content: Acme CI ran on Jenkins agents.}
  - {id: beta-ci, project: beta, content: Beta CI runs on hosted runners.}
  - {id: x1, project: acme, content: Filler one about lunch.}
  - {id: x2, project: acme, content: Filler two about parking.}
  - {id: x3, project: acme, content: Filler three about plants.}
  - {id: x4, project: acme, content: Filler four about coffee.}
  - {id: x5, project: acme, content: Filler five about holidays.}
queries:
  - query: Where does Acme CI run?
    project: acme
    relevant: [acme-ci]
    forbid: [acme-old, beta-ci]
  - {query: "Where does Beta CI run?", project: beta, relevant: [beta-ci], forbid: [acme-owner]}
"""
    findings = lint_dataset(_suite(tmp_path / "s", {"scoped": text}), 5)
    assert _codes(findings) == [("unreachable-id", "scoped", 1), ("unreachable-id", "scoped", 1)]
    relevant, forbidden = findings
    assert "relevant id 'acme-ci' is in project 'acmee'" in relevant.message
    assert "recall can never reach 1 (is 'acmee' a typo of 'acme'?)" in relevant.message
    assert "forbid id 'acme-old' is in project 'acmee'" in forbidden.message
    # beta-ci (query 1) and acme-owner (query 2) are other projects' thoughts: isolation checks (and
    # query 2's corpus of one thought is not small-corpus: its forbid fails when the filter breaks)


def test_no_shared_word_duplicates_and_id_collisions(tmp_path):
    one = """\
name: one
category: facts
thoughts:
  - {id: flags, content: Feature flags are managed in LaunchDarkly.}
  - {id: copy-a, content: The build cache is reset weekly.}
  - {id: copy-b, content: "  the BUILD cache is reset   weekly."}
queries:
  - {query: "Where do we toggle features?", relevant: [flags]}
  - {query: "Which tool manages feature flags?", relevant: [flags]}
"""
    two = """\
name: two
category: facts
thoughts:
  - {id: flags, content: Flags fly over the office on holidays.}
  - {id: d-copy, content: Lunch is on Fridays.}
queries:
  - {query: "When do flags fly over the office?", relevant: [flags]}
"""
    distractors = (
        "thoughts:\n"
        + "".join(f"  - {{id: d{i}, content: Distractor number {i} about nothing.}}\n" for i in range(6))
        + "  - {id: d-lunch, content: Lunch is on Fridays.}\n"
        + "  - {id: d-lunch-2, content: lunch is on fridays.}\n"
    )
    root = _suite(tmp_path / "s", {"one": one, "two": two}, distractors)
    findings = lint_dataset(root, 5)
    assert _codes(findings) == [
        ("no-shared-word", "one", 1),
        ("duplicate-content", "one", None),
        ("duplicate-content", "two", None),
        ("duplicate-content", None, None),
        ("id-collision", "two", None),
    ]
    assert "shares no word with its relevant thought(s) 'flags'" in findings[0].message
    assert "'copy-a', 'copy-b' have the same content" in findings[1].message
    assert "'d-copy', 'd-lunch', 'd-lunch-2'" in findings[2].message
    assert findings[3].file == root / "distractors.yaml" and str(findings[3]).startswith(
        f"{root / 'distractors.yaml'}: distractors: [duplicate-content]"
    )
    assert "thought id 'flags' is also a thought of scenario 'one'" in findings[4].message


def test_a_malformed_suite_gives_the_loaders_errors(tmp_path):
    root = _suite(tmp_path / "s", {"bad": "name: bad\ncategory: facts\nthoughts: []\nqueries: []\n"})
    with pytest.raises(DatasetError) as caught:
        lint_dataset(root, 5)
    assert caught.value.problems and all("bad.yaml" in p for p in caught.value.problems)


def test_the_built_in_suites_findings_are_the_documented_ones():
    """Each is explained in the README's lint section; the built-in suite is not edited (its
    baselines and the golden report are recorded on it)."""
    assert _codes(lint_suite(load_suite(DATASETS), 5)) == [
        ("small-corpus", "contradiction-flagged", 1),
        ("small-corpus", "project-scope-global", 2),
        ("no-shared-word", "retrieval-quality", 4),
        ("forbid-out-of-reach", "supersession", 1),
        ("forbid-out-of-reach", "supersession", 2),
    ]
