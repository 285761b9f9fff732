"""Slow Kandev calls never delay other people's acks: the work behind interactions runs in
bounded lanes apart from the threads that acknowledge Slack, and a full lane says "busy, try
again" at once instead of keeping the person waiting."""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from kandev_slack.cards.words import busy_message
from kandev_slack.kits.fakeslack import ALICE, SlackUser
from kandev_slack.slack.transport.lanes import Lane
from tests.e2e.helpers import db_question, start_bot, wait_card
from tests.kit.harness import CHANNEL
from tests.unit.listing.e2e import COMMAND

HANGING_S = 20.0
CROWD = 8


def test_a_full_lane_refuses_at_once_and_frees_its_places() -> None:
    lane = Lane("test", workers=1, waiting=1)
    gate = threading.Event()
    first, second = lane.reserve(), lane.reserve()
    assert first is not None and second is not None
    assert lane.reserve() is None  # full: known at once, nothing waits
    done = [first.run(gate.wait, 5), second.run(gate.wait, 5)]
    assert lane.reserve() is None
    gate.set()
    assert all(f.result(timeout=5) for f in done)
    third = lane.reserve()
    assert third is not None
    third.release()
    third.release()  # releasing twice gives back one place only
    places = [lane.reserve(), lane.reserve()]
    assert all(places) and lane.reserve() is None
    lane.shutdown()
    assert "busy" in busy_message() and "nothing was sent" in busy_message()


@pytest.mark.fault("every answer hangs in Kandev while people keep clicking", guarantee=13)
def test_a_crowd_waiting_on_a_hanging_kandev_does_not_delay_the_next_ack(
    bot_factory, seed, fake_slack, slack_driver, kandev_proxy, reliability
):
    bot = start_bot(bot_factory, KANDEV_URL=kandev_proxy.base_url, KANDEV_HINTS="off")
    bundles = [seed([db_question()], title=f"Crowd {n}") for n in range(CROWD + 1)]
    cards = [wait_card(fake_slack, b.pending_id) for b in bundles]
    people = [
        fake_slack.add_user(SlackUser(id=f"U0CROWD{n:03d}", name=f"p{n}")) for n in range(CROWD)
    ]
    driver = slack_driver(bot.events_url)
    # Every answer call now waits HANGING_S in front of Kandev.
    kandev_proxy.slow(lambda body: b'"answers"' in body, HANGING_S)

    with ThreadPoolExecutor(CROWD) as crowd:
        acks = list(
            crowd.map(
                lambda n: driver.click(CHANNEL, cards[n].ts, text="MongoDB", user=people[n]),
                range(CROWD),
            )
        )
    assert all(a.status == 200 for a in acks), acks
    time.sleep(1.0)  # the crowd's answers are now on their way to (a hanging) Kandev

    started = time.monotonic()
    ninth = driver.click(CHANNEL, cards[CROWD].ts, text="PostgreSQL", user=ALICE)
    listing = driver.slash(COMMAND, "", user=ALICE, channel=CHANNEL)
    elapsed = time.monotonic() - started
    assert ninth.status == 200 and ninth.elapsed < 3.0, ninth
    assert listing.status == 200 and listing.elapsed < 3.0, listing
    assert max(a.elapsed for a in acks) < 3.0, [a.elapsed for a in acks]
    reliability.record(
        "every answer hangs in Kandev while people keep clicking",
        guarantee=13,
        survived=True,
        lost=0,
        duplicates=0,
        detail=f"{CROWD} answers hanging {HANGING_S:.0f} s; the next click and "
        f"{COMMAND} acked in {elapsed:.2f} s",
    )
