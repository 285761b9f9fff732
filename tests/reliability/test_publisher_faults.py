"""Guarantee 3, in process and fast: the outbox worker against the fake Slack's faults.

The publisher runs on its own thread over a real store (SQLite file) and the real gateway
(slack-sdk WebClient) pointed at the fake, with a short client timeout so a "timeout" costs
about a second instead of ten.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from bot.domain import TaskInfo
from bot.health import Health
from bot.kandev.models import Bundle, Option, Question
from bot.publisher import Publisher
from bot.slack_api.gateway import SlackGateway, make_web_client
from bot.store import Store
from tests.fakeslack import FakeSlack
from tests.reliability.support import calls_for

CHANNEL = "C0QUESTION"


def _bundle(n: int) -> Bundle:
    return Bundle(
        pending_id=f"pending-{n}",
        task_id=f"task-{n}",
        created_at=datetime.now(UTC),
        questions=[
            Question(
                question_id="q1",
                title="Database",
                prompt="Which one?",
                options=[Option(option_id="a", label="A"), Option(option_id="b", label="B")],
            )
        ],
    )


class Rig:
    def __init__(self, fake: FakeSlack, store: Store, spacing_s: float, timeout_s: int) -> None:
        self.fake = fake
        self.store = store
        self.health = Health()
        client = make_web_client(fake.workspace.bot_token, fake.api_url, timeout=timeout_s)
        self.publisher = Publisher(
            store,
            SlackGateway(client),
            kandev_url="https://kandev.example.test",
            health=self.health,
            post_spacing_s=spacing_s,
        )
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self.publisher.run, args=(self.stop,), daemon=True)

    def card(self, n: int):
        bundle = _bundle(n)
        assert self.store.claim(
            bundle.pending_id,
            task_id=bundle.task_id,
            channel=CHANNEL,
            bundle=bundle,
            task=TaskInfo(task_id=bundle.task_id, title=f"Task {n}"),
        )
        card = self.store.get(bundle.pending_id)
        assert card is not None
        self.publisher.enqueue_post(card)
        return card

    def drain(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while self.store.outbox_pending_count():
            assert time.monotonic() < deadline, "the outbox was not drained"
            time.sleep(0.05)


@pytest.fixture
def rig(fake_slack: FakeSlack, tmp_path: Path) -> Iterator[Rig]:
    store = Store(f"sqlite:///{tmp_path / 'pub.db'}")
    made: list[Rig] = []

    def make(spacing_s: float = 1.0, timeout_s: int = 1) -> Rig:
        rig = Rig(fake_slack, store, spacing_s, timeout_s)
        made.append(rig)
        return rig

    yield make
    for r in made:
        r.stop.set()
        r.publisher.wake()
        r.thread.join(timeout=10)
    store.close()


@pytest.mark.fault("post timed out, then paced behind a backlog", guarantee=3)
def test_timed_out_post_is_looked_up_even_after_being_paced(rig, fake_slack, reliability):
    r = rig(spacing_s=1.2, timeout_s=1)
    # The first post reaches Slack but answers after the client gave up.
    fake_slack.faults.slow("chat.postMessage", 1.6, times=1)
    cards = [r.card(n) for n in range(1, 5)]
    r.thread.start()
    r.drain(timeout=30)
    per_card = [
        len([c for c in calls_for(fake_slack, "chat.postMessage", c.pending_id) if c.ok])
        for c in cards
    ]
    duplicates = sum(n - 1 for n in per_card if n > 1)
    lost = sum(1 for n in per_card if n == 0)
    assert per_card == [1, 1, 1, 1], per_card
    stored = [r.store.get(c.pending_id) for c in cards]
    assert all(s is not None and s.ts for s in stored), "every card is recorded as posted"
    reliability.record(
        "post timed out, then paced behind a backlog",
        guarantee=3,
        survived=True,
        lost=lost,
        duplicates=duplicates,
    )


def test_posts_are_paced_per_channel_and_edits_jump_the_queue(rig, fake_slack):
    r = rig(spacing_s=0.4)
    fake_slack.faults.limit_post_message(per_second=3.0, burst=1)
    cards = [r.card(n) for n in range(1, 9)]
    r.thread.start()
    fake_slack.wait_for(lambda: any(c.ok for c in fake_slack.calls("chat.postMessage")), 5)
    first = r.store.get(cards[0].pending_id)
    fake_slack.wait_for(lambda: (c := r.store.get(first.pending_id)) and c.ts, 5)
    posted = r.store.get(first.pending_id)
    r.publisher.enqueue_update(posted)  # an edit while seven posts still wait
    r.drain(timeout=30)
    posts = [c for c in fake_slack.calls("chat.postMessage") if c.ok]
    update = next(c for c in fake_slack.calls("chat.update") if c.ok)
    assert len(posts) == 8
    assert not [c for c in fake_slack.calls("chat.postMessage") if c.status == 429]
    # The edit went out ahead of the waiting posts (ordering, not timing: this machine is noisy).
    assert update.at < posts[-1].at
    assert sum(1 for p in posts if p.at > update.at) >= 3
    gaps = [b.at - a.at for a, b in zip(posts, posts[1:], strict=False)]
    # Paced: no two posts much closer than the spacing (arrival jitter allowed for).
    assert min(gaps) >= 0.4 - 0.15, gaps


def test_a_post_rate_limit_does_not_hold_up_edits(rig, fake_slack):
    r = rig(spacing_s=0.1)
    first = r.card(1)
    r.thread.start()
    fake_slack.wait_for(lambda: (c := r.store.get(first.pending_id)) and c.ts, 5)
    fake_slack.faults.rate_limit("chat.postMessage", retry_after=4, times=1)
    second = r.card(2)
    fake_slack.wait_for(lambda: calls_for(fake_slack, "chat.postMessage", second.pending_id), 5)
    limited_at = time.time()
    r.publisher.enqueue_update(r.store.get(first.pending_id))
    update = fake_slack.wait_for_call("chat.update", lambda c: c.ok, timeout=5)
    r.drain(timeout=10)
    retried = [c for c in calls_for(fake_slack, "chat.postMessage", second.pending_id)]
    assert [c.status for c in retried] == [429, 200]
    # Ordering, not a time budget: the edit went out while the post still sat out its 4 s.
    assert limited_at <= update.at < retried[1].at, "the edit waited for the post's Retry-After"
    assert retried[1].at - retried[0].at >= 4.0 - 0.05


def test_backoff_counts_failures_not_pacing(rig, fake_slack):
    r = rig(spacing_s=0.3)
    cards = [r.card(n) for n in range(1, 7)]
    r.thread.start()
    # The last post has been paced several times by now; one 5xx must cost ~1 s, not 2**takes.
    fake_slack.wait_for(lambda: len([c for c in fake_slack.calls("chat.postMessage")]) >= 5, 10)
    fake_slack.faults.server_error("chat.postMessage", 500, times=3)  # the client retries twice
    r.drain(timeout=8)
    assert all(len(calls_for(fake_slack, "chat.postMessage", c.pending_id)) >= 1 for c in cards)


@pytest.mark.fault("post refused until an operator fixes it", guarantee=3)
def test_a_post_refused_for_a_fixable_reason_is_kept_and_posted_later(rig, fake_slack, reliability):
    r = rig(spacing_s=0.1)
    fake_slack.faults.error("chat.postMessage", "not_in_channel", times=2)
    card = r.card(1)
    r.thread.start()
    fake_slack.wait_for(
        lambda: len(calls_for(fake_slack, "chat.postMessage", card.pending_id)) >= 1, 5
    )
    fake_slack.wait_for(lambda: not r.health.report().ok, 5)
    assert "invite the app" in " ".join(r.health.report().reasons)
    r.drain(timeout=10)  # the operator "invited the app": the third try is accepted
    posts = [c for c in calls_for(fake_slack, "chat.postMessage", card.pending_id) if c.ok]
    assert len(posts) == 1
    assert r.store.get(card.pending_id).ts == posts[0].response["ts"]
    assert r.health.report().ok
    reliability.record(
        "post refused until an operator fixes it",
        guarantee=3,
        survived=True,
        lost=1 - len(posts),
        duplicates=max(len(posts) - 1, 0),
    )
