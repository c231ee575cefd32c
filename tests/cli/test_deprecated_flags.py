"""Renamed flags ("gate" means only the relevance gate): each old spelling still parses to what
its replacement gives, for one release, and says on stderr which flag replaces it."""

from __future__ import annotations

import pytest

from evalkit.cli import build_parser

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
    assert "--no-gated-pass" in text and "deprecated: use --no-gated-pass" in text


@pytest.mark.parametrize(
    "flag",
    ["--update-baseline", "--update-gated-baseline", "--gated", "--tolerance", "--accept-unstable"],
)
def test_run_no_longer_records_baselines(capsys, flag):
    """Recording is `evalkit baseline record` over a saved report: `run` has none of its flags
    (0.1.0 is unreleased: no deprecated aliases)."""
    with pytest.raises(SystemExit) as info:
        build_parser().parse_args(["run", flag])
    assert info.value.code == 2 and f"unrecognized arguments: {flag}" in capsys.readouterr().err
