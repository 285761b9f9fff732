"""Guarantee 1: the same interaction delivered twice reaches Kandev once and edits the card once.

Deliveries are built once and sent several times at the same moment: Slack's HTTP retries
(``X-Slack-Retry-Num``), a Socket Mode redelivery of the same envelope, and a person's double
click (two distinct clicks on the same button). Kandev's side is counted by a proxy in front of
it (answer calls per bundle) and by what the blocked agent received.
"""

from __future__ import annotations

import time

import pytest

from kandev_slack.kits.fakeslack import ALICE, Delivery
from tests.e2e.helpers import (
    POLL_S,
    assert_sending,
    card_updates,
    choice_and_text_blocks,
    click_payload,
    db_question,
    open_modal,
    response_of,
    start_bot,
    wait_card,
    wait_final,
    wait_outcome,
)
from tests.e2e.reliability.deliveries import (
    RETRY,
    RETRY_2,
    deliver_all,
    extra_edits,
    submission_payload,
    submissions,
    tool_answers,
)
from tests.kit.harness import CHANNEL, option_id, sample_questions

ANSWER_MODAL = "kq_answer_modal"
#: Ephemeral wording that would mean a redelivery was treated as a second, failed answer.
_WRONG_NEWS = (
    "not recorded",
    "answered first",
    "in kandev first",
    "in slack first",
    "someone else",
    "try again",
)


def _bot(bot_factory, proxy, **env):
    return start_bot(bot_factory, KANDEV_URL=proxy.base_url, KANDEV_HINTS="off", **env)


def _settle(fake) -> None:
    """Give any duplicate a chance to show up: a poll and the outbox worker's turn."""
    time.sleep(POLL_S)
    fake.settle(quiet=1.0, timeout=15)


def _wrong_news(fake, user: str) -> list[str]:
    return [
        e.all_text
        for e in fake.ephemerals(user=user)
        if any(w in e.all_text.lower() for w in _WRONG_NEWS)
    ]


@pytest.mark.fault("HTTP retry + double click on a card button", guarantee=1)
def test_http_retries_and_a_double_click_answer_once(
    bot_factory, seed, kandev_proxy, fake_slack, slack_driver, tmp_path, reliability
):
    bot = _bot(bot_factory, kandev_proxy)
    bundle = seed([db_question()], title="Clicked twice")
    card = wait_card(fake_slack, bundle.pending_id)
    driver = slack_driver(bot.events_url)

    click = click_payload(driver, CHANNEL, card.ts, text="MongoDB", user=ALICE)
    double = click_payload(driver, CHANNEL, card.ts, text="MongoDB", user=ALICE)
    http = driver.transport
    acks = deliver_all(
        [
            (http, "interactive", click, Delivery()),
            (http, "interactive", click, RETRY),  # Slack retries the same request...
            (http, "interactive", click, RETRY_2),  # ...twice
            (http, "interactive", double, Delivery()),  # and a second click on the button
        ]
    )
    assert [a.status for a in acks] == [200] * 4
    assert max(a.elapsed for a in acks) < 3.0

    final = wait_final(seed.server, bundle.task_id, bundle.pending_id, "answered")
    assert response_of(final, "db")["selected_options"] == ["q1_opt2"]
    wait_outcome(fake_slack, card.ts, f"✅ Answered by <@{ALICE.id}> in Slack")
    _settle(fake_slack)

    calls = kandev_proxy.answer_calls(bundle.pending_id)
    agent = tool_answers(seed.server.agent_result(bundle.task_id))
    db_url = f"sqlite:///{tmp_path / 'bot.db'}"
    duplicates = max(len(calls) - 1, 0) + extra_edits(fake_slack, card.ts) + max(agent - 1, 0)
    reliability.record(
        "HTTP retry (X-Slack-Retry-Num 1, 2) + double click",
        survived=True,
        lost=0 if agent == 1 else 1,
        duplicates=duplicates,
    )
    assert len(calls) == 1, calls
    assert len(submissions(db_url, bundle.pending_id)) == 1
    assert agent == 1
    assert len(card_updates(fake_slack, card.ts)) == 1
    assert _wrong_news(fake_slack, ALICE.id) == []


