"""Helpers shared by the reliability tests of guarantees 3, 6, 7 and 8 (fake Slack + real Kandev
+ the bot as a process): what reached Slack, what reached Kandev, what the bot audited."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from kandev_slack.kits.fakeslack import CallRecord, FakeSlack
from kandev_slack.store import Database
from kandev_slack.store.records import AuditEntry
from tests.e2e.helpers import card_posts
from tests.kit.harness import KandevServer, SeededBundle


def calls_for(fake: FakeSlack, method: str, pending_id: str | None = None) -> list[CallRecord]:
    """Every call of ``method`` (successful or not); for chat.postMessage optionally only the
    ones that carried ``pending_id`` in their metadata."""
    calls = fake.calls(method)
    if pending_id is None:
        return calls
    return [
        c
        for c in calls
        if ((c.params.get("metadata") or {}).get("event_payload") or {}).get("pending_id")
        == pending_id
    ]


def wait_until(predicate: Callable[[], Any], timeout: float, what: str) -> Any:
    """``predicate()``'s first truthy value, looked at every 0.1 s for up to ``timeout``."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.1)
    raise AssertionError(f"timed out waiting for {what}")


def rate_limited(calls: list[CallRecord]) -> list[CallRecord]:
    return [c for c in calls if c.status == 429]


def duplicate_cards(fake: FakeSlack, bundles: list[SeededBundle]) -> int:
    """How many cards more than one per bundle were posted."""
    return sum(max(len(card_posts(fake, b.pending_id)) - 1, 0) for b in bundles)


def missing_cards(fake: FakeSlack, bundles: list[SeededBundle]) -> int:
    return sum(1 for b in bundles if not card_posts(fake, b.pending_id))


def still_pending(server: KandevServer, bundle: SeededBundle) -> bool:
    """Kandev still waits for an answer to ``bundle`` (nothing reached it)."""
    return server.final_status(bundle.task_id, bundle.pending_id)["status"] == "pending"


def audit_of(db_path: Path, pending_id: str | None = None) -> list[AuditEntry]:
    """The bot's audit log (oldest first), read from its SQLite file after (or during) a run."""
    with Database(f"sqlite:///{db_path}") as store:
        return list(reversed(store.audit_log.audit_entries(pending_id, limit=10_000)))


def slack_writes(fake: FakeSlack, after: int) -> list[CallRecord]:
    """Calls that change something in Slack (messages, ephemerals, views) from the call index
    ``after`` (a ``fake.mark()``) on."""
    writes = (
        "chat.postMessage",
        "chat.update",
        "chat.postEphemeral",
        "views.open",
        "views.update",
        "views.push",
        "views.publish",
    )
    return [c for c in fake.calls() if c.index >= after and c.method in writes]
