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


# ------------------------------------------------------------------ the packs, and what they taught the rules


def _fillers(project: str, count: int, words: str = "about nothing", prefix: str = "") -> str:
    """`count` thoughts of `project` (ids `<prefix><project>-<i>`) whose content ends in `words`."""
    return "".join(
        f"  - {{id: {prefix}{project}-{i}, project: {project}, content: Note {i} of {project} {words}.}}\n"
        for i in range(count)
    )


def test_a_small_project_among_rivals_of_the_query_is_not_small_corpus(tmp_path):
    """A project filter is under test when at least top_k notes outside the project share as many
    of the query's words as its answer: dropping the filter (or applying it after the cut) can
    cost recall. Without such rivals the small project is recall 1 by construction."""
    head = """\
name: {name}
category: facts
distractors: false
thoughts:
  - {{id: answer, project: small, content: The small project's rate limit is 10 requests per minute.}}
  - {{id: other, project: small, content: The small project meets on Wednesdays.}}
"""
    query = """\
queries:
  - {query: "What is the rate limit in requests per minute?", project: small, relevant: [answer]}
"""
    weak_query = query.replace("[answer]", "[w-answer]")
    rivals = head.format(name="rivals") + _fillers("big", 5, "allows a rate limit of 100 requests per minute")
    weak = (
        head.format(name="weak")
        + _fillers("big", 5, "with a rate limit", "w-")
        + _fillers("far", 9, prefix="w-")
    )
    weak = weak.replace("id: answer", "id: w-answer").replace("id: other", "id: w-other")
    root = _suite(tmp_path / "s", {"rivals": rivals + query, "weak": weak + weak_query})
    assert _codes(lint_dataset(root, 5)) == [("small-corpus", "weak", 1)]  # sharing 'rate limit' only
    assert _codes(lint_dataset(root, 6)) == [("small-corpus", "rivals", 1), ("small-corpus", "weak", 1)]


def test_words_read_cjk_runs_as_character_bigrams_and_other_scripts_as_words():
    from evalkit.scenarios.lint import words

    assert words("Redis缓存的过期") == {"redis", "缓存", "存的", "的过", "过期"}
    assert words("週次定例会議は第三会議室で") >= {"週次", "会議", "議は", "第三", "議室"}
    assert words("Café naïve Ёлка 42") == {"café", "naïve", "елка", "42"}
    assert words("猫") == {"猫"}


def test_no_shared_word_reads_cjk_text_and_still_fires_when_nothing_is_shared(tmp_path):
    text = """\
name: zh
category: facts
distractors: false
thoughts:
  - {id: zh-backup, content: "订单数据库每天凌晨两点备份到冷存储。"}
  - {id: zh-deploy, content: "生产环境部署需要两个人审批。"}
queries:
  - {query: "订单数据库 什么时候 备份", relevant: [zh-backup], top_k: 1}
  - {query: "谁批准上线", relevant: [zh-deploy], top_k: 1}
"""
    assert _codes(lint_dataset(_suite(tmp_path / "s", {"zh": text}), 5)) == [("no-shared-word", "zh", 2)]


STEPS = """\
name: steps
category: facts
distractors: false
thoughts:
  - {id: fact-old, content: The backup window is at 01:00., created_at: -30d}
  - {id: fact-new, content: The backup window moved to 03:00.}
  - {id: n1, content: Lunch is on Fridays.}
  - {id: n2, content: Parking is behind building two.}
  - {id: n3, content: The wifi password rotates monthly.}
  - {id: n4, content: Standup is at 09:30.}
  - {id: n5, content: Expenses are due on the fifth.}
  - {id: n6, content: The office plants are watered on Mondays.}
  - {id: n7, content: Visitor badges are at the front desk.}
  - {id: n8, content: The book club reads one book a month.}
edges:
  - {source: fact-new, target: fact-old, type: replaces}
queries:
  - {query: "When is the backup window?", relevant: [fact-new], forbid: [fact-old]}
  - {query: "When is the backup window?", relevant: [fact-new], forbid: [fact-old]}
  - {query: "When is the backup window?", relevant: [fact-new, n1]}
steps:
  - {after_query: 1, delete: [n1, n2, n3, n6, n7]}
  - {after_query: 2, update: {id: n4, content: The backup window moved to 03:00.}}
  - {after_query: 2, add: {thoughts: [{id: n1, content: Lunch moved to Thursdays.}]}}
"""


