"""A crowd: fifty people click fifty different cards at once, each on their own connection, while
Kandev takes a while to answer. Nobody is told "busy", every answer reaches its agent once, and
every card shows its winner."""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest

from kandev_slack.cards.words import busy_message
from kandev_slack.kits.fakeslack import (
    Ack,
    Delivery,
    HttpTransport,
    SlackDriver,
    SlackUser,
    parse_body,
    signed_headers,
)
from tests.e2e.helpers import (
    db_question,
    outcome_line,
    start_bot,
    wait_card,
    wait_outcome,
)
from tests.kit.harness import CHANNEL
from tests.unit.listing.e2e import COMMAND

CROWD = 50
BATCH = 10
#: Every answer waits this long in front of Kandev, so the whole crowd is in flight at once.
SLOW_KANDEV_S = 1.0
BUSY = busy_message()[:40]


@pytest.mark.fault("50 people click 50 cards at once while Kandev is slow", guarantee=13)
def test_a_crowd_clicking_at_once_is_neither_refused_nor_lost(
    bot_factory, seed, fake_slack, slack_driver, kandev_proxy, reliability
):
    bot = start_bot(bot_factory, KANDEV_URL=kandev_proxy.base_url, KANDEV_HINTS="off")
    # In batches: fifty agents launched at once overwhelm a busy 2-core machine's Kandev.
    bundles = [b for _ in range(CROWD // BATCH) for b in seed.many(BATCH, [db_question()])]
    cards = [wait_card(fake_slack, b.pending_id, timeout=60.0) for b in bundles]
    people = [
        fake_slack.add_user(SlackUser(id=f"U0CROWD{n:03d}", name=f"p{n}")) for n in range(CROWD)
    ]
    driver = slack_driver(bot.events_url)  # a new connection per request, as Slack's
    kandev_proxy.slow(lambda body: b'"answers"' in body, SLOW_KANDEV_S)

    with ThreadPoolExecutor(CROWD) as crowd:
        acks = list(
            crowd.map(
                lambda n: driver.click(CHANNEL, cards[n].ts, text="MongoDB", user=people[n]),
                range(CROWD),
            )
        )
    assert [a.status for a in acks] == [200] * CROWD, acks

    fake_slack.settle(quiet=0.5, timeout=10)  # any "busy" is told right after the ack
    busy = [e for e in fake_slack.ephemerals() if BUSY in e.all_text]
    busy += [p for p in fake_slack.response_posts() if BUSY in str(p.body)]
    assert busy == [], f"{len(busy)} of {CROWD} people were told the bot is busy"

    for n, bundle in enumerate(bundles):
        edited = wait_outcome(fake_slack, cards[n].ts, "✅", timeout=30.0)
        assert outcome_line(edited) == f"✅ Answered by <@{people[n].id}> in Slack: MongoDB"
        result = seed.server.agent_result(bundle.task_id, timeout=10)
        assert result is not None and result["tool"]["parsed"] == {
            "db": {"selected_option": "q1_opt2"}
        }, result
        assert result["prompts"] == [], result
        assert len(kandev_proxy.answer_calls(bundle.pending_id)) == 1
    reliability.record(
        "50 people click 50 cards at once while Kandev is slow",
        guarantee=13,
        survived=True,
        lost=0,
        duplicates=0,
        detail=f"{CROWD} clicks at once, Kandev {SLOW_KANDEV_S:.0f} s per answer: all acked, "
        "answered once, no 'busy'",
    )


#: More than waitress had threads (8) and Socket Mode envelopes handled at once (10), fewer
#: than the listener threads (16).
HELD = 12
ONCALL = "S0CROWDONCALL"


class _KeptAlive(HttpTransport):
    """Slack's requests over a client made in advance (``httpx.post`` makes one per request,
    an SSL context each: slow on a busy machine, and this test is about the server)."""

    def __init__(self, url: str, signing_secret: str) -> None:
        super().__init__(url, signing_secret)
        self._client = httpx.Client(timeout=30.0, trust_env=False)

    def post(self, body: bytes, content_type: str, delivery: Delivery | None = None) -> Ack:
        headers = {"Content-Type": content_type, **signed_headers(self.signing_secret, body)}
        started = time.monotonic()
        response = self._client.post(self.url, content=body, headers=headers)
        return Ack(response.status_code, parse_body(response), time.monotonic() - started)


@pytest.mark.fault("a dozen acks held up by a slow Slack lookup", guarantee=13)
@pytest.mark.parametrize("mode", ["http", "socket"])
def test_requests_held_up_before_their_ack_leave_room_for_the_next_person(
    mode, bot_factory, seed, fake_slack, slack_driver, tmp_path, reliability
):
    people = [
        fake_slack.add_user(SlackUser(id=f"U0HELD{n:03d}", name=f"h{n}")) for n in range(HELD)
    ]
    fake_slack.set_usergroup(ONCALL, [p.id for p in people])
    config = tmp_path / "kandev-slack.toml"
    config.write_text(
        f'[[route]]\nworkspace = "{seed.server.workspace_id}"\nchannel = "{CHANNEL}"\n'
        f'answerers = ["{ONCALL}"]\n'
    )
    bot = start_bot(bot_factory, mode=mode, KANDEV_SLACK_CONFIG=str(config))
    bundle = seed([db_question()], title="Held")
    card = wait_card(fake_slack, bundle.pending_id)
    if mode == "http":  # a client each, made beforehand: nothing slow when the crowd clicks
        drivers = [
            SlackDriver(fake_slack, _KeptAlive(bot.events_url, fake_slack.workspace.signing_secret))
            for _ in range(HELD + 1)
        ]
    else:
        drivers = [slack_driver(transport="socket") for _ in range(HELD + 1)]
    assert fake_slack.calls("usergroups.users.list") == []  # nothing cached yet
    # The group's members take 3 s to come: each click is acked after its 1 s budget.
    fake_slack.faults.slow("usergroups.users.list", 3.0, times=None)
    done: dict[str, float] = {}

    def click(n: int) -> None:
        ack = drivers[n].click(CHANNEL, card.ts, text="MongoDB", user=people[n])
        done[f"held {n}"] = time.monotonic()
        assert ack.status == 200

    with ThreadPoolExecutor(HELD) as crowd:
        held = [crowd.submit(click, n) for n in range(HELD)]
        # The fake records the lookup once answered: wait for the dozen to be sent instead,
        # well within the 1 s after which their acks go anyway.
        time.sleep(0.4)
        # A request that needs no lookup (the waiting card's "Open in Kandev" is a plain link
        # now): the command's help.
        link = drivers[HELD].slash("/kandev-questions", "help", user=people[0], channel=CHANNEL)
        done["link"] = time.monotonic()
        for future in held:
            future.result(timeout=30)
    assert link.status == 200
    first_held = min(v for k, v in done.items() if k != "link")
    assert done["link"] < first_held, "the link click waited for a held request's ack"
    reliability.record(
        f"a dozen acks held up by a slow Slack lookup ({mode})",
        guarantee=13,
        survived=True,
        lost=0,
        duplicates=0,
        detail=f"{HELD} clicks waiting on usergroups.users.list: the next click acked first",
    )


LISTERS = 50


LISTING_FAULT = "50 people list the waiting questions at once while Kandev is slow"


@pytest.mark.fault(LISTING_FAULT, guarantee=13)
def test_a_crowd_listing_at_once_is_not_told_busy(
    bot_factory, fake_slack, slack_driver, kandev_proxy, reliability
):
    bot = start_bot(bot_factory, KANDEV_URL=kandev_proxy.base_url, KANDEV_HINTS="off")
    people = [
        fake_slack.add_user(SlackUser(id=f"U0LIST{n:03d}", name=f"l{n}")) for n in range(LISTERS)
    ]
    driver = slack_driver(bot.events_url)
    # Each listing's call to Kandev waits a second: the whole crowd is waiting at once.
    kandev_proxy.slow(lambda body: b"list_pending_questions_kandev" in body, SLOW_KANDEV_S)

    with ThreadPoolExecutor(LISTERS) as crowd:
        acks = list(
            crowd.map(
                lambda n: driver.slash(COMMAND, "", user=people[n], channel=CHANNEL),
                range(LISTERS),
            )
        )
    assert [a.status for a in acks] == [200] * LISTERS, acks
    told_busy = [a for a in acks if BUSY in str(a.body)]
    fake_slack.settle(quiet=1.0, timeout=60)
    told_busy += [p for p in fake_slack.response_posts() if BUSY in str(p.body)]
    assert told_busy == [], f"{len(told_busy)} of {LISTERS} people were told the bot is busy"
    reliability.record(
        LISTING_FAULT,
        guarantee=13,
        survived=True,
        lost=0,
        duplicates=0,
        detail=f"{LISTERS} /kandev-questions at once, Kandev {SLOW_KANDEV_S:.0f} s per list: "
        "none told 'busy'",
    )
