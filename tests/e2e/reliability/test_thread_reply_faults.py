"""A thread reply's Send while Kandev cannot be reached (the real Kandev behind the
fault-injecting proxy): nothing is recorded, the prompt comes back with its Send button, and
Send works again once Kandev answers."""

from __future__ import annotations

import pytest

from kandev_slack.kits.fakeslack import ALICE, Ephemeral, FakeSlack, SlackUser
from kandev_slack.slack.transport.lanes import READING_WAITING, READING_WORKERS
from tests.e2e.helpers import (
    db_question,
    outcome_line,
    response_of,
    start_bot,
    wait_card,
    wait_ephemeral,
    wait_final,
    wait_outcome,
)
from tests.e2e.reliability.support import still_pending
from tests.kit.harness import CHANNEL, Fault
from tests.kit.polling import eventually

PROMPT = "as your answer to *Database*?"
#: Every read of Kandev is held at most this long (until healed) while the reading lane fills.
HELD_S = 60.0


def _current(fake: FakeSlack, prompt: Ephemeral) -> Ephemeral:
    [now] = [e for e in fake.ephemerals(user=prompt.user) if e.message_ts == prompt.message_ts]
    return now


@pytest.mark.fault("Kandev unreachable when a thread reply is sent", guarantee=5)
def test_send_while_kandev_is_unreachable_keeps_send_and_sends_later(
    app_factory, seed, kandev_proxy, fake_slack, slack_driver, reliability
):
    bot = start_bot(app_factory, KANDEV_URL=kandev_proxy.base_url, KANDEV_HINTS="off")
    bundle = seed([db_question()], title="Reply while Kandev is down")
    card = wait_card(fake_slack, bundle.pending_id)
    driver = slack_driver(bot.events_url)
    driver.reply_in_thread(CHANNEL, card.ts, "2", user=ALICE)
    prompt = wait_ephemeral(fake_slack, ALICE.id, PROMPT)

    kandev_proxy.inject(bundle.pending_id, Fault.reply(503, "unavailable"))
    assert driver.click_ephemeral(prompt, text="Send").status == 200
    again = fake_slack.wait_for(
        lambda: (
            now
            if (now := _current(fake_slack, prompt)).replaced and "not* recorded" in now.all_text
            else None
        ),
        30,
        "the prompt back with why",
    )
    assert "Send “MongoDB” as your answer to *Database*?" in again.all_text
    assert still_pending(seed.server, bundle)
    assert outcome_line(fake_slack.message(CHANNEL, card.ts)) is None

    kandev_proxy.clear(bundle.pending_id)
    assert driver.click_ephemeral(again, text="Send").status == 200
    final = wait_final(seed.server, bundle.task_id, bundle.pending_id, "answered")
    assert response_of(final, "db")["selected_options"] == ["q1_opt2"]
    wait_outcome(fake_slack, card.ts, f"✅ Answered by <@{ALICE.id}> in Slack", 15)
    reliability.record("Kandev unreachable on a thread reply's Send", survived=True)


@pytest.mark.fault("a thread reply while the reading lane is full (Home opens, slow Kandev)")
def test_a_reply_is_prompted_while_the_reading_lane_is_full(
    app_factory, seed, kandev_proxy, fake_slack, slack_driver, reliability
):
    bot = start_bot(app_factory, KANDEV_URL=kandev_proxy.base_url, KANDEV_HINTS="off")
    bundle = seed([db_question()], title="Reply while the bot reads")
    card = wait_card(fake_slack, bundle.pending_id)
    driver = slack_driver(bot.events_url)
    people = [
        fake_slack.add_user(SlackUser(id=f"U0HOME{n:03d}", name=f"h{n}"))
        for n in range(READING_WORKERS + READING_WAITING + 6)
    ]
    # Kandev holds every read until healed (not a fixed delay: however long the opens take to
    # arrive on a loaded machine, no place in the lane frees up before the reply is sent).
    kandev_proxy.slow_path(r"", HELD_S)
    try:
        for person in people:
            assert driver.app_home_opened(person).status == 200
        eventually(lambda: "the reading lane is full" in bot.logs(), timeout=30)

        driver.reply_in_thread(CHANNEL, card.ts, "2", user=ALICE)
        # Told at once, though no place frees up while Kandev holds the reads (however long
        # a loaded machine takes to say it).
        prompt = wait_ephemeral(fake_slack, ALICE.id, PROMPT, 15)
    finally:
        kandev_proxy.heal()
    assert "Send “MongoDB” as your answer to *Database*?" in prompt.all_text
    reliability.record("a thread reply while the reading lane is full", survived=True)
