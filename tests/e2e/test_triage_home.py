"""The App Home tab end to end: published on app_home_opened, answerable from there, and
refreshed for the people who opened it when cards change state (new card, answered in Slack,
answered in Kandev)."""

from __future__ import annotations

from kandev_slack.kits.fakeslack import ALICE, BOB, iter_elements
from tests.e2e.helpers import (
    assert_sending,
    db_question,
    open_modal,
    outcome_line,
    start_bot,
    wait_card,
    wait_final,
    wait_outcome,
)
from tests.kit.harness import CHANNEL
from tests.unit.listing.e2e import answer_value, home_sections, titles, wait_home

ANSWER_MODAL = "kq_answer_modal"


def test_home_is_published_and_answerable(app_factory, seed, fake_slack, slack_driver):
    bot = start_bot(app_factory)
    bundle = seed([db_question()], title="Home: pick a DB")
    card = wait_card(fake_slack, bundle.pending_id)
    driver = slack_driver(bot.events_url)

    ack = driver.app_home_opened(ALICE)
    assert ack.status == 200 and ack.elapsed < 3.0
    home = wait_home(fake_slack, ALICE.id, lambda v: "Home: pick a DB" in v.all_text)
    waiting, resolved = home_sections(home)
    assert "Waiting for an answer" in waiting and "Home: pick a DB" in titles(waiting)
    assert "*Database* — Which database should we use?" in waiting
    assert "asked <!date^" in waiting  # a date token, never a frozen age (issue 21)
    assert "Workspace *Default Workspace*" in waiting and "|View card>" in waiting
    assert "Nothing resolved yet." in resolved
    # "Open in Kandev" is a link (one primary button a row: Answer…).
    assert f"<https://kandev.example.test/t/{bundle.task_id}|Open in Kandev>" in waiting
    buttons = {r.label: r.element for r in iter_elements(home.blocks) if r.type == "button"}
    assert "Open in Kandev" not in buttons and buttons["Answer…"]["style"] == "primary"
    assert driver.home_of(BOB) is None  # only the person who opened it

    # Answer from Home: the same modal, recorded in Kandev, the card edited, Home refreshed.
    mark = fake_slack.mark()
    driver.click_in_view(home, value=answer_value(bundle.pending_id))
    view = open_modal(fake_slack, ANSWER_MODAL, after=mark)
    assert '"o":"home"' in view.private_metadata
    [choice] = [b["block_id"] for b in view.blocks if b["block_id"].startswith("kq_choice:")]
    ack = driver.submit_view(view, {choice: {"kq_choice": "q1_opt1"}})
    assert_sending(ack)
    assert wait_final(seed.server, bundle.task_id, bundle.pending_id, "answered")["status"] == (
        "answered"
    )
    edited = wait_outcome(fake_slack, card.ts, "✅")
    assert outcome_line(edited) == f"✅ Answered by <@{ALICE.id}> in Slack: PostgreSQL"

    line = f"✅ Answered by <@{ALICE.id}> in Slack: PostgreSQL"
    home = wait_home(fake_slack, ALICE.id, lambda v: line in home_sections(v)[1])
    waiting, resolved = home_sections(home)
    assert "Home: pick a DB" not in waiting
    assert titles(resolved)[0] == "Home: pick a DB"


def test_home_is_refreshed_when_cards_change(app_factory, seed, fake_slack, slack_driver):
    bot = start_bot(app_factory)
    driver = slack_driver(bot.events_url)
    driver.app_home_opened(ALICE)
    wait_home(fake_slack, ALICE.id, lambda v: "Recently resolved" in v.all_text)

    # A new bundle: its card is posted, and Alice's Home shows it without her reopening it.
    bundle = seed([db_question()], title="Refresh: new question")
    card = wait_card(fake_slack, bundle.pending_id)
    wait_home(fake_slack, ALICE.id, lambda v: "Refresh: new question" in home_sections(v)[0])

    # Answered in Kandev's web UI: the card says so, and so does Home ("Recently resolved").
    assert seed.server.answer(bundle.pending_id, {"db": "q1_opt2"}).status_code == 200
    wait_outcome(fake_slack, card.ts, "✅")
    home = wait_home(
        fake_slack,
        ALICE.id,
        lambda v: "✅ Answered in Kandev: MongoDB" in home_sections(v)[1],
    )
    assert "Refresh: new question" not in home_sections(home)[0]
    assert driver.home_of(BOB) is None
    assert outcome_line(fake_slack.message(CHANNEL, card.ts)) == "✅ Answered in Kandev: MongoDB"
