"""A card's state change and the outbox row of its edit are one transaction, on both stores:
a crash between the two (here: the database refusing the edit's row, as a process killed at
that point would leave it) leaves neither, so the card is ended again after restart and its
message edited; never a card resolved in the store whose Slack message keeps its buttons."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from sqlalchemy import text
from sqlalchemy.exc import SQLAlchemyError

from kandev_slack.config.routing import Routing
from kandev_slack.core.domain import CardState
from kandev_slack.core.outbox import UPDATE
from kandev_slack.kandev import models as reply
from kandev_slack.ops.health import Health
from kandev_slack.store import Database
from kandev_slack.usecases.answerers import Answerers
from kandev_slack.usecases.answering.answers import AnswerService
from kandev_slack.usecases.answering.verdicts import Attempt
from kandev_slack.usecases.identity import Identities
from kandev_slack.usecases.intake.ended import end_synced
from kandev_slack.usecases.leases import InFlight
from kandev_slack.usecases.outbox.publisher import Publisher
from kandev_slack.wiring import build_publisher
from tests.kit.factories import ALICE_ID, KANDEV_URL, MONGO, make_outcome, record_card
from tests.kit.fakes import FakeKandev, FakeSlackGateway

CRASH = "crashed before the edit was queued"


def crash_before_the_edit(store: Database) -> Callable[[], None]:
    """From now on the database refuses an edit's outbox row (as if the process died right
    before it was written); returns the way to undo it (the restart)."""
    with store.sql.engine.begin() as conn:
        if conn.dialect.name == "postgresql":
            conn.execute(
                text(
                    "CREATE FUNCTION crash_before_edit() RETURNS trigger AS $$ "
                    f"BEGIN RAISE EXCEPTION '{CRASH}'; END $$ LANGUAGE plpgsql"
                )
            )
            conn.execute(
                text(
                    "CREATE TRIGGER crash_before_edit BEFORE INSERT ON outbox FOR EACH ROW "
                    f"WHEN (NEW.kind = '{UPDATE}') EXECUTE FUNCTION crash_before_edit()"
                )
            )
        else:
            conn.execute(
                text(
                    f"CREATE TRIGGER crash_before_edit BEFORE INSERT ON outbox "
                    f"WHEN NEW.kind = '{UPDATE}' BEGIN SELECT RAISE(ABORT, '{CRASH}'); END"
                )
            )

    def restart() -> None:
        with store.sql.engine.begin() as conn:
            conn.execute(text("DROP TRIGGER crash_before_edit" + _on_outbox(conn.dialect.name)))

    return restart


def _on_outbox(dialect: str) -> str:
    return " ON outbox" if dialect == "postgresql" else ""


def publisher_of(store: Database) -> Publisher:
    return build_publisher(
        store.outbox,
        store.cards,
        store.audit_log,
        FakeSlackGateway(),
        kandev_url=KANDEV_URL,
        health=Health(),
        post_spacing_s=0,
        snoozes=store.snoozes,
    )


def edits_of(store: Database, pending_id: str) -> list[str]:
    with store.sql.engine.connect() as conn:
        rows = conn.execute(
            text("SELECT dedupe_key FROM outbox WHERE kind = :kind"), {"kind": UPDATE}
        ).all()
    return [row[0] for row in rows if pending_id in row[0]]


def posted_card(store: Database, pending_id: str):
    assert record_card(store, pending_id)
    assert store.cards.mark_posted(pending_id, "C1", "1700000000.000100")
    card = store.cards.get(pending_id)
    assert card is not None
    return card


def test_a_card_ended_by_sync_and_its_edit_are_both_there_or_neither(
    store: Database, open_store: Callable[..., Database]
) -> None:
    card = posted_card(store, "p1")
    publisher = publisher_of(store)
    restart = crash_before_the_edit(store)

    with pytest.raises(SQLAlchemyError, match=CRASH):
        end_synced(store.cards, store.audit_log, publisher, card, make_outcome(CardState.ENDED))

    restart()
    after = open_store()  # what a new process finds
    kept = after.cards.get("p1")
    assert kept is not None and kept.state is CardState.PENDING, "ended, with no edit queued"
    assert edits_of(after, "p1") == []
    # Sync looks again after the restart: the card ends and its edit is queued, together.
    assert end_synced(
        after.cards, after.audit_log, publisher_of(after), kept, make_outcome(CardState.ENDED)
    )
    ended = after.cards.get("p1")
    assert ended is not None and ended.state is CardState.ENDED
    assert len(edits_of(after, "p1")) == 1


def test_a_card_won_in_slack_and_its_edit_are_both_there_or_neither(
    store: Database, open_store: Callable[..., Database]
) -> None:
    posted_card(store, "p2")
    kandev = FakeKandev(KANDEV_URL)
    identities = Identities(
        bot=kandev,
        links=store.links,
        answerers=Answerers(Routing(default_channel="C0TEST"), FakeSlackGateway()),
        client_for=lambda token: FakeKandev(KANDEV_URL),
    )
    answers = AnswerService(
        kandev,
        store.cards,
        store.submissions,
        store.audit_log,
        publisher_of(store),
        InFlight(),
        identities,
    )
    attempt = Attempt(pending_id="p2", user_id=ALICE_ID, action="answer", source="slack:button")
    won = reply.Won(resolution=reply.Resolution(status="answered", answers=[MONGO]))
    restart = crash_before_the_edit(store)

    with pytest.raises(SQLAlchemyError, match=CRASH):
        answers.apply_outcome(attempt, won, attempt.key())

    restart()
    after = open_store()
    kept = after.cards.get("p2")
    assert kept is not None and kept.state is CardState.PENDING, "answered, with no edit queued"
    assert edits_of(after, "p2") == []


def test_the_unit_of_work_spans_every_repository_and_nests(
    store: Database, open_store: Callable[..., Database]
) -> None:
    other = open_store()  # another process' view: sees the unit's writes only once committed
    assert record_card(store, "p3")
    with store.cards.atomic():
        assert store.cards.transition("p3", make_outcome(CardState.ENDED))
        with store.outbox.atomic():  # nested: the same transaction
            assert store.outbox.outbox_put(UPDATE, "edit-p3", {"pending_id": "p3"}) is not None
        seen = store.cards.get("p3")
        assert seen is not None and seen.state is CardState.ENDED  # its own writes
    kept = other.cards.get("p3")
    assert kept is not None and kept.state is CardState.ENDED
    assert edits_of(other, "p3") == ["edit-p3"]

    assert record_card(store, "p4")
    with pytest.raises(RuntimeError), store.cards.atomic():
        assert store.cards.transition("p4", make_outcome(CardState.ENDED))
        store.outbox.outbox_put(UPDATE, "edit-p4", {"pending_id": "p4"})
        raise RuntimeError("the process dies here")
    left = other.cards.get("p4")
    assert left is not None and left.state is CardState.PENDING
    assert edits_of(other, "p4") == []
