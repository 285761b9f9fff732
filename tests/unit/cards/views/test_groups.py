"""Identical questions as cards show them (kandev_slack/cards/views/groups.py): the "Also asked by"
line of a
waiting one-question card (linked to the other tasks in Kandev; none on a resolved card), the
offer to send the same answer to all, and the summary — within Slack's limits whatever the
agents' titles say, notifying nobody."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from kandev_slack.cards import ids
from kandev_slack.cards.ids import AnswerAllValue, parse_answer_all_value
from kandev_slack.cards.views.groups import answer_all_offer, answer_all_summary, group_line
from kandev_slack.core.domain import CardState, PastChoice
from kandev_slack.core.groups import AlsoAsked
from kandev_slack.kinds.question.cards.card import render_card
from kandev_slack.usecases.answering.groups import MAX_GROUP
from tests.kit.factories import KANDEV_URL, NOW, make_bundle, make_outcome, make_task
from tests.unit.cards.checks import assert_valid_message
from tests.unit.cards.strategies import bundles, mention_texts, outcomes_for, tasks_for, texts
from tests.unit.cards.test_limits_property import SETTINGS

PG = PastChoice(labels=("PostgreSQL",))


def _also(n: int, title: str = "") -> AlsoAsked:
    return AlsoAsked(pending_id=f"p-{n}", task_id=f"task-{n}", title=title or f"Task {n}")


def _group_block(message: dict) -> dict | None:
    return next((b for b in message["blocks"] if b.get("block_id") == ids.BLOCK_GROUP), None)


def test_the_line_names_how_many_others_and_links_their_tasks() -> None:
    line = group_line([_also(2), _also(3)], kandev_url=KANDEV_URL)
    assert line == (
        f"🔁 Also asked by 2 other agents: <{KANDEV_URL}/t/task-2|Task 2>, "
        f"<{KANDEV_URL}/t/task-3|Task 3>"
    )
    assert group_line([_also(2)], kandev_url=KANDEV_URL).startswith(
        "🔁 Also asked by 1 other agent: <"
    )
    assert group_line([], kandev_url=KANDEV_URL) == ""


def test_past_five_others_the_line_says_more_than_and_links_five() -> None:
    line = group_line([_also(n) for n in range(6)], kandev_url=KANDEV_URL)
    assert line.startswith("🔁 Also asked by more than 5 other agents: <")
    assert line.count("/t/task-") == 5 and line.endswith(", …")


def test_a_waiting_one_question_card_shows_its_group_under_its_questions() -> None:
    bundle, task = make_bundle(), make_task()
    card = render_card(
        bundle,
        task,
        CardState.PENDING,
        None,
        kandev_url=KANDEV_URL,
        now=NOW,
        also_asked=[_also(2)],
    )
    block = _group_block(card)
    assert block is not None and block["type"] == "context"
    ids_in_order = [b.get("block_id") for b in card["blocks"]]
    assert ids_in_order.index(ids.BLOCK_GROUP) == len(ids_in_order) - 2  # above the quiet row


def test_no_group_line_once_resolved_or_on_a_multi_question_card() -> None:
    resolved = render_card(
        make_bundle(),
        make_task(),
        CardState.ANSWERED,
        make_outcome(),
        kandev_url=KANDEV_URL,
        now=NOW,
        also_asked=[_also(2)],
    )
    assert _group_block(resolved) is None
    several = render_card(
        make_bundle(count=2),
        make_task(),
        CardState.PENDING,
        None,
        kandev_url=KANDEV_URL,
        now=NOW,
        also_asked=[_also(2)],
    )
    assert _group_block(several) is None


def test_the_offer_asks_and_carries_the_answered_bundle_and_those_offered() -> None:
    text, blocks = answer_all_offer("p-1", PG, ["p-2", "p-3"])
    assert text == "Send “PostgreSQL” to the 2 other agents that asked this too?"
    buttons = blocks[-1]["elements"]
    assert [b["text"]["text"] for b in buttons] == ["Send to all 2", "No thanks"]
    assert [b["action_id"] for b in buttons] == [ids.ACTION_ANSWER_ALL, ids.ACTION_ANSWER_ALL_NO]
    values = {parse_answer_all_value(b["value"]) for b in buttons}
    assert values == {AnswerAllValue(pending_id="p-1", members=("p-2", "p-3"))}
    one, _ = answer_all_offer("p-1", PastChoice(text="Use the cluster"), ["p-2"])
    assert one == "Send “Use the cluster” to the other agent that asked this too?"


def test_the_largest_group_of_kandev_ids_fits_in_the_offer_s_buttons() -> None:
    uuids = [f"{n:08x}-0000-4000-8000-{n:012x}" for n in range(MAX_GROUP + 1)]
    _, blocks = answer_all_offer(uuids[0], PG, uuids[1:])
    [send, _no] = blocks[-1]["elements"]
    assert parse_answer_all_value(send["value"]).members == tuple(uuids[1:])
    assert_valid_message({"text": "offer", "blocks": blocks})


def test_the_summary_says_each_outcome_once() -> None:
    text = answer_all_summary(
        PG,
        sent=2,
        meanwhile=["U0BOB00001", None],
        forbidden=[_also(4, "DBAs only")],
        no_option=1,
        ended=1,
        not_sent=1,
        kandev_url=KANDEV_URL,
    )
    assert text == (
        "✅ Sent “PostgreSQL” to 2 agents. 2 were answered meanwhile by <@U0BOB00001> and in "
        f"Kandev. You may not answer 1: <{KANDEV_URL}/t/task-4|DBAs only>. 1 has no option "
        "“PostgreSQL”: answer it on the card. 1 no longer waits for an answer. 1 could not be "
        "sent now: answer it on the card."
    )
    assert answer_all_summary(PG, sent=0, kandev_url=KANDEV_URL).startswith("Nothing was sent")


@SETTINGS
@given(data=st.data())
def test_every_grouped_card_stays_within_limits_and_notifies_nobody(data) -> None:
    bundle = data.draw(bundles(text=mention_texts))
    task = data.draw(tasks_for(bundle))
    state = data.draw(st.sampled_from(list(CardState)))
    outcome = data.draw(outcomes_for(bundle, state))
    titles = data.draw(st.lists(st.one_of(texts(400), mention_texts(400)), max_size=8))
    also = [_also(n, title) for n, title in enumerate(titles)]
    card = render_card(
        bundle, task, state, outcome, kandev_url=KANDEV_URL, now=NOW, also_asked=also
    )
    assert_valid_message(card, allowed_users={"U0123ABC"})
    shown = _group_block(card) is not None
    assert shown == (bool(also) and not state.terminal and len(bundle.questions) == 1)


@SETTINGS
@given(titles=st.lists(mention_texts(400), min_size=1, max_size=3), label=mention_texts(300))
def test_the_offer_and_summary_notify_nobody(titles: list[str], label: str) -> None:
    choice = PastChoice(labels=(label,))
    offered = [f"{n:08x}-0000-4000-8000-{n:012x}" for n in range(MAX_GROUP)][: len(titles)]
    text, blocks = answer_all_offer("p-1", choice, offered)
    assert_valid_message({"text": text, "blocks": blocks})
    also = [_also(n, t) for n, t in enumerate(titles)]
    summary = answer_all_summary(choice, sent=1, forbidden=also, kandev_url=KANDEV_URL)
    assert_valid_message(
        {
            "text": summary,
            "blocks": [{"type": "section", "text": {"type": "mrkdwn", "text": summary}}],
        }
    )
