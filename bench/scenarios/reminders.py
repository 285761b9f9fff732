"""7. Reminders under load: ``count`` bundles are waiting when the bot starts, and their routes
remind every 2 s, at most three times each; while those reminders flow, ``fresh`` new bundles
are asked. Steps that fall due while a channel's queue is long are sent as one reminder (the
latest due step), so a card gets one to three.

The fake Slack enforces Slack's per-channel ``chat.postMessage`` limit (1 message/s, bursts of 3,
429 + Retry-After beyond), which thread replies share with cards. Measured: every card and every
reminder posted exactly once, the 429s the bot ran into, and how long the new bundles took to get
their cards while reminders were queued in their channels (cards go first).
"""

from __future__ import annotations

import math
import sqlite3
import time
from collections import Counter
from dataclasses import dataclass

from bench.kandev import DirectBundles, delete_tasks
from bench.stats import Summary
from bench.world import World
from kandev_slack.kits.fakeslack import CallRecord, FakeSlack

RATE_PER_CHANNEL = 1.0
BURST = 3
REMINDERS_EACH = 3
AFTER_S = 5.0  # keep watching this long after the last reminder, for late duplicates


@dataclass(frozen=True)
class Reminders:
    count: int
    channels: int
    fresh: int
    cards_posted: int
    card_duplicates: int
    reminders_sent: int
    cards_reminded: int  # cards that got at least one reminder (all of them, expected)
    most_per_card: int  # at most REMINDERS_EACH
    reminder_duplicates: int
    rate_limited: int
    fresh_queued_reminders: int  # reminders not yet sent when the new bundles were asked
    fresh_to_card: Summary | None  # new bundle asked → its card posted (milliseconds)
    all_reminders_s: float | None


def _payload(call: CallRecord) -> dict:
    metadata = call.params.get("metadata")
    payload = metadata.get("event_payload") if isinstance(metadata, dict) else None
    return payload if isinstance(payload, dict) else {}


def _posts(fake: FakeSlack) -> tuple[list[CallRecord], list[CallRecord], int]:
    """(card posts, reminder replies, 429s) among the fake's chat.postMessage calls."""
    cards, replies, limited = [], [], 0
    for call in fake.calls("chat.postMessage"):
        if call.status == 429:
            limited += 1
        elif call.ok and call.params.get("thread_ts"):
            if str(_payload(call).get("key", "")).startswith("remind:"):
                replies.append(call)
        elif call.ok and _payload(call).get("pending_id"):
            cards.append(call)
    return cards, replies, limited


def _reminded(replies: list[CallRecord]) -> Counter[str]:
    """Distinct reminders per bundle."""
    keys = {str(_payload(call).get("key")) for call in replies}
    return Counter(key.split(":")[1] for key in keys if key.count(":") == 2)


def _queued_replies(bot) -> int:
    """Thread replies in the bot's outbox not sent yet (read from its database)."""
    with sqlite3.connect(bot.env["DATABASE_URL"].removeprefix("sqlite:///")) as db:
        row = db.execute(
            "SELECT count(*) FROM outbox WHERE kind = 'reply' AND status = 'pending'"
        ).fetchone()
        return int(row[0])


def run(world: World, *, count: int, fresh: int = 20) -> Reminders:
    direct = DirectBundles(world.kandev)
    asked = direct.ask_all(direct.prepare(world.workspace_ids, count))
    ids = {a.pending_id for a in asked}
    later = direct.prepare(world.workspace_ids, fresh)
    routing = world.work_dir / "routing-reminders.toml"
    routing.write_text(
        f'[defaults]\nremind_after = "2s"\nremind_every = "2s"\n'
        f"max_reminders = {REMINDERS_EACH}\n\n" + world.routing_file.read_text()
    )
    fake = world.fake_slack()
    fake.faults.limit_post_message(per_second=RATE_PER_CHANNEL, burst=BURST)
    bot = world.bot(fake, "reminders", KANDEV_SLACK_CONFIG=str(routing))
    per_channel = math.ceil(count / len(world.routes))
    timeout = 60.0 + 3.0 * per_channel * (REMINDERS_EACH + 1)
    try:
        start = time.time()
        bot.start()
        fake.wait_for(lambda: len(_posts(fake)[0]) >= count, timeout, "every card")
        fake.wait_for(lambda: len(_posts(fake)[1]) >= count, timeout, "reminders flowing")
        queued = _queued_replies(bot)
        fresh_asked = direct.ask_all(later)
        fresh_ids = {a.pending_id for a in fresh_asked}

        def fresh_posted() -> bool:
            return fresh_ids <= {_payload(c).get("pending_id") for c in _posts(fake)[0]}

        fake.wait_for(fresh_posted, timeout, "the new bundles' cards")
        fake.wait_for(lambda: len(_reminded(_posts(fake)[1])) >= count, timeout, "a reminder each")
        fake.settle(quiet=AFTER_S, timeout=timeout)  # the last steps, then nothing more
    finally:
        bot.stop()
        delete_tasks(world.kandev, [a.task_id for a in asked] + [s.task_id for s in later])
    cards, replies, limited = _posts(fake)
    first_post: dict[str, float] = {}
    per_card: Counter[str] = Counter()
    for call in cards:
        pending_id = _payload(call)["pending_id"]
        per_card[pending_id] += 1
        first_post.setdefault(pending_id, call.at)
    keys = Counter(str(_payload(call)["key"]) for call in replies)
    per_reminded = _reminded(replies)
    waits = [
        first_post[a.pending_id] - a.sent_at for a in fresh_asked if a.pending_id in first_post
    ]
    return Reminders(
        count=count,
        channels=len(world.routes),
        fresh=fresh,
        cards_posted=sum(1 for p in ids | fresh_ids if p in per_card),
        card_duplicates=sum(n - 1 for n in per_card.values()),
        reminders_sent=len(keys),
        cards_reminded=sum(1 for p in ids if p in per_reminded),
        most_per_card=max(per_reminded.values(), default=0),
        reminder_duplicates=sum(n - 1 for n in keys.values()),
        rate_limited=limited,
        fresh_queued_reminders=queued,
        fresh_to_card=Summary.of_seconds(waits),
        all_reminders_s=max(c.at for c in replies) - start if replies else None,
    )
