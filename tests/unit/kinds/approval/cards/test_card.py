"""The approval card: what the agent wants (redacted action only), one button per offered
option with confirm on "always", one outcome line once resolved; within every Slack limit and
unable to ping or forge a link whatever Kandev sends (property)."""

from __future__ import annotations

from datetime import timedelta

from hypothesis import given
from hypothesis import strategies as st

from kandev_slack.cards import ids
from kandev_slack.cards.ids import parse_button_value
from kandev_slack.core.approval import Approval, ToolAction, ToolOption, approval_key
from kandev_slack.core.clarification import Answer
from kandev_slack.core.domain import Card, CardOutcome, CardState
from kandev_slack.kinds.approval.cards.card import approval_outcome_line, render_approval
from kandev_slack.kinds.approval.cards.rows import approvals_blocks
from kandev_slack.kits.fakeslack import ALICE
from tests.kit.factories import KANDEV_URL, NOW, make_task
from tests.unit.cards.checks import assert_valid_message
from tests.unit.cards.safety import assert_cannot_notify
from tests.unit.cards.strategies import mention_texts, texts
from tests.unit.cards.test_limits_property import SETTINGS

STANDARD = (
    ToolOption(option_id="allow_once", name="Allow once", kind="allow_once"),
    ToolOption(option_id="allow_always", name="Always allow", kind="allow_always"),
    ToolOption(option_id="reject_once", name="Reject", kind="reject_once"),
    ToolOption(option_id="reject_always", name="Always reject", kind="reject_always"),
)


def approval(**changes: object) -> Approval:
    base = Approval(
        task_id="t-1",
        session_id="s-1",
        request_id="r-1",
        pending_id="fake-1",
        created_at=NOW - timedelta(seconds=5),
        action=ToolAction(
            type="command", command="rm -rf build", cwd="/repo/app", description="Run rm -rf build"
        ),
        options=STANDARD,
        cancellation_revision=0,
    )
    return base.model_copy(update=changes)


def render(item: Approval, state: CardState = CardState.PENDING, outcome=None):
    return render_approval(item, make_task("t-1"), state, outcome, kandev_url=KANDEV_URL, now=NOW)


def chose(option_id: str, state: CardState, **fields: object) -> CardOutcome:
    answer = Answer(question_id="", selected_options=[option_id])
    return CardOutcome(state=state, answers=[answer], at=NOW, **fields)


def elements(message, block_id: str = ids.BLOCK_ACTIONS) -> list[dict]:
    return next(b for b in message["blocks"] if b.get("block_id") == block_id)["elements"]


def shown(message) -> str:
    """What the card says the agent wants: its summary and the command (or path…) itself."""
    wanted = (ids.BLOCK_TOOL, ids.BLOCK_TARGET)
    return "\n".join(b["text"]["text"] for b in message["blocks"] if b.get("block_id") in wanted)


def test_a_pending_card_shows_the_command_and_one_button_per_option() -> None:
    message = render(approval())
    assert "```\nrm -rf build\n```" in shown(message)
    assert "`/repo/app`" in shown(message)
    labels = [e["text"]["text"] for e in elements(message)]
    assert labels == ["Allow once", "Always allow", "Reject", "Always reject"]
    assert [e["text"]["text"] for e in elements(message, ids.BLOCK_MORE)] == [
        "👀 I'm on it",
        "Open in Kandev",
    ]
    buttons = elements(message)
    assert buttons[0]["style"] == "primary"
    assert all(
        b.get("style") != "danger" for block in message["blocks"] for b in block.get("elements", [])
    )
    block_ids = [b.get("block_id") for b in message["blocks"]]
    assert block_ids == [
        ids.BLOCK_TITLE,
        ids.BLOCK_META,
        ids.BLOCK_TOOL,
        ids.BLOCK_TARGET,
        ids.BLOCK_ACTIONS,
        ids.BLOCK_MORE,
    ]
    assert "confirm" not in buttons[0] and "confirm" in buttons[1] and "confirm" in buttons[3]
    value = parse_button_value(buttons[2]["value"])
    assert (value.pending_id, value.option_id) == (approval_key("r-1"), "reject_once")
    assert ids.ACTION_APPROVE_PATTERN.match(buttons[2]["action_id"])
    # the notification names the command itself, not the agent's description of it
    assert message["text"].startswith("Approval needed: run a command: rm -rf build")


def test_an_urgent_approvals_notification_starts_with_its_priority() -> None:
    task = make_task("t-1").model_copy(update={"priority": "critical"})
    message = render_approval(
        approval(), task, CardState.PENDING, None, kandev_url=KANDEV_URL, now=NOW
    )
    assert message["text"].startswith("🔴 Critical · Approval needed: run a command: rm -rf build")


def test_each_kind_of_action_says_what_the_agent_wants() -> None:
    cases = [
        (ToolAction(type="file_write", path="db/schema.sql"), "write a file", "`db/schema.sql`"),
        (ToolAction(type="file_read", path="/etc/hosts"), "read a file", "`/etc/hosts`"),
        (
            ToolAction(type="network", destination="https://example.com/api", redacted=True),
            "reach the network",
            "removed secrets",
        ),
        (ToolAction(type="mcp", description="Call the deploy tool"), "use a tool", "deploy"),
    ]
    for action, wants, shows in cases:
        text = shown(render(approval(action=action)))
        assert f"The agent wants to {wants}" in text and shows in text


