"""render_card: each state, the outcome lines exactly as design.md words them, the controls,
and text that had to be shortened."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest

from kandev_slack.cards import (
    ACTION_ANSWER_MODAL,
    ACTION_OPEN,
    ACTION_OPTION_PATTERN,
    ACTION_OTHER,
    parse_button_value,
    task_url,
)
from kandev_slack.cards.ids import ACTION_MORE, parse_more_value
from kandev_slack.cards.wording import outcome_line
from kandev_slack.cards.words import already_answered_message, lost_message
from kandev_slack.core.clarification import SKIPPED_REASON, Answer
from kandev_slack.core.domain import CardOutcome, CardState, PastAnswer, PastChoice, TaskInfo
from kandev_slack.kinds.question.cards.card import render_card
from tests.kit.factories import (
    DB_QUESTION,
    KANDEV_URL,
    NOW,
    PENDING_ID,
    TASK_ID,
    make_bundle,
    make_task,
)
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


def quiet_row(rendered) -> list[dict]:
    return block(rendered, "kq_more")["elements"]


def more_menu(rendered) -> list[tuple[str, str]]:
    """The "More" overflow's options: (what each does, its label)."""
    (overflow,) = quiet_row(rendered)
    return [(parse_more_value(o["value"]).choice, o["text"]["text"]) for o in overflow["options"]]


def outcome_text(rendered) -> str:
    return block(rendered, "kq_outcome")["text"]["text"]


def block_ids(rendered) -> list[str]:
    return [b.get("block_id", b["type"]) for b in rendered["blocks"]]


def answered(by_user=None, via="slack", answers=(MONGO,)):
    return CardOutcome(
        state=CardState.ANSWERED, via=via, by_user=by_user, answers=list(answers), at=NOW
    )


# ---- pending ---------------------------------------------------------------------------------

WHEN_ASKED = "<!date^1796023672^{date_short_pretty} at {time}|2026-11-30 07:27 UTC>"


def test_a_waiting_card_reads_question_first(one_question, task):
    rendered = card(one_question, task)
    assert block_ids(rendered) == [
        "kq_title",
        "kq_meta",
        "kq_q:0:db",
        "kq_actions",
        "kq_descriptions",
        "kq_context",
        "kq_more",
    ]


def test_header_links_the_task_and_one_grey_line_says_who_where_when(one_question, task):
    rendered = card(one_question, task)
    assert block(rendered, "kq_title")["text"]["text"] == f"*<{URL}|Pick a datastore>*"
    meta = block(rendered, "kq_meta")
    assert meta["type"] == "context"
    # "Open in Kandev" is a link in the grey line (no button: the card's controls are its
    # answers and the "More" overflow).
    assert meta["elements"][0]["text"] == (
        f"Workspace *Platform* · asked {WHEN_ASKED} · <{URL}|Open in Kandev>"
    )


def test_the_grey_line_carries_agent_priority_and_labels(one_question):
    labelled = {"agent_name": "claude", "priority": "critical", "labels": ["database"]}
    task = make_task().model_copy(update=labelled)
    meta = block(card(one_question, task), "kq_meta")["elements"][0]["text"]
    assert (
        meta == f"🤖 claude · 🔴 critical · 🏷 database · Workspace *Platform* · asked {WHEN_ASKED}"
        f" · <{URL}|Open in Kandev>"
    )
    assert "kq_task" not in block_ids(card(one_question, task))


def test_the_prompt_is_bold_and_the_option_descriptions_follow_the_buttons(one_question, task):
    rendered = card(one_question, task)
    assert block(rendered, "kq_q:0:db")["text"]["text"] == "*Which database should we use?*"
    descriptions = block(rendered, "kq_descriptions")
    assert descriptions["type"] == "context"
    assert descriptions["elements"][0]["text"] == (
        "• *PostgreSQL* — Relational\n• *MongoDB* — Document store"
    )
    assert block(rendered, "kq_context")["text"]["text"] == "why the agent asks"


def test_options_without_descriptions_are_only_buttons(task):
    bundle = make_bundle(
        {
            **DB_QUESTION,
            "options": [{"option_id": "a", "label": "A"}, {"option_id": "b", "label": "B"}],
        }
    )
    assert "kq_descriptions" not in block_ids(card(bundle, task))


