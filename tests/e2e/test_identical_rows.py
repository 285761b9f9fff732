"""Identical items as one row (issue 33), end to end (the real Kandev, the fake Slack): three
identical questions waiting in the channel are ONE row of ``/kandev-questions`` and of the App
Home — the first card's headline, "3 agents" with a link to each card, "Answer for all…" —
counted as 3; answering there answers the first card and offers the others "Send to all".
Identical approvals are one row alike (each decided on its own card)."""

from __future__ import annotations

from kandev_slack.core.approval import approval_key
from kandev_slack.kits.fakeslack import ALICE, iter_elements
from kandev_slack.kits.kandevkit import question
from tests.e2e.helpers import (
    assert_sending,
    db_question,
    open_modal,
    start_bot,
    wait_card,
    wait_ephemeral,
)
from tests.e2e.test_answer_all import OFFER, wait_group
from tests.e2e.test_identical_threads import MAKE
from tests.unit.listing.e2e import answer_value, home_sections, run_list, titles, wait_home

ANSWER_MODAL = "kq_answer_modal"


def answer_buttons(blocks: list[dict]) -> list[str]:
    return [
        r.label
        for r in iter_elements(blocks)
        if r.type == "button" and r.label.startswith("Answer")
    ]


def test_three_identical_questions_are_one_row_in_the_listing_and_on_home(
    app_factory, seed, fake_slack, slack_driver
) -> None:
    bot = start_bot(app_factory)
    bundles = [seed([db_question()], title=f"Rows agent {n}") for n in (1, 2, 3)]
    cards = [wait_card(fake_slack, b.pending_id) for b in bundles]
    wait_group(fake_slack, cards[0].ts, "🧵 2 more agents asked this: <")
    queue = question(
        "q", "Queue", "Which queue should we use?", ("Kafka", "A log"), ("SQS", "A queue")
    )
    alone = seed([queue], title="Rows alone")
    wait_card(fake_slack, alone.pending_id)
    driver = slack_driver(bot.events_url)

    listing = run_list(driver, "rows")
    assert titles(listing.all_text) == ["Rows agent 1", "Rows alone"]
    assert "*4 questions are waiting for an answer matching" in listing.all_text
    assert "*3 agents*: <" in listing.all_text
    assert answer_buttons(listing.blocks) == ["Answer for all…", "Answer…"]

    ack = driver.app_home_opened(ALICE)
    assert ack.status == 200
    home = wait_home(fake_slack, ALICE.id, lambda v: "*3 agents*" in v.all_text)
    waiting, _ = home_sections(home)
    assert titles(waiting) == ["Rows agent 1", "Rows alone"]
    assert "4 questions are waiting" in waiting
    assert answer_buttons(home.blocks) == ["Answer for all…", "Answer…"]

    # "Answer for all…" answers the first card; the others are offered "Send to all".
    mark = fake_slack.mark()
    driver.click_ephemeral(listing, value=answer_value(bundles[0].pending_id))
    view = open_modal(fake_slack, ANSWER_MODAL, after=mark)
    [choice] = [b["block_id"] for b in view.blocks if b["block_id"].startswith("kq_choice:")]
    assert_sending(driver.submit_view(view, {choice: {"kq_choice": "q1_opt1"}}))
    offer = wait_ephemeral(fake_slack, ALICE.id, OFFER)
    assert "Send to all 2" in [r.label for r in iter_elements(offer.blocks) if r.type == "button"]


def test_identical_approvals_are_one_row_in_the_listing_and_on_home(
    app_factory, seed, fake_slack, slack_driver
) -> None:
    bot = start_bot(app_factory)
    requests = [seed.permission([MAKE], title=f"Rows build {n}") for n in (1, 2)]
    cards = [wait_card(fake_slack, approval_key(r.request_id)) for r in requests]
    wait_group(fake_slack, cards[0].ts, "🧵 1 more agent asked this: <")
    driver = slack_driver(bot.events_url)

    listing = run_list(driver, "approvals")
    assert "2 approvals wait for a decision" in listing.all_text
    assert "Rows build 1" in listing.all_text and "Rows build 2" not in listing.all_text
    assert "*2 agents*: <" in listing.all_text

    driver.app_home_opened(ALICE)
    home = wait_home(fake_slack, ALICE.id, lambda v: "*2 agents*" in v.all_text)
    assert "2 approvals wait for a decision" in home.all_text
    assert "Rows build 2" not in home.all_text
