"""Calm DMs end to end (real Kandev, fake Slack): seven DM cards for one subscriber within a
minute arrive as three DM cards and one gathering DM (counting the whole burst) with the other
four in its thread, each of them answerable."""

from __future__ import annotations

from kandev_slack.kits.fakeslack import BOB, FakeSlack, PostedMessage
from tests.e2e.helpers import (
    MARGIN_S,
    POLL_S,
    db_question,
    outcome_line,
    slash_reply,
    wait_card,
    wait_outcome,
)

GATHERING = "🧵 "


def dms(fake: FakeSlack, dm: str) -> list[PostedMessage]:
    return fake.messages(dm)


def test_seven_dm_cards_within_a_minute_are_three_and_a_gathering(
    app, seed, fake_slack, slack_driver
):
    driver = slack_driver(app.events_url)
    dm = fake_slack.ctx.resolve_channel(BOB.id)
    slash_reply(driver, "subscribe", "Subscribed", user=BOB)
    bundles = [
        seed([db_question()], title=f"Agent {n}", priority="critical" if n in (4, 6) else "")
        for n in range(7)
    ]
    cards = [wait_card(fake_slack, bundle.pending_id) for bundle in bundles]

    fake_slack.wait_for(
        lambda: len(dms(fake_slack, dm)) >= 8,
        POLL_S * 7 + 15 + MARGIN_S,
        "eight messages in the DM",
    )
    fake_slack.settle(quiet=2, timeout=30)
    messages = dms(fake_slack, dm)
    alone = [m for m in messages if m.thread_ts is None and not m.text.startswith(GATHERING)]
    gatherings = [m for m in messages if m.text.startswith(GATHERING)]
    assert len(alone) == 3 and len(gatherings) == 1, [m.text for m in messages]
    gathering = gatherings[0]
    threaded = [m for m in messages if m.thread_ts == gathering.ts]
    assert len(threaded) == 4
    assert len(messages) == 8
    fake_slack.wait_for(
        lambda: fake_slack.message(dm, gathering.ts).text == "🧵 7 agents need you — 2 critical",
        10,
        "the gathering's count, edited as cards joined",
    )

    # A card in the thread answers like any DM card.
    last = threaded[-1]
    card = next(
        c for c, b in zip(cards, bundles, strict=True) if b.pending_id in str(last.metadata)
    )
    assert driver.click(dm, last.ts, text="MongoDB", user=BOB).status == 200
    edited = wait_outcome(fake_slack, card.ts, f"✅ Answered by <@{BOB.id}> in Slack")
    fake_slack.wait_for(
        lambda: outcome_line(fake_slack.message(dm, last.ts)) == outcome_line(edited),
        POLL_S + MARGIN_S,
        "the threaded DM card's outcome",
    )