def test_the_context_is_cut_to_three_lines_with_the_rest_under_conversation(task):
    context = "\n".join(f"line {i} of what the agent found" for i in range(1, 12))
    bundle = make_bundle(DB_QUESTION, context=context)
    shown = block(card(bundle, task), "kq_context")["text"]["text"]
    assert shown.startswith("line 1 of what the agent found\nline 2")
    assert "line 3 of what the agent found" in shown and "line 4" not in shown
    assert shown.endswith(f"… _(more under Conversation or <{URL}|in Kandev>)_")


def test_a_context_cut_inside_a_code_block_closes_it(task):
    bundle = make_bundle(DB_QUESTION, context="Look:\n```\nSELECT 1;\nSELECT 2;\n```\nend")
    shown = block(card(bundle, task), "kq_context")["text"]["text"]
    assert shown.count("```") % 2 == 0 and "SELECT 2" not in shown


def test_one_question_has_a_button_per_option_then_other_and_a_quiet_row(one_question, task):
    rendered = card(one_question, task)
    elements = buttons(rendered)
    assert [e["text"]["text"] for e in elements] == ["PostgreSQL", "MongoDB", "Other answer…"]
    assert [e["action_id"] for e in elements] == ["kq_option:0", "kq_option:1", ACTION_OTHER]
    assert all(ACTION_OPTION_PATTERN.match(e["action_id"]) for e in elements[:2])
    clicked = parse_button_value(elements[1]["value"])
    assert (clicked.pending_id, clicked.question_id, clicked.option_id) == (
        PENDING_ID,
        "db",
        "q1_opt2",
    )
    other = parse_button_value(elements[2]["value"])
    assert (other.pending_id, other.question_id, other.option_id) == (PENDING_ID, "db", "")
    # Everything else is one quiet "More" overflow (the design of "Act on a card in one
    # glance": the answers and at most two other visible controls).
    assert more_menu(rendered) == [
        ("claim", "👀 I'm on it"),
        ("skip", "Skip…"),
        ("reject", "Reject…"),
        ("conversation", "Conversation"),
    ]
    (overflow,) = quiet_row(rendered)
    assert overflow["type"] == "overflow" and overflow["action_id"] == ACTION_MORE
    values = [parse_more_value(o["value"]) for o in overflow["options"]]
    assert {v.pending_id for v in values} == {PENDING_ID}


def test_no_button_on_a_card_is_danger_styled(one_question, three_questions, task):
    for bundle in (one_question, three_questions):
        for b in card(bundle, task)["blocks"]:
            for element in b.get("elements", []):
                assert element.get("style") != "danger", element


def test_multi_question_bundle_offers_answer_modal_and_numbers_questions(three_questions, task):
    rendered = card(three_questions, task)
    assert [(e["action_id"], e["text"]["text"]) for e in buttons(rendered)] == [
        (ACTION_ANSWER_MODAL, "Answer…"),
    ]
    assert [choice for choice, _ in more_menu(rendered)] == [
        "claim",
        "skip",
        "reject",
        "conversation",
    ]
    assert block(rendered, "kq_q:0:db")["text"]["text"] == (
        "1/3 · Database\n*Which database should we use?*"
    )
    headings = [t.split("\n")[0] for t in texts(rendered) if "/3 · " in t]
    assert headings == ["1/3 · Database", "2/3 · Cache", "3/3 · Queue"]
    assert "3 questions, answer all together" in block(rendered, "kq_meta")["elements"][0]["text"]
    assert block(rendered, "kq_opts:1:cache")["text"]["text"] == "• *Redis* — In-memory\n• *None*"


def test_fallback_text_says_the_questions_then_the_task(three_questions, task):
    text = card(three_questions, task)["text"]
    assert text == "Which database should we use?; Which cache?; Which queue? — Pick a datastore"


@pytest.mark.parametrize(
    ("priority", "start"),
    [("critical", "🔴 Critical · "), ("high", "🟠 High · "), ("medium", "Which"), ("", "Which")],
)
def test_the_notification_of_an_urgent_card_starts_with_its_priority(one_question, priority, start):
    task = TaskInfo(task_id=TASK_ID, title="Pick a datastore", priority=priority)
    text = card(one_question, task)["text"]
    assert text.startswith(start + ("Which" if start != "Which" else ""))


