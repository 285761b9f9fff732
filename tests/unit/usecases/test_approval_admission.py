"""What admission lets through on an approval: its full view (reading changes nothing), and
only options that may be chosen from Slack — never an allow of a command Kandev cut (its end
is unknown here)."""

from __future__ import annotations

from datetime import timedelta

from kandev_slack.core.approval import KANDEV_CUT_BYTES, Approval, ToolAction, ToolOption
from kandev_slack.core.domain import Card
from kandev_slack.usecases.answering.admission import Admission, Refusal, Request
from tests.kit.factories import ALICE_ID, NOW, make_task

OPTIONS = (
    ToolOption(option_id="allow_once", name="Allow once", kind="allow_once"),
    ToolOption(option_id="reject_once", name="Reject", kind="reject_once"),
)


def card(command: str = "rm -rf build", redacted: bool = False) -> Card:
    item = Approval(
        task_id="t-1",
        session_id="s-1",
        request_id="r-1",
        pending_id="p-1",
        created_at=NOW - timedelta(seconds=5),
        action=ToolAction(type="command", command=command, redacted=redacted),
        options=OPTIONS,
    )
    return Card(
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


def request(c: Card, action: str, option: str | None = None, via: str = "home") -> Request:
    return Request(
        user_id=ALICE_ID,
        action=action,  # type: ignore[arg-type]
        source="slack:button",
        via=via,  # type: ignore[arg-type]
        pending_id=c.pending_id,
        option=("", option) if option else None,
    )


def test_the_full_view_of_an_approval_is_admitted() -> None:
    """Before: "view" on an approval was refused as tampered."""
    assert Admission._option_problem(request(card(), "view"), card()) is None


def test_an_allow_of_a_command_kandev_cut_is_refused_a_reject_is_not() -> None:
    cut = card("x" * KANDEV_CUT_BYTES, redacted=True)
    assert cut.approval.action.cut_by_kandev
    refused = Admission._option_problem(request(cut, "approve", "allow_once"), cut)
    assert isinstance(refused, Refusal) and refused.kind == "tampered"
    assert Admission._option_problem(request(cut, "approve", "reject_once"), cut) is None
    whole = card("x" * 100)
    assert Admission._option_problem(request(whole, "approve", "allow_once"), whole) is None


def test_only_a_redacted_text_as_long_as_kandevs_cut_counts_as_cut() -> None:
    assert not card("x" * KANDEV_CUT_BYTES).approval.action.cut_by_kandev  # not redacted
    assert not card("x" * 100, redacted=True).approval.action.cut_by_kandev  # a secret removed
    assert card("é" * (KANDEV_CUT_BYTES // 2 - 1), redacted=True).approval.action.cut_by_kandev
