"""Load and validate a scenario dataset (SPEC §2); the built-in one is the repository's
`datasets/`, package data in a wheel (see `evalkit.packaged`).

Layout: `<directory>/scenarios/*.yaml|*.yml|*.json` (one scenario per file),
`<directory>/distractors.yaml` (or `.yml`/`.json`): a mapping whose only key `thoughts` lists the
shared distractor thoughts appended to every scenario with `distractors: true` (the default), and
optionally `<directory>/suite.yaml` (or `.yml`/`.json`): a mapping whose key `categories`
declares the suite's categories (a non-empty list of distinct names) and whose optional key
`behaviour_metrics` (default false) asks for the behaviour metrics per query. Without it a suite has the
built-in categories (`BUILTIN_CATEGORIES`, which the built-in suite also declares in its own
suite.yaml); a scenario's category is an error only when it is not in its suite's list.

Contract of `load_suite`: either it returns a fully valid `Suite`, or it raises one `DatasetError`
whose `problems` list every problem found across all files, each naming the file, the scenario and
the field (`datasets/scenarios/temporal.yaml: scenario 'temporal': queries[1].rank_before.before:
unknown thought id 'x' ...`). Nothing runs on an invalid dataset. Decisions where the SPEC is silent:

- Scenario files are the directory's files with a scenario suffix, in file-name order. Hidden files
  and Markdown notes (`*.md`) are ignored; any other file there is a problem (a typo such as
  `temporal.yam` must not silently drop a scenario). Sub-directories are not searched.
- Only regular files are read: a named pipe (or a socket, a device) named like a scenario file is
  a problem and is never opened. Files are UTF-8 (a leading BOM is allowed); a lone surrogate
  escape in a JSON string (`\\ud800`) is a problem of its field. YAML is read with a safe
  loader that rejects duplicate keys and keeps dates as strings (so `created_at: 2024-05-01`
  means midnight UTC that day, never a `date` object); JSON objects with duplicate keys are
  rejected too. `created_at` must be a string
  in a file: a bare number would otherwise be read as a Unix timestamp.
- Shape problems (pydantic) are reported first; cross-reference checks run on scenarios whose
  shape is valid, and on those whose only shape problems are unknown keys (a misspelt key: the
  scenario is checked as if those keys were absent). Of any other invalid scenario only the
  category is judged, so fixing shape problems may reveal more. Every problem of every file is
  in the one DatasetError; a category, a thought id, a key or a choice that is close to a known
  one says "did you mean". Duplicate scenario names are checked on
  every file that names its scenario, valid or not.
- References (edges, relevant, forbid, rank_before, grades) may name the scenario's thoughts (those
  marked `distractor: true` included) and, when `distractors: true`, the shared distractors.
  Beyond the SPEC's list the loader also rejects what the store or the metrics would reject or
  silently misread: edges from a thought to itself, duplicate edges, an id listed twice in
  `relevant`/`forbid`, `rank_before` with before == after, grades below 1 or for ids not in
  `relevant`, and a query `project` that holds none of the scenario's thoughts (the query would
  search an empty corpus).
- A query of a `measure_only` scenario may leave `relevant` empty (without `no_relevant`): it is
  unjudged, e.g. an imported production search nobody labelled (`evalkit import traces`); it is
  measured and its assertions count, and measure-only scenarios are in no mean. Elsewhere a query
  without relevant ids needs `no_relevant: true`.
- A missing distractors file is a problem only when some scenario asks for distractors.
- `distractors_created_at` must be a readable date, and is a problem on a scenario with
  `distractors: false` (there is nothing to re-date).
- The whole directory is validated and digested even when `names` selects a subset.
"""

from __future__ import annotations

import copy
import hashlib
import types
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from pydantic import Field, ValidationError, field_validator

from evalkit.errors import DatasetError
from evalkit.files import read_regular
from evalkit.packaged import BUILTIN_DATASETS
from evalkit.scenarios.model import BUILTIN_CATEGORIES, Scenario, ThoughtSpec
from evalkit.scenarios.parsing import SyntaxProblem, parse_text, raw_date_problems, surrogate_problems
from evalkit.scenarios.references import category_problems, scenario_problems, thought_problems
from evalkit.validation import FrozenModel, did_you_mean, field_problems, shown_value
from evalkit.wording import counted

