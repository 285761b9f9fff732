"""Exactly one card per bundle when Slack carried a post out but the connection dropped before
its reply: no layer re-sends chat.postMessage blindly; the bot looks the card up in the channel
(by the metadata naming its bundle) and records it. The bot runs as a process against the real
Kandev and the fake Slack."""

from __future__ import annotations

import pytest

from kandev_slack.kits.fakeslack import ALICE
from kandev_slack.slack_api.gateway import Message, SlackError, SlackGateway
from kandev_slack.slack_api.web_client import make_web_client
from kandev_slack.store import Database
from tests.e2e.helpers import (
    POLL_S,
    card_posts,
    db_question,
    start_bot,
    wait_card,
    wait_outcome,
)
from tests.e2e.reliability.support import calls_for
from tests.kit.harness import CHANNEL


@pytest.mark.fault("Slack accepted a post, then the connection dropped", guarantee=7)
def test_a_post_whose_reply_was_lost_is_looked_up_not_sent_again(
    bot_factory,
    seed,
    fake_slack,
    slack_driver,
    reliability,
):
    bot = start_bot(bot_factory)
    fake_slack.faults.accept_then_drop("chat.postMessage", times=1)
    bundle = seed([db_question()], title="Posted, reply lost")

    card = wait_card(fake_slack, bundle.pending_id, timeout=POLL_S + 10)
    # The bot cannot know the post landed: it looks in the channel and adopts the card.
    db = bot.env["DATABASE_URL"]

    def recorded() -> str | None:
        with Database(db) as store:
            stored = store.cards.get(bundle.pending_id)
        return stored.ts if stored is not None else None

    assert fake_slack.wait_for(recorded, 15, "the card recorded as posted") == card.ts
    assert calls_for(fake_slack, "conversations.history"), "the post's fate was looked up"
    # The adopted card works: a click answers and edits it.
    ack = slack_driver(bot.events_url).click(CHANNEL, card.ts, text="MongoDB", user=ALICE)
    assert ack.status == 200
    wait_outcome(fake_slack, card.ts, f"✅ Answered by <@{ALICE.id}> in Slack", timeout=15)
    fake_slack.settle(quiet=1.5, timeout=20)

    posts = card_posts(fake_slack, bundle.pending_id)
    reliability.record(
        "Slack accepted a post, then the connection dropped",
        guarantee=7,
        survived=len(posts) == 1,
        duplicates=max(len(posts) - 1, 0),
        lost=0 if posts else 1,
    )
    assert len(posts) == 1, [(c.status, c.response.get("ts")) for c in posts]


def test_the_client_repeats_an_edit_but_never_a_post_after_a_dropped_connection(fake_slack):
    gateway = SlackGateway(make_web_client(fake_slack.workspace.bot_token, fake_slack.api_url))
    message = Message(
        text="card", blocks=[{"type": "section", "text": {"type": "mrkdwn", "text": "card"}}]
    )
    fake_slack.faults.accept_then_drop("chat.postMessage")
    with pytest.raises(SlackError) as lost:
        gateway.post_card(CHANNEL, message, "pending-dropped")
    assert lost.value.error == "connection_error"
    [post] = calls_for(fake_slack, "chat.postMessage", "pending-dropped")
    ts = str(post.response["ts"])
    assert gateway.find_card(CHANNEL, "pending-dropped", float(ts) - 60) == ts

    fake_slack.faults.accept_then_drop("chat.update")
    gateway.update_card(CHANNEL, ts, message, "pending-dropped")  # an edit may be repeated
    assert [c.ok for c in fake_slack.calls("chat.update")] == [True, True]
