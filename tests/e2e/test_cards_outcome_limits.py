"""The largest answer Kandev accepts still closes the card: a four-question bundle answered in
Kandev's web UI with every option selected (multi-select) and 2,000 characters of free text per
question is edited to a condensed outcome within Block Kit's limits, its buttons gone, and
nothing an agent or a person wrote can notify anyone."""

from __future__ import annotations

import re

from kandev_slack.cards.limits import MAX_MESSAGE_BLOCKS_TEXT, blocks_text_length
from tests.e2e.helpers import (
    QUIET_ROW,
    assert_terminal_controls,
    buttons,
    more_options,
    outcome_line,
    response_of,
    start_bot,
    wait_card,
    wait_final,
    wait_outcome,
)
from tests.kit.harness import option_id, question

OPTIONS = 6
QUESTIONS = 4
#: Everything that could notify a channel, a group or a person if Slack parsed it.
DANGER = "*@here* _@channel_ @everyone! <!here> <!channel|x> <!subteam^S0GROUP> <@U0ALICE001> "
NOTIFYING = re.compile(
    r"<!(?:here|channel|everyone|subteam)|<@"
    r"|@[*_~\u200b-\u200d\ufeff]*(?:here|channel|everyone)(?![^\W_])",
    re.IGNORECASE,
)


def label(q: int, o: int) -> str:
    return f"Q{q} option {o} @here " + "a rather long label that keeps going 🙂 <&> " * 2


def free_text(q: int) -> str:
    unit = f"Answer {q}: {DANGER}because 🚀 <&> "
    text = (unit * (2000 // len(unit) + 1))[:2000]
    return text.rstrip() + "x" * (2000 - len(text.rstrip()))


def bundle_questions() -> list[dict]:
    return [
        question(
            f"q{q}",
            f"Title {q} @channel",
            f"Prompt {q}: {DANGER}" * 20,
            *[(label(q, o), f"Description {q}.{o} {DANGER}" * 3) for o in range(1, OPTIONS + 1)],
        )
        for q in range(1, QUESTIONS + 1)
    ]


def test_multi_select_and_long_free_text_answered_in_kandev_close_the_card(
    app_factory, seed, fake_slack
):
    start_bot(app_factory)
    bundle = seed(bundle_questions(), context=DANGER * 10, title="Big answer @here")
    card = wait_card(fake_slack, bundle.pending_id)
    assert fake_slack.violations == []
    assert blocks_text_length(card.blocks) <= MAX_MESSAGE_BLOCKS_TEXT  # else msg_blocks_too_long
    assert buttons(card) == ["Answer…"] and more_options(card) == QUIET_ROW

    answers = [
        {
            "question_id": f"q{q}",
            "selected_options": [option_id(q, o) for o in range(1, OPTIONS + 1)],
            "custom_text": free_text(q),
        }
        for q in range(1, QUESTIONS + 1)
    ]
    assert all(len(a["custom_text"]) == 2000 for a in answers)
    response = seed.server.respond(
        bundle.pending_id, {"answers": answers, "rejected": False, "reject_reason": ""}
    )
    assert response.status_code == 200 and response.json()["claimed"] is True, response.text
    final = wait_final(seed.server, bundle.task_id, bundle.pending_id, "answered")
    assert len(response_of(final, "q1")["selected_options"]) == OPTIONS

    edited = wait_outcome(fake_slack, card.ts, "✅")
    assert fake_slack.violations == []
    assert blocks_text_length(edited.blocks) <= MAX_MESSAGE_BLOCKS_TEXT
    assert_terminal_controls(edited)
    line = outcome_line(edited) or ""
    assert line.startswith("✅ Answered in Kandev: Q1 option 1 @\u2060here"), line
    assert "more" in line  # condensed, not refused
    for q in range(1, QUESTIONS + 1):
        assert f"Q{q} option 1" in line
    assert len(edited.text) <= 4000
    for text in (edited.text, edited.all_text):
        assert NOTIFYING.findall(text) == [], NOTIFYING.findall(text)[:5]
    for block in edited.blocks:
        for obj in _text_objects(block):
            if obj["type"] == "mrkdwn":
                assert obj.get("verbatim") is True, obj


def _text_objects(node):
    if isinstance(node, dict):
        if node.get("type") in ("mrkdwn", "plain_text") and isinstance(node.get("text"), str):
            yield node
        for value in node.values():
            yield from _text_objects(value)
    elif isinstance(node, list):
        for value in node:
            yield from _text_objects(value)
