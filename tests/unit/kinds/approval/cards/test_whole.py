"""Nothing is approved unseen: a long command shows its start and its end with "N characters
not shown" between them (the dangerous end included), a one-line summary first, the whole of it
one click away (the full view, or the card's thread beyond it); "always" says what it allows;
the listing and Home lead through the full view; every card, listing, Home and full view stays
within Slack's limits whatever the agent offers (properties)."""

from __future__ import annotations

import re
from datetime import timedelta

from hypothesis import given
from hypothesis import strategies as st

from kandev_slack.cards import ids
from kandev_slack.cards.ids import ModalMetadata
from kandev_slack.cards.limits import MAX_MESSAGE_BLOCKS_TEXT, blocks_text_length, slack_len
from kandev_slack.cards.views.followups import reminder_text
from kandev_slack.cards.views.home import render_home
from kandev_slack.cards.views.listing import render_listing
from kandev_slack.cards.views.waiting import ListingPage, Query
from kandev_slack.core.approval import (
    KANDEV_CUT_BYTES,
    Approval,
    ToolAction,
    ToolOption,
    approval_key,
)
from kandev_slack.core.domain import Card, CardState
from kandev_slack.kinds.approval.cards.card import render_approval
from kandev_slack.kinds.approval.cards.view import fits_view, thread_parts, whole_view
from tests.kit.factories import KANDEV_URL, NOW, make_task, waiting
from tests.unit.cards.checks import assert_valid_message, assert_valid_view
from tests.unit.cards.test_limits_property import SETTINGS
from tests.unit.kinds.approval.cards.test_card import approvals
from tests.unit.listing.checks import assert_valid_home

STANDARD = (
    ToolOption(option_id="allow_once", name="Allow once", kind="allow_once"),
    ToolOption(option_id="allow_always", name="Always allow", kind="allow_always"),
    ToolOption(option_id="reject_once", name="Reject", kind="reject_once"),
)

#: The issue's command: 1,990 characters, the dangerous part at the end.
DANGEROUS_END = " && rm -rf /srv/app/releases/old && systemctl restart kandev-app.service"


