""" "I'm on it" end to end (real Kandev, fake Slack): a person takes a waiting card, another
takes it over, the holder releases it — each click acknowledged, the card (and its thread)
showing the change, the listing and the App Home showing who is on it; a claim pauses the
card's reminders until it runs out, then says so and they resume; in both Slack modes."""

from __future__ import annotations

import re
from pathlib import Path

from kandev_slack.kits.fakeslack import ALICE, BOB, CallRecord, FakeSlack, PostedMessage
from tests.e2e.helpers import (
    MARGIN_S,
    POLL_S,
    act,
    buttons,
    click_stale,
    db_question,
    more_options,
    outcome_line,
    start_bot,
    wait_card,
    wait_ephemeral,
    wait_final,
    wait_outcome,
)
from tests.kit.harness import CHANNEL
from tests.unit.listing.e2e import home_sections, run_list, wait_home

CLAIM = "👀 I'm on it"
TAKE_OVER = "👀 Take over"
_DATE = re.compile(r"<!date\^\d+\^\{time\}\|[^>]+>")


def claim_line(message: PostedMessage) -> str | None:
    """The card's "on it" line, its time token shown as ``<time>`` (None: nobody on it)."""
    for block in message.blocks:
        if block.get("block_id") == "kq_claim":
            return _DATE.sub("<time>", block["elements"][0]["text"])
    return None


def wait_claim(fake: FakeSlack, ts: str, line: str | None) -> PostedMessage:
    def shown() -> PostedMessage | None:
        message = fake.message(CHANNEL, ts)
        return message if claim_line(message) == line else None

    return fake.wait_for(
        shown,
        POLL_S + MARGIN_S,
        f"the card's claim line {line!r}",
    )


def thread_texts(fake: FakeSlack, ts: str) -> list[str]:
    calls: list[CallRecord] = [
        c
        for c in fake.calls("chat.postMessage")
        if c.ok and c.params.get("channel") == CHANNEL and c.params.get("thread_ts") == ts
    ]
    return [str(c.params.get("text")) for c in calls]


def test_take_take_over_and_release_show_on_the_card_the_listing_and_home(
    app_factory, seed, fake_slack, slack_driver
):
    bot = start_bot(app_factory)
    bundle = seed([db_question()], title="Who looks into this?")
    card = wait_card(fake_slack, bundle.pending_id)
    assert CLAIM in more_options(card) and claim_line(card) is None
    driver = slack_driver(bot.events_url)

    ack = act(driver, CHANNEL, card.ts, CLAIM, user=ALICE)
    assert ack.status == 200 and ack.elapsed < 3.0
    taken = wait_claim(fake_slack, card.ts, f"👀 <@{ALICE.id}> is on it (since <time>)")
    assert buttons(taken)[:3] == ["PostgreSQL", "MongoDB", "Other answer…"]
    assert TAKE_OVER in more_options(taken) and "Release" in more_options(taken)
    assert CLAIM not in more_options(taken)
    told = wait_ephemeral(fake_slack, ALICE.id, "on it")
    assert told.text.startswith("👀 You're on it: until <!date^")

    # Shown in the listing and on the App Home.
    listing = run_list(driver, user=BOB)
    assert f"👀 <@{ALICE.id}> since <!date^" in listing.all_text
    driver.app_home_opened(BOB)
    home = wait_home(fake_slack, BOB.id, lambda v: "Who looks into this?" in v.all_text)
    assert f"👀 <@{ALICE.id}> since <!date^" in home_sections(home)[0]

    # Bob takes it over: the card shows him, the thread tells Alice.
    assert act(driver, CHANNEL, card.ts, TAKE_OVER, user=BOB).status == 200
    wait_claim(fake_slack, card.ts, f"👀 <@{BOB.id}> is on it (since <time>)")
    fake_slack.wait_for(
        lambda: (
            f"👀 <@{BOB.id}> took this over from <@{ALICE.id}>."
            in thread_texts(fake_slack, card.ts)
        ),
        POLL_S + MARGIN_S,
        "the take-over notice in the thread",
    )
    assert wait_ephemeral(fake_slack, BOB.id, "took this over").text.startswith(
        f"👀 You took this over from <@{ALICE.id}>"
    )

    # Alice cannot release Bob's claim; Bob can.
    assert act(driver, CHANNEL, card.ts, "Release", user=ALICE).status == 200
    refused = wait_ephemeral(fake_slack, ALICE.id, "only they can release it")
    assert refused.text.startswith(f"👀 <@{BOB.id}> is on it (since <!date^")
    assert act(driver, CHANNEL, card.ts, "Release", user=BOB).status == 200
    released = wait_claim(fake_slack, card.ts, None)
    assert CLAIM in more_options(released)
    wait_ephemeral(fake_slack, BOB.id, "You released it")

    # Answering a claimed card works as ever, and the resolved card keeps no claim.
    act(driver, CHANNEL, card.ts, CLAIM, user=ALICE)
    wait_claim(fake_slack, card.ts, f"👀 <@{ALICE.id}> is on it (since <time>)")
    driver.click(CHANNEL, card.ts, text="MongoDB", user=ALICE)
    assert wait_final(seed.server, bundle.task_id, bundle.pending_id, "answered")
    edited = wait_outcome(fake_slack, card.ts, "✅")
    assert claim_line(edited) is None and TAKE_OVER not in more_options(edited)
    # A late "I'm on it" from a stale client is told it is over.
    click_stale(driver, CHANNEL, card.ts, text=CLAIM, user=BOB)
    late = wait_ephemeral(fake_slack, BOB.id, "Nobody needs to be on it any more")
    assert late.text.startswith(f"<@{ALICE.id}> answered first in Slack")

    entries = sorted(bot.bot.store.audit_log.audit_entries(bundle.pending_id), key=lambda e: e.id)
    actions = [
        (e.user, e.action, e.detail)
        for e in entries
        if e.action in ("claim", "release") and e.result == "ok"
    ]
    assert actions[:3] == [
        (ALICE.id, "claim", "taken"),
        (BOB.id, "claim", f"took over from {ALICE.id}"),
        (BOB.id, "release", "released"),
    ]
    assert [e.result for e in entries if e.user == BOB.id][-1] == "resolved_already"


