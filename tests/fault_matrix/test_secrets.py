"""Secrets: a bearer token that cannot travel in a header is refused without being shown, and
credentials in a system URL are used but never printed or recorded.

Part of the fault matrix (see tests/fault_matrix/common.py for what each case asserts)."""

from __future__ import annotations

import pytest

from evalkit import ReferenceSystem
from evalkit.systems.http.server import create_app
from evalkit.systems.secrets import redact_url
from tests.fault_matrix.common import assert_refused, cli, run_args
from tests.servers import serving

SECRET = "hunter2-secret"


@pytest.fixture(scope="module")
def url():
    with serving(create_app(ReferenceSystem())) as base:
        yield base


@pytest.mark.parametrize(
    ("token", "kind"),
    [
        (f"{SECRET}\n", "a newline at its end"),
        (f"{SECRET} ", "a space at its end"),
        (f"{SECRET[:3]}\u00e9{SECRET[3:]}", "a non-ASCII character at position 4 of 15"),
        (f"{SECRET[:3]}\x01{SECRET[3:]}", "a control character at position 4"),
    ],
)
def test_a_client_token_that_cannot_travel_is_refused_unseen(ws, capsys, monkeypatch, url, token, kind):
    monkeypatch.setenv("EVALKIT_SYSTEM_TOKEN", token)
    code, out, err = cli(capsys, *run_args("--system", url))
    assert_refused(code, err, f"$EVALKIT_SYSTEM_TOKEN holds {kind}", "the token is not shown")
    assert SECRET[3:] not in err + out


def test_url_credentials_are_never_printed_or_recorded(ws, capsys, url):
    with_credentials = url.replace("http://", f"http://admin:{SECRET}@")
    code, out, err = cli(
        capsys,
        *run_args("--system", with_credentials, "--out", "reports/r.json", "--thresholds", "none.json"),
    )
    assert code == 0, err
    report = (ws / "reports" / "r.json").read_text()
    assert SECRET not in report + out + err and "admin" not in report
    assert f'"system": "{url.replace("http://", "http://***@")}"' in report
    assert report.count("***@") >= 2  # the run's configuration, the adapter's describe() (the system
    # itself is named by its /info name)


def test_an_error_of_a_url_with_credentials_does_not_show_them(ws, capsys):
    code, out, err = cli(capsys, *run_args("--system", f"http://admin:{SECRET}@127.0.0.1:9"))
    assert_refused(
        code, err, "system 'http://***@127.0.0.1:9': connecting: GET /info: cannot reach the server"
    )
    assert SECRET not in err + out


@pytest.mark.parametrize(
    ("given", "shown"),
    [
        ("http://u:p@h:1/x?q=1", "http://***@h:1/x?q=1"),
        ("http://u@h", "http://***@h"),
        ("https://h:8/p", "https://h:8/p"),
        ("reference", "reference"),
        ("http://[::1", "http://[::1"),
    ],
)
def test_redact_url(given, shown):
    assert redact_url(given) == shown
