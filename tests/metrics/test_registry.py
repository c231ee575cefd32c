"""metrics.registry: the harness metrics are registry entries, and everything keyed by them
derives from the registry. A new harness metric is one module plus one registration line: the
proof adds one to a copy of the package and runs the built-in suite with it."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from evalkit.harness.thresholds_file import MetricLevels
from evalkit.metrics import HARNESS, HARNESS_METRICS, METRICS, HarnessMetric, MetricDef, precision
from evalkit.views.styles import METRIC_LABELS, metric_colors
from tests.shared import ROOT

NEW_METRIC = '''"""Found all: did everything relevant come back."""

from __future__ import annotations

from collections.abc import Collection, Sequence

from evalkit.metrics.common import dedupe, relevant_set


def found_all(retrieved: Sequence[str], relevant: Collection[str]) -> float:
    """1.0 if every relevant id was retrieved, else 0.0; no relevant ids → 0.0."""
    wanted = relevant_set(relevant)
    return 1.0 if wanted and wanted <= set(dedupe(retrieved)) else 0.0
'''

REGISTRATION = (
    '    MetricDef("found_all", "1 if every relevant document was returned", '
    'harness=HarnessMetric(found_all, "found all", column="all")),\n'
)

CHECK = textwrap.dedent(
    """
    import json, sys
    from pathlib import Path
    import evalkit
    from evalkit import run_eval
    from evalkit.harness.baselines import baseline_entry
    from evalkit.harness.regressions import metric_regressions
    from evalkit.harness.thresholds_file import MetricLevels, find_baseline, load_thresholds
    from evalkit.metrics import HARNESS_METRICS, score_query
    from evalkit.views.console import render_run
    from evalkit.views.styles import METRIC_LABELS, metric_colors

    datasets = Path(sys.argv[1])
    assert Path(evalkit.__file__).parent == datasets.parent / "evalkit", evalkit.__file__  # the copy
    assert HARNESS_METRICS == ("recall", "precision", "mrr", "hit_rate", "found_all"), HARNESS_METRICS
    assert score_query(["a", "x"], {"a", "b"}).found_all == 0.0
    assert score_query(["b", "a"], {"a", "b"}).as_dict()["found_all"] == 1.0
    assert tuple(MetricLevels.model_fields) == HARNESS_METRICS
    assert METRIC_LABELS["found_all"] == "found all"

    # The shipped baselines know nothing of found_all: they load, and it is not compared.
    run = run_eval(datasets=datasets, progress=False)
    assert run.ok and run.result.baseline_check_off is None, run.result.regressions
    assert 0.0 < run.result.overall.metrics["found_all"] <= 1.0
    console = render_run(run)
    header = next(line for line in console.splitlines() if line.startswith("scenario "))
    assert header.split()[3:9] == ["recall", "prec", "mrr", "hit", "all", "status"], header
    assert " found_all " in console and "No gating regressions." in console
    old = find_baseline(load_thresholds(datasets / "thresholds.json"), "deterministic", 5)
    assert old.thresholds.overall.value("found_all") is None
    assert "found_all" not in json.dumps(old.model_dump(mode="json"))  # written back as it was read

    # A baseline recorded now holds it, and a pass below it regresses on it.
    measured = run.result.measurement
    entry = baseline_entry(measured, 5)
    assert entry.thresholds.overall.found_all == round(entry.baseline.overall.found_all - 0.02, 4)
    worse = measured.overall.model_copy(update={"metrics": {**measured.overall.metrics, "found_all": 0.0}})
    degraded = measured.model_copy(update={"overall": worse})
    found = [r.metric for r in metric_regressions(degraded, entry)]
    assert found == ["found_all"], found
    print("ok")
    """
)


def test_the_harness_metrics_are_the_registered_ones_in_registry_order():
    assert HARNESS_METRICS == ("recall", "precision", "mrr", "hit_rate")
    assert all(METRICS[name].harness is HARNESS[name] for name in HARNESS_METRICS)
    assert [name for name, metric in METRICS.items() if metric.harness is not None] == list(HARNESS_METRICS)
    assert all(HARNESS[name].required for name in HARNESS_METRICS)  # SPEC §3.5's file format


def test_labels_console_words_and_the_thresholds_schema_come_from_the_registry():
    assert METRIC_LABELS == {
        "recall": "recall",
        "precision": "precision",
        "mrr": "MRR",
        "hit_rate": "hit rate",
    }
    assert [HARNESS[m].column for m in HARNESS_METRICS] == ["recall", "prec", "mrr", "hit"]
    assert [HARNESS[m].inline for m in HARNESS_METRICS] == ["recall", "precision", "mrr", "hit"]
    assert tuple(MetricLevels.model_fields) == HARNESS_METRICS


def test_a_harness_metric_scores_the_whole_ranking_on_the_qrels_relevant_ids():
    definition = MetricDef("p", "precision again", harness=HarnessMetric(precision, "p"))
    assert definition.full is not None and definition.full(["a", "b"], {"a": 2, "b": 0}) == 0.5
    assert definition.usage == "p"
    assert definition.harness is not None and (definition.harness.column, definition.harness.inline) == (
        "p",
        "p",
    )


def test_a_new_harness_metric_is_one_module_plus_its_registration(tmp_path: Path) -> None:
    """On a copy of the package: add `metrics/found_all.py` and one `MetricDef` line, touch
    nothing else (the shipped thresholds.json included), and run the built-in suite."""
    package = tmp_path / "evalkit"
    shutil.copytree(ROOT / "evalkit", package, ignore=shutil.ignore_patterns("__pycache__"))
    (package / "metrics" / "found_all.py").write_text(NEW_METRIC, encoding="utf-8")
    registry = package / "metrics" / "registry.py"
    text = registry.read_text(encoding="utf-8")
    end = "\n)\n\nMETRICS: Mapping"
    assert text.count(end) == 1
    text = text.replace(end, "\n" + REGISTRATION.rstrip("\n") + end)
    text = text.replace(
        "from evalkit.metrics.hit_rate",
        "from evalkit.metrics.found_all import found_all\nfrom evalkit.metrics.hit_rate",
    )
    registry.write_text(text, encoding="utf-8")
    shutil.copytree(ROOT / "datasets", tmp_path / "datasets")  # the checkout's layout: beside the package
    thresholds = tmp_path / "datasets" / "thresholds.json"
    before = thresholds.read_bytes()
    env = {**os.environ, "PYTHONPATH": str(tmp_path)}
    done = subprocess.run(
        [sys.executable, "-c", CHECK, str(tmp_path / "datasets")],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().endswith("ok")
    assert thresholds.read_bytes() == before


@pytest.mark.parametrize("name", HARNESS_METRICS)
def test_every_harness_metric_has_a_label_and_a_colour(name: str) -> None:
    assert name in METRIC_LABELS and name in dict(metric_colors())
