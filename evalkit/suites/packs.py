"""Built-in scenario packs: optional suites for the failures users report in memory products
(deleted memories retrieved, updates not propagated, filters applied after the cut, ...).

A pack is a suite directory (`scenarios/`, `distractors.yaml`, `suite.yaml`) under the built-in
datasets' `packs/` folder (`datasets/packs/<name>/`, shipped in the wheel with the datasets), so
each is also usable as `--datasets datasets/packs/<name>`. Its suite file's leading comment says
what it tests and which user reports are behind it (`evalkit run --pack list` prints it).

Several packs run as one suite: `combined_pack` writes their scenario files, their (identical)
shared distractors and the union of their categories into one directory, which the loader then
reads like any suite; it asks for the behaviour metrics when any of the packs does (every
shipped pack does). Decisions where the issue is silent: the packs share the built-in suite's
distractors file (one corpus of noise, so combining them needs no renaming); a combined suite is
written under the caller's folder (the CLI: `<reports>/packs/<a>+<b>/`) so that the report's
source paths stay readable after the run; scenario names are unique across packs (the loader
rejects duplicates).
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Sequence
from pathlib import Path

from evalkit.errors import UsageError
from evalkit.packaged import BUILTIN_DATASETS
from evalkit.scenarios.loading import DISTRACTORS_STEM, SCENARIOS_SUBDIR, SUITE_STEM, load_suite
from evalkit.validation import did_you_mean

PACKS = BUILTIN_DATASETS / "packs"
"""The folder holding one suite directory per pack."""

LIST = "list"
"""The `--pack` value that lists the packs instead of running one."""


def pack_names() -> list[str]:
    """Every shipped pack's name, sorted."""
    if not PACKS.is_dir():
        return []
    return sorted(p.name for p in PACKS.iterdir() if (p / f"{SUITE_STEM}.yaml").is_file())


def pack_summary(name: str) -> str:
    """The leading comment of pack `name`'s suite file, as one line (what it tests, the reports)."""
    lines = []
    for line in (PACKS / name / f"{SUITE_STEM}.yaml").read_text(encoding="utf-8").splitlines():
        if not line.startswith("#"):
            break
        lines.append(line.lstrip("#").strip())
    return " ".join(lines)


def parse_packs(text: str) -> list[str]:
    """`NAME[,NAME…]` as pack names in the order given (duplicates dropped). UsageError for an
    empty list or an unknown name (with the closest one and how to list them)."""
    names = [n.strip() for n in text.split(",")]
    if not text.strip() or any(not n for n in names):
        raise UsageError(f"--pack {text!r}: give pack names separated by commas, e.g. --pack deletion-ghosts")
    known = pack_names()
    for name in names:
        if name not in known:
            raise UsageError(
                f"--pack: unknown pack {name!r}{did_you_mean(name, known)}; the packs are "
                f"{', '.join(known)} (`evalkit run --pack list` says what each tests)"
            )
    return list(dict.fromkeys(names))


def pack_directory(names: Sequence[str], folder: Path) -> Path:
    """Where the suite of the packs `names` (already checked by `parse_packs`) is read from: the
    pack's own directory for one, else `folder/<a>+<b>…/` (written by `write_combined`). Writes
    nothing. UsageError when that path is a symbolic link or not a folder (evalkit never writes
    through a link, nor replaces a file it did not create)."""
    if len(names) == 1:
        return PACKS / names[0]
    target = folder / "+".join(names)
    if target.is_symlink() or (target.exists() and not target.is_dir()):
        kind = "a symbolic link" if target.is_symlink() else "a file"
        raise UsageError(
            f"--pack: {target} is {kind}, but evalkit writes the combined packs' suite there; "
            "move it away (or run the packs one by one)"
        )
    if len({(PACKS / n / f"{DISTRACTORS_STEM}.yaml").read_bytes() for n in names}) != 1:
        raise UsageError(f"packs {', '.join(names)} have different distractors files; run them one by one")
    return target


def write_combined(names: Sequence[str], target: Path) -> None:
    """Write the combined suite of the packs `names` at `target` (from `pack_directory`), whole or
    not at all: it is built in a temporary folder beside `target`, then its three parts
    (`scenarios/`, the distractors and the suite file) replace the ones there, each by a rename.
    Anything else in `target` (a baseline recorded there with `evalkit baseline record`, a report) is
    kept. A combined suite is only ever rebuilt from the packs: nothing in its parts is the user's.
    """
    target.mkdir(parents=True, exist_ok=True)
    build = Path(tempfile.mkdtemp(dir=target, prefix=".build-"))
    try:
        (build / SCENARIOS_SUBDIR).mkdir()
        (build / f"{DISTRACTORS_STEM}.yaml").write_bytes(
            (PACKS / names[0] / f"{DISTRACTORS_STEM}.yaml").read_bytes()
        )
        categories: list[str] = []
        behaviour = False
        for name in names:
            for path in sorted((PACKS / name / SCENARIOS_SUBDIR).iterdir()):
                if path.is_file():
                    shutil.copyfile(path, build / SCENARIOS_SUBDIR / path.name)
            pack = load_suite(PACKS / name)
            categories += [c for c in pack.categories if c not in categories]
            behaviour = behaviour or pack.behaviour_metrics
        suite = "# The packs " + ", ".join(names) + " combined by evalkit run --pack.\ncategories:\n"
        suite += "".join(f"  - {c}\n" for c in categories)
        suite += "behaviour_metrics: true\n" if behaviour else ""
        (build / f"{SUITE_STEM}.yaml").write_text(suite, "utf-8")
        old = target / SCENARIOS_SUBDIR
        if old.is_dir() and not old.is_symlink():
            old.rename(build / ".old-scenarios")
        elif old.exists() or old.is_symlink():
            raise UsageError(f"--pack: {old} is not a folder; move it away")
        (build / SCENARIOS_SUBDIR).rename(old)
        for part in (f"{DISTRACTORS_STEM}.yaml", f"{SUITE_STEM}.yaml"):
            os.replace(build / part, target / part)
    finally:
        shutil.rmtree(build, ignore_errors=True)
