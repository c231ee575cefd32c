"""The operations of the HTTP contract (delete and update, for a scenario's steps): the packs over
HTTP give the in-process results; a served memory without the method answers 501."""

from __future__ import annotations

import httpx
import pytest

from evalkit import ReferenceSystem
from evalkit.cli import main
from evalkit.systems.http.server import create_app
from tests.servers import serving
from tests.shared import DATASETS, comparable_file
from tests.systems_fixtures import LimitedSystem


@pytest.fixture(scope="module")
def reference_url():
    with serving(create_app(ReferenceSystem())) as url:
        yield url


@pytest.mark.parametrize("pack", ["deletion-ghosts", "update-propagation"])
def test_a_pack_with_steps_over_http_equals_the_in_process_run(reference_url, tmp_path, pack):
    common = ["--datasets", str(DATASETS / "packs" / pack), "--thresholds", "none", "--history", "none"]
    assert main(["run", *common, "--out", str(tmp_path / "local.json")]) == 0
    assert main(["run", *common, "--out", str(tmp_path / "http.json"), "--system", reference_url]) == 0
    assert comparable_file(tmp_path / "http.json") == comparable_file(tmp_path / "local.json")


def test_operations_on_unknown_ids_are_422_and_a_memory_without_them_is_501(reference_url):
    with httpx.Client(base_url=reference_url) as client:
        namespace = client.post("/namespaces").json()["namespace"]
        client.post(f"/namespaces/{namespace}/thoughts", json={"thoughts": [{"id": "a", "content": "x"}]})
        reply = client.post(f"/namespaces/{namespace}/thoughts/delete", json={"ids": ["nope"]})
        assert reply.status_code == 422 and "nope" in reply.json()["detail"]
        reply = client.post(f"/namespaces/{namespace}/thoughts/update", json={"id": "a"})
        assert reply.status_code == 422
        assert client.post(
            f"/namespaces/{namespace}/thoughts/update", json={"id": "a", "content": "y"}
        ).json() == {"updated": 1}
        assert client.post(f"/namespaces/{namespace}/thoughts/delete", json={"ids": ["a"]}).json() == {
            "deleted": 1
        }
    with serving(create_app(LimitedSystem())) as url, httpx.Client(base_url=url) as client:
        namespace = client.post("/namespaces").json()["namespace"]
        reply = client.post(f"/namespaces/{namespace}/thoughts/delete", json={"ids": ["a"]})
        assert reply.status_code == 501 and "deletion" in reply.json()["detail"]


@pytest.mark.parametrize("pack", ["deletion-ghosts", "update-propagation"])
def test_a_pack_with_steps_over_mcp_equals_the_in_process_run(tmp_path, pack):
    mapping = DATASETS / "mcp" / "reference.toml"
    common = ["--datasets", str(DATASETS / "packs" / pack), "--thresholds", "none", "--history", "none"]
    assert main(["run", *common, "--out", str(tmp_path / "local.json")]) == 0
    assert main(["run", *common, "--out", str(tmp_path / "mcp.json"), "--system", f"mcp:{mapping}"]) == 0
    assert comparable_file(tmp_path / "mcp.json") == comparable_file(tmp_path / "local.json")
