"""`evalkit lint [DATASETS]`: the queries of a suite that cannot fail, and how to fix each.

Every finding is a warning (see `evalkit.scenarios.lint`): exit 0 with or without findings, 1
with findings under `--strict` (EXIT_REGRESSIONS: the suite does not pass the check), 2 for a
malformed suite (the loader's problems, as `evalkit run` prints them) or bad usage. Findings a
scenario acknowledges (`lint: {allow, reason}`) are listed after the findings, one line each
with the reason, and counted apart: they are not findings (no exit 1 under `--strict`, no
warning on load). An allowed rule without a finding in its scenario gets a note line (stale, or
meant for another top_k), which changes no exit code. `evalkit run`, `evalkit mutants`,
`evalkit score --suite` and `evalkit report` (a notebook that runs a suite) lint the suite they
load too and print one warning line when it has findings (`warn_on_load`, the one helper for
that line), so a weak suite is never silent.
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from collections.abc import Iterable
from pathlib import Path

from evalkit.cli.args import add_top_k_arg, project_settings
from evalkit.cli.exit_codes import EXIT_OK, EXIT_REGRESSIONS
from evalkit.errors import DatasetError
from evalkit.files import shown_path
from evalkit.scenarios import load_suite
from evalkit.scenarios.lint import Acknowledged, Finding, lint_report, lint_suite
from evalkit.wording import counted


def register(lint: argparse.ArgumentParser) -> None:
    """Add `evalkit lint`."""
    lint.description = (
        "Lint a scenario suite: queries whose reachable corpus fits in top_k (recall 1 by "
        "construction), relevant or forbidden ids outside the query's project (a typo such as acmee for "
        "acme), forbids of superseded notes that rank below top_k even when kept, queries sharing no word "
        "with their relevant thoughts (found by chance in deterministic mode), duplicate thought contents "
        "and thought ids used by several scenarios. Each finding names the file, the scenario, the query "
        "(from 1) and the fix. Findings are warnings: exit 0, or 1 with --strict; 2 = a malformed suite "
        "(the loader's problems) or bad usage."
    )
    lint.add_argument(
        "datasets", nargs="?", type=Path, metavar="DATASETS",
        help="suite directory (default: `datasets` in evalkit.toml, else the built-in suite)",
    )  # fmt: skip
    add_top_k_arg(lint, "the top_k the suite runs at: ")
    lint.add_argument("--strict", action="store_true", help="exit 1 when there is any finding")
    lint.set_defaults(handler=lint_command)


def lint_command(args: argparse.Namespace) -> int:
    project = project_settings(args)
    suite = load_suite(project.datasets)
    report = lint_report(suite, project.config.top_k)
    findings = report.findings
    for line in (*findings, *report.acknowledged):
        print(line)
    for name, code in report.unused:
        print(
            f"{suite.sources[name]}: scenario {name!r}: note: lint.allow lists {code}, which has no finding "
            f"here at top_k {project.config.top_k}; drop it unless another top_k needs it"
        )
    scenarios = counted(len(suite.scenarios), "scenario")
    where = f"{project.datasets} ({scenarios}, top_k {project.config.top_k})"
    also = acknowledged_summary(report.acknowledged)
    if not findings:
        print(f"No lint findings in {where}" + (f"; {also}." if also else "."))
        return EXIT_OK
    verdict = "an error under --strict" if args.strict else "warnings"
    print(f"{summary(findings)} in {where}: {verdict}" + (f"; {also}" if also else ""))
    return EXIT_REGRESSIONS if args.strict else EXIT_OK


def summary(findings: list[Finding]) -> str:
    """ "5 lint findings (2 forbid-out-of-reach, 2 small-corpus, 1 no-shared-word)": most
    frequent first, ties by name."""
    return f"{counted(len(findings), 'lint finding')} ({_kinds(f.code for f in findings)})"


def acknowledged_summary(acknowledged: list[Acknowledged]) -> str:
    """ "2 acknowledged (1 duplicate-content, 1 small-corpus)", ordered as `summary`; "" for none."""
    if not acknowledged:
        return ""
    return f"{len(acknowledged)} acknowledged ({_kinds(a.finding.code for a in acknowledged)})"


def _kinds(codes: Iterable[str]) -> str:
    counts = sorted(Counter(codes).items(), key=lambda item: (-item[1], item[0]))
    return ", ".join(f"{n} {code}" for code, n in counts)


def warn_on_load(datasets: Path, top_k: int) -> None:
    """One warning line on stderr when the suite in `datasets` has lint findings at `top_k`
    (nothing when it has none, or when it is malformed: the command's own load reports that);
    the folder is named relative to the working directory when it is below it (`shown_path`)."""
    try:
        findings = lint_suite(load_suite(datasets), top_k)
    except DatasetError:
        return
    if findings:
        print(
            f"evalkit: warning: {summary(findings)} in the suite: queries a broken search can still pass; "
            f"`evalkit lint {shown_path(datasets)}` lists each with its fix",
            file=sys.stderr,
        )
