"""Real mode end to end: the built-in suite on the packaged all-MiniLM-L6-v2, gated on the
recorded `real` baseline. Loads the model (needs the `real` extra); runs in CI."""

from __future__ import annotations

import pytest

import evalkit
from tests.shared import DATASETS


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
