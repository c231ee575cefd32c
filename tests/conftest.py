"""Shared test configuration.

With EVALKIT_FORBID_SKIPS=1 (set by .ci/run, where the shared data and the real model are
present) a skipped test fails the session: a check that silently did not run is a defect.

The suite runs outside any CI context (`evalkit.ci`), whatever the environment it was started in:
CI itself runs it with `CI=true`, which would switch on the baseline requirement and the no-project
refusal in every run. `pytest_configure` removes `CI` before any test, fixture, xdist worker or
notebook kernel starts (child processes inherit the cleared environment); the tests of that
behaviour set it themselves (`monkeypatch.setenv`, or a child's `env`).

Ctrl-C means in the tests what it means at a terminal: a runner that starts the suite with
SIGINT ignored (a background job of a non-interactive shell: `cmd &` in a script) would pass the
ignored signal on to every server and worker process a test interrupts, which then never sees
its Ctrl-C. `pytest_configure` installs Python's own SIGINT handler, so each child process starts
with the default disposition (exec resets a handled signal, not an ignored one).

The `yaml_loader` fixture runs a test once per strict YAML loader (evalkit.scenarios.parsing).
"""

from __future__ import annotations

import os
import signal

import pytest

from evalkit.ci import CI_VARIABLE
from evalkit.scenarios import parsing

_skipped: list[str] = []


def pytest_configure(config: pytest.Config) -> None:
    os.environ.pop(CI_VARIABLE, None)
    signal.signal(signal.SIGINT, signal.default_int_handler)


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    if report.skipped and not hasattr(report, "wasxfail"):
        _skipped.append(report.nodeid)


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    if os.environ.get("EVALKIT_FORBID_SKIPS") == "1" and _skipped:
        names = "\n  ".join(_skipped)
        print(f"\nEVALKIT_FORBID_SKIPS=1 but {len(_skipped)} test(s) were skipped:\n  {names}")
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


@pytest.fixture(params=parsing.YAML_LOADERS, ids=lambda loader: loader.__name__)
def yaml_loader(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> type:
    """Each strict YAML loader this PyYAML can build, as the one scenario files are read with, so
    that a test using this fixture pins the same behaviour for the libyaml and the Python loader."""
    monkeypatch.setattr(parsing, "YAML_LOADER", request.param)
    return request.param
