"""Two replicas on one PostgreSQL database (issue 22's rule: each new path works on replicas):
a snooze chosen on one replica is seen by the other (its listing hides the question), the
same choice redelivered to the other changes nothing, and when the snooze ends — both
replicas' workers looking — the DM card is restored and "Back from snooze" is posted once."""

from __future__ import annotations

import pytest

from kandev_slack.kits.fakeslack import BOB, Delivery
from tests.e2e.helpers import MARGIN_S, buttons, db_question, start_bot
from tests.e2e.test_snooze import (
    SNOOZE,
    option,
    selects,
    subscribe,
    thread_texts,
    wait_dm,
    wait_dm_state,
)
from tests.unit.listing.e2e import run_list, wait_home


@pytest.mark.postgres
def test_a_snooze_ending_on_two_replicas_says_back_from_snooze_once(
    pg_url, bot_factory, seed, fake_slack, slack_driver
):
    bots = [start_bot(bot_factory, db_url=pg_url, SNOOZE_HOUR_S="4") for _ in range(2)]
    first, second = (slack_driver(bot.events_url) for bot in bots)
    dm = fake_slack.ctx.resolve_channel(BOB.id)
    subscribe(first)
    bundle = seed([db_question()], title="Snoozed on two replicas")
    copy = wait_dm(fake_slack, dm)

    value = option(bundle.pending_id, 1)  # "1 h": 4 s here
    assert first.select(dm, copy.ts, action_id=SNOOZE, option=value, user=BOB).status == 200
    wait_dm_state(fake_slack, dm, copy.ts, snoozed=True)
    # The other replica sees it: Bob's listing there hides the question.
    listing = run_list(second, user=BOB)
    assert "Snoozed on two replicas" not in listing.all_text
    assert "💤 1 question snoozed by you" in listing.all_text

    back = "⏰ Back from snooze: Snoozed on two replicas is still waiting for an answer"
    fake_slack.wait_for(
        lambda: back in thread_texts(fake_slack, dm, copy.ts), 4 + 5 + MARGIN_S, "the notice"
    )
    restored = wait_dm_state(fake_slack, dm, copy.ts, snoozed=False)
    assert "PostgreSQL" in buttons(restored) and selects(restored) == [SNOOZE]
    fake_slack.settle(quiet=2.0, timeout=20)
    assert thread_texts(fake_slack, dm, copy.ts) == [back]  # once, though both replicas look

    # Snoozed again from Home on one replica; Slack's redelivered copy of that choice reaches
    # the other replica and changes nothing (the DM card is not edited again).
    first.app_home_opened(BOB)
    home = wait_home(fake_slack, BOB.id, lambda v: "Snoozed on two replicas" in v.all_text)
    longer = option(bundle.pending_id, 4)  # 16 s here: it does not end during the test
    assert first.select_in_view(home, action_id=SNOOZE, option=longer).status == 200
    wait_dm_state(fake_slack, dm, copy.ts, snoozed=True)
    fake_slack.settle(quiet=1.0, timeout=10)
    edits = dm_edits(fake_slack, dm, copy.ts)
    assert edits >= 3  # collapsed, restored, collapsed again
    again = Delivery(retry_num=1, retry_reason="http_timeout")
    redelivered = second.select_in_view(
        home, action_id=SNOOZE, option=longer, delivery=again, as_shown=True
    )
    assert redelivered.status == 200
    fake_slack.settle(quiet=1.0, timeout=10)
    assert dm_edits(fake_slack, dm, copy.ts) == edits


def dm_edits(fake, dm: str, ts: str) -> int:
    return len(
        [
            c
            for c in fake.calls("chat.update")
            if c.ok and c.params.get("channel") == dm and c.params.get("ts") == ts
        ]
    )
