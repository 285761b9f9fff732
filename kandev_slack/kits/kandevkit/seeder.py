"""Seed bundles for one test and delete exactly those tasks afterwards."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Protocol, TypeVar

from .kandev_server import KandevServer, SeededBundle
from .permissions import Permissions, SeededPermission
from .specs import QuestionSpec

T = TypeVar("T")
#: How long a test's clean-up waits for one task's delete (see ``Seeder.cleanup``).
DELETE_TIMEOUT_S = 10.0


class Actor(Protocol):
    """Someone with a personal access token (a ``Person``)."""

    @property
    def token(self) -> str: ...


class Seeder:
    """``seed(questions, context, title)`` → ``SeededBundle``; ``seed.many(n)`` → a list;
    ``seed.permission(requests)`` → ``SeededPermission``; ``seed.by(person)`` → a seeder
    acting with that person's token (e.g. in their own workspace, which the harness cannot
    see), whose tasks this one's ``cleanup`` deletes too.

    ``token``: the PAT every call is made with (default: the harness's)."""

    def __init__(
        self, server: KandevServer, token: str | None = None, *, _tasks: list[str] | None = None
    ) -> None:
        self.server = server
        self.token = token
        self.task_ids: list[str] = _tasks if _tasks is not None else []

    def by(self, actor: Actor | str) -> Seeder:
        """A seeder acting as ``actor`` (a ``Person``, or a PAT), sharing this one's tasks."""
        token = actor if isinstance(actor, str) else actor.token
        if not token:
            raise ValueError("Seeder.by needs a person with a personal access token")
        return Seeder(self.server, token, _tasks=self.task_ids)

    def __call__(
        self,
        questions: Sequence[QuestionSpec] | None = None,
        context: str = "",
        title: str | None = None,
        **options: Any,
    ) -> SeededBundle:
        options.setdefault("token", self.token)
        return self._tracked(lambda: self.server.seed_bundle(questions, context, title, **options))

    def many(
        self,
        count: int,
        questions: Sequence[QuestionSpec] | None = None,
        context: str = "",
        **options: Any,
    ) -> list[SeededBundle]:
        options.setdefault("token", self.token)
        return self._tracked(lambda: self.server.seed_many(count, questions, context, **options))

    def permission(
        self, requests: Sequence[dict[str, Any]], title: str = "Harness: permission", **options: Any
    ) -> SeededPermission:
        """A task whose agent sends ``requests`` (``mock_agent.permission_spec``); its first
        request once listed (see ``Permissions.seed``)."""
        permissions = Permissions(self.server, self.token)
        return self._tracked(lambda: permissions.seed(requests, title, **options))

    def supersede(self, bundle: SeededBundle, text: str = "new instructions") -> None:
        """Start a new turn in the bundle's session, as a person typing new instructions in
        Kandev's web UI does: the open turn is cancelled (the stand-in agent keeps waiting in
        its tool call) and a user message starts the next one, which supersedes the bundle
        (it leaves the active list; its messages keep ``status: pending``)."""
        permissions = Permissions(self.server, self.token)
        permissions.cancel_turn(bundle.session_id)
        permissions.ws_request(
            "message.add",
            {"task_id": bundle.task_id, "session_id": bundle.session_id, "content": text},
        )

    def cleanup(self) -> None:
        """Delete every task this seeder created (a stopped server cleans up on ``close``)."""
        if not self.server.running:
            return
        self.server.delete_tasks(self.task_ids, timeout=DELETE_TIMEOUT_S)
        self.task_ids.clear()

    def _tracked(self, seed: Callable[[], T]) -> T:
        before = set(self.server.seeded_task_ids())
        try:
            return seed()
        finally:
            created = [t for t in self.server.seeded_task_ids() if t not in before]
            self.task_ids.extend(created)
