"""Renamed flags ("gate" means only the relevance gate): each old spelling still parses to what
its replacement gives, for one release, and says on stderr which flag replaces it."""

from __future__ import annotations

import json

import pytest

from evalkit.cli import build_parser, main
from tests.shared import DATASETS

RENAMED = [
    (["run", "--no-gated"], ["run", "--no-gated-pass"], "--no-gated-pass"),
    (["bench", "locomo", "x.json", "--gated"], ["bench", "locomo", "x.json", "--gated-pass"], "--gated-pass"),
    (
        ["compare", "a.json", "b.json", "--gated"],
        ["compare", "a.json", "b.json", "--pass", "gated"],
        "--pass gated",
    ),
]


@pytest.mark.parametrize(
    ("old", "new", "replacement"), RENAMED, ids=lambda v: " ".join(v) if isinstance(v, list) else v
)
def test_a_deprecated_flag_parses_like_its_replacement_and_names_it(capsys, old, new, replacement):
    parsed_new = vars(build_parser().parse_args(new))
    assert capsys.readouterr().err == ""
    parsed_old = vars(build_parser().parse_args(old))
    err = capsys.readouterr().err
    assert parsed_old == parsed_new
    assert err == (
        f"evalkit: warning: {old[-1]} is deprecated and will be removed in the next release; "
        f"use {replacement}\n"
    )


def test_new_flags_are_documented_in_help_and_old_ones_point_to_them():
    text = build_parser()._subparsers._group_actions[0].choices["run"].format_help()  # type: ignore[union-attr]
    assert "--no-gated-pass" in text and "--update-gated-baseline" in text
    assert "deprecated: use --no-gated-pass" in text and "deprecated: use --update-gated-baseline" in text


def test_update_baseline_gated_still_records_the_gated_baseline(tmp_path, capsys):
    thresholds = tmp_path / "thresholds.json"
    thresholds.write_bytes((DATASETS / "thresholds.json").read_bytes())
    common = ["run", "--thresholds", str(thresholds), "--no-history", "--no-progress"]
    assert main([*common, "--out", str(tmp_path / "old.json"), "--update-baseline", "--gated"]) == 0
    old_err = capsys.readouterr().err
    old_file = thresholds.read_text()
    thresholds.write_bytes((DATASETS / "thresholds.json").read_bytes())
    assert main([*common, "--out", str(tmp_path / "new.json"), "--update-gated-baseline"]) == 0
    captured = capsys.readouterr()
    assert "use --update-gated-baseline" in old_err and "deprecated" not in captured.err
    assert "gated baseline for mode 'deterministic'" in captured.out

    def entries(text: str) -> str:  # the recorded_at stamps differ between the two recordings
        document = json.loads(text)
        for entry in document.get("gated", []):
            entry.pop("recorded_at", None)
        return json.dumps(document, sort_keys=True)

    assert '"gated"' in old_file and entries(old_file) == entries(thresholds.read_text())


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--update-baseline", "--update-gated-baseline"], "record different entries"),
        (["--update-gated-baseline", "--no-gated-pass"], "drop one of them"),
        (
            ["--update-gated-baseline", "--scenario", "temporal"],
            "--update-gated-baseline records the whole suite",
        ),
    ],
)
def test_contradictory_baseline_flags_are_refused_before_the_run(tmp_path, capsys, argv, message):
    code = main(["run", "--out", str(tmp_path / "r.json"), "--no-history", *argv])
    err = capsys.readouterr().err
    assert code == 2 and message in err and "Traceback" not in err
    assert not (tmp_path / "r.json").exists()