SCENARIO_SUFFIXES: tuple[str, ...] = (".yaml", ".yml", ".json")
"""File suffixes read as scenario (and distractor) files."""

SCENARIOS_SUBDIR = "scenarios"
"""Sub-directory of the dataset directory holding one scenario per file."""

DISTRACTORS_STEM = "distractors"
"""File name (without suffix) of the shared distractors file in the dataset directory."""

SUITE_STEM = "suite"
"""File name (without suffix) of the optional file declaring the suite's categories."""

_IGNORED_SUFFIXES = (".md",)


@dataclass(frozen=True)
class Suite:
    """A validated scenario dataset.

    `scenarios` are in file-name order; `sources` maps each scenario name to the file it came from;
    `distractors` are the shared distractor thoughts; `digest` is a sha256 (hex) over the relative
    path and bytes of every file read, sorted by path, identifying the dataset in reports.
    `subset` marks a suite restricted to some scenarios by name: its means are not comparable with
    whole-suite baselines, so it is never checked against them. `categories` are the categories the suite
    declares (its suite file, or the built-in ones). `file_digests` maps the relative posix path
    of every file read (scenario, distractor and suite files) to the sha256 (hex) of its bytes, so
    a baseline can name the files that changed since it was recorded (empty for suites built from
    other inputs, whose `digest` alone identifies them). `behaviour_metrics`: the suite file asks
    for the behaviour metrics (`evalkit.metrics.BEHAVIOUR`) to be scored per query.
    `perturbation` names the perturbation applied to the loaded suite (`evalkit.scenarios.perturb`,
    e.g. "distractors=10, seed 0"), None for the suite as its files hold it: a perturbed suite is
    never compared with a baseline.
    """

    scenarios: tuple[Scenario, ...]
    sources: Mapping[str, Path]
    distractors: tuple[ThoughtSpec, ...]
    digest: str
    subset: bool = False
    categories: tuple[str, ...] = BUILTIN_CATEGORIES
    file_digests: Mapping[str, str] = field(default_factory=lambda: types.MappingProxyType({}))
    behaviour_metrics: bool = False
    perturbation: str | None = None

    def __reduce__(self) -> tuple[Callable[..., Suite], tuple[object, ...]]:
        """Pickle (to ship a suite to worker processes) with `sources` as a plain dict, which
        is re-wrapped read-only on the other side (a mappingproxy itself cannot be pickled)."""
        return (
            _unpickled_suite,
            (
                self.scenarios,
                dict(self.sources),
                self.distractors,
                self.digest,
                self.subset,
                self.categories,
                dict(self.file_digests),
                self.behaviour_metrics,
                self.perturbation,
            ),
        )


def _unpickled_suite(*fields: Any) -> Suite:
    scenarios, sources, distractors, digest, subset, categories, file_digests, behaviour, perturbation = (
        fields
    )
    return Suite(
        scenarios,
        types.MappingProxyType(sources),
        distractors,
        digest,
        subset,
        categories,
        types.MappingProxyType(file_digests),
        behaviour,
        perturbation,
    )


class _SuiteFile(FrozenModel):
    categories: tuple[str, ...] = Field(min_length=1)
    behaviour_metrics: bool = False

    @field_validator("categories")
    @classmethod
    def _distinct_names(cls, names: tuple[str, ...]) -> tuple[str, ...]:
        if any(not name.strip() for name in names):
            raise ValueError("a category name must not be empty")
        repeated = sorted({name for name in names if names.count(name) > 1})
        if repeated:
            raise ValueError(f"categories listed twice: {', '.join(repeated)}; list each once")
        return names


class _DistractorFile(FrozenModel):
    thoughts: list[ThoughtSpec]


