"""Snooze end to end (real Kandev, fake Slack): a subscriber snoozes a question from their DM
card and from the App Home — their DM card collapses to one line, their listing hides it and
says so, their Home lists it under "💤 Snoozed" with Unsnooze — while everyone else's views
stay as they were; Unsnooze brings it back; a snooze that ends restores the DM card and says
"Back from snooze" in its thread once; a resolved question's snooze is deleted; in both Slack
modes."""

from __future__ import annotations

import json
import re

from kandev_slack.kits.fakeslack import ALICE, BOB, CallRecord, Delivery, FakeSlack, PostedMessage
from tests.e2e.helpers import (
    MARGIN_S,
    POLL_S,
    buttons,
    db_question,
    slash_reply,
    start_bot,
    wait_card,
    wait_ephemeral,
    wait_outcome,
)
from tests.kit.harness import CHANNEL
from tests.unit.listing.e2e import home_sections, run_list, wait_home

SNOOZE = "kq_snooze"
_DATE = re.compile(r"<!date\^\d+\^[^|]+\|[^>]+>")


def option(pending_id: str, hours: int) -> str:
    """The value of the "Snooze <hours> h" option (as the bot renders it)."""
    return json.dumps({"p": pending_id, "h": hours}, separators=(",", ":"))


def subscribe(driver, user=BOB) -> None:
    slash_reply(driver, "subscribe", "Subscribed", user=user)


def wait_dm(fake: FakeSlack, dm: str) -> PostedMessage:
    return fake.wait_for(
        lambda: next(iter(fake.messages(dm)), None), POLL_S + MARGIN_S + 5, f"a DM card in {dm}"
    )


def selects(message: PostedMessage) -> list[str]:
    return [
        element["action_id"]
        for block in message.blocks
        for element in block.get("elements", [])
        if element.get("type") == "static_select"
    ]


def snoozed_line(message: PostedMessage) -> str | None:
    """A collapsed DM card's line, its date token shown as ``<date>`` (None: not collapsed)."""
    for block in message.blocks:
        if block.get("block_id") == "kq_snoozed":
            return _DATE.sub("<date>", block["text"]["text"])
    return None


def wait_dm_state(fake: FakeSlack, dm: str, ts: str, *, snoozed: bool) -> PostedMessage:
    def shown() -> PostedMessage | None:
        message = fake.message(dm, ts)
        return message if (snoozed_line(message) is not None) == snoozed else None

    return fake.wait_for(
        shown, POLL_S + MARGIN_S, f"the DM card {'snoozed' if snoozed else 'back'}"
    )


def thread_texts(fake: FakeSlack, channel: str, ts: str) -> list[str]:
    calls: list[CallRecord] = [
        c
        for c in fake.calls("chat.postMessage")
        if c.ok and c.params.get("channel") == channel and c.params.get("thread_ts") == ts
    ]
    return [str(c.params.get("text")) for c in calls]


