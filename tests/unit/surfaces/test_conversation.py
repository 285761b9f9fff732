"""The Conversation view's rendering: the newest messages before the question, oldest first,
tool calls one line each, status lines skipped, everything within a modal's limits however
long the session and its Markdown; what is left out is counted, with a link to Kandev."""

from __future__ import annotations

import os

from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from kandev_slack.cards import ids
from kandev_slack.cards.ids import ModalMetadata
from kandev_slack.cards.limits import MAX_VIEW_BLOCKS, slack_len
from kandev_slack.core.domain import CardState, PastAnswer, PastChoice
from kandev_slack.kandev.models import SessionMessage
from kandev_slack.surfaces.conversation import (
    MAX_MESSAGES_TEXT,
    Conversation,
    entries,
    loading_view,
    render_conversation,
)
from tests.kit.factories import ALICE_ID, KANDEV_URL, NOW, make_bundle, make_card, make_task
from tests.unit.cards.checks import assert_valid_view
from tests.unit.cards.strategies import bundles, tasks_for, texts
from tests.unit.properties import examples

EXAMPLES = int(os.environ.get("CARDS_HYPOTHESIS_EXAMPLES", "40"))
SETTINGS = settings(
    max_examples=examples(EXAMPLES),
    deadline=None,
    database=None,
    phases=[Phase.explicit, Phase.reuse, Phase.generate, Phase.shrink],
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
META = ModalMetadata(pending_id="p1", channel="C1", ts="1.2", origin="card").encode()


def said(text: str, author: str = "agent") -> SessionMessage:
    return SessionMessage(author_type=author, type="message", content=text)


def tool(command: str, code: int | None, status: str = "complete") -> SessionMessage:
    output = {} if code is None else {"exit_code": code}
    return SessionMessage(
        author_type="agent",
        type="tool_execute",
        content=command,
        metadata={
            "status": status,
            "title": command,
            "normalized": {
                "kind": "shell_exec",
                "shell_exec": {"command": command, "output": output},
            },
        },
    )


STATUS = SessionMessage(author_type="agent", type="status", content="New session started")


def view_text(view: dict) -> str:
    parts = []
    for block in view["blocks"]:
        if block["type"] == "section":
            parts.append(block["text"]["text"])
        elif block["type"] == "context":
            parts += [e["text"] for e in block["elements"]]
    return "\n".join(parts)


def render(conversation: Conversation) -> dict:
    return render_conversation(conversation, kandev_url=KANDEV_URL, now=NOW, metadata=META)


def test_messages_oldest_first_tools_one_line_status_skipped():
    card = make_card()
    messages = (
        said("Do the **migration**.", "user"),
        STATUS,
        said("I looked at the *schema*."),
        tool("npm test", 1, "error"),
        tool("git status", 0),
        said("Now I need a decision."),
    )
    view = render(Conversation(card=card, description="# Goal\nShip it", messages=messages))
    assert_valid_view(view)
    text = view_text(view)
    order = [
        "👤 *Person*\nDo the *migration*.",
        "I looked at the _schema_.",
        "🔧 Ran `npm test` — failed (exit 1)\n🔧 Ran `git status`\n",
        "Now I need a decision.",
    ]
    positions = [text.index(part) for part in order]
    assert positions == sorted(positions)
    assert "New session started" not in text
    assert "Ship it" in text
    assert "not shown here" not in text
    labels = [e["text"]["text"] for e in view["blocks"][-1]["elements"]]
    assert labels == ["Answer…", "Open in Kandev"]
    assert view["callback_id"] == ids.CALLBACK_CONVERSATION and view["private_metadata"] == META


def test_tool_without_command_or_exit_code():
    other = SessionMessage(
        author_type="agent",
        type="tool_read",
        content="README.md",
        metadata={"status": "error", "title": "Read README.md"},
    )
    [entry] = entries((other,))
    assert entry.text == "🔧 Read README.md — failed"
    [entry] = entries((tool("make", None, "error"),))
    assert entry.text == "🔧 Ran `make` — failed"
    lowercase = SessionMessage(
        author_type="agent", type="tool_read", content="", metadata={"title": "read db/schema.sql"}
    )
    assert [e.text for e in entries((lowercase,))] == ["🔧 Read db/schema.sql"]


def test_the_task_description_is_shown_once():
    card = make_card()
    description = "Migrate the orders table.\n\nKeep it online."
    messages = (said("Migrate the orders table.\n\nKeep it online.", "user"), said("On it."))
    text = view_text(render(Conversation(card=card, description=description, messages=messages)))
    assert text.count("Migrate the orders table.") == 1
    assert "👤 *Person*" not in text and "On it." in text
    # a person message that says something else stays
    other = (said("Also update the docs.", "user"),)
    text = view_text(render(Conversation(card=card, description=description, messages=other)))
    assert "👤 *Person*\nAlso update the docs." in text


def test_a_long_session_shows_the_newest_and_counts_the_rest():
    messages = tuple(said(f"Message number {n} " + "word " * 300) for n in range(400))
    view = render(Conversation(card=make_card(), messages=messages, complete=True))
    assert_valid_view(view)
    assert len(view["blocks"]) <= MAX_VIEW_BLOCKS
    text = view_text(view)
    assert "Message number 399 " in text and "Message number 0 " not in text
    shown = sum(1 for n in range(400) if f"Message number {n} " in text)
    assert f"{400 - shown} earlier messages not shown here" in text
    assert f"<{KANDEV_URL}/t/" in text
    incomplete = render(Conversation(card=make_card(), messages=messages, complete=False))
    assert "earlier messages and more not shown here" in view_text(incomplete)


def test_problems_are_said_plainly():
    card = make_card()
    gone = view_text(render(Conversation(card=card, problem="gone")))
    assert "Kandev no longer has this conversation" in gone
    down = view_text(render(Conversation(card=card, problem="unreachable")))
    assert "Kandev cannot be reached right now" in down
    assert "Loading" in view_text(loading_view(card, kandev_url=KANDEV_URL, metadata=META))


def test_earlier_answers_link_to_their_cards():
    past = PastAnswer(
        pending_id="old",
        channel="C1",
        ts="1.1",
        via="slack",
        by_user=ALICE_ID,
        choices=(PastChoice(labels=("PostgreSQL",)),),
        at=NOW,
    )
    conversation = Conversation(
        card=make_card(), earlier=((past, "https://team.slack.com/archives/C1/p11"),)
    )
    text = view_text(render(conversation))
    assert (
        f"• Answered <!date^1796023852^{{date_short_pretty}} at {{time}}|2026-11-30 07:30 UTC> "
        f"by <@{ALICE_ID}>: PostgreSQL · <https://team.slack.com/archives/C1/p11|View card>" in text
    )


def test_a_resolved_card_offers_no_answer_button():
    card = make_card(state=CardState.ANSWERED)
    labels = [e["text"]["text"] for e in render(Conversation(card=card))["blocks"][-1]["elements"]]
    assert labels == ["Open in Kandev"]


KINDS = st.sampled_from(["agent", "user", "tool", "status", "question"])


@st.composite
def session(draw) -> tuple[SessionMessage, ...]:
    count = draw(st.integers(min_value=0, max_value=300))
    long = draw(texts(4000))
    found = []
    for n in range(count):
        kind = draw(KINDS)
        text = f"QX{n}QX " + (long if n % 7 == 0 else draw(texts(300)))
        if kind == "agent":
            found.append(said(text))
        elif kind == "user":
            found.append(said(text, "user"))
        elif kind == "tool":
            found.append(tool(text[:500], draw(st.one_of(st.none(), st.integers(-1, 255)))))
        elif kind == "status":
            found.append(STATUS)
        else:
            found.append(
                SessionMessage(author_type="agent", type="clarification_request", content=text)
            )
    return tuple(found)


@SETTINGS
@given(data=st.data())
def test_every_conversation_stays_within_a_modals_limits(data):
    bundle = data.draw(bundles())
    task = data.draw(tasks_for(bundle)).model_copy(
        update={
            "agent_name": data.draw(texts(300)),
            "priority": data.draw(
                st.sampled_from(["", "low", "medium", "high", "critical", "odd"])
            ),
            "labels": tuple(data.draw(st.lists(texts(100), max_size=30))),
        }
    )
    card = make_card(bundle=bundle, task=task)
    messages = data.draw(session())
    conversation = Conversation(
        card=card,
        description=data.draw(texts(20_000)),
        messages=messages,
        complete=data.draw(st.booleans()),
    )
    view = render(conversation)
    assert_valid_view(view, allowed_users={"U0123ABC"})
    assert len(view["blocks"]) <= MAX_VIEW_BLOCKS
    text = view_text(view)
    assert slack_len(text) <= MAX_MESSAGES_TEXT + 25_000
    # What is shown is the newest messages, all of them up to the oldest shown; the rest is
    # counted.
    candidates = [n for n, m in enumerate(messages) if m.type != "status"]
    visible = [n for n in candidates if f"QX{n}QX" in text]
    assert visible == candidates[len(candidates) - len(visible) :]
    left_out = len(candidates) - len(visible)
    if left_out:
        assert f"{left_out} earlier message" in text
    if messages and any(m.type != "status" for m in messages):
        assert visible, "the newest message always fits"


def test_make_bundle_card_defaults_render():
    view = render(Conversation(card=make_card(bundle=make_bundle(), task=make_task())))
    assert_valid_view(view)
