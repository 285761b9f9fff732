"""One card per identical item (issue 33), end to end (the real Kandev, the fake Slack):
identical questions — whatever context the agents gave — wait as one channel card, the others
as cards of their own in its thread ("Also from <task>", their own buttons, state and outcome
edit), counted on the first card's line; a question whose option descriptions differ is
another card; identical approvals are threaded alike; on two replicas sharing PostgreSQL each
card is posted exactly once (tests/e2e/reliability/test_identical_threads_replicas.py)."""

from __future__ import annotations

from kandev_slack.core.approval import approval_key
from kandev_slack.kits.fakeslack import ALICE, FakeSlack
from tests.e2e.helpers import (
    buttons,
    card_posts,
    db_question,
    outcome_line,
    start_bot,
    wait_card,
    wait_final,
    wait_outcome,
)
from tests.e2e.test_answer_all import assert_in_thread, group_line, wait_group
from tests.kit.harness import CHANNEL, permission_spec, question


def channel_cards(fake: FakeSlack) -> list[str]:
    """The ts of every card posted in the channel itself (not in a thread)."""
    return [
        str(call.response.get("ts"))
        for call in fake.calls("chat.postMessage")
        if call.ok
        and call.params.get("channel") == CHANNEL
        and not call.params.get("thread_ts")
        and (call.params.get("metadata") or {}).get("event_type")
    ]


def test_three_identical_questions_are_one_card_and_two_in_its_thread(
    app_factory, seed, fake_slack, slack_driver
) -> None:
    bot = start_bot(app_factory)
    contexts = ("I read the schema.", "", "Something else entirely")
    bundles = [
        seed([db_question()], context=context, title=f"Agent {n}")
        for n, context in enumerate(contexts, 1)
    ]
    cards = [wait_card(fake_slack, b.pending_id) for b in bundles]
    first_ts = cards[0].ts
    first = wait_group(fake_slack, first_ts, "🧵 2 more agents asked this: <")
    line = group_line(first) or ""
    assert "|Agent 2>" in line and "|Agent 3>" in line
    for card in cards[1:]:
        shown = assert_in_thread(fake_slack, card.ts, first_ts)
        assert "PostgreSQL" in buttons(shown) and "MongoDB" in buttons(shown)
    assert channel_cards(fake_slack) == [first_ts]
    for bundle in bundles:
        assert len(card_posts(fake_slack, bundle.pending_id)) == 1

    # Answering a card in the thread edits that card only (and the first card's count).
    driver = slack_driver(bot.events_url)
    before = len(fake_slack.calls("chat.update"))
    assert driver.click(CHANNEL, cards[1].ts, text="MongoDB", user=ALICE).status == 200
    wait_final(seed.server, bundles[1].task_id, bundles[1].pending_id, "answered")
    edited = wait_outcome(fake_slack, cards[1].ts, "✅")
    assert outcome_line(edited) == f"✅ Answered by <@{ALICE.id}> in Slack: MongoDB"
    assert edited.thread_ts == first_ts
    wait_group(fake_slack, first_ts, "🧵 1 more agent asked this: <")
    fake_slack.settle(quiet=0.5, timeout=10)
    after = {c.params["ts"] for c in fake_slack.calls("chat.update")[before:] if c.ok}
    assert after == {cards[1].ts, first_ts}
    for bundle in (bundles[0], bundles[2]):
        assert seed.server.final_status(bundle.task_id, bundle.pending_id)["status"] == "pending"
    assert outcome_line(fake_slack.message(CHANNEL, first_ts)) is None


def test_a_question_whose_option_descriptions_differ_is_a_card_of_its_own(
    app_factory, seed, fake_slack
) -> None:
    start_bot(app_factory)
    same = seed([db_question()], title="Agent 1")
    other = question(
        "db",
        "Database",
        "Which database should we use?",
        ("PostgreSQL", "Relational"),  # another description
        ("MongoDB", "Document store"),
    )
    differs = seed([other], title="Agent 2")
    ts = [wait_card(fake_slack, b.pending_id).ts for b in (same, differs)]
    fake_slack.settle(quiet=0.5, timeout=10)
    assert sorted(channel_cards(fake_slack)) == sorted(ts)
    assert all(group_line(fake_slack.message(CHANNEL, t)) is None for t in ts)


MAKE = permission_spec("Run make test", "execute", {"command": "make test", "cwd": "/repo/app"})


def test_identical_approvals_wait_in_the_first_one_s_thread(app_factory, seed, fake_slack) -> None:
    start_bot(app_factory)
    requests = [seed.permission([MAKE], title=f"Build {n}") for n in (1, 2)]
    cards = [wait_card(fake_slack, approval_key(r.request_id)) for r in requests]
    first_ts = cards[0].ts
    wait_group(fake_slack, first_ts, "🧵 1 more agent asked this: <")
    shown = assert_in_thread(fake_slack, cards[1].ts, first_ts)
    assert "Allow once" in buttons(shown)
    assert channel_cards(fake_slack) == [first_ts]
