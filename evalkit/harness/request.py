"""One run, declared once: `RunRequest` holds everything `evalkit run` can be asked, validated as
a whole, and says how each option is spelled in the other places a run is asked for.

A run is asked for in four spellings: the flags of `evalkit run` (generated from this class by
`evalkit.cli.args.add_request_flags`), the keys of `evalkit.toml` (`[tool.evalkit]`), the
parameters of the report notebook (`notebooks/eval_report.ipynb`) and the keywords of
`evalkit.run_eval`. Each field carries an `Option` (its pydantic metadata): the help text, the
flag's metavar, and the field's name in each spelling — the field's own name (a flag:
`--field-name`) unless the Option names it otherwise, or `NotThere(reason)` where a spelling does
not offer the option, with the reason. `tests/harness/test_request.py` holds every spelling to
this table, so an option cannot exist in one spelling and be missing, unexplained, from another.

The validator holds every rule on which options combine (a pack with a suite folder, a cache
without a real embedder, a perturbation curve beside a single perturbation, ...): a request that
exists can run. A request is the resolved one: what the command line gave, over evalkit.toml,
over the defaults (`evalkit.cli.run.request_from`). Values arrive as a command line gives them
(strings) or as Python does (numbers, paths, tuples); both validate to the same request.

Not here: recording a baseline is not part of a run's request but an action on its saved report
(`evalkit baseline record`), and store options other than the tokenizer
(`StoreOptions`: retrieval, query syntax) are set from Python only.
"""

from __future__ import annotations

import contextvars
import functools
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import BeforeValidator, Field, ValidationError, field_validator, model_validator

from evalkit.errors import UsageError
from evalkit.harness.config import DEFAULT_DATASETS, DEFAULT_TOP_K, RunConfig
from evalkit.harness.repeats import MAX_REPEAT
from evalkit.memory.options import TOKENIZERS, StoreOptions, Tokenizer
from evalkit.packaged import BUILTIN_DATASETS, BUILTIN_SUITE, THRESHOLDS_NAME
from evalkit.records import MAX_TOP_K
from evalkit.systems.resolve import DEFAULT_SYSTEM
from evalkit.validation import FrozenModel, field_problems, one_of

if TYPE_CHECKING:
    from evalkit.scenarios.perturb import CurveSpec, Perturbation

NONE = "none"
"""The word that turns off a path option (`--thresholds none`, `--history none`, `--cache none`)."""

OFF = "off"
"""`--gated-pass off`: no gated pass."""

DETERMINISTIC, REAL = "deterministic", "real"
EMBEDDER_FORMS = "deterministic, real, or real:MODEL (a sentence-transformers name or local path)"

PROCESSES, RAY = "processes", "ray"
EXECUTOR_FORMS = "processes, ray (a local Ray instance), ray://HOST:PORT or ray:ADDRESS (e.g. ray:auto)"


class RequestError(UsageError):
    """A request that cannot run: `problems` holds one line per bad option (named as the
    spelling being validated names it) or rule broken, each with its fix."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__(f"invalid run request: {'; '.join(problems)}")
        self.problems = problems


@dataclass(frozen=True, slots=True)
class NotThere:
    """A spelling that does not offer an option, and why (shown by the spelling test)."""

    reason: str


Name = str | tuple[str, ...] | NotThere | None
"""An option's name in one spelling: None = the field's own name (a flag: `--field-name`), a
name, several names (the option is spread over them there), or NotThere."""


@dataclass(frozen=True, slots=True)
class Option:
    """A RunRequest field's help, metavar and names in the four spellings (see the module
    docstring). `repeat` makes the flag repeatable (each use adds one value)."""

    help: str
    metavar: str | None = None
    cli: Name = None
    toml: Name = None
    notebook: Name = None
    api: Name = None
    repeat: bool = False

    def name(self, field: str, spelling: str) -> str | tuple[str, ...] | NotThere:
        """The field's name in `spelling` ("cli", "toml", "notebook" or "api")."""
        given: Name = getattr(self, spelling)
        if given is not None:
            return given
        return "--" + field.replace("_", "-") if spelling == "cli" else field


