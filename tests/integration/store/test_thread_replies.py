"""A kept thread reply follows its message: an edit changes what Send sends while it is
offered, a deletion withdraws it; neither touches a reply already sent or cancelled."""

from __future__ import annotations

from kandev_slack.store import Database
from kandev_slack.store.cards.thread_replies import DELETED, OFFERED, SENT, ThreadReply


def _offered(store: Database, ts: str = "100.2") -> ThreadReply:
    reply = ThreadReply("", f"C1:{ts}", "p1", "C1", "100.1", "U1", "db", "q1_opt1", "PostgreSQL")
    kept, new = store.thread_replies.offer_reply(reply)
    assert new
    return kept


def test_an_offered_reply_is_revised_then_withdrawn(store: Database) -> None:
    replies = store.thread_replies
    kept = _offered(store)
    assert replies.reply_of_message("C1:100.2") == kept
    assert replies.reply_of_message("C1:999.9") is None
    assert replies.revise_reply(kept.id, text="use the cluster", option_id=None)
    now = replies.thread_reply(kept.id)
    assert now is not None and (now.text, now.option_id, now.state) == (
        "use the cluster",
        None,
        OFFERED,
    )
    assert replies.withdraw_reply(kept.id)
    assert not replies.withdraw_reply(kept.id)
    gone = replies.thread_reply(kept.id)
    assert gone is not None and gone.state == DELETED
    assert not replies.settle_reply(kept.id, "U1", SENT)  # Send sends nothing
    assert not replies.revise_reply(kept.id, text="2", option_id=None)


def test_a_sent_reply_is_neither_revised_nor_withdrawn(store: Database) -> None:
    replies = store.thread_replies
    kept = _offered(store)
    assert replies.settle_reply(kept.id, "U1", SENT)
    assert not replies.revise_reply(kept.id, text="x", option_id=None)
    assert not replies.withdraw_reply(kept.id)
    after = replies.thread_reply(kept.id)
    assert after is not None and (after.text, after.state) == ("PostgreSQL", SENT)