def test_the_rules_read_the_memory_each_query_is_asked_of(tmp_path):
    """Query 1: 9 current notes, so a kept fact-old ranks below top_k 5 (forbid-out-of-reach);
    query 2, after 5 notes were deleted: 4 current, the forbid can fire (no finding); query 3
    sees n4 updated into a copy of fact-new (duplicate-content) and n1 re-added with other
    content (neither a copy nor a collision). Deleting the correction lifts the supersession."""
    from evalkit.scenarios.lint import memory_states

    root = _suite(tmp_path / "s", {"steps": STEPS})
    assert _codes(lint_dataset(root, 5)) == [
        ("forbid-out-of-reach", "steps", 1),
        ("duplicate-content", "steps", None),
    ]
    (scenario,) = load_suite(root).scenarios
    first, second, third = memory_states(scenario, ())
    assert [len(s.thoughts) for s in (first, second, third)] == [10, 5, 6]
    assert first.superseded == second.superseded == {"fact-old"}
    assert {t.id: t.content for t in third.thoughts}["n1"] == "Lunch moved to Thursdays."
    # deleting the correction lifts the supersession: its target is current again
    undone = STEPS.replace("delete: [n1, n2, n3, n6, n7]", "delete: [fact-new]").split("queries:")[0]
    undone += """queries:
  - {query: "When is the backup window?", relevant: [fact-new], forbid: [fact-old]}
  - {query: "When is the backup window?", relevant: [fact-old]}
steps:
  - {after_query: 1, delete: [fact-new]}
"""
    (scenario,) = load_suite(_suite(tmp_path / "u", {"steps": undone})).scenarios
    assert [s.superseded for s in memory_states(scenario, ())] == [{"fact-old"}, set()]


def test_a_scenario_acknowledges_a_rule_with_a_reason(tmp_path):
    from evalkit.scenarios.lint import lint_report

    copies = """\
name: copies
category: facts
lint:
  allow: [duplicate-content]
  reason: the copies are the point
thoughts:
  - {id: c1, content: The cache TTL is 30 minutes.}
  - {id: c2, content: The cache TTL is 30 minutes.}
queries:
  - {query: "What is the cache TTL?", relevant: [c1]}
  - {query: "Anything about TTL caches?", relevant: [c2]}
"""
    root = _suite(
        tmp_path / "s",
        {"copies": copies},
        "thoughts:\n" + _fillers("default", 6).replace(", project: default", ""),
    )
    report = lint_report(load_suite(root), 5)
    assert report.findings == []
    (ack,) = report.acknowledged
    assert ack.finding.code == "duplicate-content" and ack.reason == "the copies are the point"
    where = f"{root / 'scenarios' / 'copies.yaml'}: scenario 'copies'"
    assert str(ack) == f"{where}: [duplicate-content] acknowledged: the copies are the point"
    assert lint_suite(load_suite(root), 5) == []  # what `run` warns about: nothing
    # the other rules still report in that scenario
    other = copies.replace("What is the cache TTL?", "Where do we keep sessions?")
    assert _codes(
        lint_dataset(
            _suite(
                tmp_path / "o",
                {"copies": other},
                "thoughts:\n" + _fillers("default", 6).replace(", project: default", ""),
            ),
            5,
        )
    ) == [("no-shared-word", "copies", 1)]
    assert report.unused == []
    # an allowed rule without a finding there is a note (stale, or for another top_k), not a finding
    stale = copies.replace("allow: [duplicate-content]", "allow: [duplicate-content, small-corpus]")
    stale_root = _suite(
        tmp_path / "u",
        {"copies": stale},
        "thoughts:\n" + _fillers("default", 6).replace(", project: default", ""),
    )
    assert lint_report(load_suite(stale_root), 5).unused == [("copies", "small-corpus")]
    assert lint_report(load_suite(stale_root), 8).unused == []  # at top_k 8 the 8 thoughts fit: it fires


