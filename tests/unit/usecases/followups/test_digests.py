"""Digests (kandev_slack/usecases/followups/digests.py) on a real SQLite store and the real
publisher: the subcommand parsed and answered; a person's digest sent once per local date at
their time in their zone, through the outbox, listing only what they may answer; nothing sent
when nothing waits; a route's channel digest listing its channel's questions; two deciders of
the same digest (replicas) send it once."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta

import pytest

from kandev_slack.config.routing import RouteRule, Routing
from kandev_slack.core.domain import NewCard, TaskInfo
from kandev_slack.store import Database
from kandev_slack.surfaces.digest import digest_renderer
from kandev_slack.usecases.followups.digests import (
    BadDigest,
    DigestCommand,
    Digests,
    parse_digest,
)
from kandev_slack.usecases.outbox.publisher import Publisher
from kandev_slack.usecases.views.waiting import WaitingQueue
from tests.kit.factories import ALICE_ID, CHANNEL, KANDEV_URL, make_bundle, make_question
from tests.kit.fakes import FakeKandev, FakeSlackGateway

BOB = "U0BOB00002"
OTHER = "C0OTHER"
#: A Monday, 08:59:30 in Berlin (07:59:30 UTC).
MONDAY = datetime(2025, 3, 31, 6, 59, 30, tzinfo=UTC)


def test_parse_digest() -> None:
    assert parse_digest("") is None and parse_digest("Platform") is None
    assert parse_digest("digest") == DigestCommand("show")
    assert parse_digest(" DIGEST  09:00 ") == DigestCommand("set", "09:00")
    assert parse_digest("digest off") == DigestCommand("off")
    assert parse_digest("digest now") == DigestCommand("now")
    for bad in ("25:00", "9", "tomorrow", "09:00 daily"):
        assert parse_digest(f"digest {bad}") == BadDigest(bad)


@pytest.fixture
def routing() -> Routing:
    # Platform's questions: Alice only, in CHANNEL; Mobile's: anyone, in OTHER, with a digest.
    rules = (
        RouteRule(workspace="Platform", channel=CHANNEL, answerers=frozenset({ALICE_ID}), line=1),
        RouteRule(
            workspace="Mobile",
            channel=OTHER,
            answerers=frozenset(),
            line=5,
            digest=("10:00", "UTC"),
        ),
    )
    return Routing(default_channel=CHANNEL, rules=rules)


class Clock:
    def __init__(self, at: datetime) -> None:
        self.at = at

    def __call__(self) -> datetime:
        return self.at


@pytest.fixture
def make_digests(
    store: Database,
    queue: WaitingQueue,
    routing: Routing,
    gateway: FakeSlackGateway,
    publisher: Publisher,
) -> Callable[[Clock], Digests]:
    def make(clock: Clock) -> Digests:
        return Digests(
            store.digests,
            queue,
            routing,
            gateway,
            publisher.wake,
            digest_renderer(KANDEV_URL),
            clock=clock,
        )

    return make


@pytest.fixture
def waiting(fake_kandev: FakeKandev) -> None:
    fake_kandev.add(make_bundle(pending_id="p-platform", task_id="t-platform"), priority="high")
    fake_kandev.add(
        make_bundle(pending_id="p-mobile", task_id="t-mobile"),
        workspace_id="ws-2",
        workspace_name="Mobile",
        title="Ship the app",
        priority="critical",
    )


def digests_to(gateway: FakeSlackGateway, channel: str) -> list[str]:
    return [m.text for (ch, _ts), m in gateway.messages.items() if ch == channel]


def test_a_person_gets_one_digest_at_their_time_in_their_zone(
    store: Database,
    make_digests: Callable[[Clock], Digests],
    gateway: FakeSlackGateway,
    drain: Callable[[], None],
    waiting: None,
) -> None:
    gateway.zones[ALICE_ID] = "Europe/Berlin"
    clock = Clock(MONDAY - timedelta(days=1))  # set on Sunday
    digests = make_digests(clock)
    answer = digests.answer(DigestCommand("set", "09:00"), ALICE_ID)
    assert answer.kind == "set" and answer.tz == "Europe/Berlin"
    assert answer.next_at == datetime(2025, 3, 31, 7, 0, tzinfo=UTC)
    clock.at = MONDAY  # 08:59:30 in Berlin
    assert digests.send_due() == 0
    clock.at = MONDAY + timedelta(seconds=30)  # 09:00
    other = make_digests(clock)  # another replica deciding the same digest
    assert digests.send_due() + other.send_due() == 1
    assert digests.send_due() == 0
    drain()
    sent = digests_to(gateway, "D0ALICE001")
    assert len(sent) == 1 and "2 questions" in sent[0]  # Platform's and Mobile's
    clock.at = MONDAY + timedelta(days=1, seconds=30)  # Tuesday 09:00
    # Alice's Tuesday one, and OTHER's Monday one (10:00 UTC, which no round saw on Monday):
    # a date's digest stays due until the next date's time, so it is sent late, never skipped
    assert not store.digests.digest_sent(OTHER, "2025-03-31")
    assert digests.send_due() == 2
    assert store.digests.digest_sent(OTHER, "2025-03-31")
    assert store.digests.digest_sent(ALICE_ID, "2025-04-01")
    assert digests.send_due() == 0


def test_only_what_the_person_may_answer_and_nothing_when_nothing_waits(
    store: Database,
    make_digests: Callable[[Clock], Digests],
    gateway: FakeSlackGateway,
    fake_kandev: FakeKandev,
    drain: Callable[[], None],
    waiting: None,
) -> None:
    clock = Clock(MONDAY - timedelta(days=1))
    digests = make_digests(clock)
    digests.answer(DigestCommand("set", "07:00"), BOB)  # UTC: Slack says no zone
    clock.at = MONDAY + timedelta(minutes=1)
    assert digests.send_due() == 1
    drain()
    (text,) = digests_to(gateway, "D0BOB00002")
    assert "1 question" in text and "Ship the app" in text and "Pick a datastore" not in text
    # nothing waits: nothing is sent, and "now" says so
    fake_kandev.active.clear()
    clock.at += timedelta(days=1)
    assert digests.send_due() == 0
    assert store.digests.digest_sent(BOB, "2025-04-01")
    assert digests.answer(DigestCommand("now"), BOB).kind == "nothing"
    drain()
    assert len(digests_to(gateway, "D0BOB00002")) == 1


def test_digest_now_off_and_show(
    make_digests: Callable[[Clock], Digests],
    gateway: FakeSlackGateway,
    drain: Callable[[], None],
    waiting: None,
) -> None:
    digests = make_digests(Clock(MONDAY))
    assert digests.answer(DigestCommand("show"), ALICE_ID).kind == "not_set"
    assert digests.answer(DigestCommand("now"), ALICE_ID).kind == "sent"
    drain()
    assert len(digests_to(gateway, "D0ALICE001")) == 1
    digests.answer(DigestCommand("set", "09:00"), ALICE_ID)
    shown = digests.answer(DigestCommand("show"), ALICE_ID)
    assert (shown.kind, shown.at) == ("setting", "09:00")
    assert digests.answer(DigestCommand("off"), ALICE_ID).kind == "off"
    assert digests.answer(DigestCommand("off"), ALICE_ID).kind == "not_set"
    assert digests.answer(BadDigest("25:00"), ALICE_ID).kind == "bad"


def test_a_route_posts_its_channel_digest(
    make_digests: Callable[[Clock], Digests],
    gateway: FakeSlackGateway,
    drain: Callable[[], None],
    waiting: None,
) -> None:
    clock = Clock(datetime(2025, 3, 31, 9, 59, tzinfo=UTC))
    digests = make_digests(clock)
    assert digests.send_due() == 0
    clock.at += timedelta(minutes=1)
    assert digests.send_due() == 1
    assert digests.send_due() == 0
    drain()
    (text,) = digests_to(gateway, OTHER)
    assert "Ship the app" in text and "Pick a datastore" not in text


def test_a_digest_waits_for_slack_to_tell_who_may_answer(
    store: Database,
    make_digests: Callable[[Clock], Digests],
    gateway: FakeSlackGateway,
    drain: Callable[[], None],
    waiting: None,
) -> None:
    clock = Clock(MONDAY - timedelta(days=1))
    digests = make_digests(clock)
    digests.answer(DigestCommand("set", "07:00"), BOB)
    clock.at = MONDAY + timedelta(minutes=1)
    gateway.fail("conversations.members")  # Mobile's route: its channel's members
    assert digests.send_due() == 0
    assert not store.digests.digest_sent(BOB, "2025-03-31")  # not claimed: not lost
    assert digests.send_due() == 1
    drain()
    (text,) = digests_to(gateway, "D0BOB00002")
    assert "Ship the app" in text


def test_identical_items_are_one_row_critical_first_linking_their_first_card(
    store: Database,
    make_digests: Callable[[Clock], Digests],
    gateway: FakeSlackGateway,
    fake_kandev: FakeKandev,
    drain: Callable[[], None],
) -> None:
    # Three identical questions posted in CHANNEL (the first its channel card, the others in
    # its thread), the last of them critical; a distinct one, high, asked before them all.
    fake_kandev.add(
        make_bundle(
            make_question(title="Queue", prompt="Which queue?"),
            pending_id="p-alone",
            task_id="t-alone",
            created_at=MONDAY - timedelta(hours=5),
        ),
        title="Alone",
        priority="high",
    )
    for n, priority in ((1, ""), (2, ""), (3, "critical")):
        bundle = fake_kandev.add(
            make_bundle(
                pending_id=f"p-g{n}",
                task_id=f"t-g{n}",
                created_at=MONDAY - timedelta(hours=4 - n),
            ),
            title=f"Agent {n}",
            priority=priority,
        )
        task = fake_kandev.tasks[bundle.task_id]
        info = TaskInfo(
            task_id=task.id,
            title=task.title,
            workspace_id="ws-1",
            workspace_name="Platform",
            priority=priority,
        )
        assert store.cards.record_card(NewCard(bundle, info, CHANNEL))
        assert store.cards.mark_posted(bundle.pending_id, CHANNEL, f"1.{n}")
        if n > 1:
            assert store.cards.set_thread(bundle.pending_id, "p-g1", "1.1")
    digests = make_digests(Clock(MONDAY))
    answer = digests.answer(DigestCommand("now"), ALICE_ID)
    assert (answer.kind, answer.count) == ("sent", 4)  # every item counted
    drain()
    (message,) = [m for (ch, _ts), m in gateway.messages.items() if ch == "D0ALICE001"]
    rows = [b for b in message.blocks if b.get("block_id", "").startswith("kq_digest:")]
    assert len(rows) == 2
    first, alone = (b["text"]["text"] for b in rows)
    assert first.startswith("🔴 ") and "Agent 1" in first and "*3 agents*" in first
    assert "waiting 3 h" in first  # the oldest of the three
    assert "/C0QUESTION/p11" in first  # its first card's link (the fake's permalink of 1.1)
    assert rows[0]["accessory"]["text"]["text"] == "Answer for all…"
    assert alone.startswith("🟠 ") and "Alone" in alone and "agents" not in alone
    assert message.text == "Digest: 4 questions wait: Agent 1 (3 agents); Alone"


def test_a_scheduled_digest_waits_a_round_for_a_link_slack_rate_limits(
    store: Database,
    make_digests: Callable[[Clock], Digests],
    gateway: FakeSlackGateway,
    fake_kandev: FakeKandev,
    drain: Callable[[], None],
) -> None:
    bundle = fake_kandev.add(make_bundle(pending_id="p-linked", task_id="t-linked"))
    info = TaskInfo(task_id="t-linked", title="Linked", workspace_id="ws-1", workspace_name="P")
    assert store.cards.record_card(NewCard(bundle, info, CHANNEL))
    assert store.cards.mark_posted(bundle.pending_id, CHANNEL, "1.5")
    clock = Clock(MONDAY - timedelta(days=1))
    digests = make_digests(clock)
    digests.answer(DigestCommand("set", "07:00"), ALICE_ID)  # UTC
    clock.at = MONDAY + timedelta(minutes=1)
    gateway.fail("chat.getPermalink", "ratelimited", retry_after=1)
    assert digests.send_due() == 0  # not without its link: not claimed, not lost
    assert not store.digests.digest_sent(ALICE_ID, "2025-03-31")
    assert digests.send_due() == 1  # the next round, once Slack gives it
    drain()
    (message,) = [m for (ch, _ts), m in gateway.messages.items() if ch == "D0ALICE001"]
    assert "View card" in str(message.blocks)