def test_no_age_is_frozen_into_a_card(one_question, task):
    created = one_question.created_at
    for later in (timedelta(seconds=20), timedelta(hours=5), timedelta(days=3)):
        rendered = card(one_question, task, now=created + later)
        meta = block(rendered, "kq_meta")["elements"][0]["text"]
        assert meta.endswith(f"asked {WHEN_ASKED} · <{URL}|Open in Kandev>")
        assert not re.search(r"\bago\b|just now", str(rendered))


def test_a_past_answer_line_mentions_nobody_and_carries_a_date(one_question, task):
    past = PastAnswer(
        pending_id="earlier",
        channel="C1",
        via="slack",
        by_user="U123",
        choices=(PastChoice(labels=("MongoDB",), text=""),),
        at=NOW,
    )
    rendered = render_card(
        one_question, task, CardState.PENDING, None, kandev_url=KANDEV_URL, now=NOW, past=past
    )
    assert_valid_message(rendered)  # no user may be mentioned
    line = block(rendered, "kq_past")["elements"][0]["text"]
    assert line.startswith("↩ Last answered <!date^") and line.endswith(" in Slack: MongoDB")


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
def test_a_resolved_card_is_short_and_outcome_first(one_question, task, outcome, line):
    rendered = card(one_question, task, outcome.state, outcome)
    when = "<!date^1796023852^{date_short_pretty} at {time}|2026-11-30 07:30 UTC>"
    assert block_ids(rendered) == ["kq_title", "kq_outcome", "kq_q:0:db", "kq_more"]
    assert outcome_text(rendered) == f"*{line}* · {when}"
    assert [(e["action_id"], e.get("url")) for e in quiet_row(rendered)] == [(ACTION_OPEN, URL)]
    unmentioned = line.replace("by <@U123> in Slack", "in Slack")
    assert rendered["text"].startswith(unmentioned + " — Which database should we use?")
    assert "<@" not in rendered["text"]  # the notification text names nobody
    # the question stays, not bold; the context and the other options go
    question = block(rendered, "kq_q:0:db")["text"]["text"]
    assert question.startswith("Which database should we use?")
    assert "why the agent asks" not in str(rendered) and "PostgreSQL" not in str(rendered)


def test_answered_card_marks_only_the_chosen_option(one_question, task):
    rendered = card(one_question, task, CardState.ANSWERED, answered(by_user="U123"))
    assert block(rendered, "kq_q:0:db")["text"]["text"] == (
        "Which database should we use?\n✅ *MongoDB*"
    )


def test_free_text_answers_are_quoted_not_called_free_text(three_questions, task):
    outcome = answered(
        by_user="U123",
        answers=[
            Answer(question_id="queue", selected_options=["q3_opt2"]),
            Answer(
                question_id="db", custom_text="SQLite, <b>really</b> & truly, because it is small"
            ),
            Answer(question_id="cache", selected_options=["q2_opt1"], custom_text="small"),
        ],
    )
    rendered = card(three_questions, task, CardState.ANSWERED, outcome)
    assert outcome_text(rendered).startswith(
        "*✅ Answered by <@U123> in Slack: “SQLite, &lt;b&gt;really&lt;/b&gt; &amp;…”; "
        "Redis + “small”; Kafka* · "
    )
    assert "free text" not in str(rendered)
    assert block(rendered, "kq_q:0:db")["text"]["text"].endswith(
        "✅ “SQLite, &lt;b&gt;really&lt;/b&gt; &amp; truly, because it is small”"
    )


def test_terminal_state_without_outcome_still_says_what_happened(one_question, task):
    rendered = card(one_question, task, CardState.ANSWERED, None)
    assert outcome_text(rendered).startswith("*✅ Answered in Kandev* · <!date^")


def test_a_malformed_user_id_is_never_turned_into_a_mention(one_question, task):
    outcome = answered(by_user="!channel")
    rendered = card(one_question, task, CardState.ANSWERED, outcome)
    assert outcome_text(rendered).startswith("*✅ Answered in Slack: MongoDB")
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
    assert "&lt;!channel&gt;" in prompt and "<http://evil" not in prompt
    assert "x (!channel)" in prompt and "<https://example.com/?a=1&amp;b=2|ok>" in prompt