SPELLINGS = ("cli", "toml", "notebook", "api")

_ONE_RUN = "chosen for one run, not a project setting"
_PROJECT_SUITE = NotThere("a project names its suite folder with `datasets`; a pack is " + _ONE_RUN)
_DISPLAY = NotThere("how this terminal shows progress, not part of what runs")


def _whole(low: int, high: int | None = None) -> BeforeValidator:
    """A whole number from `low` (to `high`), or its text; True and False are not numbers here
    (pydantic takes True as 1)."""
    span = f"from {low} to {high}" if high is not None else f"{low} or more"

    def check(value: object) -> object:
        if value is None:
            return value
        try:
            number = int(value) if isinstance(value, int | str) and not isinstance(value, bool) else None
        except ValueError:
            number = None
        if number is None or number < low or (high is not None and number > high):
            raise ValueError(f"expected an integer {span}, got {value!r}")
        return number

    return BeforeValidator(check)


def _tuple_of_text(value: object) -> object:
    """One string is one value; None is none."""
    if value is None:
        return ()
    return (value,) if isinstance(value, str) else value


def _path_or_none(value: object) -> object:
    """`none` (any case) stays the word; anything else is a path."""
    if isinstance(value, str) and value.strip().lower() == NONE:
        return NONE
    return value


def _gate(value: object) -> object:
    """`off` stays the word; a number from 0 to 1 (or its text) is the gate's min_relevance."""
    if value is None or (isinstance(value, str) and value.strip().lower() == OFF):
        return None if value is None else OFF
    try:
        gate = float(value) if isinstance(value, str | int | float) and not isinstance(value, bool) else None
    except ValueError:
        gate = None
    if gate is None or not 0.0 <= gate <= 1.0:
        raise ValueError(f"expected `off` or a gate from 0 to 1 (e.g. 0.4), got {value!r}")
    return gate


def _builtin_or_path(value: object) -> object:
    """Exactly `built-in` (`BUILTIN_SUITE`) is the built-in suite's folder; anything else a path."""
    return BUILTIN_DATASETS if value == BUILTIN_SUITE else value


PathOrNone = Annotated[Literal["none"] | Path | None, BeforeValidator(_path_or_none)]


