"""13. Quiet hours: ``count`` bundles waiting over the routed channels while every route is in
quiet hours (UTC, ending ``QUIET_S`` after the bot starts); their first reminder falls due
meanwhile and is held. When the quiet hours end each channel gets ONE summary. Measured: the
summaries (one per channel, listing its cards), duplicates, reminders that leaked during the
quiet hours, and quiet end → summary posted, beside the floor measured in the same run: a
reminder step due after the quiet hours (the second) → posted, i.e. the bot's ordinary
follow-up latency under the same per-channel limit (1 post/s, bursts of 3).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from bench.kandev import DirectBundles, delete_tasks
from bench.stats import Summary
from bench.world import World
from kandev_slack.kits.fakeslack import CallRecord, FakeSlack

QUIET_S = 20.0
REMIND_AFTER_S = 1
SUMMARY = "🌙 While you were away:"
RATE_PER_CHANNEL = 1.0
BURST = 3


@dataclass(frozen=True)
class QuietRun:
    count: int
    channels: int
    summaries: int
    summary_duplicates: int  # more than one summary in a channel
    leaked: int  # reminders posted while it was quiet
    end_to_summary: Summary | None  # quiet end → the channel's summary posted (ms)
    floor: Summary | None  # a reminder step due after the quiet end → posted (ms)


def _payload(call: CallRecord) -> dict:
    metadata = call.params.get("metadata")
    payload = metadata.get("event_payload") if isinstance(metadata, dict) else None
    return payload if isinstance(payload, dict) else {}


def _calls(fake: FakeSlack) -> tuple[dict[str, float], list[CallRecord], list[CallRecord]]:
    """(first card post time per pending id, summaries, reminder replies)."""
    cards: dict[str, float] = {}
    summaries, reminders = [], []
    for call in fake.calls("chat.postMessage"):
        if not call.ok:
            continue
        if str(call.params.get("text", "")).startswith(SUMMARY):
            summaries.append(call)
        elif call.params.get("thread_ts") and str(_payload(call).get("key", "")).startswith(
            "remind:"
        ):
            reminders.append(call)
        elif pending_id := _payload(call).get("pending_id"):
            cards.setdefault(str(pending_id), call.at)
    return cards, summaries, reminders


def run(world: World, *, count: int) -> QuietRun:
    direct = DirectBundles(world.kandev)
    asked = direct.ask_all(direct.prepare(world.workspace_ids, count))
    fake = world.fake_slack()
    fake.faults.limit_post_message(per_second=RATE_PER_CHANNEL, burst=BURST)
    now = datetime.now(UTC)
    end = now + timedelta(seconds=QUIET_S)
    every = int(QUIET_S) + 5  # the second step falls due after the quiet hours
    routing = world.work_dir / "routing-quiet.toml"
    routing.write_text(
        f'[defaults]\nremind_after = "{REMIND_AFTER_S}s"\nremind_every = "{every}s"\n'
        "max_reminders = 2\n"
        f'quiet_hours = "{(now - timedelta(hours=1)):%H:%M:%S}-{end:%H:%M:%S}"\n'
        'quiet_tz = "UTC"\n\n' + world.routing_file.read_text()
    )
    bot = world.bot(fake, "quiet", KANDEV_SLACK_CONFIG=str(routing), QUIET_CHECK_S="1")
    channels = len(world.routes)
    timeout = QUIET_S + every + 60.0 + 3.0 * count / channels
    try:
        bot.start()
        fake.wait_for(lambda: len(_calls(fake)[1]) >= channels, timeout, "a summary per channel")
        fake.wait_for(lambda: len(_calls(fake)[2]) >= count, timeout, "the second reminders")
        fake.settle(quiet=3.0, timeout=timeout)
    finally:
        bot.stop()
        delete_tasks(world.kandev, [a.task_id for a in asked])
    cards, summaries, reminders = _calls(fake)
    end_s = end.timestamp()
    per_channel: dict[str, list[float]] = {}
    for call in summaries:
        per_channel.setdefault(str(call.params.get("channel")), []).append(call.at)
    leaked = sum(1 for call in reminders if call.at < end_s)
    floor = [
        call.at - (cards[pid] + REMIND_AFTER_S + every)
        for call in reminders
        if (pid := str(_payload(call).get("key", "")).split(":")[1]) in cards and call.at >= end_s
    ]
    ids = {a.pending_id for a in asked}
    assert ids <= set(cards), "every card posted"
    return QuietRun(
        count=count,
        channels=channels,
        summaries=len(per_channel),
        summary_duplicates=sum(len(times) - 1 for times in per_channel.values()),
        leaked=leaked,
        end_to_summary=Summary.of_seconds([min(t) - end_s for t in per_channel.values()]),
        floor=Summary.of_seconds([max(f, 0.0) for f in floor]),
    )
