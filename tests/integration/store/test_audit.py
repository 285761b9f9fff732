"""The audit log: append-only, timestamped, newest first, per bundle."""

from __future__ import annotations

from datetime import UTC

from kandev_slack.store import AuditEntry, Database
from tests.kit.fakes import FakeClock


def test_entries_are_appended_with_their_time(store: Database, clock: FakeClock) -> None:
    first = store.audit_log.audit("p1", "U1", "answer", "button", "won", detail="o1")
    first_at = clock.now
    clock.advance(1)
    store.audit_log.audit("p2", "U2", "reject", "modal", "refused", detail="not an answerer")
    clock.advance(1)
    store.audit_log.audit(None, "U3", "answer", "button", "invalid", detail="malformed payload")
    clock.advance(1)
    last = store.audit_log.audit("p1", "U4", "answer", "modal", "lost")
    assert last > first

    entries = store.audit_log.audit_entries()
    assert [e.user for e in entries] == ["U4", "U3", "U2", "U1"]
    assert entries[-1] == AuditEntry(
        id=first,
        at=first_at,
        pending_id="p1",
        user="U1",
        action="answer",
        source="button",
        result="won",
        detail="o1",
    )
    assert entries[0].detail == ""
    assert entries[1].pending_id is None
    assert all(e.at.tzinfo is UTC for e in entries)
    assert [e.result for e in store.audit_log.audit_entries("p1")] == ["lost", "won"]
    assert [e.user for e in store.audit_log.audit_entries(limit=2)] == ["U4", "U3"]
    assert store.audit_log.audit_entries("unknown") == []


def test_the_same_attempt_twice_is_two_entries(store: Database) -> None:
    store.audit_log.audit("p1", "U1", "answer", "button", "duplicate")
    store.audit_log.audit("p1", "U1", "answer", "button", "duplicate")
    assert len(store.audit_log.audit_entries("p1")) == 2


def test_an_entry_names_the_kandev_account_a_person_acted_with(store: Database) -> None:
    store.audit_log.audit("p1", "U1", "answer", "button", "won", kandev_user="u-ana")
    store.audit_log.audit("p1", "U2", "answer", "button", "lost")  # the bot's account
    store.audit_log.audit("p1", None, "answered", "kandev", "synced", kandev_user="u-ben")
    store.audit_log.audit("p1", "U3", "answer", "button", "won", kandev_user="")  # none

    entries = store.audit_log.audit_entries("p1")
    assert [(e.user, e.kandev_user) for e in entries] == [
        ("U3", None),
        ("bot", "u-ben"),
        ("U2", None),
        ("U1", "u-ana"),
    ]
