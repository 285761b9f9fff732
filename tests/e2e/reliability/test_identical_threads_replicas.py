"""Identical questions on two replicas sharing PostgreSQL (issue 33): each card is posted
exactly once — the first in the channel, the others in its thread — whichever replica posts."""

from __future__ import annotations

import pytest

from tests.e2e.helpers import card_posts, db_question, start_bot, wait_card
from tests.e2e.test_answer_all import assert_in_thread, wait_group
from tests.e2e.test_identical_threads import channel_cards


@pytest.mark.postgres
def test_two_replicas_post_each_identical_card_once(pg_url, bot_factory, seed, fake_slack) -> None:
    for _ in range(2):
        start_bot(bot_factory, db_url=pg_url)
    bundles = [seed([db_question()], title=f"Replicated {n}") for n in range(1, 5)]
    cards = [wait_card(fake_slack, b.pending_id, timeout=30) for b in bundles]
    first_ts = cards[0].ts
    wait_group(fake_slack, first_ts, "🧵 3 more agents asked this: <")
    fake_slack.settle(quiet=1.0, timeout=15)
    assert channel_cards(fake_slack) == [first_ts]
    for card in cards[1:]:
        assert_in_thread(fake_slack, card.ts, first_ts)
    for bundle in bundles:
        assert len(card_posts(fake_slack, bundle.pending_id)) == 1