class RunRequest(FrozenModel):
    """Everything a run needs, in one validated value (see the module docstring). A field's
    `Option` (its metadata) documents it; `config()` gives the harness settings (`RunConfig`)."""

    system: Annotated[
        str,
        Option(
            "the memory system under test: reference (default), http://HOST:PORT[/PREFIX] (evalkit's "
            "HTTP contract; token from $EVALKIT_SYSTEM_TOKEN), mcp:MAPPING.toml (an MCP server), "
            "MODULE:FACTORY (a Python object) or an installed plugin's name (entry points evalkit.systems)",
            "SPEC",
        ),
    ] = Field(default=DEFAULT_SYSTEM, min_length=1)
    datasets: Annotated[
        Path | None,
        BeforeValidator(_builtin_or_path),
        Option(
            f"suite directory (default: `datasets` in evalkit.toml, else the built-in suite); "
            f"`{BUILTIN_SUITE}`: the built-in suite, asked for in so many words (a folder named so: "
            f"./{BUILTIN_SUITE})",
            "DIR",
        ),
    ] = None
    pack: Annotated[
        str | None,
        Option(
            "run built-in scenario packs instead of the suite (`list`: name each pack and what it tests); "
            "several are combined into one suite under <reports>/packs/",
            "NAME[,NAME…]",
            toml=_PROJECT_SUITE,
            notebook=_PROJECT_SUITE,
            api=NotThere("Python passes the packs' folder as datasets (evalkit.suites.packs.pack_directory)"),
        ),
    ] = None
    scenarios: Annotated[
        tuple[str, ...],
        BeforeValidator(_tuple_of_text),
        Option(
            "run only this scenario (repeatable); assertions count, metrics are not compared",
            "NAME",
            cli="--scenario",
            toml=NotThere("a project runs its whole suite; selecting scenarios is " + _ONE_RUN),
            notebook=NotThere(
                "the report shows the whole suite; drill into one scenario in scenario_drilldown"
            ),
            repeat=True,
        ),
    ] = ()
    perturb: Annotated[
        tuple[str, ...],
        BeforeValidator(_tuple_of_text),
        Option(
            "grow every scenario's memory deterministically (repeatable, one per kind): distractors=N adds "
            "N off-topic thoughts per scenario from the shipped pool, stale-repeats=K repeats each "
            "superseded thought K times with older dates; a perturbed run is never compared with a "
            "baseline. Several values (distractors=0,10,25,50) measure a curve instead: one more run per "
            "value, printed and saved in the report, the run itself staying the unperturbed suite's",
            "KIND=N[,N…]",
            toml=NotThere("a perturbation is an experiment on one run, never compared with a baseline"),
            api=("perturb", "perturb_curve"),
            repeat=True,
        ),
    ] = ()
    perturb_seed: Annotated[
        int,
        _whole(0),
        Option(
            "seed of the --perturb draws (default 0): the same seed, the same report",
            "S",
            toml=NotThere("a perturbation is an experiment on one run, never compared with a baseline"),
            notebook=NotThere("the notebook's curve is drawn with seed 0"),
            api=NotThere("given inside perturb=Perturbation(seed=...) / perturb_curve=CurveSpec(seed=...)"),
        ),
    ] = 0
    embedder: Annotated[
        str,
        Option(
            f"the embedder: {EMBEDDER_FORMS}; real without a model is the packaged all-MiniLM-L6-v2 "
            "(default deterministic: feature hashing, offline, identical everywhere)",
            "NAME",
            toml=NotThere("the baselines file keys baselines by embedder mode; a project runs both"),
            api=("mode", "model"),
        ),
    ] = DETERMINISTIC
    cache: Annotated[
        PathOrNone,
        Option(
            "with a real embedder: the embedding cache file, or `none` for no cache (default: "
            "$EVALKIT_EMBED_CACHE or the user cache dir)",
            "PATH|none",
            toml=NotThere("a machine's cache location, not the project's ($EVALKIT_EMBED_CACHE)"),
            notebook=NotThere("the notebook uses $EVALKIT_EMBED_CACHE or the user cache dir"),
            api=("embedding_cache", "use_cache"),
        ),
    ] = None
    tokenizer: Annotated[
        Tokenizer | None,
        BeforeValidator(lambda v: v if v is None else one_of("tokenizer", TOKENIZERS)(v)),
        Option(
            "the reference store's FTS5 tokenizer: unicode61 (default), porter (stemming) or trigram (text "
            "without spaces, e.g. Chinese and Japanese, becomes searchable)",
            "NAME",
            toml=NotThere("a store option chosen for one run; a project's system is its `system`"),
            notebook=NotThere("the notebook runs the reference store with its default tokenizer"),
        ),
    ] = None
    top_k: Annotated[
        int,
        _whole(1, MAX_TOP_K),
        Option(f"results per query (default {DEFAULT_TOP_K})", "N"),
    ] = DEFAULT_TOP_K
    gated_pass: Annotated[
        Literal["off"] | float | None,
        BeforeValidator(_gate),
        Option(
            "the report-only pass under the relevance gate: `off` skips it, a number from 0 to 1 is its "
            "gate (min_relevance; default: the service default, 0.4)",
            "off|MIN_RELEVANCE",
            toml=("gated", "min_relevance"),
            api=("gated", "min_relevance"),
        ),
    ] = None
    thresholds: Annotated[
        PathOrNone,
        Option(
            "baselines file (default: <datasets>/thresholds.json); `none`: no baselines, metrics are not "
            "compared (a file named so: ./none)",
            "PATH|none",
        ),
    ] = None
    require_baseline: Annotated[
        bool | None,
        Option(
            "exit 1 when no metric was compared with a baseline (no baseline of this system for this "
            "mode, top_k and suite; --thresholds none) instead of noting it; --no-require-baseline: a "
            "note even in CI (default: `require_baseline` in evalkit.toml, else on when $CI is set)",
        ),
    ] = None
    repeat: Annotated[
        int,
        _whole(1, MAX_REPEAT),
        Option(
            "run the suite N times (same system, same clock) and list the queries whose ids or order "
            "differ between the runs; the first run is reported, the verdict names the unstable queries "
            "(default 1)",
            "N",
            toml=NotThere("a stability check " + _ONE_RUN),
            notebook=NotThere("the report runs once; check stability with evalkit run --repeat"),
        ),
    ] = 1
    mutants: Annotated[
        Literal["report", "fail"] | None,
        Option(
            "also run the mutation suite (the reference store's search with injected bugs) on this suite: "
            "`report` states the suite strength (caught N of M injected bugs) and how to catch each "
            "escaped one; `fail` also makes an escaped mutation, or a false alarm of its no-op control, "
            "a regression (exit 1)",
            "report|fail",
            toml=NotThere("the mutation suite is " + _ONE_RUN + " (evalkit init's workflow asks for it)"),
            api=("mutations", "fail_on_escaped"),
        ),
    ] = None
    executor: Annotated[
        str,
        Option(
            f"where the workers run: {EXECUTOR_FORMS} (pip install 'evalkit-memory[ray]'); default processes",
            "processes|ray[://ADDRESS]",
            toml=NotThere("where a run executes is the machine's choice, not the project's"),
            notebook=NotThere("the notebook runs in its kernel's process"),
            api=NotThere("run_eval takes an Executor object: executor=make_executor(...)"),
        ),
    ] = PROCESSES
    workers: Annotated[
        int | None,
        _whole(1, 1024),
        Option(
            "run N units of work at once (scenarios, benchmark shards, mutations): on worker processes "
            "for an in-process system, as N scenarios in flight on threads for an HTTP or MCP system; "
            "results are identical to a serial run, with a real embedder to within 1e-6 in similarities "
            "(default: serial; HTTP and MCP at a URL: 8 in flight; a stdio MCP server: one server "
            "process per scenario in flight, as many as CPUs, at most 8; with --executor ray: the "
            "cluster's CPUs)",
            "N",
            toml=NotThere("how many workers a machine has is not the project's"),
            notebook=NotThere("the notebook runs in its kernel's process"),
            api=NotThere("run_eval takes an Executor object: executor=make_executor(kind, workers)"),
        ),
    ] = None
    out: Annotated[
        Path | None,
        Option(
            "JSON report path (default <reports>/report.json; reports: evalkit.toml, else ./reports)",
            "PATH",
            toml=NotThere("the project names its reports folder (`reports`); the file name is the command's"),
            api=NotThere("run_eval returns the run; save it with run.save(path)"),
        ),
    ] = None
    history: Annotated[
        PathOrNone,
        Option(
            "run history (SQLite) this run is appended to, or `none` (default: history.sqlite3 next "
            "to the report)",
            "PATH|none",
            toml=NotThere("the history sits in the project's reports folder (`reports`)"),
            api=NotThere("run_eval returns the run; append it with evalkit.harness.history.append_run"),
        ),
    ] = None
    progress: Annotated[
        bool | None,
        Option("progress bars (default: on a terminal)", toml=_DISPLAY, notebook=_DISPLAY),
    ] = None

    @field_validator("embedder")
    @classmethod
    def _known_embedder(cls, text: str) -> str:
        mode, _, model = text.partition(":")
        if (
            mode not in (DETERMINISTIC, REAL)
            or (mode == DETERMINISTIC and model)
            or (":" in text and not model)
        ):
            raise ValueError(f"unknown embedder {text!r}; use {EMBEDDER_FORMS}")
        return text

    @field_validator("executor")
    @classmethod
    def _known_executor(cls, text: str) -> str:
        kind, _, address = text.partition(":")
        if text == PROCESSES or (kind == RAY and (address or ":" not in text)):
            return text
        raise ValueError(f"unknown executor {text!r}; use {EXECUTOR_FORMS}")

    def __init__(self, /, **data: Any) -> None:
        """Validate `data`; RequestError naming each bad option as the spelling being validated
        (`checked`; else by its field name) names it, and the fix."""
        try:
            super().__init__(**data)
        except ValidationError as exc:
            spelling = _SPELLING.get()
            problems = [_respelled(problem, spelling) for problem in field_problems(exc, type(self))]
            raise RequestError(problems) from None

    @classmethod
    def checked(cls, values: Mapping[str, Any], spelling: str) -> RunRequest:
        """The request `values` (field name → value) ask for, validated as `spelling` ("cli",
        "toml", "notebook" or "api") says them: its messages name the options so."""
        token = _SPELLING.set(spelling)
        try:
            return cls(**values)
        finally:
            _SPELLING.reset(token)

    @model_validator(mode="after")
    def _options_combine(self) -> RunRequest:
        """The rules on which options go together (each message names the options, as the
        spelling being validated names them, and the fix)."""
        said = functools.partial(spelled, spelling=_SPELLING.get())
        if self.pack is not None and self.datasets is not None:
            raise ValueError(f"{said('pack')} and {said('datasets')} both choose the suite; give one")
        if self.tokenizer is not None and self.system != DEFAULT_SYSTEM:  # it would be ignored
            raise ValueError(
                f"{said('tokenizer')} sets the reference store's FTS5 tokenizer; system {self.system!r} "
                f"tokenizes text its own way: drop {said('tokenizer')}, or run {said('system')} reference"
            )
        if self.cache is not None and self.mode != REAL:
            raise ValueError(f"{said('cache')} needs a real embedder ({said('embedder')} real or real:MODEL)")
        self.perturbation  # noqa: B018 - parses the perturbation, refusing a bad one here
        self.curve  # noqa: B018
        return self

    @property
    def mode(self) -> str:
        """The embedder mode, which keys the baselines: `deterministic` or `real`."""
        return self.embedder.partition(":")[0]

    @property
    def model(self) -> str | None:
        """The real embedder's model (None: the packaged all-MiniLM-L6-v2, or deterministic)."""
        return self.embedder.partition(":")[2] or None

    @property
    def ray_address(self) -> str | None:
        """The Ray cluster `executor` names (`ray://HOST:PORT` as given, `ray:ADDRESS` → ADDRESS);
        None for a local instance or local processes."""
        if self.executor.startswith(f"{RAY}://"):
            return self.executor
        return self.executor.partition(":")[2] or None

    @property
    def executor_kind(self) -> str:
        """`processes` or `ray`."""
        return self.executor.partition(":")[0]

    @property
    def perturbation(self) -> Perturbation | None:
        """The single-value perturbations of `perturb` (None when there are none); UsageError
        for a bad one, or for one given beside a curve."""
        from evalkit.scenarios.perturb import parse_perturb

        single = [text for text in self.perturb if "," not in text]
        if not single:
            return None
        if len(single) != len(self.perturb):
            raise UsageError(
                "--perturb with one value and --perturb with several together: a curve (several values) "
                "starts from the unperturbed suite; give the curve alone"
            )
        return parse_perturb(single, self.perturb_seed)

    @property
    def curve(self) -> CurveSpec | None:
        """The perturbation curve of a `perturb` value with several values (`distractors=0,10`),
        None without one; UsageError for two curves or a bad one."""
        from evalkit.scenarios.perturb import parse_curve

        curves = [text for text in self.perturb if "," in text]
        if not curves:
            return None
        if len(curves) > 1:
            raise UsageError("--perturb: one curve at a time; give several values to one kind only")
        return parse_curve(curves[0], self.perturb_seed, flag=spelled("perturb", _SPELLING.get()))

    @property
    def thresholds_path(self) -> Path | None:
        """The baselines file: `thresholds`, else `<datasets>/thresholds.json` (the built-in one for
        the built-in suite); None for `none`."""
        if self.thresholds == NONE:
            return None
        if self.thresholds is not None:
            return Path(self.thresholds)
        return Path(self.datasets or DEFAULT_DATASETS) / THRESHOLDS_NAME

    def argv(self) -> list[str]:
        """The `evalkit run` arguments that ask for this request: each option that differs from
        its default, as its flag (a yes/no option as `--flag`/`--no-flag`, a repeatable one once
        per value), in field order."""
        argv: list[str] = []
        for name, option in options().items():
            value = getattr(self, name)
            if value == type(self).model_fields[name].default:
                continue
            flag = option.name(name, "cli")
            assert isinstance(flag, str)  # every field has a flag (the spelling test holds this)
            if isinstance(value, bool):
                argv.append(flag if value else f"--no-{flag.removeprefix('--')}")
            elif isinstance(value, tuple):
                argv += [part for item in value for part in (flag, str(item))]
            else:
                argv += [flag, f"{value:g}" if isinstance(value, float) else str(value)]
        return argv

    def notebook_parameters(self) -> dict[str, object] | None:
        """The report notebook's parameters that ask for this request: every option the notebook
        offers (under its notebook name; a repeatable one as its single value) except where the
        run is saved, which is the notebook's own. None when the request sets an option the
        notebook does not offer (e.g. scenarios, repeat), so no papermill line makes this run."""
        chosen: dict[str, object] = {}
        for name, option in options().items():
            value = getattr(self, name)
            spelled_as = option.name(name, "notebook")
            if name in ("out", "history", "progress"):
                continue
            if isinstance(spelled_as, NotThere) or not isinstance(spelled_as, str):
                if value != type(self).model_fields[name].default:
                    return None
                continue
            if isinstance(value, tuple):
                if len(value) > 1:
                    return None
                value = value[0] if value else None
            chosen[spelled_as] = value
        return chosen

    def config(self) -> RunConfig:
        """The harness settings of this request (`RunConfig`)."""
        gate = self.gated_pass
        settings: dict[str, Any] = {
            "mode": self.mode,
            "model": self.model,
            "embedding_cache": None if self.cache is None or self.cache == NONE else self.cache,
            "use_cache": self.cache != NONE,
            "system": self.system,
            "top_k": self.top_k,
            "gated": gate != OFF,
            "min_relevance": gate if isinstance(gate, float) else None,
            "thresholds": self.thresholds_path,
            "require_baseline": self.require_baseline,
        }
        if self.tokenizer is not None:
            settings["store"] = StoreOptions(tokenizer=self.tokenizer)
        return RunConfig(**settings)


