"""The Database: one repository per aggregate over one shared database."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta

import pytest

from kandev_slack.store import Database
from kandev_slack.store.cards.followups import OutboxRow
from tests.kit.factories import answered, record_card


@pytest.fixture
def db(db_url: str) -> Iterator[Database]:
    with Database(db_url) as opened:
        yield opened


def test_the_repositories_share_one_database(db: Database) -> None:
    record_card(db, "p1")
    db.cards.mark_posted("p1", "C1", "1.1")
    # a follow-up step enqueues its write in the outbox it shares with the publisher
    assert db.followups.advance_reminder("p1", 1, [OutboxRow("reply", "reply:r1", {}, "C1")])
    assert db.outbox.outbox_pending_count() == 1
    assert db.stats().pending_cards == 1
    db.cards.transition("p1", answered("U1"))
    db.audit_log.audit("p1", "U1", "answer", "button", "won")
    assert db.retention.purge(timedelta(0)).cards == 1
    assert db.cards.get("p1") is None
    assert db.audit_log.audit_entries("p1") == []


def test_the_retention_period_is_the_databases(db_url: str) -> None:
    with Database(db_url, retention_days=3) as db:
        assert db.retention.keep == timedelta(days=3)


def test_only_a_write_that_changed_rows_counts_as_a_change(db: Database) -> None:
    start = db.sql.writes()
    assert db.outbox.outbox_take(None, 10, "w1") == []  # a write transaction, nothing changed
    assert db.outbox.outbox_renew("w1", 10.0) == 0
    assert db.cards.get("p1") is None  # a read
    assert db.sql.writes() == start
    assert record_card(db, "p1")
    assert db.sql.writes() == start + 1
    with db.sql.unit():  # one transaction: one change, however many statements changed rows
        db.cards.mark_posted("p1", "C1", "1.1")
        db.audit_log.audit("p1", "U1", "post", "bot", "ok")
    assert db.sql.writes() == start + 2
    with pytest.raises(RuntimeError), db.sql.unit():  # rolled back: nothing changed
        db.audit_log.audit("p1", "U1", "answer", "button", "won")
        raise RuntimeError("boom")
    assert db.sql.writes() == start + 2
