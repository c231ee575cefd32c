"""Real mode end to end: the built-in suite on the packaged all-MiniLM-L6-v2, checked against the
recorded `real` baseline, serially and on two worker processes sharing one embedding cache.
Loads the model (needs the `real` extra); runs in CI."""

from __future__ import annotations

import json
import os
from typing import Any

import pytest

import evalkit
from evalkit.cli import main
from evalkit.embedders import sentence_transformer
from evalkit.embedders.cache import EmbeddingCache
from evalkit.harness.executors import ProcessExecutor
from tests.harness import units
from tests.shared import DATASETS, comparable


@pytest.mark.real
def test_builtin_suite_passes_in_real_mode_against_its_baseline(tmp_path):
    cache = tmp_path / "embeddings.sqlite3"
    run = evalkit.run_eval(
        mode="real", datasets=DATASETS, thresholds=DATASETS / "thresholds.json", embedding_cache=cache
    )
    assert run.result.notes == []  # the real entry exists at this top_k: metrics were gated
    assert run.regressions.empty, run.regressions["message"].tolist()
    scenarios = run.scenarios[run.scenarios["pass"] == "ungated"].set_index("scenario")
    assert scenarios.loc["contradiction", "status"] == "xfail"
    embedder = run.result.provenance.embedder
    assert embedder.mode == "real" and embedder.dim == 384
    assert embedder.model == "sentence-transformers/all-MiniLM-L6-v2"
    assert len(embedder.weights_sha256) == 64
    assert embedder.cache == str(cache)

    # A second run is served from the cache and gives the same measurements.
    again = evalkit.run_eval(
        mode="real", datasets=DATASETS, thresholds=DATASETS / "thresholds.json", embedding_cache=cache
    )
    assert again.result.overall == run.result.overall
    assert again.result.gated == run.result.gated


def _within_float32_noise(report: Any) -> Any:
    """`report` with every float as pytest.approx(abs=1e-6): a worker encodes on one torch thread,
    which sums in another order than the serial run's several (see
    `evalkit.embedders.sentence_transformer`), so similarities may differ in the last float32 bits;
    everything else (ids, ranks, metrics, gates) must be equal."""
    if isinstance(report, dict):
        return {key: _within_float32_noise(value) for key, value in report.items()}
    if isinstance(report, list):
        return [_within_float32_noise(value) for value in report]
    if isinstance(report, float):
        return pytest.approx(report, abs=1e-6)
    return report


@pytest.mark.real
def test_two_workers_give_the_serial_report_and_share_one_cache(tmp_path, monkeypatch, capsys):
    loads = tmp_path / "loads.txt"
    real_load = sentence_transformer._load

    def recording_load(*args: Any, **kwargs: Any) -> Any:  # this process's loads
        with loads.open("a") as log:
            log.write(f"{os.getpid()}\n")
        return real_load(*args, **kwargs)

    monkeypatch.setattr(sentence_transformer, "_load", recording_load)
    map_units = ProcessExecutor.map

    def recording_map(self: ProcessExecutor, fn: Any, shards: Any) -> Any:
        # the workers' loads: they start from the forkserver, not as copies of this process, so
        # the patch above is not in them; each worker wraps its own loader
        return map_units(self, units.RecordingLoads(fn, loads), shards)

    monkeypatch.setattr(ProcessExecutor, "map", recording_map)
    common = [
        "run",
        "--embedder",
        "real",
        "--datasets",
        str(DATASETS),
        "--thresholds",
        str(DATASETS / "thresholds.json"),
    ]

    def run(name: str, *flags: str) -> dict[str, Any]:
        out = tmp_path / f"{name}.json"
        assert main([*common, "--out", str(out), *flags]) == 0
        return comparable(json.loads(out.read_text()))

    shared = tmp_path / "shared.sqlite3"
    on_workers = run("workers", "--cache", str(shared), "--workers", "2")
    pids = loads.read_text().split()
    assert len(pids) == len(set(pids)) == 2 and str(os.getpid()) not in pids  # once in each worker
    serial = run("serial", "--cache", str(tmp_path / "serial.sqlite3"))
    assert on_workers == _within_float32_noise(serial)
    with EmbeddingCache(shared) as cache, EmbeddingCache(tmp_path / "serial.sqlite3") as alone:
        assert len(cache) == len(alone)  # the two workers stored every vector in the one file

    loads.unlink()
    assert run("again", "--cache", str(shared), "--workers", "2") == on_workers  # exact: cached
    assert not loads.exists()  # no worker loaded the model: every vector came from the cache
    capsys.readouterr()