def test_a_claim_pauses_reminders_until_it_runs_out(
    app_factory, seed, fake_slack, slack_driver, tmp_path: Path
):
    routes = tmp_path / "routes.toml"
    routes.write_text(
        f'[defaults]\nchannel = "{CHANNEL}"\nremind_after = "6s"\nclaim_for = "8s"\n',
        encoding="utf-8",
    )
    bot = start_bot(app_factory, KANDEV_SLACK_CONFIG=str(routes))
    bundle = seed([db_question()], title="Paused reminders")
    card = wait_card(fake_slack, bundle.pending_id)
    act(slack_driver(bot.events_url), CHANNEL, card.ts, CLAIM, user=ALICE)
    wait_claim(fake_slack, card.ts, f"👀 <@{ALICE.id}> is on it (since <time>)")

    lapsed = f"⏰ <@{ALICE.id}>'s claim ran out after 8 s: reminders and escalation resume."
    fake_slack.wait_for(
        lambda: len(thread_texts(fake_slack, card.ts)) >= 2, 20 + MARGIN_S, "two thread notices"
    )
    texts = thread_texts(fake_slack, card.ts)
    # Unclaimed, the reminder would have come 6 s after the card, during the claim; it comes
    # after the claim ran out (the claim's notice first), once the card waited 6 s unclaimed.
    assert texts[0] == lapsed
    assert texts[1].startswith("⏰ Still waiting for an answer after 6 s")
    assert claim_line(fake_slack.message(CHANNEL, card.ts)) is None


def test_im_on_it_over_socket_mode(bot_factory, seed, fake_slack, slack_driver):
    start_bot(bot_factory, mode="socket")
    bundle = seed([db_question()], title="Claimed over the socket")
    card = wait_card(fake_slack, bundle.pending_id)
    ack = act(slack_driver(transport="socket"), CHANNEL, card.ts, CLAIM, user=BOB)
    assert ack.ok
    wait_claim(fake_slack, card.ts, f"👀 <@{BOB.id}> is on it (since <time>)")
    wait_ephemeral(fake_slack, BOB.id, "You're on it")
    assert outcome_line(fake_slack.message(CHANNEL, card.ts)) is None
