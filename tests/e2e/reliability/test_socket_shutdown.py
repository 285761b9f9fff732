"""Shutdown finishes what it finished (issue 19, item 15), one replica in Socket Mode.

A click whose Kandev call succeeds 2 s into the SIGTERM drain still gets its card edited by
that replica before it exits (the edits are drained after the answers, not before). A click
Slack delivers again (retry_attempt ≥ 1) after the person's answer won is answered silently:
they were told once.
"""

from __future__ import annotations

import signal
import time

import pytest

from kandev_slack.kits.fakeslack import BOB, Delivery
from tests.e2e.helpers import (
    POLL_S,
    click_payload,
    db_question,
    outcome_line,
    start_bot,
    wait_card,
    wait_ephemeral,
    wait_outcome,
)
from tests.e2e.reliability.deliveries import tool_answers
from tests.kit.harness import CHANNEL, Fault

#: The hand-over bound (HANDOVER_S) plus the process's own start/stop slack.
EXIT_WITHIN_S = 10.0 + 20.0


@pytest.mark.fault("SIGTERM while an answer is on its way: the card is edited", guarantee=5)
def test_an_answer_that_succeeds_during_the_drain_gets_its_card_edited(
    bot_factory, seed, kandev_proxy, fake_slack, slack_driver, reliability
) -> None:
    bot = start_bot(
        bot_factory, mode="socket", KANDEV_URL=kandev_proxy.base_url, KANDEV_HINTS="off"
    )
    bundle = seed([db_question()], title="Answered during the drain")
    card = wait_card(fake_slack, bundle.pending_id)
    kandev_proxy.inject(bundle.pending_id, Fault.slow(2.0, times=1))
    ack = slack_driver(transport="socket").click(CHANNEL, card.ts, text="PostgreSQL", user=BOB)
    assert ack.ok
    fake_slack.wait_for(
        lambda: kandev_proxy.answer_calls(bundle.pending_id, delivered_only=False) or None,
        10,
        "the answer reaching Kandev",
    )
    assert bot.proc is not None
    bot.proc.send_signal(signal.SIGTERM)
    code = bot.proc.wait(EXIT_WITHIN_S)
    line = outcome_line(fake_slack.message(CHANNEL, card.ts)) or ""
    answers = tool_answers(seed.server.agent_result(bundle.task_id, timeout=10))
    edited = line.startswith(f"✅ Answered by <@{BOB.id}> in Slack")
    reliability.record(
        "SIGTERM 2 s before Kandev answers: the replica edits the card before it exits",
        survived=code == 0 and edited,
        lost=int(answers == 0),
        duplicates=max(answers - 1, 0),
        detail=f"outcome line {line!r}",
    )
    assert code == 0, bot.logs()[-3000:]
    assert answers == 1
    assert edited, f"the card still shows {line!r} after the replica exited"


@pytest.mark.fault("Socket Mode: a click redelivered after its answer won", guarantee=1)
def test_a_redelivered_click_of_someone_who_answered_is_answered_silently(
    bot_factory, seed, fake_slack, slack_driver, reliability
) -> None:
    start_bot(bot_factory, mode="socket")
    bundle = seed([db_question()], title="Clicked, then redelivered")
    card = wait_card(fake_slack, bundle.pending_id)
    driver = slack_driver(transport="socket")
    click = click_payload(driver, CHANNEL, card.ts, text="PostgreSQL", user=BOB)
    assert driver.transport.deliver(
        "interactive", click, accepts_response_payload=False, delivery=Delivery()
    ).ok
    wait_outcome(fake_slack, card.ts, f"✅ Answered by <@{BOB.id}> in Slack")
    fake_slack.settle(quiet=1.0, timeout=15)
    told = len(fake_slack.ephemerals(user=BOB.id))

    again = driver.transport.deliver(
        "interactive", click, accepts_response_payload=False, delivery=Delivery(retry_num=1)
    )
    time.sleep(POLL_S)
    fake_slack.settle(quiet=1.0, timeout=15)
    after_redelivery = [e.all_text for e in fake_slack.ephemerals(user=BOB.id)][told:]
    # The same click again, not a redelivery (a stale copy of the card): still told.
    driver.transport.deliver(
        "interactive", click, accepts_response_payload=False, delivery=Delivery()
    )
    wait_ephemeral(fake_slack, BOB.id, "already answered")
    reliability.record(
        "Socket Mode: redelivered click after the answer won (told once)",
        survived=again.ok and not after_redelivery,
        duplicates=len(after_redelivery),
    )
    assert again.ok
    assert after_redelivery == [], after_redelivery
