"""The operations of evalkit's HTTP contract that a scenario's steps call (capabilities `deletion`
and `update`): their wire shapes, the server's routes and the client's calls, in one place.

- `POST /namespaces/{ns}/thoughts/delete` (DeleteIn: `ids`) → DeletedOut: the thoughts are
  forgotten in every index; 422 with the store's reason for an id that is not stored.
- `POST /namespaces/{ns}/thoughts/update` (UpdateIn: `id`, `content`, `status`) → UpdatedOut: the
  thought's new content is re-embedded and re-indexed, or its status set; 422 for an id that is
  not stored.
Both are 501 when the served system does not declare the capability (as its `/info` says) or its
memory has no such method. POST rather than DELETE/PATCH so that ids travel in the body, never in a
path (an id may hold any character).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from pydantic import Field, model_validator

from evalkit.records import Status
from evalkit.systems.http.wire import MAX_BATCH, WireModel

if TYPE_CHECKING:  # fastapi is the `http` extra: the MCP server imports the shapes without it
    from fastapi import FastAPI
    from fastapi.responses import JSONResponse

    from evalkit.systems.http.client import HttpSystem
    from evalkit.systems.namespaces import Namespaces


class DeleteIn(WireModel):
    """The ids to forget (each stored, at most once)."""

    ids: list[str] = Field(
        min_length=1, max_length=MAX_BATCH,
        description="ids of stored thoughts to forget in every index, each once (422 for one not stored)",
    )  # fmt: skip


class DeletedOut(WireModel):
    deleted: int = Field(description="how many thoughts were deleted")


class UpdateIn(WireModel):
    """Thought `id`'s new `content` and/or `status` (None = unchanged; at least one)."""

    id: str = Field(min_length=1, description="id of the stored thought to change (422 when not stored)")
    content: str | None = Field(
        default=None, description="its new content, re-embedded and re-indexed; null = unchanged"
    )
    status: Status | None = Field(default=None, description="its new status; null = unchanged")

    @model_validator(mode="after")
    def _changes_something(self) -> UpdateIn:
        if self.content is None and self.status is None:
            raise ValueError("an update changes `content`, `status` or both")
        return self


class UpdatedOut(WireModel):
    updated: int = Field(description="1: the thought was changed")


def add_operation_routes(
    app: FastAPI,
    namespaces: Namespaces,
    capabilities: frozenset[str],
    error: Callable[[int, str], JSONResponse],
) -> None:
    """Add the delete and update routes to `app` (the server of `evalkit.systems.http.server`)
    for a served system declaring `capabilities`; `error` builds its `{detail}` replies."""

    async def run(call: Callable[[], Any]) -> Any:
        return await namespaces.run(call)

    @app.post("/namespaces/{namespace}/thoughts/delete", response_model=DeletedOut)
    async def delete_thoughts(namespace: str, body: DeleteIn) -> Any:
        if "deletion" not in capabilities:
            return error(501, "this system's memory cannot delete thoughts (capability 'deletion')")
        memory = namespaces.get(namespace)
        await run(lambda: memory.delete_thoughts(list(body.ids)))
        return DeletedOut(deleted=len(body.ids))

    @app.post("/namespaces/{namespace}/thoughts/update", response_model=UpdatedOut)
    async def update_thought(namespace: str, body: UpdateIn) -> Any:
        if "update" not in capabilities:
            return error(501, "this system's memory cannot update thoughts (capability 'update')")
        memory = namespaces.get(namespace)
        await run(lambda: memory.update_thought(body.id, content=body.content, status=body.status))
        return UpdatedOut(updated=1)


def delete_thoughts(system: HttpSystem, path: str, ids: list[str]) -> None:
    """The client's call of the delete route on the namespace at `path`."""
    system.call("POST", f"{path}/thoughts/delete", DeletedOut, DeleteIn(ids=ids))


def update_thought(system: HttpSystem, path: str, id: str, content: str | None, status: str | None) -> None:
    """The client's call of the update route on the namespace at `path`."""
    body = UpdateIn(id=id, content=content, status=status)  # type: ignore[arg-type]
    system.call("POST", f"{path}/thoughts/update", UpdatedOut, body)