def test_snooze_from_the_dm_card_and_home_hides_it_from_that_person_only(
    app_factory, seed, fake_slack, slack_driver
):
    bot = start_bot(app_factory)
    driver = slack_driver(bot.events_url)
    dm = fake_slack.ctx.resolve_channel(BOB.id)
    subscribe(driver)
    bundle = seed([db_question()], title="Snoozed by Bob")
    pid = bundle.pending_id
    card = wait_card(fake_slack, pid)
    assert selects(card) == []  # never on a channel card
    copy = wait_dm(fake_slack, dm)
    assert selects(copy) == [SNOOZE]

    # Bob snoozes it for 4 h from his DM card: it collapses to one line with Unsnooze.
    ack = driver.select(dm, copy.ts, action_id=SNOOZE, option=option(pid, 4), user=BOB)
    assert ack.status == 200 and ack.elapsed < 3.0
    collapsed = wait_dm_state(fake_slack, dm, copy.ts, snoozed=True)
    line = snoozed_line(collapsed) or ""
    assert line.startswith("💤 Snoozed until <date> · *<") and line.endswith("|Snoozed by Bob>*")
    assert buttons(collapsed) == ["Unsnooze"]
    told = wait_ephemeral(fake_slack, BOB.id, "Snoozed for 4 h")
    assert told.text.startswith("💤 Snoozed for 4 h: until <!date^")
    # The channel card is untouched.
    assert "PostgreSQL" in buttons(fake_slack.message(CHANNEL, card.ts))

    # Bob's listing hides it and says so; Alice's still lists it.
    listing = run_list(driver, user=BOB)
    assert "Snoozed by Bob" not in listing.all_text
    assert "💤 1 question snoozed by you is not listed" in listing.all_text
    assert "Snoozed by Bob" in run_list(driver, user=ALICE).all_text

    # Bob's Home: under "💤 Snoozed (1)" with Unsnooze, not under "Waiting for an answer".
    driver.app_home_opened(BOB)
    home = wait_home(fake_slack, BOB.id, lambda v: "💤 Snoozed (1)" in v.all_text)
    waiting, _ = home_sections(home)
    before_snoozed = waiting.partition("💤 Snoozed (1)")[0]
    assert "Snoozed by Bob" not in before_snoozed
    assert "Snoozed by Bob" in waiting.partition("💤 Snoozed (1)")[2]
    driver.app_home_opened(ALICE)
    alices = wait_home(fake_slack, ALICE.id, lambda v: "Snoozed by Bob" in v.all_text)
    assert "💤 Snoozed" not in alices.all_text

    # Unsnooze on Home: back on his Home and his DM card.
    assert driver.click_in_view(home, text="Unsnooze", user=BOB).status == 200
    back = wait_home(
        fake_slack, BOB.id, lambda v: "💤 Snoozed" not in v.all_text and "Unsnoozed" in v.all_text
    )
    assert "Unsnoozed" in back.all_text  # the notice at the top of his Home
    restored = wait_dm_state(fake_slack, dm, copy.ts, snoozed=False)
    assert selects(restored) == [SNOOZE] and "PostgreSQL" in buttons(restored)

    # Snoozed again from Home (1 h); Slack's redelivered copy of the choice changes nothing.
    shown = driver.home_of(BOB)
    assert shown is not None
    assert driver.select_in_view(shown, action_id=SNOOZE, option=option(pid, 1)).status == 200
    wait_home(fake_slack, BOB.id, lambda v: "💤 Snoozed (1)" in v.all_text)
    wait_dm_state(fake_slack, dm, copy.ts, snoozed=True)
    again = Delivery(retry_num=1, retry_reason="http_timeout")
    redelivered = driver.select_in_view(
        shown, action_id=SNOOZE, option=option(pid, 1), delivery=again, as_shown=True
    )
    assert redelivered.status == 200

    # Alice answers on the channel card: Bob's DM card shows the outcome, his snooze is gone.
    driver.click(CHANNEL, card.ts, text="MongoDB", user=ALICE)
    edited = wait_outcome(fake_slack, card.ts, "✅")
    fake_slack.wait_for(
        lambda: (
            snoozed_line(fake_slack.message(dm, copy.ts)) is None
            and "✅" in fake_slack.message(dm, copy.ts).all_text
        ),
        POLL_S + MARGIN_S,
        "Bob's DM card with the outcome",
    )
    assert edited.ts == card.ts
    store = bot.bot.store
    fake_slack.wait_for(
        lambda: store.snoozes.snooze_of(BOB.id, pid) is None, 5, "the resolved item's snooze gone"
    )
    # Its audit line is written just after the snooze is ended (a write of its own).
    fake_slack.wait_for(
        lambda: any(e.action == "snooze_ended" for e in store.audit_log.audit_entries(pid)),
        5,
        "the end of the snooze audited",
    )

    entries = sorted(store.audit_log.audit_entries(pid), key=lambda e: e.id)
    snoozing = [
        (e.user, e.action, e.source, e.result, e.detail if e.action == "snooze" else "")
        for e in entries
        if e.action in ("snooze", "unsnooze", "snooze_ended")
    ]
    assert snoozing == [
        (BOB.id, "snooze", "slack:select", "ok", "4 h"),
        (BOB.id, "unsnooze", "slack:button", "ok", ""),
        (BOB.id, "snooze", "slack:select", "ok", "1 h"),  # once: the redelivery changed nothing
        (BOB.id, "snooze_ended", "bot", "resolved", ""),
    ]