def load_suite(directory: str | Path = BUILTIN_DATASETS, names: Sequence[str] | None = None) -> Suite:
    """Read, validate and return the dataset in `directory` (see the module docstring).

    `names` selects scenarios by name (kept in file order; a single string counts as one name);
    None selects all. Raises DatasetError listing every problem when the dataset is invalid, and
    DatasetError naming the available scenarios when a selected name does not exist.
    """
    root = Path(directory)
    if not root.is_dir():
        raise DatasetError(
            f"no scenario dataset at {root}",
            [
                f"{root}: directory not found; pass the directory holding "
                f"{SCENARIOS_SUBDIR}/ and distractors.yaml"
            ],
        )
    reader = _Reader(root)
    declared = _load_suite_file(reader)
    categories = None if declared is None else declared.categories
    distractors = _load_distractors(reader)
    entries = _load_scenario_files(reader)
    _check_duplicate_names(entries, reader)
    for entry in entries:
        checked = entry.scenario or entry.lenient
        if checked is not None:
            problems = scenario_problems(checked, distractors, categories)
            reader.add(entry.path, problems, entry.label)
        elif entry.raw_category is not None:
            reader.add(entry.path, category_problems(entry.raw_category, categories), entry.label)
    if distractors is None and reader.distractors_missing:
        wanting = [e.scenario.name for e in entries if e.scenario is not None and e.scenario.distractors]
        if wanting:
            reader.add(
                root / (DISTRACTORS_STEM + ".yaml"),
                [
                    f"file not found, but scenario(s) {', '.join(wanting)} ask for shared distractors "
                    "(distractors: true is the default); add the file or set distractors: false there"
                ],
            )
    problems = reader.sorted_problems()
    if problems:
        raise DatasetError(
            f"{root}: {counted(len(problems), 'problem')} in the scenario dataset; fix them, nothing was run",
            problems,
        )
    valid = [(e.scenario, e.path) for e in entries if e.scenario is not None]
    selected = _select(valid, names)
    return Suite(
        scenarios=tuple(s for s, _ in selected),
        sources=types.MappingProxyType({s.name: path for s, path in selected}),
        distractors=tuple(distractors or ()),
        digest=reader.digest(),
        subset=names is not None,
        categories=categories or BUILTIN_CATEGORIES,
        file_digests=types.MappingProxyType(reader.file_digests()),
        behaviour_metrics=declared is not None and declared.behaviour_metrics,
    )


@dataclass(frozen=True)
class _Entry:
    """One scenario file that parsed: its `scenario` (None when invalid), the name and category
    it gives (None when not text), and, when its only shape problems are unknown keys, the
    scenario read without them (`lenient`), whose cross-references are checked all the same."""

    path: Path
    raw_name: str | None
    scenario: Scenario | None
    raw_category: str | None = None
    lenient: Scenario | None = None

    @property
    def label(self) -> str:
        return f"scenario {shown_value(self.raw_name)}" if self.raw_name is not None else "scenario <unnamed>"


