"""Quiet hours end to end (real Kandev, fake Slack): a reminder due while it is quiet waits and
arrives as the one summary when the quiet hours end; a critical one goes through; a person sets
their own quiet hours with ``/kandev-questions quiet`` (in their Slack time zone), and a range
that cannot be used changes nothing. Ranges here are a few seconds long (``HH:MM:SS``), in UTC,
and ``QUIET_CHECK_S`` is short, so the quiet hours end within the test."""

from __future__ import annotations

import time
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

from kandev_slack.core.timing.quiet import quiet_hours
from kandev_slack.kits.fakeslack import BOB, CallRecord, FakeSlack
from tests.e2e.helpers import MARGIN_S, POLL_S, db_question, slash_reply, start_bot, wait_card
from tests.kit.harness import CHANNEL, question

REMINDER = "⏰ Still waiting for an answer after"
SUMMARY = "🌙 While you were away:"


def clock(at: datetime) -> str:
    return at.strftime("%H:%M:%S")


#: A question of its own (an identical one would be posted in the first card's thread).
FIRE = question("fire", "Hotfix", "Ship the hotfix now?", ("Yes", "Ship it"), ("No", "Wait"))

#: How long the tests' quiet hours last from now: long enough for a loaded machine to post
#: the cards first (the tests wait for the summary as a bound past it, never as a target).
QUIET_S = 25


def quiet_for(seconds: float) -> str:
    """A UTC range that started an hour ago and ends ``seconds`` from now."""
    now = datetime.now(UTC)
    return f"{clock(now - timedelta(hours=1))}-{clock(now + timedelta(seconds=seconds))}"


def routing_file(tmp_path: Path, body: str) -> str:
    path = tmp_path / "routes.toml"
    path.write_text(f'[defaults]\nchannel = "{CHANNEL}"\n{body}', encoding="utf-8")
    return str(path)


def posts(fake: FakeSlack, channel: str, starts: str) -> list[CallRecord]:
    return [
        c
        for c in fake.calls("chat.postMessage")
        if c.ok
        and c.params.get("channel") == channel
        and str(c.params.get("text")).startswith(starts)
    ]


def test_a_reminder_held_in_quiet_hours_arrives_as_the_summary(
    app_factory, seed, fake_slack, tmp_path
):
    config = routing_file(
        tmp_path,
        f'remind_after = "1s"\nquiet_hours = "{quiet_for(QUIET_S)}"\nquiet_tz = "UTC"\n',
    )
    start_bot(app_factory, KANDEV_SLACK_CONFIG=config, QUIET_CHECK_S="0.2")
    quiet = seed([db_question()], title="Asked at night")
    fire = seed([FIRE], title="On fire", priority="critical")
    card = wait_card(fake_slack, quiet.pending_id)
    hot = wait_card(fake_slack, fire.pending_id)

    # The critical one's reminder goes through at once; the other's waits.
    fake_slack.wait_for(
        lambda: [
            c for c in posts(fake_slack, CHANNEL, REMINDER) if c.params.get("thread_ts") == hot.ts
        ],
        5 + MARGIN_S,
        "the critical question's reminder",
    )
    assert not [
        c for c in posts(fake_slack, CHANNEL, REMINDER) if c.params.get("thread_ts") == card.ts
    ]
    assert posts(fake_slack, CHANNEL, SUMMARY) == []

    summary = fake_slack.wait_for(
        lambda: next(iter(posts(fake_slack, CHANNEL, SUMMARY)), None),
        QUIET_S + 10 + MARGIN_S,
        "the summary once the quiet hours end",
    )
    assert summary.params["text"] == f"{SUMMARY} 2 items wait — 1 critical"
    listing = str(summary.params["blocks"])
    assert "Which database" in listing and "http" in listing  # each links to its card
    assert summary.params.get("thread_ts") is None  # in the channel, not a thread
    time.sleep(2)
    # Once, and the held reminder is not sent as well.
    assert len(posts(fake_slack, CHANNEL, SUMMARY)) == 1
    assert not [
        c for c in posts(fake_slack, CHANNEL, REMINDER) if c.params.get("thread_ts") == card.ts
    ]