@pytest.mark.fault("Socket Mode redelivery of a click and of a modal submission", guarantee=1)
def test_socket_mode_redelivery_of_a_click_and_a_modal_answers_once(
    bot_factory, seed, kandev_proxy, fake_slack, slack_driver, reliability
):
    _bot(bot_factory, kandev_proxy, mode="socket")
    one, three = (
        seed([db_question()], title="Redelivered click"),
        seed(sample_questions(2, options=2), title="Redelivered modal"),
    )
    card_one = wait_card(fake_slack, one.pending_id)
    card_three = wait_card(fake_slack, three.pending_id)
    driver = slack_driver(transport="socket")
    socket = driver.transport

    # A click whose envelope Slack delivers again (same payload, a new envelope and the same one).
    click = click_payload(driver, CHANNEL, card_one.ts, text="PostgreSQL", user=ALICE)
    acks = deliver_all(
        [
            (socket, "interactive", click, Delivery()),
            (socket, "interactive", click, RETRY),
            (socket, "interactive", click, RETRY_2),
        ]
    )
    assert all(a.elapsed < 3.0 for a in acks)

    # A modal submission delivered twice.
    mark = fake_slack.mark()
    driver.click(CHANNEL, card_three.ts, text="Answer…", user=ALICE)
    view = open_modal(fake_slack, ANSWER_MODAL, after=mark)
    blocks = choice_and_text_blocks(view)
    values = {
        blocks[0][0]: {"kq_choice": option_id(1, 2)},
        blocks[1][0]: {"kq_choice": option_id(2, 1)},
    }
    submit = submission_payload(driver, view.id, values, user=ALICE)
    acks = deliver_all(
        [
            (socket, "interactive", submit, Delivery()),
            (socket, "interactive", submit, RETRY),
        ],
        accepts=True,
    )
    assert all(a.elapsed < 3.0 for a in acks)
    for ack in acks:  # each delivery is acked "Sending…"; only one reaches Kandev (below)
        assert_sending(ack)

    final_one = wait_final(seed.server, one.task_id, one.pending_id, "answered")
    final_three = wait_final(seed.server, three.task_id, three.pending_id, "answered")
    assert response_of(final_one, "db")["selected_options"] == ["q1_opt1"]
    assert response_of(final_three, "q1")["selected_options"] == [option_id(1, 2)]
    assert response_of(final_three, "q2")["selected_options"] == [option_id(2, 1)]
    wait_outcome(fake_slack, card_one.ts, f"✅ Answered by <@{ALICE.id}> in Slack")
    wait_outcome(fake_slack, card_three.ts, f"✅ Answered by <@{ALICE.id}> in Slack")
    _settle(fake_slack)

    calls = {b.pending_id: kandev_proxy.answer_calls(b.pending_id) for b in (one, three)}
    agents = {b.pending_id: tool_answers(seed.server.agent_result(b.task_id)) for b in (one, three)}
    edits = extra_edits(fake_slack, card_one.ts) + extra_edits(fake_slack, card_three.ts)
    duplicates = sum(max(len(c) - 1, 0) for c in calls.values()) + edits
    duplicates += sum(max(n - 1, 0) for n in agents.values())
    reliability.record(
        "Socket Mode redelivery (click x3, modal submission x2)",
        survived=True,
        lost=sum(1 for n in agents.values() if n == 0),
        duplicates=duplicates,
    )
    assert {pid: len(c) for pid, c in calls.items()} == {one.pending_id: 1, three.pending_id: 1}
    assert set(agents.values()) == {1}
    assert len(card_updates(fake_slack, card_one.ts)) == 1
    assert len(card_updates(fake_slack, card_three.ts)) == 1
    assert _wrong_news(fake_slack, ALICE.id) == []
