"""Renamed flags ("gate" means only the relevance gate): each old spelling still parses to what
its replacement gives, for one release, and says on stderr which flag replaces it."""

from __future__ import annotations

import pytest

from evalkit.cli import build_parser, main

RENAMED = [
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


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--update-baseline", "--update-gated-baseline"], "record different entries"),
        (["--update-gated-baseline", "--gated-pass", "off"], "drop one of them"),
        (
            ["--update-gated-baseline", "--scenario", "temporal"],
            "--update-gated-baseline records the whole suite",
        ),
    ],
)
def test_contradictory_baseline_flags_are_refused_before_the_run(tmp_path, capsys, argv, message):
    code = main(["run", "--out", str(tmp_path / "r.json"), "--history", "none", *argv])
    err = capsys.readouterr().err
    assert code == 2 and message in err and "Traceback" not in err
    assert not (tmp_path / "r.json").exists()