def test_outcome_lines_say_what_was_chosen_by_whom_and_where() -> None:
    item = approval()
    slack = {"via": "slack", "by_user": ALICE.id}
    assert (
        approval_outcome_line(chose("allow_once", CardState.ANSWERED, **slack), item)
        == f"✅ Allowed once by <@{ALICE.id}> in Slack"
    )
    assert (
        approval_outcome_line(chose("reject_once", CardState.REJECTED), item)
        == "⛔ Rejected in Kandev"
    )
    assert (
        approval_outcome_line(chose("allow_always", CardState.ANSWERED), item)
        == "✅ Always allowed in Kandev"
    )
    custom = approval(
        options=(ToolOption(option_id="opt-yes", name="Yes, publish", kind="allow_once"),)
    )
    assert (
        approval_outcome_line(chose("opt-yes", CardState.ANSWERED), custom)
        == "✅ Allowed once (“Yes, publish”) in Kandev"
    )
    ended = CardOutcome(state=CardState.ENDED, at=NOW)
    assert approval_outcome_line(ended, item).startswith("⏹ Withdrawn")
    cancelled = CardOutcome(state=CardState.ENDED, reason="turn_cancelled", at=NOW)
    assert approval_outcome_line(cancelled, item).startswith("⏹ Not answerable from Slack")


def test_a_resolved_card_keeps_only_the_link_and_puts_the_outcome_first() -> None:
    outcome = chose("allow_once", CardState.ANSWERED, via="slack", by_user=ALICE.id)
    message = render(approval(), CardState.ANSWERED, outcome)
    assert [e["text"]["text"] for e in elements(message, ids.BLOCK_MORE)] == ["Open in Kandev"]
    block_ids = [b.get("block_id") for b in message["blocks"]]
    assert block_ids == [
        ids.BLOCK_TITLE,
        ids.BLOCK_OUTCOME,
        ids.BLOCK_TOOL,
        ids.BLOCK_TARGET,
        ids.BLOCK_MORE,
    ]
    outcome = next(b for b in message["blocks"] if b.get("block_id") == ids.BLOCK_OUTCOME)
    assert outcome["text"]["text"].startswith(
        f"*✅ Allowed once by <@{ALICE.id}> in Slack* · <!date^"
    )
    assert "<@" not in message["text"]  # the notification names nobody


def test_the_listing_rows_lead_to_the_full_view_not_to_allow_buttons() -> None:
    item = approval()
    card = Card(
        pending_id=item.item_id,
        task_id="t-1",
        session_id="s-1",
        channel="C1",
        ts="1.2",
        item=item,
        task=make_task("t-1"),
        created_at=NOW,
        updated_at=NOW,
    )
    blocks = approvals_blocks([(card, None)] * 5, kandev_url=KANDEV_URL, limit=3)
    assert blocks[0]["text"]["text"] == "*🔐 5 approvals wait for a decision*"
    assert len(blocks) == 1 + 3 * 2 + 1
    row_buttons = blocks[2]["elements"]
    assert [e["text"]["text"] for e in row_buttons] == ["Review and decide…", "Open in Kandev"]
    assert row_buttons[0]["action_id"] == ids.ACTION_APPROVAL_VIEW
    assert parse_button_value(row_buttons[0]["value"]).pending_id == item.item_id
    assert not any(ids.ACTION_APPROVE_PATTERN.match(e["action_id"]) for e in row_buttons)


def _actions(draw, text) -> ToolAction:
    kind = draw(st.sampled_from(["command", "file_write", "file_read", "network", "other", ""]))
    return ToolAction(
        type=kind,
        command=draw(text(3000)),
        cwd=draw(text(500)),
        path=draw(text(3000)),
        destination=draw(text(3000)),
        description=draw(text(3000)),
        redacted=draw(st.booleans()),
    )


@st.composite
def approvals(draw, text=texts) -> Approval:
    options = draw(
        st.lists(
            st.builds(
                ToolOption,
                option_id=st.text(min_size=1, max_size=3000),
                name=text(200),
                kind=st.sampled_from(
                    ["allow_once", "allow_always", "reject_once", "reject_always", "x"]
                ),
            ),
            min_size=1,
            max_size=30,
        )
    )
    return approval(action=_actions(draw, text), options=tuple(options))


@SETTINGS
@given(data=st.data())
def test_every_approval_card_stays_within_limits(data) -> None:
    item = data.draw(approvals())
    state = data.draw(st.sampled_from(list(CardState)))
    option = data.draw(st.sampled_from([o.option_id for o in item.options] + ["cancelled"]))
    outcome = chose(
        option,
        state,
        via=data.draw(st.sampled_from(["slack", "kandev"])),
        by_user=data.draw(st.sampled_from([ALICE.id, None])),
        reason=data.draw(st.sampled_from(["", "cancelled", "turn_cancelled"])),
        # The Kandev account that chose (its display name is anything Kandev accepted).
        kandev_user=data.draw(st.sampled_from(["", "u-ben"])),
        kandev_name=data.draw(st.one_of(st.just(""), texts(300), mention_texts(300))),
    )
    task = make_task("t-1").model_copy(update={"title": data.draw(texts(1000))})
    message = render_approval(item, task, state, outcome, kandev_url=KANDEV_URL, now=NOW)
    assert_valid_message(message, allowed_users=[ALICE.id])


@SETTINGS
@given(item=approvals(text=mention_texts))
def test_nothing_kandev_sends_can_notify_anyone(item: Approval) -> None:
    message = render(item)
    assert_cannot_notify(message)