class _Reader:
    """Reads dataset files once, remembering their bytes (for the digest) and every problem."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.distractors_missing = False
        self._problems: list[tuple[str, str]] = []
        self._blobs: dict[str, bytes] = {}

    def add(self, path: Path, problems: Iterable[str], label: str | None = None) -> int:
        """Record problems of `path` (each `<field>: <message>` or a whole-file message), prefixed
        with the path and `label` (e.g. "scenario 'temporal'"). Returns how many were added."""
        prefix = f"{path}: " + (f"{label}: " if label else "")
        added = [(str(path), prefix + p) for p in problems]
        self._problems.extend(added)
        return len(added)

    def sorted_problems(self) -> list[str]:
        """Every problem, grouped by file in path order, in the order found within a file."""
        return [text for _, text in sorted(self._problems, key=lambda item: item[0])]

    def read(self, path: Path) -> bytes | None:
        """The bytes of one file (remembered for the digest); None when it cannot be read (the
        problem is recorded)."""
        try:
            data = read_regular(path)
        except OSError as exc:
            self.add(path, [f"cannot read the file ({exc.strerror or exc}); replace it with a regular file"])
            return None
        self._blobs[path.relative_to(self.root).as_posix()] = data
        return data

    def parse(self, path: Path, data: bytes | None = None) -> tuple[bool, Any]:
        """(ok, data) for one file (its bytes `data` when already read); on failure the problem
        is recorded and ok is False."""
        if data is None:
            data = self.read(path)
            if data is None:
                return False, None
        try:
            text = data.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            self.add(
                path,
                [f"not valid UTF-8 (byte 0x{data[exc.start]:02x} at offset {exc.start}); save it as UTF-8"],
            )
            return False, None
        try:
            parsed = parse_text(text, path.suffix)
        except SyntaxProblem as exc:
            self.add(path, [str(exc)])
            return False, None
        if not isinstance(parsed, dict):
            what = "empty" if parsed is None else f"a {type(parsed).__name__}"
            self.add(path, [f"the file is {what}; it must hold one mapping (key: value pairs)"])
            return False, None
        return True, parsed

    def digest(self) -> str:
        """sha256 over (relative posix path, NUL, byte length, NUL, bytes) of every file read, by path."""
        h = hashlib.sha256()
        for rel in sorted(self._blobs):
            blob = self._blobs[rel]
            h.update(rel.encode("utf-8") + b"\0" + str(len(blob)).encode("ascii") + b"\0")
            h.update(blob)
        return h.hexdigest()

    def file_digests(self) -> dict[str, str]:
        """The sha256 (hex) of every file read, by relative posix path, in path order."""
        return {rel: hashlib.sha256(self._blobs[rel]).hexdigest() for rel in sorted(self._blobs)}


def _single_file(reader: _Reader, stem: str) -> tuple[bool, Path | None]:
    """(ok, path) of the one file `<stem>.yaml|.yml|.json` in the dataset directory: path None
    when there is none; ok False (reported) when there are several. Anything of that name counts,
    not only regular files, so that `reader.parse` reports a pipe or a directory there instead of
    the file silently counting as absent."""
    found = [p for s in SCENARIO_SUFFIXES if (p := reader.root / (stem + s)).exists()]
    if len(found) > 1:
        names = ", ".join(p.name for p in found)
        reader.add(reader.root, [f"several {stem} files ({names}); keep exactly one"])
        return False, None
    return True, found[0] if found else None


def _load_suite_file(reader: _Reader) -> _SuiteFile | None:
    """What the suite file declares (categories, behaviour_metrics): the built-in categories
    without a suite file, or None when the file is invalid (reported; scenario categories are
    then not judged)."""
    ok, path = _single_file(reader, SUITE_STEM)
    if not ok:
        return None
    if path is None:
        return _SuiteFile(categories=BUILTIN_CATEGORIES)
    ok, data = reader.parse(path)
    if not ok:
        return None
    try:
        return _SuiteFile.model_validate(data)
    except ValidationError as exc:
        reader.add(path, field_problems(exc, _SuiteFile))
        return None


def _load_distractors(reader: _Reader) -> list[ThoughtSpec] | None:
    """The shared distractors, or None when their file is absent (`reader.distractors_missing` is
    then set; only scenarios that want distractors make that a problem) or invalid (reported)."""
    ok, path = _single_file(reader, DISTRACTORS_STEM)
    if not ok:
        return None
    if path is None:
        reader.distractors_missing = True
        return None
    ok, data = reader.parse(path)
    if not ok:
        return None
    found_problems = reader.add(path, raw_date_problems(data) + surrogate_problems(data))
    try:
        spec = _DistractorFile.model_validate(data)
    except ValidationError as exc:
        reader.add(path, field_problems(exc, _DistractorFile))
        return None
    found_problems += reader.add(path, thought_problems(spec.thoughts, None))
    return None if found_problems else list(spec.thoughts)


def _load_scenario_files(reader: _Reader) -> list[_Entry]:
    """One entry per scenario file that parses to a mapping (its scenario None when invalid)."""
    folder = reader.root / SCENARIOS_SUBDIR
    if not folder.is_dir():
        reader.add(folder, ["directory not found; put one scenario per .yaml/.yml/.json file there"])
        return []
    paths = []
    for path in sorted(folder.iterdir(), key=lambda p: p.name):
        if path.name.startswith(".") or path.is_dir() or path.suffix in _IGNORED_SUFFIXES:
            continue
        if path.suffix in SCENARIO_SUFFIXES:
            paths.append(path)
        else:
            reader.add(
                path, [f"not a scenario file; rename it to end in {', '.join(SCENARIO_SUFFIXES)} or move it"]
            )
    if not paths:
        reader.add(folder, ["no scenario files; add one .yaml/.yml/.json file per scenario"])
    global _last_valid
    entries, valid = [], {}
    for path in paths:
        blob = reader.read(path)
        if blob is None:
            continue
        known = _last_valid.get((path.suffix, blob))
        if known is not None:
            entries.append(_Entry(path, known.name, known, raw_category=known.category))
            valid[path.suffix, blob] = known
            continue
        ok, data = reader.parse(path, blob)
        if not ok:
            continue
        name, category = (data.get(key) for key in ("name", "category"))
        entry = _Entry(
            path,
            name if isinstance(name, str) else None,
            None,
            raw_category=category if isinstance(category, str) else None,
        )
        found = reader.add(path, raw_date_problems(data) + surrogate_problems(data), entry.label)
        try:
            entry = replace(entry, scenario=Scenario.model_validate(data))
        except ValidationError as exc:
            reader.add(path, field_problems(exc, Scenario), entry.label)
            entry = replace(entry, lenient=None if found else _without_unknown_keys(data, exc))
        if entry.scenario is not None and not found:
            valid[path.suffix, blob] = entry.scenario
        entries.append(entry)
    _last_valid = valid
    return entries


_last_valid: dict[tuple[str, bytes], Scenario] = {}
"""The scenario files the last `_load_scenario_files` found valid on their own (parsed, dates
and text checked, the model validated: what depends on the file's bytes and suffix alone), by
suffix and bytes, with their scenario. A file read again with the same bytes is not parsed or
validated again: `evalkit run` loads its suite for the lint warning and then for the run (half
the loading time of a 1,500-scenario suite). What depends on the rest of the suite (names,
references, categories, distractors) is checked on every load. Each load that reads scenario
files replaces it, whatever its outcome, so it holds one suite's files at most; a scenario is a
frozen model that nothing changes, so loads can share one."""


def _without_unknown_keys(data: dict[str, Any], exc: ValidationError) -> Scenario | None:
    """The scenario `data` holds read without its unknown keys, when they are all of `exc`'s
    problems (a misspelt optional key, say) and it is valid then; else None."""
    errors = exc.errors()
    if any(err["type"] != "extra_forbidden" for err in errors):
        return None
    cleaned = copy.deepcopy(data)
    for err in errors:
        *parents, key = err["loc"]
        holder: Any = cleaned
        for part in parents:
            holder = holder[part]
        holder.pop(key, None)
    try:
        return Scenario.model_validate(cleaned)
    except ValidationError:
        return None


def _check_duplicate_names(entries: Iterable[_Entry], reader: _Reader) -> None:
    first: dict[str, Path] = {}
    for e in entries:
        if e.raw_name is None:
            continue
        if e.raw_name in first:
            reader.add(
                e.path,
                [f"name: duplicate scenario name, also used by {first[e.raw_name]}; names must be unique"],
                e.label,
            )
        first.setdefault(e.raw_name, e.path)


def _select(
    valid: Sequence[tuple[Scenario, Path]], names: Sequence[str] | None
) -> list[tuple[Scenario, Path]]:
    if names is None:
        return list(valid)
    wanted = [names] if isinstance(names, str) else list(names)
    available = [s.name for s, _ in valid]
    unknown = [n for n in dict.fromkeys(wanted) if n not in available]
    if unknown or not wanted:
        problems = [f"unknown scenario {shown_value(n)}{did_you_mean(n, available)}" for n in unknown] or [
            "no scenario name given; pass None to select every scenario"
        ]
        raise DatasetError(f"cannot select scenarios; available: {', '.join(available)}", problems)
    return [(s, path) for s, path in valid if s.name in wanted]