@pytest.mark.parametrize(
    ("key", "problem"),
    [
        ("lint: {allow: [duplicate-contents], reason: r}", "lint.allow[0]: Input should be 'small-corpus', "),
        ("lint: {allow: [small-corpus, small-corpus], reason: r}", "lists small-corpus more than once"),
        ("lint: {allow: [small-corpus], reason: '  '}", "`reason` is blank"),
        ("lint: {allow: [small-corpus]}", "lint.reason: required key 'reason' is missing"),
        ("lint: {allow: [], reason: r}", "lint.allow"),
        ("lint: [small-corpus]", "`lint` is a mapping: lint: {allow: [RULE, ...], reason: "),
    ],
)
def test_a_bad_lint_key_is_a_load_error_naming_the_file_and_the_scenario(tmp_path, key, problem):
    text = f"name: bad\ncategory: facts\n{key}\nthoughts:\n  - {{id: a, content: A.}}\n"
    text += 'queries:\n  - {query: "A?", relevant: [a]}\n'
    with pytest.raises(DatasetError) as caught:
        load_suite(_suite(tmp_path / "s", {"bad": text}))
    (message,) = caught.value.problems
    assert (
        message.startswith(f"{tmp_path / 's' / 'scenarios' / 'bad.yaml'}: scenario 'bad': ")
        and problem in message
    )


def test_every_shipped_pack_lints_clean_or_acknowledged_with_a_reason():
    """The packs' own findings were false positives of the rules (CJK words, copies meant, steps,
    a filter under test) or real weaknesses fixed in the pack (delete-the-correction asks inside
    its project now); what remains is acknowledged by its scenario with a reason."""
    from evalkit.scenarios.lint import lint_report
    from evalkit.suites.packs import PACKS, pack_names

    acknowledged = {}
    for name in pack_names():
        report = lint_report(load_suite(PACKS / name), 5)
        assert report.findings == [], name
        acknowledged |= {(a.finding.scenario, a.finding.query): a.finding.code for a in report.acknowledged}
    assert acknowledged == {
        ("filter-incident-runbook", 2): "small-corpus",
        ("copies-fill-top-k", None): "duplicate-content",
    }


def test_the_corrected_pack_scenario_now_catches_the_bug_its_lint_finding_predicted():
    """delete-the-correction query 1 forbade a superseded note with 13 current notes in scope
    (forbid-out-of-reach): supersession-not-suppressed escaped it. Asked inside its project, the
    kept note ranks 2nd and the forbid fires."""
    from evalkit.suites.packs import PACKS

    suite = load_suite(PACKS / "deletion-ghosts", ["delete-the-correction"])
    detection = run_mutants(suite, RunConfig(thresholds=None), ["supersession-not-suppressed"])
    assert detection.caught == 1


def test_each_small_project_query_the_rule_exempts_in_the_filter_pack_catches_the_filter_bug():
    """small-corpus exempts a small project among rivals because a broken filter can cost its
    recall; in the filter-selectivity pack each such query does lose it to project-filter-after-cut
    (filter-rollback-checklist's note shared every rival word and won their tie until its
    answer was reworded), and the acknowledged control (filter-incident-runbook query 2) does not."""
    from evalkit.suites.packs import PACKS

    detection = run_mutants(
        load_suite(PACKS / "filter-selectivity"), RunConfig(thresholds=None), ["project-filter-after-cut"]
    )
    (outcome,) = detection.outcomes
    failed = sorted(r.message.split(" (")[0] for r in outcome.regressions if r.kind == "assertion")
    assert failed == [
        "filter-api-rate-limits query 1",
        "filter-incident-runbook query 1",
        "filter-rollback-checklist query 1",
    ]