def long_command(length: int = 1990) -> str:
    start = "cd /srv/app && git fetch --all && "
    filler_len = length - len(start) - len(DANGEROUS_END)
    filler = ("./build.sh --target=/srv/app/releases/next --verbose && " * (filler_len // 20))[
        :filler_len
    ]
    return start + filler + DANGEROUS_END


def approval(command: str, options=STANDARD, **action: str) -> Approval:
    return Approval(
        task_id="t-1",
        session_id="s-1",
        request_id="r-1",
        pending_id="fake-1",
        created_at=NOW - timedelta(seconds=5),
        action=ToolAction(
            type=action.get("type", "command"),
            command=command,
            cwd=action.get("cwd", "/srv/app"),
            description="Deploy",
        ),
        options=options,
    )


def card_of(item: Approval, state: CardState = CardState.PENDING) -> Card:
    return Card(
        pending_id=item.item_id,
        task_id="t-1",
        session_id="s-1",
        channel="C1",
        ts="1.2",
        item=item,
        task=make_task("t-1"),
        state=state,
        created_at=NOW,
        updated_at=NOW,
    )


def render(item: Approval) -> dict:
    task = make_task("t-1")
    return render_approval(item, task, CardState.PENDING, None, kandev_url=KANDEV_URL, now=NOW)


def block(message: dict, block_id: str) -> dict | None:
    return next((b for b in message["blocks"] if b.get("block_id") == block_id), None)


def unrender(code: str) -> str:
    """What a rendered code piece shows, as the command's own characters."""
    return (
        code.replace("\u200b", "")
        .replace("\u2060", "")
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&amp;", "&")
    )


_CUT = re.compile(
    r"\A```\n(?P<head>.*)\n```\n_… (?P<hidden>[\d,]+) characters? not shown …_\n```\n"
    r"(?P<tail>.*)\n```\Z",
    re.DOTALL,
)


def shown_command(message: dict) -> tuple[str, int, str]:
    """(start shown, characters not shown, end shown) of the card's command."""
    text = block(message, ids.BLOCK_TARGET)["text"]["text"]  # type: ignore[index]
    cut = _CUT.match(text)
    if cut is None:
        assert text.startswith("```\n") and text.endswith("\n```"), text[:200]
        return unrender(text[4:-4]), 0, ""
    return unrender(cut["head"]), int(cut["hidden"].replace(",", "")), unrender(cut["tail"])


# What a command may hold: anything printable, emoji, what Slack escapes, backticks, newlines,
# broadcast words (no control characters: they are never shown, nor counted as hidden).
_PIECES = st.sampled_from(
    [
        "&",
        "<",
        ">",
        "&&",
        "`",
        "```",
        "\n",
        "@here",
        "👍🏽",
        "👨‍👩‍👧",
        "🇫🇷",
        "e\u0301",
        " ",
        "x" * 50,
    ]
)
commands = st.lists(
    st.one_of(_PIECES, st.text(st.characters(categories=["L", "N", "P", "S", "Zs"]))),
    max_size=400,
).map("".join)


def test_the_issues_1990_character_command_shows_whole_with_its_end() -> None:
    """Before: cut at 2,000 characters counted after escaping, its end (the rm -rf and the
    restart) hidden with no notice."""
    command = long_command()
    message = render(approval(command))
    head, hidden, _tail = shown_command(message)
    assert (head, hidden) == (command, 0)
    assert (
        "systemctl restart kandev-app.service" in block(message, ids.BLOCK_TARGET)["text"]["text"]
    )
    assert_valid_message(message)


def test_a_longer_command_shows_its_start_its_end_and_how_much_is_not_shown() -> None:
    command = long_command(9000)
    message = render(approval(command))
    head, hidden, tail = shown_command(message)
    assert command.startswith(head) and command.endswith(tail)
    assert tail.endswith(DANGEROUS_END) and head.startswith("cd /srv/app")
    assert hidden == len(command) - len(head) - len(tail) > 0
    whole = block(message, ids.BLOCK_WHOLE)
    assert whole is not None
    assert [e["text"]["text"] for e in whole["elements"]] == ["Show whole command"]
    assert whole["elements"][0]["action_id"] == ids.ACTION_APPROVAL_VIEW
    assert_valid_message(message)


def test_a_one_line_summary_comes_first() -> None:
    message = render(approval(long_command(), cwd="/srv/app"))
    tool = block(message, ids.BLOCK_TOOL)["text"]["text"]  # type: ignore[index]
    assert "*The agent wants to run a command*" in tool
    assert "Command `cd`" in tool and "more commands chained" in tool
    assert "in `/srv/app`" in tool and "1,990 characters" in tool
    ids_in_order = [b.get("block_id") for b in message["blocks"]]
    assert ids_in_order.index(ids.BLOCK_TOOL) < ids_in_order.index(ids.BLOCK_TARGET)


@SETTINGS
@given(command=commands, length=st.sampled_from([0, 100, 2500, 3100, 8000, 30_000]))
def test_any_command_shows_its_start_and_end_with_a_correct_count(command, length) -> None:
    command = (command * (length // max(1, len(command)) + 1))[: max(length, len(command))]
    message = render(approval(command))
    assert_valid_message(message)
    if not command.strip():
        return
    head, hidden, tail = shown_command(message)
    if hidden == 0:
        assert head == command
        assert block(message, ids.BLOCK_WHOLE) is None
        return
    assert head and tail, "the start and the end are both shown"
    assert command.startswith(head) and command.endswith(tail)
    assert hidden == len(command) - len(head) - len(tail)
    assert block(message, ids.BLOCK_WHOLE) is not None


def test_always_names_the_command_and_what_kandev_says_it_allows() -> None:
    """Before: "a command like this", without naming it."""
    command = long_command(4000)
    message = render(approval(command))
    always = next(
        e
        for e in block(message, ids.BLOCK_ACTIONS)["elements"]
        if e["text"]["text"] == "Always allow"
    )
    text = always["confirm"]["text"]["text"]
    assert slack_len(text) <= 300
    assert "cd /srv/app" in text and "kandev-app.service" in text
    assert "characters not shown" in text
    assert "Kandev reports only this option's name and kind (allow_always)" in text


many_always = tuple(
    ToolOption(
        option_id=f"always-{i}-" + "x" * 80,
        name=f"Always allow commands like this one, number {i}, " + "y" * 150,
        kind="allow_always" if i % 2 else "reject_always",
    )
    for i in range(30)
)


def test_a_card_with_many_long_always_options_stays_within_slacks_text_budget() -> None:
    """Before: 24 confirms of 300 characters and the command: msg_blocks_too_long."""
    message = render(approval(long_command(20_000), options=many_always))
    assert blocks_text_length(message["blocks"]) <= MAX_MESSAGE_BLOCKS_TEXT
    assert_valid_message(message)
    assert block(message, ids.BLOCK_ACTIONS) is not None


def three_waiting() -> tuple[tuple[Card, str | None], ...]:
    return tuple(
        (
            card_of(
                approval(long_command(20_000), options=many_always).model_copy(
                    update={"request_id": f"r-{i}"}
                )
            ),
            f"https://team.slack.com/archives/C1/p170000000000000{i}",
        )
        for i in range(3)
    )


def test_the_listing_with_three_long_approvals_stays_within_limits() -> None:
    """Before: every row carried its options' buttons and confirms: msg_blocks_too_long."""
    items = [waiting(n, task_title="T" * 300, prompt="P" * 2000) for n in range(1, 11)]
    page = ListingPage(
        query=Query(),
        workspace=None,
        items=items,
        total=len(items),
        first=1,
        number=1,
        next_after=None,
        approvals=three_waiting(),
    )
    message = render_listing(page, kandev_url=KANDEV_URL, now=NOW)
    assert_valid_message(message)
    buttons = [e for b in message["blocks"] if b["type"] == "actions" for e in b["elements"]]
    assert not any(ids.ACTION_APPROVE_PATTERN.match(e["action_id"]) for e in buttons)
    assert [e["text"]["text"] for e in buttons].count("Review and decide…") == 3


def test_home_with_three_long_approvals_stays_within_limits() -> None:
    view = render_home([waiting(1)], [], kandev_url=KANDEV_URL, now=NOW, approvals=three_waiting())
    assert_valid_home(view)
    assert blocks_text_length(view["blocks"]) <= MAX_MESSAGE_BLOCKS_TEXT


def metadata(item: Approval) -> str:
    return ModalMetadata(pending_id=item.item_id, channel="C1", ts="1.2").encode()


def view_text(view: dict) -> str:
    """The whole command as the full view shows it (its code blocks, in order)."""
    codes = [
        b["text"]["text"]
        for b in view["blocks"]
        if b.get("block_id", "").startswith(ids.BLOCK_PART)
    ]
    return "".join(unrender(c[4:-4]) for c in codes)


@SETTINGS
@given(command=commands, length=st.sampled_from([10, 3100, 9000, 40_000]), waiting=st.booleans())
def test_the_full_view_holds_the_whole_command_or_the_thread_does(command, length, waiting):
    command = (command or "x") * (length // max(1, len(command or "x")) + 1)
    command = command[:length]
    item = approval(command, options=many_always)
    card = card_of(item, CardState.PENDING if waiting else CardState.ANSWERED)
    view = whole_view(card, kandev_url=KANDEV_URL, metadata=metadata(item), waiting=waiting)
    assert_valid_view(view)
    assert blocks_text_length(view["blocks"]) <= MAX_MESSAGE_BLOCKS_TEXT
    if fits_view(item):
        assert view_text(view) == command
    else:
        parts = thread_parts(item)
        shown = "".join(unrender(p.split("\n```\n", 1)[1][: -len("\n```")]) for p in parts)
        assert shown == command
        assert all(slack_len(p) <= 4000 for p in parts)
    options = block(view, ids.BLOCK_ACTIONS)
    assert (options is not None) == waiting
    if options is not None:
        assert all(ids.ACTION_APPROVE_PATTERN.match(e["action_id"]) for e in options["elements"])


def test_the_full_view_of_the_issues_command_holds_all_of_it() -> None:
    item = approval(long_command())
    view = whole_view(card_of(item), kandev_url=KANDEV_URL, metadata=metadata(item), waiting=True)
    assert view_text(view) == long_command()
    assert view["callback_id"] == ids.CALLBACK_APPROVAL_VIEW
    assert [e["text"]["text"] for e in block(view, ids.BLOCK_ACTIONS)["elements"]] == [
        "Allow once",
        "Always allow",
        "Reject",
    ]


def test_a_reminder_and_the_notification_show_the_command_and_its_end() -> None:
    """Before: the agent's description ("Deploy"), or the command cut at its end."""
    item = approval(long_command())
    text = reminder_text(900, (), item.headline)
    assert "cd /srv/app" in text and "kandev-app.service" in text
    assert "characters not shown" in text
    notification = render(item)["text"]
    assert "kandev-app.service" in notification and "cd /srv/app" in notification
    assert approval_key("r-1") == item.item_id


def test_a_command_kandev_cut_offers_no_allow_and_says_why() -> None:
    """Kandev passes on at most 4,096 bytes and says "redacted": the end is unknown here, so
    the card offers only what is safe unseen (rejecting) and says it is allowed in Kandev."""
    command = long_command(9000).encode()[:KANDEV_CUT_BYTES].decode()
    item = approval(command).model_copy(
        update={"action": approval(command).action.model_copy(update={"redacted": True})}
    )
    message = render(item)
    labels = [e["text"]["text"] for e in block(message, ids.BLOCK_ACTIONS)["elements"]]
    assert labels == ["Reject"]
    notice = block(message, ids.BLOCK_CUT)["elements"][0]["text"]  # type: ignore[index]
    assert "first 4,096 bytes" in notice and "allowed only in Kandev" in notice
    tool = block(message, ids.BLOCK_TOOL)["text"]["text"]  # type: ignore[index]
    assert "more than the 4,096 characters Kandev passed on" in tool
    assert_valid_message(message)
    view = whole_view(card_of(item), kandev_url=KANDEV_URL, metadata=metadata(item), waiting=True)
    assert [e["text"]["text"] for e in block(view, ids.BLOCK_ACTIONS)["elements"]] == ["Reject"]
    assert block(view, ids.BLOCK_CUT) is not None


@SETTINGS
@given(data=st.data())
def test_any_three_approvals_keep_the_listing_and_home_within_limits(data) -> None:
    rows = tuple(
        (card_of(data.draw(approvals()).model_copy(update={"request_id": f"r-{n}"})), None)
        for n in range(3)
    )
    items = [waiting(n, task_title="T" * 300, prompt="P" * 2000) for n in range(1, 11)]
    page = ListingPage(
        query=Query(),
        workspace=None,
        items=items,
        total=len(items),
        first=1,
        number=1,
        next_after=None,
        approvals=rows,
    )
    assert_valid_message(render_listing(page, kandev_url=KANDEV_URL, now=NOW))
    home = render_home(items[:3], [], kandev_url=KANDEV_URL, now=NOW, approvals=rows)
    assert_valid_home(home)
    assert blocks_text_length(home["blocks"]) <= MAX_MESSAGE_BLOCKS_TEXT
    for card, _ in rows:
        meta = metadata(card.approval)
        view = whole_view(card, kandev_url=KANDEV_URL, metadata=meta, waiting=True)
        assert_valid_view(view)
        assert blocks_text_length(view["blocks"]) <= MAX_MESSAGE_BLOCKS_TEXT


def test_a_long_working_directory_is_shown_whole_one_click_away() -> None:
    """The summary shows a long working directory as its start and its end: the card then
    offers the full view even for a short command, and the full view shows the directory
    whole (before: cut in both, shown whole nowhere, and no full view offered)."""
    cwd = "/srv/" + "nested-release-directory/" * 24 + "DANGER-END"
    item = approval("make deploy", cwd=cwd)
    message = render(item)
    assert_valid_message(message)
    assert "characters not shown" in block(message, ids.BLOCK_TOOL)["text"]["text"]
    assert block(message, ids.BLOCK_WHOLE) is not None
    view = whole_view(card_of(item), kandev_url=KANDEV_URL, metadata=metadata(item), waiting=True)
    assert_valid_view(view)
    shown = [
        unrender(b["text"]["text"])
        for b in view["blocks"]
        if b.get("block_id", "").startswith(ids.BLOCK_CWD)
    ]
    assert shown == [f"```\n{cwd}\n```"]
    assert view_text(view) == "make deploy"


@SETTINGS
@given(cwd_length=st.sampled_from([10, 400, 2900, 4096]), length=st.sampled_from([10, 9000]))
def test_any_working_directory_keeps_the_full_view_within_limits(cwd_length, length) -> None:
    cwd = ("/srv/x" * 1000)[:cwd_length]
    item = approval(long_command(length) if length > 2000 else "x" * length, cwd=cwd)
    view = whole_view(card_of(item), kandev_url=KANDEV_URL, metadata=metadata(item), waiting=True)
    assert_valid_view(view)
    assert blocks_text_length(view["blocks"]) <= MAX_MESSAGE_BLOCKS_TEXT
