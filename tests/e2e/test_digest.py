"""Digests end to end (real Kandev, fake Slack, the bot in-process): ``/kandev-questions digest
09:00`` set, and the DM received at that time in the person's Slack time zone (the digests'
clock shifted by ``DIGEST_CLOCK_SHIFT_S`` so that the next Monday's 09:00 there comes a few
seconds after the bot starts), its "Answer…" opening the answer form; ``digest now`` with and
without items; ``digest off``; bad input changing nothing; a route's channel digest; identical
questions listed as one row ("3 agents", critical first) whose "Answer for all…" answers the
first card and offers the others "Send to all"."""

from __future__ import annotations

import dataclasses
import time as clock
from datetime import UTC, datetime, time, timedelta
from pathlib import Path

from kandev_slack.core.timing.digest import next_send, zone
from kandev_slack.kits.fakeslack import ALICE, FakeSlack, PostedMessage, iter_elements
from tests.e2e.helpers import (
    MARGIN_S,
    assert_sending,
    db_question,
    distinct_question,
    open_modal,
    start_bot,
    wait_card,
    wait_ephemeral,
    wait_outcome,
)
from tests.e2e.test_answer_all import OFFER, wait_group
from tests.kit.harness import CHANNEL
from tests.unit.listing.e2e import run_list

DIGEST = "☀️ *Digest:"
#: Seconds between the bot's start and the digest's time (on its shifted clock).
LEAD_S = 8.0


def shift_to(at: time, tz_name: str, lead_s: float = LEAD_S) -> str:
    """DIGEST_CLOCK_SHIFT_S putting the next Monday's ``at`` in ``tz_name`` ``lead_s`` seconds
    from now. A Monday, whatever day the test runs: a route's channel digest is due from its
    time until the next digest day's, so a bot starting just before Tuesday's sends Monday's
    at once, as it should after being down (core/timing/digest.py, ``due_date``); the day
    before a Monday has no digest."""
    tz = zone(tz_name)
    assert tz is not None
    now = datetime.now(UTC)
    target = next_send(now + timedelta(minutes=2), at, tz)
    while target.astimezone(tz).weekday() != 0:
        target = next_send(target + timedelta(minutes=1), at, tz)
    return f"{(target - now).total_seconds() - lead_s:.3f}"


def digests_in(fake: FakeSlack, channel: str) -> list[PostedMessage]:
    return [
        m
        for m in fake.messages(channel)
        if m.blocks and str(m.blocks[0].get("text", {}).get("text", "")).startswith(DIGEST)
    ]


def wait_digest(fake: FakeSlack, channel: str, timeout: float) -> PostedMessage:
    return fake.wait_for(
        lambda: next(iter(digests_in(fake, channel)), None), timeout, f"a digest in {channel}"
    )


def say(driver, text: str, user=ALICE) -> str:
    """What ``/kandev-questions text`` answers (in the ack, or after it when it takes longer)."""
    return run_list(driver, text, user=user).text


def test_a_digest_set_comes_at_its_time_in_the_persons_zone(
    app_factory, seed, fake_slack, slack_driver
):
    fake_slack.add_user(dataclasses.replace(ALICE, tz="America/New_York"))
    bundle = seed([db_question()], title="Digest me")
    shift = shift_to(time(9, 0), "America/New_York")
    bot = start_bot(app_factory, DIGEST_CHECK_S="0.3", DIGEST_CLOCK_SHIFT_S=shift)
    driver = slack_driver(bot.events_url)
    wait_card(fake_slack, bundle.pending_id)
    said = say(driver, "digest 09:00")
    assert "set for *09:00* on weekdays (America/New_York)" in said
    dm = fake_slack.ctx.resolve_channel(ALICE.id)
    assert digests_in(fake_slack, dm) == []  # not before its time
    digest = wait_digest(fake_slack, dm, LEAD_S + 5 + MARGIN_S)
    text = " ".join(str(b.get("text", {}).get("text", "")) for b in digest.blocks)
    assert "Digest me" in text and "View card" in text and "waiting" in text
    answer = next(b for b in digest.blocks if b.get("block_id", "").startswith("kq_digest:"))
    assert answer["accessory"]["action_id"] == "kq_answer"
    # Its "Answer…" opens the answer form, as the listing's does.
    mark = fake_slack.mark()
    ack = driver.click(
        dm,
        digest.ts,
        action_id="kq_answer",
        value=answer["accessory"]["value"],
        block_id=answer["block_id"],
    )
    assert ack.status == 200
    open_modal(fake_slack, "kq_answer_modal", mark)
    # Once a day: nothing more comes.
    clock.sleep(2.0)
    assert len(digests_in(fake_slack, dm)) == 1
    assert "weekdays at *09:00*" in say(driver, "digest")


