"""The fault matrix of issue 14: every way a user, a file or the machine can make evalkit fail.

Each case asserts the exit code (2 for bad input, usage or an output that cannot be written; 130
for Ctrl-C, 143 for SIGTERM), the message (it names the file or item and the fix), that no
traceback is printed, and that nothing was left behind (temp files, stores, lock files) or lost
(the report, the thresholds file and its permissions). Families: bad scenario files, thresholds
files, CLI usage, output paths, signals (subprocesses), the embedding cache, library systems.
Everything runs in-process through `evalkit.cli.main` except what needs a signal.
"""

from __future__ import annotations

import dataclasses
import errno
import json
import multiprocessing
import os
import signal
import stat
import subprocess
import sys
import tempfile
import time
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

import evalkit
from evalkit.cli import main
from evalkit.embedders import HashingEmbedder
from evalkit.embedders.cache import EmbeddingCache
from evalkit.errors import EmbedderError, StoreError, SystemOutputError
from evalkit.harness.thresholds_file import ModeEntry, load_thresholds, update_thresholds
from evalkit.records import SearchResponse
from evalkit.sqlite import connect
from evalkit.systems import ReferenceSystem
from tests.shared import BEIR_TINY, DATASETS, NOTEBOOKS, ROOT

TINY = """\
name: tiny
category: explicit-fact
distractors: false
thoughts:
  - {id: port, content: The billing API listens on port 8443.}
  - {id: logs, content: Billing logs are written to /var/log/billing.}
  - {id: owner, content: The payments team owns the billing API.}
  - {id: db, content: Billing stores invoices in Postgres.}
  - {id: cron, content: Invoices are mailed every Monday morning.}
  - {id: ttl, content: The session cache TTL is five minutes.}
queries:
  - {query: "Which port does the billing API listen on?", relevant: [port]}
"""

HEAD = "name: bad\ncategory: explicit-fact\ndistractors: false\n"
THOUGHTS = "thoughts:\n  - {id: a, content: alpha}\nqueries:\n  - {query: alpha, relevant: [a]}\n"


# --- helpers ---------------------------------------------------------------------------------------


def _anchors() -> str:
    """Nine anchors of nine aliases each: `*a8` expands to 9**9 = 387,420,489 strings."""
    lines = ["anchors:", "  - &a0 [" + ", ".join(["lol"] * 9) + "]"]
    lines += [f"  - &a{i} [" + ", ".join([f"*a{i - 1}"] * 9) + "]" for i in range(1, 9)]
    return "\n".join(lines) + "\n"


def _json_scenario(content: str = "alpha", query: str = "alpha") -> str:
    """A JSON scenario whose thought content and query are spliced in as raw JSON string text
    (so they may hold escapes such as a lone \\ud800 that json.dumps would never write)."""
    scenario = {
        "name": "sur",
        "category": "explicit-fact",
        "distractors": False,
        "thoughts": [{"id": "a", "content": "<CONTENT>"}],
        "queries": [{"query": "<QUERY>", "relevant": ["a"]}],
    }
    return json.dumps(scenario).replace("<CONTENT>", content).replace("<QUERY>", query)


def _snapshot(folder: Path) -> dict[str, tuple[bytes | None, int]]:
    """Every path under `folder` with its bytes (None for folders and pipes) and mode."""
    return {
        str(p.relative_to(folder)): (p.read_bytes() if p.is_file() else None, stat.S_IMODE(p.lstat().st_mode))
        for p in sorted(folder.rglob("*"))
    }