def test_long_prompt_and_context_are_shortened_visibly_with_a_link(task):
    prompt = " ".join(f"word{i}" for i in range(3000))
    bundle = make_bundle({**DB_QUESTION, "prompt": prompt}, context=prompt)
    rendered = card(bundle, task)
    note = f"… _(shortened — <{URL}|full text in Kandev>)_"
    text = block(rendered, "kq_q:0:db")["text"]["text"]
    assert len(text) <= 450 and text.endswith(note)
    body = text.removesuffix(" " + note)
    assert re.search(r"word\d+\*?$", body)  # ends on a whole word
    context = block(rendered, "kq_context")["text"]["text"]
    assert len(context) <= 450 and context.endswith(
        f"(more under Conversation or <{URL}|in Kandev>)_"
    )
    for shown in (text, context):
        last = shown.split(" …")[0].rsplit(" ", 1)[1].strip("*")
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
    assert f"*{label}*" in block(rendered, "kq_descriptions")["elements"][0]["text"]


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
    rendered = card(bundle, task)
    assert [e["action_id"] for e in buttons(rendered)] == [ACTION_ANSWER_MODAL]
    assert [choice for choice, _ in more_menu(rendered)] == [
        "claim",
        "skip",
        "reject",
        "conversation",
    ]


def test_task_url_refuses_what_cannot_be_a_link():
    assert task_url("https://kandev.example/", "a b") == "https://kandev.example/t/a%20b"
    with pytest.raises(ValueError):
        task_url("javascript:alert(1)", TASK_ID)


def test_a_skip_reads_as_skipped_on_the_card_and_to_the_late_clicker(one_question):
    outcome = CardOutcome(
        state=CardState.REJECTED, via="slack", by_user="U0ANA", reason=SKIPPED_REASON, at=NOW
    )
    assert outcome_line(outcome, one_question) == "⏭ Skipped by <@U0ANA> in Slack"
    assert lost_message(one_question, outcome) == (
        "<@U0ANA> skipped this question first in Slack. Your answer was not sent."
    )
    assert already_answered_message(one_question, outcome).startswith("You already skipped")
    # Kandev keeps no rejection reason: a rejection read from Kandev is a rejection.
    rejected = CardOutcome(state=CardState.REJECTED, reason="Not now", at=NOW)
    assert outcome_line(rejected, one_question).startswith("⛔ Rejected in Kandev")


def test_a_question_with_code_is_bold_too(task):
    bundle = make_bundle({**DB_QUESTION, "prompt": "Use `pg_dump` or **pg_basebackup**?"})
    text = block(card(bundle, task), "kq_q:0:db")["text"]["text"]
    assert text.startswith("*Use `pg_dump` or pg_basebackup?*")


def test_a_critical_card_says_so_first_in_its_title_and_notification(one_question):
    task = make_task().model_copy(update={"priority": "critical"})
    rendered = card(one_question, task)
    assert (
        block(rendered, "kq_title")["text"]["text"] == f"*🔴 Critical · <{URL}|Pick a datastore>*"
    )
    assert rendered["text"].startswith("🔴 Critical · ")


def test_the_holder_of_a_claim_is_not_offered_take_over_on_their_dm_card(one_question, task):
    from datetime import timedelta as td

    from kandev_slack.core.claims import Claim

    claim = Claim(user_id="U0ANA", since=NOW, until=NOW + td(minutes=30))

    def menu(reader):
        rendered = render_card(
            one_question,
            task,
            CardState.PENDING,
            None,
            kandev_url=KANDEV_URL,
            now=NOW,
            claim=claim,
            reader=reader,
        )
        assert_valid_message(rendered, allowed_users={"U0ANA"})
        return [label for _, label in more_menu(rendered)]

    assert menu("U0ANA")[0] == "Release" and "👀 Take over" not in menu("U0ANA")
    assert menu("U0BOB")[0] == "👀 Take over" and "Release" not in menu("U0BOB")
    assert menu(None)[:2] == ["👀 Take over", "Release"]  # a channel card: everyone sees one