def test_digest_now_off_and_bad_input(app_factory, seed, fake_slack, slack_driver):
    bot = start_bot(app_factory, DIGEST_CHECK_S="0.3")
    driver = slack_driver(bot.events_url)
    dm = fake_slack.ctx.resolve_channel(ALICE.id)
    assert say(driver, "digest now") == "Nothing is waiting for you."
    assert "You have no digest" in say(driver, "digest")
    for bad in ("25:00", "9", "tomorrow"):
        assert "is not a time of day" in say(driver, f"digest {bad}")
    assert "You have no digest" in say(driver, "digest")  # nothing was changed
    bundle = seed([db_question()], title="Send it now")
    wait_card(fake_slack, bundle.pending_id)
    assert "on its way: 1 question for you" in say(driver, "digest now")
    digest = wait_digest(fake_slack, dm, 5 + MARGIN_S)
    assert "Send it now" in digest.text
    assert "set for *07:15*" in say(driver, "digest 07:15")
    assert say(driver, "digest off") == "Your digest is off."
    assert "You have no digest" in say(driver, "digest")


def test_a_route_posts_its_channel_digest(app_factory, seed, fake_slack, tmp_path: Path):
    config = tmp_path / "routes.toml"
    config.write_text(
        f'[defaults]\nchannel = "{CHANNEL}"\ndigest = "09:00"\ndigest_tz = "Europe/Berlin"\n',
        encoding="utf-8",
    )
    bundle = seed([db_question()], title="In the channel digest")
    same = seed([db_question()], title="Also in the channel digest")  # identical: one row
    shift = shift_to(time(9, 0), "Europe/Berlin")
    start_bot(
        app_factory,
        KANDEV_SLACK_CONFIG=str(config),
        DIGEST_CHECK_S="0.3",
        DIGEST_CLOCK_SHIFT_S=shift,
    )
    card = wait_card(fake_slack, bundle.pending_id)
    wait_card(fake_slack, same.pending_id)
    wait_group(fake_slack, card.ts, "🧵 1 more agent asked this: <")
    digest = wait_digest(fake_slack, CHANNEL, LEAD_S + 5 + MARGIN_S)
    assert "2 questions wait for an answer in this channel" in str(digest.blocks[0]["text"]["text"])
    assert digest.text == "Digest: 2 questions wait: In the channel digest (2 agents)"
    clock.sleep(1.5)
    assert len(digests_in(fake_slack, CHANNEL)) == 1


def test_identical_questions_are_one_row_of_the_digest_answered_for_all(
    app_factory, seed, fake_slack, slack_driver
):
    bot = start_bot(app_factory, DIGEST_CHECK_S="0.3")
    driver = slack_driver(bot.events_url)
    dm = fake_slack.ctx.resolve_channel(ALICE.id)
    bundles = [
        seed([db_question()], title=f"Digest agent {n}", priority="critical" if n == 3 else "")
        for n in (1, 2, 3)
    ]
    cards = [wait_card(fake_slack, b.pending_id) for b in bundles]
    wait_group(fake_slack, cards[0].ts, "🧵 2 more agents asked this: <")
    alone = seed([distinct_question(5)], title="Digest alone", priority="high")
    wait_card(fake_slack, alone.pending_id)

    assert "on its way: 4 questions for you" in say(driver, "digest now")
    digest = wait_digest(fake_slack, dm, 5 + MARGIN_S)
    assert "4 questions wait for you" in str(digest.blocks[0]["text"]["text"])
    rows = [b for b in digest.blocks if b.get("block_id", "").startswith("kq_digest:")]
    assert len(rows) == 2  # the three identical ones are one row, critical first
    group, single = (str(b["text"]["text"]) for b in rows)
    assert group.startswith("🔴 ") and "Digest agent 1" in group and "*3 agents*" in group
    assert group.count("View card") == 1 and "Digest agent 2" not in digest.text
    assert single.startswith("🟠 ") and "Digest alone" in single
    answer = rows[0]["accessory"]
    assert answer["text"]["text"] == "Answer for all…"

    # "Answer for all…" answers the first card; the others are offered "Send to all".
    mark = fake_slack.mark()
    ack = driver.click(
        dm, digest.ts, action_id="kq_answer", value=answer["value"], block_id=rows[0]["block_id"]
    )
    assert ack.status == 200
    view = open_modal(fake_slack, "kq_answer_modal", mark)
    [choice] = [b["block_id"] for b in view.blocks if b["block_id"].startswith("kq_choice:")]
    assert_sending(driver.submit_view(view, {choice: {"kq_choice": "q1_opt1"}}))
    wait_outcome(fake_slack, cards[0].ts, f"✅ Answered by <@{ALICE.id}> in Slack")
    offer = wait_ephemeral(fake_slack, ALICE.id, OFFER)
    assert "Send to all 2" in [r.label for r in iter_elements(offer.blocks) if r.type == "button"]
