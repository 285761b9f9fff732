"""Identical approvals (issue 33): the same workspace, tool, command, working directory and
options wait as one card in a channel (the others in its thread)."""

from __future__ import annotations

from datetime import timedelta

from kandev_slack.core.approval import KANDEV_CUT_BYTES, Approval, ToolAction, ToolOption
from kandev_slack.kinds.approval.spec import ApprovalSpec
from tests.kit.factories import NOW

SPEC = ApprovalSpec()
ALLOW = ToolOption(option_id="allow_once", name="Allow", kind="allow_once")
REJECT = ToolOption(option_id="reject_once", name="Reject", kind="reject_once")


def approval(n: int, action: ToolAction | None = None, options=(ALLOW, REJECT), **kw) -> Approval:
    return Approval(
        task_id=f"t-{n}",
        session_id=f"s-{n}",
        request_id=f"r-{n}",
        pending_id=f"perm:p-{n}",
        created_at=NOW - timedelta(seconds=n),
        action=action or ToolAction(type="command", command="make test", cwd="/srv", **kw),
        options=options,
    )


def key(item: Approval, workspace: str = "ws-1") -> str | None:
    return SPEC.identity_key(item, workspace)


def test_the_same_command_in_the_same_directory_from_two_agents_is_one_item() -> None:
    assert key(approval(1)) is not None and key(approval(1)) == key(approval(2))


def test_another_command_directory_tool_options_or_workspace_is_another_item() -> None:
    base = key(approval(1))
    others = [
        key(approval(2, ToolAction(type="command", command="make lint", cwd="/srv"))),
        key(approval(2, ToolAction(type="command", command="make test", cwd="/tmp"))),
        key(approval(2, ToolAction(type="file_write", path="make test", cwd="/srv"))),
        key(approval(2, options=(ALLOW,))),
        key(approval(2, options=(REJECT, ALLOW))),
        key(approval(1), "ws-2"),
    ]
    assert base not in others and len(set(others)) == len(others)


def test_a_request_kandev_cut_is_never_grouped() -> None:
    long = "x" * KANDEV_CUT_BYTES
    cut = ToolAction(type="command", command=long, cwd="/srv", redacted=True)
    assert key(approval(1, cut)) is None


def test_a_question_is_not_an_approval() -> None:
    from tests.kit.factories import make_bundle

    assert SPEC.identity_key(make_bundle(), "ws-1") is None