@pytest.fixture
def ws(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A working directory holding `data/` (the tiny scenario), `data/thresholds.json` (the
    built-in deterministic baseline) and `reports/`; temp files of the process go to `tmp/`."""
    (tmp_path / "data" / "scenarios").mkdir(parents=True)
    (tmp_path / "data" / "scenarios" / "tiny.yaml").write_text(TINY)
    (tmp_path / "data" / "thresholds.json").write_bytes((DATASETS / "thresholds.json").read_bytes())
    (tmp_path / "reports").mkdir()
    (tmp_path / "tmp").mkdir()
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))
    return tmp_path


def _cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    try:
        code = main(list(argv))
    except SystemExit as exc:  # argparse usage errors
        code = int(exc.code or 0)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def _run_args(*extra: str) -> list[str]:
    return ["run", "--datasets", "data", "--thresholds", "data/thresholds.json", "--no-gated", *extra]


def _assert_refused(code: int, err: str, *needles: str) -> None:
    """Exit 2 with one `evalkit: error:` message holding every needle, no traceback."""
    assert code == 2, err
    assert "Traceback" not in err
    assert err.startswith("evalkit: error:") or err.startswith("usage:"), err
    for needle in needles:
        assert needle in err, (needle, err)


# --- bad scenario files ---------------------------------------------------------------------------

BAD_SCENARIOS: dict[str, tuple[str, str, tuple[str, ...]]] = {
    "alias-bomb-in-description": (
        "bomb.yaml",
        HEAD + _anchors() + "description: *a8\n" + THOUGHTS,
        ("more than 1,000,000 values", "aliases"),
    ),
    "alias-bomb-in-created-at": (
        "bomb.yaml",
        HEAD + _anchors() + "thoughts:\n  - {id: a, content: alpha, created_at: *a8}\n"
        "queries:\n  - {query: alpha, relevant: [a]}\n",
        ("more than 1,000,000 values",),
    ),
    "alias-bomb-as-thoughts": (
        "bomb.yaml",
        HEAD + _anchors() + "thoughts: *a8\nqueries:\n  - {query: x}\n",
        ("aliases",),
    ),
    "alias-bomb-as-queries": ("bomb.yaml", HEAD + _anchors() + "thoughts: []\nqueries: *a7\n", ("aliases",)),
    "yaml-nesting-20000": (
        "deep.yaml",
        HEAD + "description: " + "[" * 20000 + "]" * 20000 + "\n" + THOUGHTS,
        ("nested deeper than 64 levels", "line 4"),
    ),
    "yaml-nesting-100-block": (
        "deep.yaml",
        HEAD + "description:\n" + "".join("  " * i + "-\n" for i in range(1, 100)) + THOUGHTS,
        ("nested deeper than 64 levels",),
    ),
    "json-nesting-20000": (
        "deep.json",
        '{"description": ' + "[" * 20000 + "]" * 20000 + "}",
        ("nested deeper",),
    ),
    "json-nesting-100": ("deep.json", '{"description": ' + "[" * 100 + "]" * 100 + "}", ("nested deeper",)),
    "json-lone-surrogate-in-thought": (
        "s.json",
        _json_scenario(content="ok \\ud800 bad"),
        ("scenario 'sur'", "thoughts[0].content: lone surrogate \\ud800 at character 3"),
    ),
    "json-lone-surrogate-in-query": (
        "s.json",
        _json_scenario(query="\\udfff"),
        ("scenario 'sur'", "queries[0].query: lone surrogate \\udfff"),
    ),
    "json-lone-surrogate-in-key": (
        "s.json",
        '{"name": "sur", "\\ud83d": 1}',
        ("(key): lone surrogate \\ud83d",),
    ),
    "huge-created-at-list": (
        "big.yaml",
        HEAD + "thoughts:\n  - {id: a, content: alpha, created_at: [" + ", ".join(["12345"] * 20000) + "]}\n"
        "queries:\n  - {query: alpha, relevant: [a]}\n",
        ("thoughts[0].created_at: [12345, 12345", "is not a string", "..."),
    ),
    "numeric-created-at": (
        "num.yaml",
        HEAD + "thoughts:\n  - {id: a, content: alpha, created_at: 1700000000}\n"
        "queries:\n  - {query: alpha, relevant: [a]}\n",
        ("created_at: 1700000000 is not a string", "quoted"),
    ),
    "huge-description-mapping": (
        "big.yaml",
        HEAD + "description: {" + ", ".join(f"k{i}: {i}" for i in range(20000)) + "}\n" + THOUGHTS,
        ("description: Input should be a valid string", "..."),
    ),
    "huge-duplicate-id": (
        "ids.yaml",
        HEAD
        + "thoughts:\n"
        + f"  - {{id: {'x' * 100000}, content: a}}\n" * 2
        + "queries:\n  - {query: alpha, relevant: [a]}\n",
        ("thoughts[1].id: duplicate thought id 'xxxx", "...", "unknown thought id 'a'"),
    ),
    "duplicate-key": ("dup.yaml", HEAD + "name: again\n" + THOUGHTS, ("duplicate key 'name'",)),
    "invalid-utf8": ("bin.yaml", "", ("not valid UTF-8", "save it as UTF-8")),
    "yaml-syntax": ("syn.yaml", HEAD + "thoughts: [\n", ("YAML syntax error at line",)),
    "json-syntax": ("syn.json", '{"name": "x",', ("JSON syntax error at line 1",)),
    "empty-file": ("empty.yaml", "", ("the file is empty",)),
    "top-level-list": ("list.yaml", "- a\n- b\n", ("the file is a list; it must hold one mapping",)),
    "unknown-key": ("unk.yaml", HEAD + "thougts: []\n" + THOUGHTS, ("unknown key 'thougts'", "did you mean")),
    "stray-suffix": ("typo.yam", TINY, ("not a scenario file; rename it",)),
    "dangling-relevant": (
        "dang.yaml",
        HEAD + "thoughts:\n  - {id: a, content: alpha}\nqueries:\n  - {query: x, relevant: [zz]}\n",
        ("unknown thought id 'zz'",),
    ),
}


@pytest.mark.parametrize("case", sorted(BAD_SCENARIOS))
def test_bad_scenario_file_exits_2_naming_file_and_field(
    ws: Path, capsys, case: str, yaml_loader: type
) -> None:
    name, text, needles = BAD_SCENARIOS[case]
    target = ws / "data" / "scenarios" / name
    if case == "invalid-utf8":
        target.write_bytes(HEAD.encode() + b"description: caf\xe9\n" + THOUGHTS.encode())
    else:
        target.write_text(text, encoding="utf-8", errors="surrogatepass")
    before = _snapshot(ws)
    started = time.process_time()
    code, out, err = _cli(capsys, *_run_args())
    _assert_refused(code, err, str(Path("data/scenarios") / name), "nothing was run", *needles)
    assert out == "" and len(err) < 4000  # values were cut before they were formatted
    assert time.process_time() - started < 10
    assert _snapshot(ws) == before


@pytest.mark.parametrize("where", ["scenarios/x.yaml", "distractors.yaml"])
def test_named_pipe_is_refused_without_being_opened(ws: Path, capsys, where: str) -> None:
    os.mkfifo(ws / "data" / where)
    code, out, err = _cli(capsys, *_run_args())
    _assert_refused(code, err, str(Path("data") / where), "a named pipe, not a regular file")
    assert out == "" and not (ws / "reports" / "report.json").exists()


# --- thresholds files ----------------------------------------------------------------------------

BAD_THRESHOLDS: dict[str, tuple[bytes, tuple[str, ...]]] = {
    "not-json": (b"{nope", ("is not valid JSON (line 1", "--update-baseline")),
    "wrong-schema": (b'{"deterministic": {"top_k": 5}}', ("does not match the schema", "recorded_at")),
    "not-utf8": (b'{"x": "\xff"}', ("is not UTF-8",)),
    "metric-out-of-range": (
        json.dumps(
            {
                "deterministic": {
                    **json.loads((DATASETS / "thresholds.json").read_text())["deterministic@5"],
                    "top_k": 0,
                }
            }
        ).encode(),
        ("deterministic.top_k",),
    ),
}


@pytest.mark.parametrize("case", sorted(BAD_THRESHOLDS))
@pytest.mark.parametrize("update", [False, True], ids=["gate", "update-baseline"])
def test_bad_thresholds_file_exits_2_and_is_never_replaced(ws: Path, capsys, case: str, update: bool) -> None:
    content, needles = BAD_THRESHOLDS[case]
    (ws / "data" / "thresholds.json").write_bytes(content)
    before = _snapshot(ws / "data")
    code, _, err = _cli(capsys, *_run_args(*(["--update-baseline"] if update else [])))
    _assert_refused(code, err, "data/thresholds.json", *needles)
    assert _snapshot(ws / "data") == before


@pytest.mark.parametrize("kind", ["directory", "named pipe"])
def test_thresholds_path_that_is_not_a_file_exits_2(ws: Path, capsys, kind: str) -> None:
    path = ws / "data" / "thresholds.json"
    path.unlink()
    path.mkdir() if kind == "directory" else os.mkfifo(path)
    code, _, err = _cli(capsys, *_run_args())
    _assert_refused(
        code, err, "cannot read thresholds file data/thresholds.json", f"{kind}, not a regular file"
    )


def test_read_only_thresholds_file_is_refused_before_the_run(ws: Path, capsys) -> None:
    path = ws / "data" / "thresholds.json"
    path.chmod(0o444)
    before = _snapshot(ws)
    code, out, err = _cli(capsys, *_run_args("--update-baseline"))
    _assert_refused(code, err, "data/thresholds.json is read-only", "chmod u+w")
    assert out == "" and _snapshot(ws) == before  # no report either: refused before the run


def test_thresholds_under_an_unwritable_folder_is_refused_before_the_run(
    ws: Path, capsys, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = ws / "locked"
    folder.mkdir()
    real_access = os.access
    monkeypatch.setattr(os, "access", lambda p, mode: Path(p).resolve() != folder and real_access(p, mode))
    code, out, err = _cli(capsys, *_run_args("--update-baseline", "--thresholds", "locked/t.json"))
    _assert_refused(code, err, "the folder locked is not writable")
    assert out == "" and list(folder.iterdir()) == []


def test_update_keeps_the_file_mode_and_removes_stale_temp_files(ws: Path, capsys) -> None:
    path = ws / "data" / "thresholds.json"
    path.chmod(0o640)
    stale = ws / "data" / ".thresholds.json.k1ll3d.tmp"
    stale.write_text("{half a write")
    code, _, err = _cli(capsys, *_run_args("--update-baseline"))
    assert code == 0, err
    assert stat.S_IMODE(path.stat().st_mode) == 0o640
    assert sorted(p.name for p in (ws / "data").iterdir()) == ["scenarios", "thresholds.json"]
    assert set(load_thresholds(path) or {}) == {"deterministic@5", "real@5"}


def _update(args: tuple[str, str, dict[str, Any]]) -> None:
    path, mode, entry = args
    update_thresholds(path, mode, ModeEntry.model_validate(entry))


def test_concurrent_updates_of_different_entries_all_survive(tmp_path: Path) -> None:
    """Forty processes record forty (mode, top_k) entries in one file at once: the lock keeps
    every entry, each under its own `mode@top_k` key."""
    entry = json.loads((DATASETS / "thresholds.json").read_text())["deterministic@5"]
    path = tmp_path / "thresholds.json"
    jobs = [
        (str(path), mode, {**entry, "top_k": k}) for mode in ("deterministic", "real") for k in range(1, 21)
    ]
    with multiprocessing.get_context("fork").Pool(4) as pool:
        pool.map(_update, jobs)
    expected = [f"{mode}@{k}" for mode in ("deterministic", "real") for k in range(1, 21)]
    assert list(load_thresholds(path) or {}) == expected  # every entry, ordered by mode then top_k
    assert [p.name for p in tmp_path.iterdir()] == ["thresholds.json"]


# --- CLI usage: refused before anything runs -------------------------------------------------------

USAGE: dict[str, tuple[list[str], tuple[str, ...]]] = {
    "out-is-a-directory": (_run_args("--out", "reports"), ("reports is a directory", "reports/report.json")),
    "out-is-the-thresholds-file": (
        _run_args("--out", "data/thresholds.json"),
        ("is the thresholds file", "Write the report elsewhere"),
    ),
    "out-is-the-thresholds-file-spelled-otherwise": (
        _run_args("--out", "data/scenarios/../thresholds.json"),
        ("is the thresholds file",),
    ),
    "out-under-a-file": (
        _run_args("--out", "data/scenarios/tiny.yaml/report.json"),
        ("data/scenarios/tiny.yaml is a file",),
    ),
    "thresholds-under-a-file-with-update": (
        _run_args("--update-baseline", "--thresholds", "data/scenarios/tiny.yaml/t.json"),
        ("is a file",),
    ),
    "update-baseline-with-scenario": (
        _run_args("--update-baseline", "--scenario", "tiny"),
        ("drop --scenario",),
    ),
    "model-without-real": (_run_args("--model", "x"), ("--model needs --real",)),
    "cache-without-real": (_run_args("--cache", "c.sqlite3"), ("--cache/--no-cache need --real",)),
    "top-k-zero": (_run_args("--top-k", "0"), ("expected an integer from 1 to 1000",)),
    "min-relevance-above-one": (_run_args("--min-relevance", "2"), ("expected a number from 0 to 1",)),
    "unknown-scenario": (_run_args("--scenario", "tiyn"), ("unknown scenario 'tiyn'", "did you mean 'tiny'")),
    "missing-datasets": (
        ["run", "--datasets", "nowhere", "--no-gated"],
        ("no scenario dataset at nowhere", "directory not found"),
    ),
    "bench-beir-out-is-a-directory": (
        ["bench", "beir", str(BEIR_TINY), "--out", "reports"],
        ("reports is a directory",),
    ),
    "bench-locomo-out-is-a-directory": (
        ["bench", "locomo", "nowhere.json", "--out", "reports"],
        ("reports is a directory",),
    ),
    "report-out-dir-is-a-file": (
        [
            "report",
            "--notebook",
            str(NOTEBOOKS / "eval_report.ipynb"),
            "--out-dir",
            "data/thresholds.json",
        ],
        ("the output directory data/thresholds.json is a file", "give a directory"),
    ),
    "report-unknown-parameter": (
        ["report", "--notebook", str(NOTEBOOKS / "eval_report.ipynb"), "-p", "colour", "red"],
        ("does not declare parameter(s) 'colour'",),
    ),
    "report-unknown-notebook": (
        ["report", "--notebook", "nope"],
        (f"no notebook {NOTEBOOKS / 'nope.ipynb'}",),
    ),
}


@pytest.mark.parametrize("case", sorted(USAGE))
def test_usage_error_exits_2_before_anything_runs(ws: Path, capsys, monkeypatch, case: str) -> None:
    import papermill

    argv, needles = USAGE[case]
    monkeypatch.setattr(papermill, "execute_notebook", lambda *a, **k: pytest.fail("the notebook ran"))
    before = _snapshot(ws)
    code, out, err = _cli(capsys, *argv)
    _assert_refused(code, err, *needles)
    assert out == ""
    assert _snapshot(ws) == before


def test_read_only_report_file_is_refused_before_the_run(ws: Path, capsys) -> None:
    report = ws / "reports" / "report.json"
    report.write_text("old report")
    report.chmod(0o444)
    code, out, err = _cli(capsys, *_run_args())
    _assert_refused(code, err, "reports/report.json is read-only")
    assert out == "" and report.read_text() == "old report"


def test_out_in_an_unwritable_folder_is_refused_before_the_run(ws: Path, capsys, monkeypatch) -> None:
    real_access = os.access
    monkeypatch.setattr(os, "access", lambda p, mode: Path(p).name != "reports" and real_access(p, mode))
    code, out, err = _cli(capsys, *_run_args("--out", "reports/sub/r.json"))
    _assert_refused(code, err, "cannot write reports/sub/r.json: the folder reports is not writable")
    assert out == "" and list((ws / "reports").iterdir()) == []


def test_bench_beir_with_an_empty_corpus_says_so(ws: Path, capsys) -> None:
    data = ws / "beir"
    (data / "qrels").mkdir(parents=True)
    (data / "corpus.jsonl").write_text("")
    (data / "queries.jsonl").write_bytes((BEIR_TINY / "queries.jsonl").read_bytes())
    (data / "qrels" / "test.tsv").write_bytes((BEIR_TINY / "qrels" / "test.tsv").read_bytes())
    code, out, err = _cli(capsys, "bench", "beir", "beir", "--out", "reports/b.json")
    _assert_refused(code, err, "beir/corpus.jsonl: the corpus is empty")
    assert out == "" and not (ws / "reports" / "b.json").exists()


# --- outputs that fail while being written (full disk and other OSErrors) --------------------------

WRITE_FAILURES = {
    "disk-full": (errno.ENOSPC, "the disk is full; free some space"),
    "quota": (errno.EDQUOT, "the disk quota is exceeded"),
    "permission": (errno.EACCES, "permission denied; choose a writable path"),
    "read-only-fs": (errno.EROFS, "the file system is read-only"),
    "io-error": (errno.EIO, "Input/output error"),
}


def _fail_fsync_of(monkeypatch: pytest.MonkeyPatch, marker: str, code: int) -> None:
    """Make `os.fsync` raise OSError(code) for files whose name contains `marker`."""
    real_fsync = os.fsync

    def fsync(fd: int) -> None:
        if marker in os.readlink(f"/proc/self/fd/{fd}"):
            raise OSError(code, os.strerror(code))
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", fsync)


@pytest.mark.parametrize("case", sorted(WRITE_FAILURES))
def test_report_write_failure_exits_2_keeping_the_old_report(
    ws: Path, capsys, monkeypatch, case: str
) -> None:
    code_, reason = WRITE_FAILURES[case]
    report = ws / "reports" / "report.json"
    report.write_text("old report")
    _fail_fsync_of(monkeypatch, ".report.json.", code_)
    code, _, err = _cli(capsys, *_run_args())
    _assert_refused(code, err, "cannot write reports/report.json", reason, "the old file is unchanged")
    assert report.read_text() == "old report"
    assert [p.name for p in (ws / "reports").iterdir()] == ["report.json"]
    assert list((ws / "tmp").iterdir()) == []


@pytest.mark.parametrize("case", ["disk-full", "permission"])
def test_thresholds_write_failure_exits_2_and_loses_no_baseline(
    ws: Path, capsys, monkeypatch, case: str
) -> None:
    code_, reason = WRITE_FAILURES[case]
    before = _snapshot(ws / "data")
    _fail_fsync_of(monkeypatch, ".thresholds.json.", code_)
    code, _, err = _cli(capsys, *_run_args("--update-baseline"))
    _assert_refused(code, err, "cannot write data/thresholds.json", reason)
    assert _snapshot(ws / "data") == before  # no temp file, no lock file, the old baselines


# --- signals (subprocesses) ------------------------------------------------------------------------


def _big_dataset(folder: Path, thoughts: int = 4000) -> None:
    (folder / "scenarios").mkdir(parents=True)
    scenario = {
        "name": "big",
        "category": "explicit-fact",
        "distractors": False,
        "thoughts": [
            {"id": f"t{i}", "content": f"note {i} on topic {i % 97} of service {i % 13}"}
            for i in range(thoughts)
        ],
        "queries": [{"query": f"topic {i}", "relevant": [f"t{i}"]} for i in range(20)],
    }
    (folder / "scenarios" / "big.json").write_text(json.dumps(scenario))


def _child_env(tmp: Path) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(ROOT), "TMPDIR": str(tmp), "EVALKIT_FORBID_SKIPS": ""}


def _wait_for(pattern: str, folder: Path, process: subprocess.Popen[str]) -> None:
    deadline = time.monotonic() + 60
    while not list(folder.glob(pattern)):
        assert process.poll() is None, process.communicate()
        assert time.monotonic() < deadline, "the child never got that far"
        time.sleep(0.02)


@pytest.mark.parametrize(
    ("signum", "expected", "word"), [(signal.SIGINT, 130, "interrupted"), (signal.SIGTERM, 143, "terminated")]
)
def test_signal_during_a_run_removes_the_stores_and_writes_nothing(
    tmp_path: Path, signum, expected, word
) -> None:
    _big_dataset(tmp_path / "data")
    (tmp_path / "tmp").mkdir()
    argv = ["run", "--datasets", "data", "--thresholds", "none.json", "--out", "r.json", "--no-gated"]
    child = subprocess.Popen(
        [sys.executable, "-m", "evalkit", *argv], cwd=tmp_path, env=_child_env(tmp_path / "tmp"),
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    _wait_for("evalkit-*", tmp_path / "tmp", child)  # a scenario's store is open
    child.send_signal(signum)
    out, err = child.communicate(timeout=60)
    assert child.returncode == expected, err
    assert word in err and "Traceback" not in err and out == ""
    assert list((tmp_path / "tmp").iterdir()) == []
    assert not (tmp_path / "r.json").exists()


_IMPORT_INTERRUPT = """
import os, signal, sys
import evalkit.cli
assert "pandas" not in sys.modules, "the entry point must not import the heavy modules"
class Hook:
    def find_spec(self, name, path=None, target=None):
        if name == "pandas":
            os.kill(os.getpid(), signal.{signal})
        return None
sys.meta_path.insert(0, Hook())
sys.exit(evalkit.cli.main(["run", "--no-gated"]))
"""


@pytest.mark.parametrize(("name", "expected"), [("SIGINT", 130), ("SIGTERM", 143)])
def test_signal_while_the_cli_is_importing_prints_no_traceback(
    tmp_path: Path, name: str, expected: int
) -> None:
    done = subprocess.run(
        [sys.executable, "-c", _IMPORT_INTERRUPT.replace("{signal}", name)],
        cwd=tmp_path, env=_child_env(tmp_path), capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert done.returncode == expected, done.stderr
    assert done.stderr.startswith("evalkit: ") and "Traceback" not in done.stderr
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    ("signals", "expected", "message"),
    [
        ((signal.SIGINT, signal.SIGINT), 130, "evalkit: interrupted\n"),
        ((signal.SIGTERM,), 143, "evalkit: terminated (SIGTERM)\n"),
    ],
    ids=["two-ctrl-c", "sigterm"],
)
def test_signal_during_report_leaves_no_kernel_files_or_stores(
    tmp_path: Path, signals: tuple[int, ...], expected: int, message: str
) -> None:
    """As a terminal (or CI) does: signals to the process group while the notebook's run is seeding."""
    (tmp_path / "tmp").mkdir()
    child = subprocess.Popen(
        [sys.executable, "-m", "evalkit", "report", "--out-dir", str(tmp_path / "out"), "--no-progress"],
        cwd=ROOT, env=_child_env(tmp_path / "tmp"), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        start_new_session=True,
    )  # fmt: skip
    _wait_for("evalkit-notebook-*/tmp/evalkit-*", tmp_path / "tmp", child)
    for signum in signals:
        if child.poll() is None:
            os.killpg(child.pid, signum)
            time.sleep(0.3)
    out, err = child.communicate(timeout=60)
    assert child.returncode == expected, err
    assert err == message and out == ""  # no traceback, no [IPKernelApp] noise
    time.sleep(0.5)  # the kernel notices its parent left
    assert list((tmp_path / "tmp").iterdir()) == []
    assert not (tmp_path / "out").exists()


# --- the embedding cache ---------------------------------------------------------------------------


def _foreign_sqlite(path: Path) -> None:
    conn = connect(path)
    conn.execute("CREATE TABLE customers (name TEXT)")
    conn.execute("INSERT INTO customers VALUES ('ada')")
    conn.commit()
    conn.close()


CACHE_REFUSALS = {
    "directory": (lambda p: p.mkdir(), ("it is a directory, not a file", "embeddings.sqlite3")),
    "named-pipe": (lambda p: os.mkfifo(p), ("it is a named pipe, not a file",)),
    "another-application-database": (
        _foreign_sqlite,
        ("an SQLite database with the tables customers", "not an evalkit embedding cache"),
    ),
    "text-file": (
        lambda p: p.write_text("my notes\n" * 100),
        ("not a readable SQLite database", "left untouched"),
    ),
    "under-a-file": (
        lambda p: p.parent.write_text("x"),
        ("cannot create its directory",),
    ),
}


@pytest.mark.parametrize("case", sorted(CACHE_REFUSALS))
def test_cache_path_that_is_not_an_evalkit_cache_is_refused_untouched(tmp_path: Path, case: str) -> None:
    make, needles = CACHE_REFUSALS[case]
    path = tmp_path / ("blocker/cache.sqlite3" if case == "under-a-file" else "cache.sqlite3")
    make(path)
    before = _snapshot(tmp_path)
    with pytest.raises(EmbedderError) as excinfo:
        EmbeddingCache(path)
    message = str(excinfo.value)
    assert str(path) in message and "--no-cache" in message and ".." not in message
    for needle in needles:
        assert needle in message, message
    assert _snapshot(tmp_path) == before


@pytest.mark.parametrize("case", ["directory", "another-application-database", "text-file"])
def test_real_run_with_a_cache_path_that_is_not_a_cache_exits_2(ws: Path, capsys, case: str) -> None:
    make, needles = CACHE_REFUSALS[case]
    make(ws / "cache.sqlite3")
    before = _snapshot(ws)
    code, out, err = _cli(capsys, *_run_args("--real", "--cache", "cache.sqlite3"))
    _assert_refused(code, err, "cannot use the embedding cache cache.sqlite3", "--no-cache", *needles)
    assert out == "" and ".." not in err
    assert _snapshot(ws) == before


@pytest.mark.parametrize("damage", ["truncated", "another-schema-version"])
def test_damaged_evalkit_cache_is_moved_aside_with_a_warning(tmp_path: Path, damage: str) -> None:
    path = tmp_path / "cache.sqlite3"
    with EmbeddingCache(path) as cache:
        cache.put("id", "p", [f"text {i}" for i in range(3000)], [[0.5] * 8] * 3000)
    if damage == "truncated":
        with path.open("r+b") as handle:
            handle.truncate(path.stat().st_size // 2)
    else:
        conn = connect(path)
        conn.execute("PRAGMA user_version = 7")
        conn.commit()
        conn.close()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with EmbeddingCache(path) as cache:
            found = cache.get("id", "p", [f"text {i}" for i in range(3000)], 8)
    assert "damaged" in str(caught[0].message) and str(path) in str(caught[0].message)
    assert len(list(tmp_path.glob("cache.sqlite3.corrupt-*"))) == 1
    assert found.count(None) == 3000


def test_sqlite_open_failure_names_the_path_once_punctuated(tmp_path: Path) -> None:
    with pytest.raises(StoreError) as excinfo:
        connect(tmp_path / "missing" / "store.sqlite3")
    message = str(excinfo.value)
    assert "store.sqlite3" in message and "its folder exists and is writable" in message
    assert ".." not in message and "pip install" not in message


# --- library systems ---------------------------------------------------------------------------------


class _Poisoned:
    """The reference store, with one score of every hit replaced by `value`."""

    name = "poisoned"

    def __init__(self, score: str, value: float) -> None:
        self._inner = ReferenceSystem(HashingEmbedder())
        self._score, self._value = score, value

    def describe(self) -> dict[str, Any]:
        return {"score": self._score}

    @contextmanager
    def open(self, workdir: Path) -> Iterator[_PoisonedMemory]:
        with self._inner.open(workdir) as memory:
            yield _PoisonedMemory(memory, self._score, self._value)


class _PoisonedMemory:
    def __init__(self, inner: Any, score: str, value: float) -> None:
        self._inner, self._score, self._value = inner, score, value

    def add_thoughts(self, thoughts: Any) -> Any:
        return self._inner.add_thoughts(thoughts)

    def add_edges(self, edges: Any) -> Any:
        return self._inner.add_edges(edges)

    def search(self, query: str, **options: Any) -> SearchResponse:
        response = self._inner.search(query, **options)
        hits = tuple(dataclasses.replace(h, **{self._score: self._value}) for h in response.hits)
        return dataclasses.replace(response, hits=hits)


@pytest.mark.parametrize(
    ("score", "value"),
    [
        ("similarity", float("nan")),
        ("relevance", float("nan")),
        ("relevance", float("inf")),
        ("bm25_score", float("-inf")),
        ("rrf_score", float("nan")),
        ("distance", float("inf")),
        ("final_score", float("nan")),
    ],
)
def test_non_finite_score_from_a_system_names_system_scenario_and_query(
    ws: Path, score: str, value: float
) -> None:
    with pytest.raises(SystemOutputError) as excinfo:
        evalkit.run_eval(datasets="data", system=_Poisoned(score, value), thresholds=None)
    message = str(excinfo.value)
    for needle in (
        "system 'poisoned'",
        f"returned {score} {value}",
        "scenario 'tiny'",
        "query 1",
        "billing API",
    ):
        assert needle in message, message
    assert list((ws / "tmp").iterdir()) == []  # the scenario's store was removed


def test_finite_scores_from_a_system_save_and_load_back(ws: Path) -> None:
    run = evalkit.run_eval(
        datasets="data", system=_Poisoned("similarity", 0.25), thresholds=None, gated=False
    )
    run.save(ws / "reports" / "r.json")
    assert evalkit.load_run(ws / "reports" / "r.json").hits["similarity"].tolist() == [0.25] * 5
    assert list((ws / "tmp").iterdir()) == []
