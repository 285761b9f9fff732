"""Graceful hand-over: two replicas on one PostgreSQL database and a steady flow of bundles
and clicks; one replica gets SIGTERM while two answers it took are on their way to Kandev.

It stops taking work, finishes the answer Kandev replies to within the hand-over (3 s late),
gives back the one Kandev does not reply to (made stale at once), and exits 0. The survivor
re-sends that answer at its next recovery cycle, edits the cards, posts the bundles that keep
arriving and answers the clicks that keep coming: every bundle is posted once, every answer
reaches Kandev once and every agent gets exactly one answer.
"""

from __future__ import annotations

import json
import signal
import time

import pytest

from kandev_slack.kits.fakeslack import ALICE, BOB
from kandev_slack.usecases.leases import SUBMISSION_LEASE_S
from tests.e2e.helpers import (
    MARGIN_S,
    POLL_S,
    card_posts,
    db_question,
    start_bot,
    wait_card,
    wait_ephemeral,
    wait_final,
    wait_outcome,
)
from tests.e2e.reliability.deliveries import tool_answers
from tests.kit.harness import CHANNEL, Fault

#: The hand-over bound of kandev_slack/app.py (HANDOVER_S) plus the process's own start/stop slack.
EXIT_WITHIN_S = 10.0 + 20.0


def json_lines(text: str) -> list[dict]:
    return [json.loads(line) for line in text.splitlines() if line.startswith("{")]


@pytest.mark.postgres
@pytest.mark.fault("SIGTERM to one of two replicas mid-flow", guarantee=5)
def test_sigterm_hands_the_work_over_to_the_other_replica(
    pg_url,  # first: its schema is dropped only after the bots are stopped
    bot_factory,
    seed,
    kandev_proxy,
    fake_slack,
    slack_driver,
    reliability,
):
    env = {"db_url": pg_url, "KANDEV_URL": kandev_proxy.base_url, "KANDEV_HINTS": "off"}
    stopping = start_bot(bot_factory, LOG_FORMAT="json", **env)
    survivor = start_bot(bot_factory, **env)
    on_stopping, on_survivor = slack_driver(stopping.events_url), slack_driver(survivor.events_url)

    before = [seed([db_question()], title=f"Before the hand-over #{n}") for n in range(3)]
    cards = {b.pending_id: wait_card(fake_slack, b.pending_id) for b in before}
    slow, held, quick = before

    # Two answers taken by the stopping replica: Kandev replies to one 3 s late, and holds
    # the other until that replica is gone (then the connection is cut: never delivered).
    kandev_proxy.inject(slow.pending_id, Fault.slow(3.0, times=1))
    kandev_proxy.hold(held.pending_id, then="drop")
    ack = on_stopping.click(CHANNEL, cards[slow.pending_id].ts, text="MongoDB", user=ALICE)
    assert ack.status == 200
    ack = on_stopping.click(CHANNEL, cards[held.pending_id].ts, text="MongoDB", user=BOB)
    assert ack.status == 200
    kandev_proxy.wait_held(held.pending_id)
    fake_slack.wait_for(
        lambda: kandev_proxy.answer_calls(slow.pending_id, delivered_only=False) or None,
        10,
        "the slow answer reaching Kandev",
    )
    arriving = [seed([db_question()], title=f"During the hand-over #{n}") for n in range(2)]

    stopping.proc.send_signal(signal.SIGTERM)
    code = stopping.proc.wait(EXIT_WITHIN_S)
    stopped_at = time.monotonic()
    kandev_proxy.release()  # the held call is dropped: it never reached Kandev
    assert code == 0, stopping.logs()[-3000:]

    lines = json_lines(stopping.logs())
    handed = [line for line in lines if "handed over" in line["message"]]
    assert handed and "1 unfinished answer(s)" in handed[0]["message"], lines[-15:]
    assert any(line["message"].startswith("signal 15") for line in lines)

    # The survivor: the handed-over answer, new bundles, more clicks.
    takeover = POLL_S + MARGIN_S + SUBMISSION_LEASE_S + 3  # generous: never a timing assertion
    wait_outcome(
        fake_slack, cards[held.pending_id].ts, f"✅ Answered by <@{BOB.id}> in Slack", takeover
    )
    took_over_s = time.monotonic() - stopped_at
    wait_ephemeral(fake_slack, BOB.id, "recorded")
    wait_outcome(fake_slack, cards[slow.pending_id].ts, f"✅ Answered by <@{ALICE.id}> in Slack")
    after = [seed([db_question()], title=f"After the hand-over #{n}") for n in range(2)]
    for bundle in arriving + after:
        cards[bundle.pending_id] = wait_card(fake_slack, bundle.pending_id, POLL_S + MARGIN_S + 5)
    for bundle in [quick, *arriving, *after]:
        ack = on_survivor.click(CHANNEL, cards[bundle.pending_id].ts, text="PostgreSQL", user=ALICE)
        assert ack.status == 200
    for bundle in [quick, *arriving, *after]:
        wait_outcome(
            fake_slack, cards[bundle.pending_id].ts, f"✅ Answered by <@{ALICE.id}> in Slack"
        )
    fake_slack.settle(quiet=1.5, timeout=20)

    bundles = [*before, *arriving, *after]
    posts = {b.pending_id: len(card_posts(fake_slack, b.pending_id)) for b in bundles}
    calls = {b.pending_id: len(kandev_proxy.answer_calls(b.pending_id)) for b in bundles}
    agents = {b.pending_id: tool_answers(seed.server.agent_result(b.task_id)) for b in bundles}
    duplicates = sum(max(n - 1, 0) for d in (posts, calls, agents) for n in d.values())
    lost = sum(1 for n in agents.values() if n == 0)
    reliability.record(
        f"SIGTERM mid-flow: exit {code}, survivor took the answer over in {took_over_s:.1f}s",
        survived=code == 0 and not lost,
        duplicates=duplicates,
        lost=lost,
    )
    assert posts == dict.fromkeys(posts, 1), posts
    assert calls == dict.fromkeys(calls, 1), calls
    assert agents == dict.fromkeys(agents, 1), agents
    for bundle in (slow, held):
        final = wait_final(seed.server, bundle.task_id, bundle.pending_id, "answered")
        assert final["status"] == "answered"
    code, body = survivor.health()
    assert code == 200, body
