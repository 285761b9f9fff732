"""Enough context to answer from Slack, end to end with the real Kandev: the card's task line,
the Conversation view (opened within the ack, filled from the session's messages in order,
within limits for a long session, refused to non-answerers), routing by labels and priority,
the listing's label/priority filters, and a repeated question showing the earlier answer."""

from __future__ import annotations

import time

from kandev_slack.kits.fakeslack import ALICE, BOB, blocks_text
from tests.e2e.helpers import (
    act,
    assert_sending,
    db_question,
    open_modal,
    start_bot,
    wait_card,
    wait_ephemeral,
    wait_final,
    wait_outcome,
)
from tests.kit.harness import CHANNEL
from tests.unit.listing.e2e import run_list, titles

CONVERSATION = "kq_conversation_modal"
ANSWER_MODAL = "kq_answer_modal"
OTHER_CHANNEL = "C0PLATFORM"

TRANSCRIPT = [
    {"say": "I read the **orders** schema."},
    {"tool": "npm test", "command": "npm test", "exit": 1},
    {"say": "Two tests fail on the `orders` table."},
    {"tool": "git status", "command": "git status", "exit": 0},
]


def filled(fake_slack, view_id: str, timeout: float = 15.0):
    """The Conversation view once views.update filled it."""

    def done():
        view = fake_slack.view(view_id)
        return view if "Loading" not in blocks_text(view.blocks) else None

    return fake_slack.wait_for(done, timeout, f"the Conversation view {view_id} filled")


def test_conversation_opens_at_once_and_shows_the_session_in_order(
    app_factory, seed, fake_slack, slack_driver
):
    bot = start_bot(app_factory)
    bundle = seed(
        [db_question()],
        title="Conversation: orders DB",
        transcript=TRANSCRIPT,
        labels=["database", "infra"],
        priority="high",
        description="## Goal\nMove the **orders** table.",
    )
    card = wait_card(fake_slack, bundle.pending_id)
    # one grey line: agent, priority, labels, workspace, when (issue 21)
    line = next(b for b in card.blocks if b.get("block_id") == "kq_meta")
    assert "🟠 high · 🏷 database, infra · Workspace *" in line["elements"][0]["text"]
    assert line["elements"][0]["text"].startswith("🤖 ")
    assert card.text.startswith("🟠 High · ")
    driver = slack_driver(bot.events_url)

    mark = fake_slack.mark()
    ack = act(driver, CHANNEL, card.ts, "Conversation", user=ALICE)
    assert ack.status == 200 and ack.elapsed < 3.0
    view = open_modal(fake_slack, CONVERSATION, after=mark)  # the trigger was still valid
    view = filled(fake_slack, view.id)
    text = blocks_text(view.blocks)
    assert "Move the *orders* table." in text
    order = [
        "I read the *orders* schema.",
        "🔧 Ran `npm test` — failed (exit 1)",
        "Two tests fail on the `orders` table.",
        "🔧 Ran `git status`",
        "*Database*",
    ]
    positions = [text.index(part) for part in order]
    assert positions == sorted(positions), text
    assert "New session started" not in text
    assert fake_slack.violations == []

    # "Answer…" in the Conversation view pushes the usual form on top; it answers.
    mark = fake_slack.mark()
    driver.click_in_view(view, text="Answer…", user=ALICE)
    push = fake_slack.wait_for_call(
        "views.push",
        lambda c: (c.params.get("view") or {}).get("callback_id") == ANSWER_MODAL and c.ok,
        timeout=10,
        after=mark,
    )
    form = fake_slack.view(push.response["view"]["id"])
    [choice] = [b["block_id"] for b in form.blocks if b["block_id"].startswith("kq_choice:")]
    ack = driver.submit_view(form, {choice: {"kq_choice": "q1_opt1"}}, user=ALICE)
    assert_sending(ack)
    assert wait_final(seed.server, bundle.task_id, bundle.pending_id, "answered")["status"] == (
        "answered"
    )
    wait_outcome(fake_slack, card.ts, "✅")


def _wait_stored(server, session_id: str, text: str, timeout: float = 15.0) -> None:
    """Until the session's newest messages (as Kandev serves them) mention ``text``."""
    deadline = time.monotonic() + timeout
    path = f"/task-sessions/{session_id}/messages"
    while text not in server.http.get(path, params={"limit": 20, "sort": "desc"}).text:
        assert time.monotonic() < deadline, f"Kandev never stored {text!r}"
        time.sleep(0.1)


