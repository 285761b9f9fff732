"""The words and blocks of personal notifications (pure): command replies, the App Home's
"Your notifications" section with its remove buttons, and the note above a DM card."""

from __future__ import annotations

from kandev_slack.cards.blocks import Block, button, context, divider, section
from kandev_slack.cards.ids import COMMAND
from kandev_slack.cards.limits import MAX_BUTTON_VALUE, MAX_VIEW_BLOCKS
from kandev_slack.cards.text import escape_mrkdwn
from kandev_slack.store.people.subscriptions import ScopeKind, Subscription

#: The "Remove" button of one subscription on the App Home.
ACTION_UNSUBSCRIBE = "kq_unsubscribe"
#: At most this many subscriptions are shown on the App Home (one block each).
MAX_SHOWN = 20
_KINDS: tuple[ScopeKind, ...] = ("all", "workspace", "label")

USAGE = (
    f"`{COMMAND} subscribe` (every new question you may answer), "
    f"`{COMMAND} subscribe <workspace>`, `{COMMAND} subscribe label:<label>`; "
    f"`{COMMAND} unsubscribe …` the same way (alone: all of them); "
    f"`{COMMAND} subscriptions` lists yours."
)


def describe(kind: ScopeKind, value: str) -> str:
    if kind == "all":
        return "every new question you may answer"
    if kind == "workspace":
        return f"new questions in workspace *{escape_mrkdwn(value)}*"
    return f"new questions labelled `{escape_mrkdwn(value)}`"


def subscribed_message(kind: ScopeKind, value: str, *, new: bool) -> str:
    what = describe(kind, value)
    if not new:
        return f"You are already subscribed to {what}."
    return f"🔔 Subscribed: you will get a direct message for {what}."


def unsubscribed_message(kind: ScopeKind | None, value: str, removed: int) -> str:
    if kind is None:
        if not removed:
            return "You had no subscriptions."
        return f"🔕 Unsubscribed from all {removed} of your subscriptions."
    what = describe(kind, value)
    if not removed:
        return f"You were not subscribed to {what}."
    return f"🔕 Unsubscribed from {what}."


def list_message(subs: list[Subscription]) -> str:
    if not subs:
        return f"You have no subscriptions. {USAGE}"
    lines = "\n".join(f"• {describe(s.kind, s.value)}" for s in subs)
    return f"Your subscriptions (a direct message for each):\n{lines}"


def usage_message(problem: str = "") -> str:
    return f"{problem} {USAGE}".strip()


#: What is wrong with a subcommand (kandev_slack.usecases.followups.subscriptions.BadCommand), in
#: words.
_BAD_COMMAND = {
    "trailing": "`subscriptions` takes nothing after it.",
    "too_long": "That is too long (over {max_value}).",
    "no_label": "Name the label after `label:`.",
}


def bad_command_message(problem: str, max_value: int) -> str:
    """A subcommand that cannot be read: what is wrong, then how to write one."""
    return usage_message(_BAD_COMMAND[problem].format(max_value=max_value))


def kandev_unreachable_message() -> str:
    return "Kandev cannot be reached right now, so the workspace cannot be checked; try again."


def unknown_workspace_message(name: str, known: list[str]) -> str:
    listed = ", ".join(f"*{escape_mrkdwn(k)}*" for k in known) or "none"
    return f"No Kandev workspace is named *{escape_mrkdwn(name)}* (Kandev has: {listed})."


def dm_note(kind: ScopeKind, value: str, channel: str) -> str:
    """The line above a subscriber's DM card."""
    return f"🔔 {describe(kind, value).capitalize()} (you subscribed) — first asked in <#{channel}>"


def assignee_note(channel: str) -> str:
    """The line above the DM card the task's assignee gets (routes with
    ``notify_assignee = true``)."""
    return f"📌 A task assigned to you in Kandev — first asked in <#{channel}>"


def encode_scope(kind: ScopeKind, value: str) -> str:
    return f"{kind}:{value}"[:MAX_BUTTON_VALUE]


def decode_scope(raw: str) -> tuple[ScopeKind, str] | None:
    kind, _, value = (raw or "").partition(":")
    for known in _KINDS:
        if kind == known and (known == "all") == (value == ""):
            return known, value
    return None


def home_blocks(subs: list[Subscription]) -> list[Block]:
    """The App Home's "Your notifications" section."""
    blocks: list[Block] = [divider(), section("*Your notifications* (direct messages)")]
    if not subs:
        blocks.append(context(f"None. {USAGE}"))
        return blocks
    for sub in subs[:MAX_SHOWN]:
        block = section(f"🔔 {describe(sub.kind, sub.value)}")
        block["accessory"] = button(
            "Remove", ACTION_UNSUBSCRIBE, value=encode_scope(sub.kind, sub.value)
        )
        blocks.append(block)
    if len(subs) > MAX_SHOWN:
        blocks.append(context(f"…and {len(subs) - MAX_SHOWN} more: `{COMMAND} subscriptions`."))
    return blocks


def with_home_blocks(blocks: list[Block], subs: list[Subscription]) -> list[Block]:
    """A Home view's blocks with the subscriptions section at the end, within Slack's limit
    (the end of the list above gives way)."""
    extra = home_blocks(subs)
    return blocks[: MAX_VIEW_BLOCKS - len(extra)] + extra