def test_a_person_s_own_quiet_hours_hold_their_dm_cards(
    app_factory, seed, fake_slack, slack_driver
):
    fake_slack.add_user(replace(BOB, tz="UTC"))
    bot = start_bot(app_factory, QUIET_CHECK_S="0.2")
    driver = slack_driver(bot.events_url)
    dm = fake_slack.ctx.resolve_channel(BOB.id)
    slash_reply(driver, "subscribe", "Subscribed", user=BOB)

    bad = slash_reply(driver, "quiet 25:00-08:00", "Quiet hours not changed", user=BOB)
    assert "25:00-08:00" in bad.all_text
    slash_reply(driver, "quiet", "You have no quiet hours", user=BOB)

    hours = quiet_for(QUIET_S)
    shown = quiet_hours(hours).text()  # as the bot writes it back (00:43:00 is 00:43)
    slash_reply(driver, f"quiet {hours}", f"Quiet hours set: *{shown}* (UTC", user=BOB)
    slash_reply(driver, "quiet", shown, user=BOB)

    bundle = seed([db_question()], title="While Bob sleeps")
    wait_card(fake_slack, bundle.pending_id)
    time.sleep(POLL_S + 1)
    assert fake_slack.messages(dm) == []  # no DM card while it is quiet
    summary = fake_slack.wait_for(
        lambda: next(iter(posts(fake_slack, dm, SUMMARY)), None),
        QUIET_S + 10 + MARGIN_S,
        "Bob's summary",
    )
    assert summary.params["text"] == f"{SUMMARY} 1 item waits"
    time.sleep(1)
    assert len(fake_slack.messages(dm)) == 1  # the summary only, once

    slash_reply(driver, "quiet off", "Quiet hours removed", user=BOB)


def test_quiet_off_releases_what_waited_at_once(app_factory, seed, fake_slack, slack_driver):
    fake_slack.add_user(replace(BOB, tz="UTC"))
    bot = start_bot(app_factory, QUIET_CHECK_S="0.2")
    driver = slack_driver(bot.events_url)
    dm = fake_slack.ctx.resolve_channel(BOB.id)
    slash_reply(driver, "subscribe", "Subscribed", user=BOB)
    hours = quiet_for(3 * 3600)  # would end in three hours
    slash_reply(driver, f"quiet {hours}", "Quiet hours set", user=BOB)
    fire = seed([FIRE], title="Critical at night", priority="critical")
    calm = seed([db_question()], title="Can wait")
    wait_card(fake_slack, fire.pending_id)
    wait_card(fake_slack, calm.pending_id)
    # The critical one's DM card goes through; the other waits.
    fake_slack.wait_for(lambda: len(fake_slack.messages(dm)) == 1, POLL_S + 10, "one DM card")
    time.sleep(2)
    assert len(fake_slack.messages(dm)) == 1

    slash_reply(driver, "quiet off", "Quiet hours removed", user=BOB)
    summary = fake_slack.wait_for(
        lambda: next(iter(posts(fake_slack, dm, SUMMARY)), None), 10, "the summary at once"
    )
    assert summary.params["text"] == f"{SUMMARY} 2 items wait — 1 critical"


def test_an_escalation_held_in_quiet_hours_is_counted_in_the_summary(
    app_factory, seed, fake_slack, tmp_path
):
    leads = "C0LEADS0001"
    fake_slack.add_channel(leads, "leads")
    config = routing_file(
        tmp_path,
        f'escalate_after = "1s"\nescalate_to = "{leads}"\n'
        f'quiet_hours = "{quiet_for(QUIET_S)}"\nquiet_tz = "UTC"\n',
    )
    ends = time.monotonic() + QUIET_S
    start_bot(app_factory, KANDEV_SLACK_CONFIG=config, QUIET_CHECK_S="0.2")
    calm = seed([db_question()], title="Escalated at night")
    later = seed([FIRE], title="Also escalated at night")  # not critical: it waits too
    cards = [wait_card(fake_slack, b.pending_id) for b in (calm, later)]

    def notices() -> list[CallRecord]:
        threads = {c.ts for c in cards}
        return [c for c in posts(fake_slack, CHANNEL, "🔺") if c.params.get("thread_ts") in threads]

    # Past escalate_after (a few rounds) and still quiet: no escalation card, no notice.
    time.sleep(POLL_S + 3)
    assert time.monotonic() < ends, "the quiet hours were over before the check"
    assert fake_slack.messages(leads) == []
    assert notices() == []

    summary = fake_slack.wait_for(
        lambda: next(iter(posts(fake_slack, leads, SUMMARY)), None),
        max(ends - time.monotonic(), 0) + 10 + MARGIN_S,
        "the summary in the escalation channel once the quiet hours end",
    )
    assert summary.params["text"] == f"{SUMMARY} 2 items wait"
    listing = str(summary.params["blocks"]).casefold()
    assert "which database" in listing and "hotfix" in listing
    time.sleep(2)
    fake_slack.settle(quiet=2, timeout=30)
    # The summary once, in the escalation channel; the held escalations are not posted as well.
    assert len(fake_slack.messages(leads)) == 1
    assert notices() == []
    assert posts(fake_slack, CHANNEL, SUMMARY) == []