def test_a_snooze_that_ends_restores_the_dm_card_and_says_so_once(
    app_factory, seed, fake_slack, slack_driver
):
    bot = start_bot(app_factory, SNOOZE_HOUR_S="3")  # "1 h" lasts 3 s here
    driver = slack_driver(bot.events_url)
    dm = fake_slack.ctx.resolve_channel(BOB.id)
    subscribe(driver)
    bundle = seed([db_question()], title="Back soon")
    copy = wait_dm(fake_slack, dm)
    driver.select(dm, copy.ts, action_id=SNOOZE, option=option(bundle.pending_id, 1), user=BOB)
    wait_dm_state(fake_slack, dm, copy.ts, snoozed=True)

    back = "⏰ Back from snooze: Back soon is still waiting for an answer"
    fake_slack.wait_for(
        lambda: back in thread_texts(fake_slack, dm, copy.ts), 3 + 5 + MARGIN_S, "the notice"
    )
    restored = wait_dm_state(fake_slack, dm, copy.ts, snoozed=False)
    assert "PostgreSQL" in buttons(restored) and selects(restored) == [SNOOZE]
    fake_slack.settle(quiet=1.5, timeout=10)
    assert thread_texts(fake_slack, dm, copy.ts) == [back]
    ended = [
        e
        for e in bot.bot.store.audit_log.audit_entries(bundle.pending_id)
        if e.action == "snooze_ended"
    ]
    assert [(e.user, e.result) for e in ended] == [(BOB.id, "ok")]


def test_a_resolved_question_cannot_be_snoozed(app_factory, seed, fake_slack, slack_driver):
    bot = start_bot(app_factory)
    driver = slack_driver(bot.events_url)
    bundle = seed([db_question()], title="Answered before the snooze")
    card = wait_card(fake_slack, bundle.pending_id)
    driver.app_home_opened(BOB)
    home = wait_home(fake_slack, BOB.id, lambda v: "Answered before the snooze" in v.all_text)
    driver.click(CHANNEL, card.ts, text="MongoDB", user=ALICE)
    wait_outcome(fake_slack, card.ts, "✅")
    ack = driver.select_in_view(
        home, action_id=SNOOZE, option=option(bundle.pending_id, 4), user=BOB, as_shown=True
    )
    assert ack.status == 200
    told = wait_home(fake_slack, BOB.id, lambda v: "Nothing to snooze any more" in v.all_text)
    assert f"<@{ALICE.id}> answered first in Slack" in told.all_text
    assert bot.bot.store.snoozes.snooze_of(BOB.id, bundle.pending_id) is None


def test_snooze_and_unsnooze_over_socket_mode(bot_factory, seed, fake_slack, slack_driver):
    start_bot(bot_factory, mode="socket")
    driver = slack_driver(transport="socket")
    dm = fake_slack.ctx.resolve_channel(BOB.id)
    subscribe(driver)
    bundle = seed([db_question()], title="Snoozed over the socket")
    copy = wait_dm(fake_slack, dm)
    ack = driver.select(
        dm, copy.ts, action_id=SNOOZE, option=option(bundle.pending_id, 24), user=BOB
    )
    assert ack.ok
    collapsed = wait_dm_state(fake_slack, dm, copy.ts, snoozed=True)
    wait_ephemeral(fake_slack, BOB.id, "Snoozed for 24 h")
    assert driver.click(dm, collapsed.ts, text="Unsnooze", user=BOB).ok
    wait_dm_state(fake_slack, dm, copy.ts, snoozed=False)
    wait_ephemeral(fake_slack, BOB.id, "Unsnoozed")
