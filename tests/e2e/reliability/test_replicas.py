"""Guarantee 5: three bot processes on one PostgreSQL database share the work without doubling it.

Each bundle gets one card; one click delivered to all three replicas at once (a Slack retry
landing elsewhere) reaches Kandev once and edits the card once; a resolution in Kandev is
edited once. Then the replica that is sending an answer is SIGKILLed: the survivors reconcile
that answer with Kandev, and keep posting new bundles and reflecting resolutions.
"""

from __future__ import annotations

import time

import pytest

from kandev_slack.kits.fakeslack import ALICE, BOB, Delivery
from kandev_slack.usecases.leases import SUBMISSION_LEASE_S
from tests.e2e.helpers import (
    MARGIN_S,
    POLL_S,
    card_posts,
    click_payload,
    distinct_question,
    outcome_updates,
    response_of,
    start_bot,
    wait_card,
    wait_ephemeral,
    wait_final,
    wait_outcome,
)
from tests.e2e.reliability.deliveries import RETRY, deliver_all, tool_answers
from tests.kit.harness import CHANNEL

REPLICAS = 3


@pytest.mark.postgres
@pytest.mark.fault("three replicas on one PostgreSQL, one SIGKILLed", guarantee=5)
def test_replicas_share_the_work_and_survive_losing_one(
    pg_url,  # first: its schema is dropped only after the bots are stopped
    bot_factory,
    seed,
    kandev_proxy,
    fake_slack,
    slack_driver,
    reliability,
):
    bots = [
        start_bot(bot_factory, db_url=pg_url, KANDEV_URL=kandev_proxy.base_url, KANDEV_HINTS="off")
        for _ in range(REPLICAS)
    ]
    drivers = [slack_driver(b.events_url) for b in bots]
    clicked, elsewhere, in_flight = (
        seed([distinct_question(n)], title=f"Shared by replicas #{n}") for n in range(3)
    )
    cards = {
        b.pending_id: wait_card(fake_slack, b.pending_id) for b in (clicked, elsewhere, in_flight)
    }

    # One click delivered to every replica at once, plus a second click on one of them.
    ts = cards[clicked.pending_id].ts
    click = click_payload(drivers[0], CHANNEL, ts, text="MongoDB", user=ALICE)
    double = click_payload(drivers[1], CHANNEL, ts, text="MongoDB", user=ALICE)
    acks = deliver_all(
        [
            (drivers[0].transport, "interactive", click, Delivery()),
            (drivers[1].transport, "interactive", click, RETRY),
            (drivers[2].transport, "interactive", click, RETRY),
            (drivers[1].transport, "interactive", double, Delivery()),
        ]
    )
    assert all(a.status == 200 and a.elapsed < 3.0 for a in acks), acks
    # A resolution in Kandev's UI, which every replica's sync notices.
    assert seed.server.answer(elsewhere.pending_id, {"db": "q1_opt1"}).status_code == 200
    wait_outcome(fake_slack, ts, f"✅ Answered by <@{ALICE.id}> in Slack")
    wait_outcome(fake_slack, cards[elsewhere.pending_id].ts, "✅ Answered in Kandev: PostgreSQL")

    # Replica 0 is killed while its answer is on the way to Kandev (which records it).
    kandev_proxy.hold(in_flight.pending_id, then="forward")
    ack = drivers[0].click(CHANNEL, cards[in_flight.pending_id].ts, text="MongoDB", user=BOB)
    assert ack.status == 200 and ack.elapsed < 3.0
    kandev_proxy.wait_held(in_flight.pending_id)
    bots[0].kill()
    kandev_proxy.release()

    # The survivors do all the work: the orphaned answer, new bundles, resolutions, clicks.
    arrived, resolved_late = (
        seed([distinct_question(n)], title=f"After the kill #{n}") for n in range(3, 5)
    )
    for bundle in (arrived, resolved_late):
        cards[bundle.pending_id] = wait_card(fake_slack, bundle.pending_id, POLL_S + MARGIN_S + 3)
    assert seed.server.answer(resolved_late.pending_id, {"db": "q1_opt2"}).status_code == 200
    ack = drivers[2].click(CHANNEL, cards[arrived.pending_id].ts, text="PostgreSQL", user=ALICE)
    assert ack.status == 200 and ack.elapsed < 3.0
    takeover = SUBMISSION_LEASE_S + POLL_S + MARGIN_S + 3
    wait_outcome(
        fake_slack, cards[in_flight.pending_id].ts, f"✅ Answered by <@{BOB.id}> in Slack", takeover
    )
    wait_ephemeral(fake_slack, BOB.id, "recorded")
    wait_outcome(fake_slack, cards[resolved_late.pending_id].ts, "✅ Answered in Kandev: MongoDB")
    wait_outcome(fake_slack, cards[arrived.pending_id].ts, f"✅ Answered by <@{ALICE.id}> in Slack")
    time.sleep(POLL_S)
    fake_slack.settle(quiet=1.5, timeout=20)

    bundles = (clicked, elsewhere, in_flight, arrived, resolved_late)
    posts = {b.pending_id: len(card_posts(fake_slack, b.pending_id)) for b in bundles}
    edits = {
        b.pending_id: len(outcome_updates(fake_slack, cards[b.pending_id].ts)) for b in bundles
    }
    agents = {b.pending_id: tool_answers(seed.server.agent_result(b.task_id)) for b in bundles}
    calls = {
        b.pending_id: len(kandev_proxy.answer_calls(b.pending_id))
        for b in (clicked, in_flight, arrived)
    }
    duplicates = sum(max(n - 1, 0) for d in (posts, edits, agents) for n in d.values())
    duplicates += max(calls[clicked.pending_id] - 1, 0) + max(calls[arrived.pending_id] - 1, 0)
    reliability.record(
        "3 replicas: one click delivered to all, a resolution in Kandev",
        survived=True,
        duplicates=duplicates,
        lost=sum(1 for n in agents.values() if n == 0),
    )
    reliability.record(
        "replica SIGKILLed mid-answer; survivors take over",
        survived=wait_final(seed.server, in_flight.task_id, in_flight.pending_id, "answered")[
            "status"
        ]
        == "answered",
    )
    assert posts == dict.fromkeys(posts, 1), posts
    assert edits == dict.fromkeys(edits, 1), edits
    assert agents == dict.fromkeys(agents, 1), agents
    # The reconciled answer: the held call plus the survivors' one re-send.
    assert calls == {clicked.pending_id: 1, in_flight.pending_id: 2, arrived.pending_id: 1}
    for bundle, option in ((clicked, "q1_opt2"), (in_flight, "q1_opt2"), (arrived, "q1_opt1")):
        final = wait_final(seed.server, bundle.task_id, bundle.pending_id, "answered")
        assert response_of(final, "db")["selected_options"] == [option]
    for bot in bots[1:]:
        code, body = bot.health()
        assert code == 200, body