_SPELLING: contextvars.ContextVar[str] = contextvars.ContextVar("spelling", default="")
"""The spelling a request is being validated from (`RunRequest.checked`)."""


def spelled(field: str, spelling: str) -> str:
    """How `spelling` names the RunRequest `field` (several names joined by "/"; the field's own
    name where the spelling does not offer it, or for any other `spelling`)."""
    if spelling not in SPELLINGS:
        return field
    name = options()[field].name(field, spelling)
    if isinstance(name, NotThere):
        return field
    return name if isinstance(name, str) else "/".join(name)


def _respelled(problem: str, spelling: str) -> str:
    """A `field_problems` line with its field named as `spelling` names it."""
    field, _, rest = problem.partition(": ")
    base = field.split("[", 1)[0]
    if base in RunRequest.model_fields:
        return f"{spelled(base, spelling)}: {rest}"
    return rest if field == "<top level>" else problem


@functools.cache
def options() -> dict[str, Option]:
    """Each RunRequest field's Option, in field order."""
    found: dict[str, Option] = {}
    for name, info in RunRequest.model_fields.items():
        found[name] = next(m for m in info.metadata if isinstance(m, Option))
    return found


def given(values: dict[str, Any]) -> dict[str, Any]:
    """`values` without the options left unset (None, or an empty repeatable option)."""
    return {k: v for k, v in values.items() if v is not None and v != ()}
