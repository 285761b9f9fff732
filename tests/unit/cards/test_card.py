"""render_card: each state, the outcome lines exactly as design.md words them, the controls,
and text that had to be shortened."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest

from bot.cards import (
    ACTION_ANSWER_MODAL,
    ACTION_OPEN,
    ACTION_OPTION_PATTERN,
    ACTION_OTHER,
    ACTION_REJECT,
    parse_button_value,
    render_card,
    task_url,
)
from bot.core.clarification import Answer
from bot.core.domain import CardOutcome, CardState, TaskInfo
from tests.kit.factories import DB_QUESTION, KANDEV_URL, NOW, PENDING_ID, TASK_ID, make_bundle
from tests.unit.cards.checks import assert_valid_message
from tests.unit.cards.safety import unsafe_angles

URL = f"{KANDEV_URL}/t/{TASK_ID}"
MONGO = Answer(question_id="db", selected_options=["q1_opt2"])


def card(bundle, task, state=CardState.PENDING, outcome=None, now=NOW):
    rendered = render_card(bundle, task, state, outcome, kandev_url=KANDEV_URL, now=now)
    assert_valid_message(rendered, allowed_users={"U123"})
    return rendered


def texts(rendered) -> list[str]:
    out = []
    for block in rendered["blocks"]:
        if "text" in block:
            out.append(block["text"]["text"])
        for element in block.get("elements", []):
            if element.get("type") == "mrkdwn":
                out.append(element["text"])
    return out


def block(rendered, block_id_prefix: str) -> dict:
    return next(b for b in rendered["blocks"] if b.get("block_id", "").startswith(block_id_prefix))


def buttons(rendered) -> list[dict]:
    return block(rendered, "kq_actions")["elements"]


def outcome_text(rendered) -> str:
    return block(rendered, "kq_outcome")["text"]["text"]


def answered(by_user=None, via="slack", answers=(MONGO,)):
    return CardOutcome(
        state=CardState.ANSWERED, via=via, by_user=by_user, answers=list(answers), at=NOW
    )


# ---- pending ---------------------------------------------------------------------------------


def test_header_links_the_task_and_shows_age_and_workspace(one_question, task):
    rendered = card(one_question, task)
    assert block(rendered, "kq_title")["text"]["text"] == f"*<{URL}|Pick a datastore>*"
    meta = block(rendered, "kq_meta")["elements"][0]["text"]
    assert meta.startswith("Workspace *Platform* · asked 3 min ago (<!date^1796023672^")
    assert "|2026-11-30 07:27 UTC>)" in meta


def test_context_and_question_with_options_and_descriptions(one_question, task):
    rendered = card(one_question, task)
    assert block(rendered, "kq_context")["text"]["text"] == "why the agent asks"
    assert block(rendered, "kq_q:0:db")["text"]["text"] == (
        "*Database*\nWhich database should we use?"
    )
    assert block(rendered, "kq_opts:0:db")["text"]["text"] == (
        "• *PostgreSQL* — Relational\n• *MongoDB* — Document store"
    )


def test_one_question_has_a_button_per_option_then_other_reject_open(one_question, task):
    elements = buttons(card(one_question, task))
    assert [e["text"]["text"] for e in elements] == [
        "PostgreSQL",
        "MongoDB",
        "Other answer…",
        "Reject…",
        "Conversation",
        "Open in Kandev",
    ]
    assert [e["action_id"] for e in elements] == [
        "kq_option:0",
        "kq_option:1",
        ACTION_OTHER,
        ACTION_REJECT,
        "kq_conversation",
        ACTION_OPEN,
    ]
    assert all(ACTION_OPTION_PATTERN.match(e["action_id"]) for e in elements[:2])
    clicked = parse_button_value(elements[1]["value"])
    assert (clicked.pending_id, clicked.question_id, clicked.option_id) == (
        PENDING_ID,
        "db",
        "q1_opt2",
    )
    other = parse_button_value(elements[2]["value"])
    assert (other.pending_id, other.question_id, other.option_id) == (PENDING_ID, "db", "")
    assert parse_button_value(elements[3]["value"]).pending_id == PENDING_ID
    assert elements[5]["url"] == URL and "value" not in elements[5]


def test_multi_question_bundle_offers_answer_modal_and_numbers_questions(three_questions, task):
    rendered = card(three_questions, task)
    assert [(e["action_id"], e["text"]["text"]) for e in buttons(rendered)] == [
        (ACTION_ANSWER_MODAL, "Answer…"),
        (ACTION_REJECT, "Reject…"),
        ("kq_conversation", "Conversation"),
        (ACTION_OPEN, "Open in Kandev"),
    ]
    headings = [t.split("\n")[0] for t in texts(rendered) if t.startswith("*") and "/3" in t]
    assert headings == ["*1/3 · Database*", "*2/3 · Cache*", "*3/3 · Queue*"]
    assert "3 questions, answer all together" in block(rendered, "kq_meta")["elements"][0]["text"]


def test_fallback_text_names_task_and_questions(three_questions, task):
    text = card(three_questions, task)["text"]
    assert text == (
        "Agent question: Pick a datastore — Database: Which database should we use?; "
        "Cache: Which cache?; Queue: Which queue?"
    )


def test_ages(one_question, task):
    def meta(now):
        rendered = card(one_question, task, now=now)
        return block(rendered, "kq_meta")["elements"][0]["text"]

    created = one_question.created_at
    assert "asked just now" in meta(created + timedelta(seconds=20))
    assert "asked 59 min ago" in meta(created + timedelta(minutes=59, seconds=59))
    assert "asked 5 h ago" in meta(created + timedelta(hours=5))
    assert "asked 3 days ago" in meta(created + timedelta(days=3, hours=1))


# ---- terminal states ---------------------------------------------------------------------------

OUTCOME_LINES = [
    (answered(by_user="U123"), "✅ Answered by <@U123> in Slack: MongoDB"),
    (answered(via="kandev"), "✅ Answered in Kandev: MongoDB"),
    (
        CardOutcome(
            state=CardState.REJECTED, via="slack", by_user="U123", reason="not now", at=NOW
        ),
        "⛔ Rejected by <@U123> in Slack: “not now”",
    ),
    (CardOutcome(state=CardState.REJECTED, via="kandev", at=NOW), "⛔ Rejected in Kandev"),
    (
        CardOutcome(state=CardState.ENDED, at=NOW),
        "⏹ Ended — nobody answered (cancelled, expired or the agent moved on)",
    ),
    (
        CardOutcome(state=CardState.UNAVAILABLE, at=NOW),
        "⚠️ Unavailable — Kandev no longer shows this question to the bot",
    ),
]


@pytest.mark.parametrize(("outcome", "line"), OUTCOME_LINES)
def test_terminal_card_has_exact_outcome_line_time_and_only_the_link(
    one_question, task, outcome, line
):
    rendered = card(one_question, task, outcome.state, outcome)
    when = "<!date^1796023852^{date_short_pretty} at {time}|2026-11-30 07:30 UTC>"
    assert outcome_text(rendered) == f"{line} · {when}"
    assert [(e["action_id"], e.get("url")) for e in buttons(rendered)] == [(ACTION_OPEN, URL)]
    assert rendered["text"].startswith(line + " — Agent question: Pick a datastore")
    # the questions stay for context
    assert block(rendered, "kq_q:0:db")["text"]["text"].startswith("*Database*")


def test_answered_card_marks_the_chosen_option(one_question, task):
    rendered = card(one_question, task, CardState.ANSWERED, answered(by_user="U123"))
    assert block(rendered, "kq_opts:0:db")["text"]["text"] == (
        "• *PostgreSQL* — Relational\n✅ *MongoDB* — Document store"
    )


def test_free_text_answers_are_shown_and_summarised_in_question_order(three_questions, task):
    outcome = answered(
        by_user="U123",
        answers=[
            Answer(question_id="queue", selected_options=["q3_opt2"]),
            Answer(question_id="db", custom_text="SQLite, <b>really</b> & truly"),
            Answer(question_id="cache", selected_options=["q2_opt1"], custom_text="small"),
        ],
    )
    rendered = card(three_questions, task, CardState.ANSWERED, outcome)
    assert outcome_text(rendered).startswith(
        "✅ Answered by <@U123> in Slack: “free text”; Redis + “free text”; Kafka · "
    )
    assert block(rendered, "kq_opts:0:db")["text"]["text"].endswith(
        "✅ _Free text:_ “SQLite, &lt;b&gt;really&lt;/b&gt; &amp; truly”"
    )


def test_terminal_state_without_outcome_still_says_what_happened(one_question, task):
    rendered = card(one_question, task, CardState.ANSWERED, None)
    assert outcome_text(rendered).startswith("✅ Answered in Kandev · <!date^")


def test_a_malformed_user_id_is_never_turned_into_a_mention(one_question, task):
    outcome = answered(by_user="!channel")
    rendered = card(one_question, task, CardState.ANSWERED, outcome)
    assert outcome_text(rendered).startswith("✅ Answered in Slack: MongoDB")
    assert "channel" not in rendered["text"]


# ---- hostile and huge input -------------------------------------------------------------------

HOSTILE = "Hi <!channel> <!here> <@U1> <#C1> <!subteam^S1> <http://evil|Click> & @here"


def test_hostile_text_renders_harmlessly_everywhere():
    bundle = make_bundle(
        {
            "question_id": "db",
            "title": HOSTILE,
            "prompt": HOSTILE + " [x](!channel) [ok](https://example.com/?a=1&b=2)",
            "options": [
                {"option_id": "q1_opt1", "label": HOSTILE, "description": HOSTILE},
                {"option_id": "q1_opt2", "label": "B", "description": ""},
            ],
        },
        context=HOSTILE,
    )
    task = TaskInfo(task_id=TASK_ID, title=HOSTILE, workspace_name=HOSTILE)
    for state in CardState:
        outcome = CardOutcome(state=state, via="slack", reason=HOSTILE, at=NOW)
        rendered = card(bundle, task, state, outcome)
        for text in [*texts(rendered), rendered["text"]]:
            assert unsafe_angles(text) == [], text
            assert "@here" not in text
    prompt = block(card(bundle, task), "kq_q:0:db")["text"]["text"]
    assert "&lt;!channel&gt;" in prompt and "&lt;http://evil|Click&gt;" in prompt
    assert "x (!channel)" in prompt and "<https://example.com/?a=1&amp;b=2|ok>" in prompt


def test_long_prompt_and_context_are_shortened_visibly_with_a_link(task):
    prompt = " ".join(f"word{i}" for i in range(3000))
    bundle = make_bundle({**DB_QUESTION, "prompt": prompt}, context=prompt)
    rendered = card(bundle, task)
    note = f"… _(shortened — <{URL}|full text in Kandev>)_"
    for block_id in ("kq_context", "kq_q:0:db"):
        text = block(rendered, block_id)["text"]["text"]
        assert len(text) <= 3000 and text.endswith(note)
        body = text.removesuffix(" " + note)
        assert re.search(r"word\d+$", body)  # ends on a whole word
        last = body.rsplit(" ", 1)[1]
        assert last in prompt.split(" ")


def test_long_label_fits_its_button_and_is_shown_in_full_in_the_list(task):
    label = "Use PostgreSQL with logical replication to a warm standby in another region please"
    assert len(label) > 75
    bundle = make_bundle(
        {**DB_QUESTION, "options": [{**DB_QUESTION["options"][0], "label": label}]}
    )
    rendered = card(bundle, task)
    button_text = buttons(rendered)[0]["text"]["text"]
    assert len(button_text) <= 75 and button_text.endswith("…")
    assert label.startswith(button_text.removesuffix("…"))
    assert f"*{label}*" in block(rendered, "kq_opts:0:db")["text"]["text"]


def test_four_questions_with_six_huge_options_fit_every_limit(task):
    huge = ("<b>&</b> 👨‍👩‍👧 " * 1200)[:10_000]
    questions = [
        {
            "question_id": f"q{i}",
            "title": huge,
            "prompt": huge,
            "options": [
                {"option_id": f"q{i}_opt{j}", "label": huge, "description": huge} for j in range(6)
            ],
        }
        for i in range(4)
    ]
    bundle = make_bundle(*questions, context=huge)
    big_task = TaskInfo(task_id=TASK_ID, title=huge, workspace_name=huge)
    for state in CardState:
        outcome = CardOutcome(
            state=state,
            via="slack",
            by_user="U123",
            answers=[
                Answer(question_id=f"q{i}", selected_options=[f"q{i}_opt1"], custom_text=huge)
                for i in range(4)
            ],
            reason=huge,
            at=NOW,
        )
        rendered = card(bundle, big_task, state, outcome)  # validated inside
        assert any("shortened" in t for t in texts(rendered))


def test_empty_strings_everywhere_still_render(task):
    bundle = make_bundle(
        {
            "question_id": "q",
            "title": "",
            "prompt": "",
            "options": [
                {"option_id": "a", "label": "", "description": ""},
                {"option_id": "b", "label": " ", "description": ""},
            ],
        }
    )
    rendered = card(bundle, TaskInfo(task_id=TASK_ID))
    assert block(rendered, "kq_title")["text"]["text"] == f"*<{URL}|Untitled task>*"
    assert [e["text"]["text"] for e in buttons(rendered)][:2] == ["(no label)", "(no label)"]


def test_ids_too_long_for_a_button_fall_back_to_the_answer_modal(task):
    long_id = "o" * 1990
    bundle = make_bundle(
        {
            **DB_QUESTION,
            "options": [{"option_id": long_id, "label": "A"}, {"option_id": "b", "label": "B"}],
        }
    )
    elements = buttons(card(bundle, task))
    assert [e["action_id"] for e in elements] == [
        ACTION_ANSWER_MODAL,
        ACTION_REJECT,
        "kq_conversation",
        ACTION_OPEN,
    ]


def test_task_url_refuses_what_cannot_be_a_link():
    assert task_url("https://kandev.example/", "a b") == "https://kandev.example/t/a%20b"
    with pytest.raises(ValueError):
        task_url("javascript:alert(1)", TASK_ID)
