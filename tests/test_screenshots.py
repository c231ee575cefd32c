"""The HTML report as a reader sees it in headless Chromium (tests/screenshots.py): the key
columns visible at 1366 px without scrolling sideways, charts no smaller than readable at 400 px,
and screenshots of both widths. Chromium is a system package (`.ci/run` installs it); without
it these tests are skipped, which EVALKIT_FORBID_SKIPS turns into a failure in CI."""

from __future__ import annotations

from pathlib import Path

import pytest
from PIL import Image

from evalkit.cli import main
from evalkit.views.report import READABLE_SCALE
from tests.screenshots import chromium, measure, screenshot
from tests.shared import ROOT

pytestmark = pytest.mark.skipif(chromium() is None, reason="no chromium (apt-get install -y chromium)")

KEY_SECTIONS = (
    "losses",
    "failures",
    "summary",
    "scenarios",
    "categories",
    "uncertainty",
    "gate-recommendation",
)
"""The tables a reader acts on: at 1366 px every column of them is visible without scrolling."""


@pytest.fixture(scope="module")
def report_html(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("report")
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(ROOT)
        assert main(["report", "--out-dir", str(out), "--no-progress"]) == 0
    return out / "eval_report.html"


def test_the_key_columns_fit_at_1366_px(report_html: Path) -> None:
    measured = measure(report_html, 1366)
    assert measured["viewport"] == 1366
    assert measured["page"] <= 1366, "the page itself scrolls sideways"
    tables = {t["section"]: t for t in measured["tables"] if t["section"] in KEY_SECTIONS}
    assert set(tables) == set(KEY_SECTIONS)
    for section, table in tables.items():
        assert table["scroll"] <= table["client"], (
            f"{section}: {table['scroll']} px wide in {table['client']} px"
        )
        assert table["last_header_right"] <= table["right"] + 0.5, f"{section}: its last column is cut off"


def test_charts_stay_readable_at_400_px(report_html: Path) -> None:
    measured = measure(report_html, 400)
    assert measured["viewport"] == 400
    assert measured["page"] <= 400, "the page scrolls sideways: only tables and charts may, inside their box"
    assert len(measured["charts"]) >= 4
    for chart in measured["charts"]:
        scale = chart["shown"] / chart["natural"]
        assert scale >= READABLE_SCALE - 0.01, f"{chart['alt']} is shown at {scale:.2f} of its size"


def test_the_measurement_fails_on_a_table_too_wide_for_the_screen(tmp_path: Path) -> None:
    page = tmp_path / "wide.html"
    cells = "".join(f"<th>column {i}</th>" for i in range(40))
    page.write_text(
        f'<html><body><h2 id="scenarios">S</h2><div class="evalkit-table" style="overflow-x: auto">'
        f"<table><thead><tr>{cells}</tr></thead></table></div></body></html>",
        encoding="utf-8",
    )
    (table,) = measure(page, 1366)["tables"]
    assert table["section"] == "scenarios" and table["scroll"] > table["client"]


def test_screenshots_at_both_widths(report_html: Path, tmp_path: Path) -> None:
    for width in (1366, 400):
        shot = screenshot(report_html, width, tmp_path / f"report-{width}.png")
        with Image.open(shot) as image:
            assert image.size == (width, 900)
            colours = image.convert("L").getextrema()
            assert colours[0] < 100 < colours[1], "a blank screenshot"
