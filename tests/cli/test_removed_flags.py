"""The spellings of the unreleased 0.1.0 that were renamed are gone, with no alias (CHANGELOG.md):
each is refused with exit 2 and the usage of its command, and where a current flag is close, a
"did you mean" naming it."""

from __future__ import annotations

import pytest

from evalkit.cli import main

REMOVED = [
    (["run", "--update-baseline"], "--update-baseline is now `evalkit baseline record` after the run"),
    (["run", "--update-gated-baseline"], "is now `evalkit baseline record --gated` after the run"),
    (["run", "--accept-unstable"], None),
    (["run", "--real"], "--real is now --embedder real"),
    (["run", "--model", "m"], "--model is now --embedder real:MODEL"),
    (["run", "--no-gated-pass"], "--no-gated-pass is now --gated-pass off"),
    (["run", "--no-gated"], "--no-gated is now --gated-pass off"),
    (["run", "--gated"], None),  # no abbreviations: not taken as --gated-pass
    (["run", "--min-relevance", "0.3"], "--min-relevance is now --gated-pass MIN_RELEVANCE"),
    (["run", "--no-history"], "--no-history is now --history none"),
    (["run", "--no-cache"], "--no-cache is now --cache none"),
    (["run", "--perturb-curve", "distractors=0,10"], "--perturb-curve is now --perturb KIND=N,N,…"),
    (["run", "--fail-on-escaped"], "--fail-on-escaped is now --mutants fail"),
    (["run", "--address", "auto"], "--address is now --executor ray://ADDRESS"),
    (["run", "--histroy", "h.sqlite3"], "--histroy: did you mean --history?"),
    (["bench", "locomo", "x.json", "--gated"], None),
    (["compare", "a.json", "b.json", "--gated"], None),
]


@pytest.mark.parametrize(
    ("argv", "hint"), REMOVED, ids=lambda v: " ".join(v) if isinstance(v, list) else str(v)
)
def test_a_removed_flag_is_refused_with_its_commands_usage_and_what_replaced_it(capsys, argv, hint):
    with pytest.raises(SystemExit) as info:
        main(argv)
    err = capsys.readouterr().err
    flag = next(word for word in reversed(argv) if word.startswith("--"))
    assert info.value.code == 2
    command = " ".join(argv[:2]) if argv[0] == "bench" else argv[0]
    assert err.startswith(f"usage: evalkit {command} ")
    assert f"unrecognized arguments: {flag}" in err
    if hint is not None:
        assert hint in err
    else:
        assert "did you mean" not in err and " is now " not in err


@pytest.mark.parametrize(
    "flag",
    ["--update-baseline", "--update-gated-baseline", "--gated", "--tolerance", "--accept-unstable"],
)
def test_run_no_longer_records_baselines(capsys, flag):
    """Recording is `evalkit baseline record` over a saved report: `run` has none of its flags."""
    with pytest.raises(SystemExit) as info:
        main(["run", flag])
    assert info.value.code == 2 and f"unrecognized arguments: {flag}" in capsys.readouterr().err
