"""What is particular to an approval (a tool-permission request)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from kandev_slack.core.approval import APPROVAL_PREFIX, Approval
from kandev_slack.core.domain import Card
from kandev_slack.core.normalise import digest
from kandev_slack.core.pending import ItemKind, PendingItem
from kandev_slack.kinds.spec import Invalid, Out, Resolver, Try


def chosen_option(attempt: Try) -> str:
    """The option an approval attempt chose ("" when it names none)."""
    for answer in attempt.answers:
        if answer.selected_options:
            return answer.selected_options[0]
    return ""


class ApprovalSpec:
    kind = ItemKind.APPROVAL
    item_type = Approval
    snoozable = False  # never offered "Snooze…"
    listed_as_question = False  # listed by kandev_slack/usecases/intake/approvals.py
    markdown_headline = False  # an approval's headline is literal text
    thread_answerable = False
    has_whole_view = True

    def owns_key(self, key: str) -> bool:
        return key.startswith(APPROVAL_PREFIX)

    def invalid(self, card: Card, attempt: Try, max_text: int) -> Invalid | None:
        if attempt.action != "approve" or card.approval.option(chosen_option(attempt)) is None:
            return Invalid("not_offered")
        return None

    def send(
        self, kandev: Resolver[Out], card: Card, attempt: Try, *, first_sent: datetime, resend: bool
    ) -> Out:
        # Never re-sent blindly: an ambiguous one is settled from the transcript (read_back).
        return kandev.permissions.approve(
            card.approval, chosen_option(attempt), first_sent=first_sent, resend=resend
        )

    def read_back(
        self, kandev: Resolver[Out], card: Card, attempt: Try, *, first_sent: datetime
    ) -> Out | None:
        return kandev.permissions.read_back(
            card.approval, chosen_option(attempt), first_sent=first_sent
        )

    def refusal(
        self, card: Card, action: str, via: str, option: tuple[str, str] | None
    ) -> str | None:
        if via == "shortcut":
            return "not_a_card"  # "Reject agent question" is for questions
        if action == "view" and option is None:
            return None  # its full view: reading it changes nothing
        # Only ever resolved by one of its option buttons; an allow option of what Kandev cut
        # is never offered here (never allowed unseen).
        offered = option is not None and card.approval.may_allow_here(option[1])
        return None if action == "approve" and offered else "tampered"

    def one_question(self, card: Card) -> bool:
        return False

    def needs_thread_for_whole_text(self, card: Card, fits: Any) -> bool:
        return not fits(card.approval)

    def identity_key(self, item: PendingItem, workspace_id: str) -> str | None:
        """Its workspace, the tool (the action's type), the command, path or destination and
        the working directory, exactly (a command differing by a space is another command),
        and its options (id, name, kind, in order). A request Kandev cut is never grouped:
        its end is unknown, so two cut ones may differ."""
        if not isinstance(item, Approval) or item.action.cut_by_kandev:
            return None
        action = item.action
        parts = ["approval", workspace_id, action.type, action.command, action.cwd]
        parts += [action.path, action.destination, str(len(item.options))]
        for option in item.options:
            parts += [option.option_id, " ".join(option.name.split()), option.kind]
        return digest(parts)
