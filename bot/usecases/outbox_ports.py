"""What the outbox's publisher and its writes call on the repositories: one narrow port per
repository (cards, outbox; the audit log's is :class:`bot.usecases.audit.Audit`), and what the
writes call back on the publisher (:class:`Requeue`)."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from datetime import datetime
from typing import Any, Protocol

from bot.core.domain import Card
from bot.store.copies import CardMessage
from bot.store.records import OutboxItem
from bot.usecases.groups import GroupCards, GroupEdit
from bot.usecases.pacing import PaceOutbox


class WriteCards(GroupCards, Protocol):
    """What the writes call on the cards and their other messages (bot.store.CardsRepository):
    a card, its messages, and its group of identical questions."""

    def mark_posted(self, pending_id: str, channel: str, ts: str) -> bool: ...

    def message_get(self, key: str) -> CardMessage | None: ...

    def message_opened(self, key: str, channel: str) -> bool: ...

    def message_posted(self, key: str, channel: str, ts: str) -> bool: ...


class WriteOutbox(Protocol):
    """What the writes call on the outbox (bot.store.OutboxRepository)."""

    def outbox_rearm(self, key: str) -> bool: ...


class PublisherCards(WriteCards, Protocol):
    """What the publisher calls on the cards (bot.store.CardsRepository), besides its writes'."""

    def messages_of(self, pending_id: str) -> list[CardMessage]: ...


class PublisherOutbox(WriteOutbox, PaceOutbox, Protocol):
    """What the publisher calls on the outbox and the per-channel pace
    (bot.store.OutboxRepository), besides its writes'."""

    def outbox_put(
        self,
        kind: str,
        key: str | None,
        payload: dict[str, Any],
        channel: str | None = None,
        not_before: datetime | None = None,
    ) -> int | None: ...

    def outbox_take(
        self,
        now: datetime | None,
        limit: int,
        worker_id: str,
        lease_s: float = 30.0,
        kinds: Collection[str] | None = None,
    ) -> list[OutboxItem]: ...

    def outbox_next_due_s(self) -> float | None: ...

    def outbox_done(self, item_id: int, *, worker_id: str | None = None) -> bool: ...

    def outbox_fail(self, item_id: int, error: str, *, worker_id: str | None = None) -> bool: ...

    def outbox_retry(
        self,
        item_id: int,
        not_before: datetime | float,
        error: str,
        *,
        worker_id: str | None = None,
        slot: bool = False,
    ) -> bool: ...

    def outbox_note(self, item_id: int, note: str, *, worker_id: str | None = None) -> bool: ...

    def outbox_failed_count(self, within_s: float | None = None) -> int: ...


class Requeue(Protocol):
    """The publisher, for the edits a write finds it must make after all."""

    def enqueue_update(self, card: Card, *, reason: str = "") -> None: ...

    def enqueue_copy_update(self, card: Card, copy: CardMessage, reason: str = "") -> None: ...

    def enqueue_group(self, edits: Sequence[GroupEdit]) -> None: ...

    def changed(self) -> None: ...
