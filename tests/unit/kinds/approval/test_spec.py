"""An approval's spec: resolved by one of its options, never by a question's calls."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from kandev_slack.core.approval import Approval, ToolAction, ToolOption
from kandev_slack.core.clarification import Answer
from kandev_slack.core.domain import Card, CardState, TaskInfo
from kandev_slack.kinds.approval.spec import ApprovalSpec, chosen_option
from kandev_slack.kinds.spec import Invalid, Try
from tests.kit.factories import NOW

SPEC = ApprovalSpec()


def approval_card() -> Card:
    item = Approval(
        task_id="t-1",
        session_id="s-1",
        request_id="r-1",
        pending_id="p-1",
        created_at=NOW - timedelta(seconds=5),
        action=ToolAction(type="command", command="ls", cwd="/srv"),
        options=(
            ToolOption(option_id="allow_once", name="Allow", kind="allow_once"),
            ToolOption(option_id="reject_once", name="Reject", kind="reject_once"),
        ),
    )
    return Card(
        pending_id=item.item_id,
        task_id="t-1",
        channel="C1",
        state=CardState.PENDING,
        item=item,
        task=TaskInfo(task_id="t-1", title="Deploy"),
        created_at=NOW,
        updated_at=NOW,
    )


def choose(option: str) -> Try:
    return Try("perm:r-1", "approve", (Answer(question_id="", selected_options=[option]),))


class Permissions:
    def __init__(self) -> None:
        self.made: list[tuple[str, str]] = []

    def approve(self, approval: Approval, option_id: str, **kw: Any) -> str:
        self.made.append(("approve", option_id))
        return "approved"

    def read_back(self, approval: Approval, option_id: str, **kw: Any) -> str | None:
        self.made.append(("read_back", option_id))
        return None


class Calls:
    def __init__(self) -> None:
        self.permissions = Permissions()


def test_it_owns_the_perm_keys() -> None:
    assert SPEC.owns_key("perm:r-1") and not SPEC.owns_key("ce0a763b")


def test_it_is_resolved_by_the_chosen_option() -> None:
    card, calls = approval_card(), Calls()
    assert chosen_option(choose("allow_once")) == "allow_once"
    assert SPEC.send(calls, card, choose("allow_once"), first_sent=NOW, resend=False) == "approved"
    assert SPEC.read_back(calls, card, choose("reject_once"), first_sent=NOW) is None
    assert calls.permissions.made == [("approve", "allow_once"), ("read_back", "reject_once")]


def test_only_an_offered_option_is_valid() -> None:
    card = approval_card()
    assert SPEC.invalid(card, choose("allow_once"), 10) is None
    assert SPEC.invalid(card, choose("nope"), 10) == Invalid("not_offered")


def test_a_click_must_choose_an_offered_option() -> None:
    card = approval_card()
    assert SPEC.refusal(card, "answer", "shortcut", None) == "not_a_card"
    assert SPEC.refusal(card, "view", "card", None) is None
    assert SPEC.refusal(card, "approve", "card", ("", "allow_once")) is None
    assert SPEC.refusal(card, "approve", "card", ("", "nope")) == "tampered"
    assert SPEC.refusal(card, "answer", "card", ("", "allow_once")) == "tampered"