def test_a_long_session_stays_within_the_modal_limits(app_factory, seed, fake_slack, slack_driver):
    bot = start_bot(app_factory)
    long_markdown = "## Findings\n" + "\n".join(f"- item **{n}** " + "x" * 80 for n in range(60))
    steps = []
    for n in range(120):
        steps.append({"say": f"Step {n}: " + (long_markdown if n % 10 == 0 else "checked.")})
        steps.append({"tool": f"check {n}", "command": f"make check-{n}", "exit": n % 3})
    bundle = seed([db_question()], title="Conversation: long", transcript=steps, timeout=90)
    card = wait_card(fake_slack, bundle.pending_id)
    # Kandev stores an agent's last tool updates a moment after its question may be listed:
    # the view reads what is stored when it is opened, so open it once the last one is.
    _wait_stored(seed.server, bundle.session_id, "make check-119")
    driver = slack_driver(bot.events_url)
    mark = fake_slack.mark()
    ack = act(driver, CHANNEL, card.ts, "Conversation", user=ALICE)
    assert ack.status == 200 and ack.elapsed < 3.0
    view = filled(fake_slack, open_modal(fake_slack, CONVERSATION, after=mark).id)
    text = blocks_text(view.blocks)
    assert len(view.blocks) <= 100
    assert "🔧 Ran `make check-119` — failed (exit 2)" in text  # the newest is shown
    assert "Step 0:" not in text
    assert "earlier messages" in text and "read the whole conversation in Kandev" in text
    assert fake_slack.violations == []


def test_only_answerers_may_open_the_conversation(
    app_factory, seed, fake_slack, slack_driver, tmp_path
):
    config = tmp_path / "routing.toml"
    config.write_text(f'[defaults]\nchannel = "{CHANNEL}"\nanswerers = ["{ALICE.id}"]\n')
    bot = start_bot(app_factory, KANDEV_SLACK_CONFIG=str(config))
    bundle = seed([db_question()], title="Conversation: Alice only")
    card = wait_card(fake_slack, bundle.pending_id)
    driver = slack_driver(bot.events_url)
    ack = act(driver, CHANNEL, card.ts, "Conversation", user=BOB)
    assert ack.status == 200
    wait_ephemeral(fake_slack, BOB.id, "not on the list of people who may answer")
    opened = [
        c
        for c in fake_slack.calls("views.open")
        if (c.params.get("view") or {}).get("callback_id") == CONVERSATION
    ]
    assert opened == []


def test_routing_by_priority_and_labels_and_the_listing_filters(
    app_factory, seed, fake_slack, slack_driver, tmp_path
):
    config = tmp_path / "routing.toml"
    config.write_text(
        f'[defaults]\nchannel = "{CHANNEL}"\n\n'
        f'[[route]]\npriority = ["critical"]\nchannel = "{OTHER_CHANNEL}"\n\n'
        f'[[route]]\nlabels = ["database"]\nchannel = "{OTHER_CHANNEL}"\n'
        f'answerers = ["{BOB.id}"]\n'
    )
    bot = start_bot(app_factory, KANDEV_SLACK_CONFIG=str(config))
    fire = seed([db_question()], title="Routed: fire", priority="critical")
    schema = seed([db_question()], title="Routed: schema", labels=["database", "infra"])
    plain = seed([db_question()], title="Routed: plain", labels=["infra"])
    wait_card(fake_slack, fire.pending_id, channel=OTHER_CHANNEL)
    wait_card(fake_slack, schema.pending_id, channel=OTHER_CHANNEL)
    wait_card(fake_slack, plain.pending_id, channel=CHANNEL)

    driver = slack_driver(bot.events_url)
    shown = titles(run_list(driver, "label:infra", user=BOB).all_text)
    assert shown == ["Routed: schema", "Routed: plain"]
    assert titles(run_list(driver, "label:database label:infra", user=BOB).all_text) == [
        "Routed: schema"
    ]
    assert titles(run_list(driver, "priority:critical", user=ALICE).all_text) == ["Routed: fire"]
    # Alice may not answer the database route's questions: the listing does not show them.
    assert titles(run_list(driver, "label:infra", user=ALICE).all_text) == ["Routed: plain"]


def test_a_repeated_question_shows_the_earlier_answer(app_factory, seed, fake_slack, slack_driver):
    bot = start_bot(app_factory)
    first = seed([db_question()], title="Past: first")
    card = wait_card(fake_slack, first.pending_id)
    driver = slack_driver(bot.events_url)
    driver.click(CHANNEL, card.ts, text="PostgreSQL", user=ALICE)
    wait_outcome(fake_slack, card.ts, "✅")

    again = seed([db_question()], title="Past: again")
    second = wait_card(fake_slack, again.pending_id)
    [past] = [b for b in second.blocks if b.get("block_id") == "kq_past"]
    text = past["elements"][0]["text"]
    # a new message mentions nobody: the earlier answerer is not notified again (issue 21)
    assert text.startswith("↩ Last answered <!date^") and text.endswith(" in Slack: PostgreSQL")
    assert "<@" not in str(second.blocks)

    mark = fake_slack.mark()
    act(driver, CHANNEL, second.ts, "Conversation", user=ALICE)
    view = filled(fake_slack, open_modal(fake_slack, CONVERSATION, after=mark).id)
    assert "*Answered before*" in blocks_text(view.blocks)
    assert "|View card>" in blocks_text(view.blocks)
