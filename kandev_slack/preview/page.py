"""What one preview user sees of the fake Slack, as HTML fragments the page swaps in: the
sidebar, one pane per channel (messages with their threads, the ephemerals only this user was
told, in time order), the App Home tab and the top modal of the user's stack.

Every message, ephemeral and view carries where it lives (``data-surface``, ``data-channel``,
``data-ts``, ``data-version``, ``data-view-id``): the page's script sends them back with a
click so that the preview can act on exactly what the user saw."""

from __future__ import annotations

import hashlib
import json
import re
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime, tzinfo
from decimal import Decimal
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from kandev_slack.kits.fakeslack import (
    Channel,
    Ephemeral,
    FakeSlack,
    PostedMessage,
    SlackUser,
    ViewRecord,
)
from kandev_slack.preview.blocks import Look, attr, render_blocks, text_html
from kandev_slack.preview.mrkdwn import plain_to_html, to_html

#: The message shortcuts of the app (manifest.yml) the "⋮" menu of a message offers.
SHORTCUTS: tuple[tuple[str, str], ...] = (("reject_question", "Reject agent question"),)
HOME = "home"


@dataclass
class Memory:
    """What the preview itself remembers per user: a modal's field errors from the bot's last
    answer (view id → {block_id: message}) and notices about what Slack would have said."""

    errors: dict[str, dict[str, str]] = field(default_factory=dict)
    #: (when, what): a notice is shown for :data:`NOTICE_S`, to the page open when it came.
    notices: list[tuple[float, str]] = field(default_factory=list)

    def notice(self, text: str, at: float | None = None) -> None:
        self.notices.append((time.monotonic() if at is None else at, text))
        del self.notices[:-NOTICES_KEPT]

    def recent_notices(self, now: float | None = None) -> list[str]:
        now = time.monotonic() if now is None else now
        return [text for at, text in self.notices if now - at < NOTICE_S][-3:]


#: How long a notice stays (the page also takes it away after this long).
NOTICE_S = 8.0
NOTICES_KEPT = 10
#: What is shown at most of what an agent said next.
MAX_WENT_ON = 300
#: The line the scripted agents of ``--with-kandev`` read their script from (``kandevkit``'s
#: mock agent): it is in their task's description, which the Conversation view shows, and
#: means nothing to a person. It may be cut short (with "…") where the bot shortens a text.
SCRIPT_LINE = re.compile(r"KANDEV-MOCK-SPEC(?:\s+[A-Za-z0-9_-]+(?:\s+[A-Za-z0-9+/=]*)?)?…?")


def without_scripts(value: Any) -> Any:
    """``value`` (blocks, a text) with every scripted agent's script line taken out."""
    if isinstance(value, str):
        return SCRIPT_LINE.sub("", value) if "KANDEV-MOCK-SPEC" in value else value
    if isinstance(value, list):
        return [without_scripts(v) for v in value]
    if isinstance(value, dict):
        return {k: without_scripts(v) for k, v in value.items()}
    return value


def user_tz(user: SlackUser) -> tzinfo:
    try:
        return ZoneInfo(user.tz)
    except (ZoneInfoNotFoundError, ValueError):
        return ZoneInfo("UTC")


def clock(ts: str, tz: tzinfo) -> str:
    at = datetime.fromtimestamp(float(Decimal(ts)), tz)
    return f"{at.hour % 12 or 12}:{at.minute:02d} {'AM' if at.hour < 12 else 'PM'}"


class Snapshot:
    """The fake's state for ``user``: ``render()`` → the fragments, by name."""

    def __init__(
        self,
        fake: FakeSlack,
        user: SlackUser,
        channels: Iterable[Channel],
        names: dict[str, str],
        memory: Memory,
        went_on: dict[tuple[str, str], str] | None = None,
    ) -> None:
        """``went_on``: what the agent of an answered card said next, by (channel, ts)."""
        self.fake = fake
        self.went_on = went_on or {}
        self.user = user
        self.channels = list(channels)
        self.memory = memory
        self.names = names
        self.tz = user_tz(user)

    def look(self, errors: dict[str, str] | None = None) -> Look:
        return Look(names=self.names, tz=self.tz, errors=errors or {})

    def shown_channels(self) -> list[Channel]:
        """The route channels, then the user's direct messages with the bot if it wrote."""
        dm = "D" + self.user.id[1:]
        has_dm = bool(self.fake.messages(dm)) or bool(self.fake.ephemerals(self.user.id, dm))
        direct = [Channel(id=dm, name="Kandev (app)", is_im=True, user=self.user.id)]
        return self.channels + (direct if has_dm else [])

    def time_zone_line(self) -> str:
        """Whose time zone the times are shown in (each person sees Slack in their own)."""
        who = self.user.real_name or self.user.name or self.user.id
        zone = getattr(self.tz, "key", None) or str(self.tz)
        return f"Times are shown in {who}’s time zone ({zone})."

    def render(self, *, fresh: bool = False, now: float | None = None) -> dict[str, Any]:
        """The fragments; ``fresh``: for a page just (re)loaded, which is shown no notice
        given before it was opened."""
        channels = self.shown_channels()
        panes = {c.id: self.channel_pane(c) for c in channels}
        panes[HOME] = self.home_pane()
        sidebar = [{"id": c.id, "name": c.name, "direct": c.is_im} for c in channels]
        return {
            "sidebar": sidebar,
            "panes": panes,
            "modal": self.modal(),
            "notices": [] if fresh else [plain_to_html(n) for n in self.memory.recent_notices(now)],
            "time_zone": plain_to_html(self.time_zone_line()),
        }

    # -- channels ---------------------------------------------------------------------------
    def channel_pane(self, channel: Channel) -> str:
        messages = self.fake.messages(channel.id)
        replies: dict[str, list[PostedMessage]] = {}
        for m in messages:
            if m.thread_ts and m.thread_ts != m.ts:
                replies.setdefault(m.thread_ts, []).append(m)
        shown = [e for e in self.fake.ephemerals(self.user.id, channel.id) if not e.deleted]
        ephemerals = [e for e in shown if not e.thread_ts]
        thread_ephemerals: dict[str, list[Ephemeral]] = {}
        for e in shown:
            if e.thread_ts:
                thread_ephemerals.setdefault(e.thread_ts, []).append(e)
        top: list[tuple[Decimal, str]] = []
        for m in messages:
            if not m.thread_ts or m.thread_ts == m.ts:
                thread = replies.get(m.ts, [])
                top.append((Decimal(m.ts), self.message(m, thread, thread_ephemerals.get(m.ts))))
        top += [(Decimal(e.message_ts), self.ephemeral(e)) for e in ephemerals]
        items = "".join(html for _, html in sorted(top, key=lambda item: item[0]))
        title = f"#{channel.name}" if not channel.is_im else channel.name
        empty = "" if items else '<div class="empty">No messages yet.</div>'
        return (
            f'<div class="channel" data-channel="{attr(channel.id)}">'
            f'<div class="channel-title">{plain_to_html(title)}</div>'
            f'<div class="timeline">{items}{empty}</div></div>'
        )

    def _author(self, message: PostedMessage) -> str:
        if message.bot_id:
            return 'Kandev <span class="app-badge">APP</span>'
        person = self.fake.workspace.users.get(message.user)
        return plain_to_html(person.real_name or person.name if person else message.user)

    def message(
        self,
        message: PostedMessage,
        thread: list[PostedMessage],
        ephemerals: list[Ephemeral] | None = None,
        *,
        top: bool = True,
    ) -> str:
        body = self._content(message.text, message.blocks)
        edited = ' <span class="edited">(edited)</span>' if message.edited_ts else ""
        menu = "".join(
            f'<button type="button" class="shortcut" data-act="shortcut" '
            f'data-callback-id="{attr(cid)}">{plain_to_html(name)}</button>'
            for cid, name in SHORTCUTS
        )
        reply = (
            '<button type="button" class="reply-link" data-act="reply">Reply in thread</button>'
            if top
            else ""
        )
        replies = "".join(self.message(r, [], top=False) for r in thread)
        replies += "".join(self.ephemeral(e) for e in ephemerals or [])
        thread_html = (
            f'<div class="thread"><div class="thread-count">{len(thread)} '
            f"{'reply' if len(thread) == 1 else 'replies'}</div>{replies}</div>"
            if replies
            else ""
        )
        return (
            f'<div class="message" data-surface="message" data-channel="{attr(message.channel)}" '
            f'data-ts="{attr(message.ts)}" data-version="{len(message.versions)}">'
            f'<div class="meta"><span class="author">{self._author(message)}</span> '
            f'<span class="time">{clock(message.ts, self.tz)}</span>{edited}'
            f'<details class="more"><summary title="More actions">⋮</summary>{menu}</details>'
            f"</div>{body}{self._went_on(message)}{reply}{thread_html}</div>"
        )

    def _went_on(self, message: PostedMessage) -> str:
        said = self.went_on.get((message.channel, message.ts))
        if not said:
            return ""
        shown = said if len(said) <= MAX_WENT_ON else said[: MAX_WENT_ON - 1].rstrip() + "…"
        return (
            '<div class="went-on" title="Shown by the preview, read from Kandev: Slack shows '
            'no such line">Then, in Kandev, the agent went on: '
            f"<q>{plain_to_html(without_scripts(shown))}</q></div>"
        )

    def ephemeral(self, ephemeral: Ephemeral) -> str:
        return (
            f'<div class="message ephemeral" data-surface="ephemeral" '
            f'data-channel="{attr(ephemeral.channel)}" data-ts="{attr(ephemeral.message_ts)}">'
            f'<div class="meta"><span class="author">Kandev <span class="app-badge">APP</span>'
            f'</span> <span class="time">{clock(ephemeral.message_ts, self.tz)}</span> '
            f'<span class="only-you">Only visible to you</span></div>'
            f"{self._content(ephemeral.text, ephemeral.blocks)}</div>"
        )

    def _content(self, text: str, blocks: list[dict[str, Any]]) -> str:
        text, blocks = without_scripts(text), without_scripts(blocks)
        if blocks:
            return f'<div class="blocks">{render_blocks(blocks, self.look())}</div>'
        shown = to_html(text, names=self.names, tz=self.tz)
        return f'<div class="blocks"><div class="plain-message">{shown}</div></div>'

    # -- App Home and modals ----------------------------------------------------------------
    def home_pane(self) -> str:
        home = self.fake.home(self.user.id)
        inner = (
            render_blocks(home.blocks, self.look())
            if home is not None
            else '<div class="empty">The app has not published a Home tab for you yet.</div>'
        )
        view_id = attr(home.id) if home is not None else ""
        return (
            f'<div class="home" data-surface="view" data-view-id="{view_id}">'
            f'<div class="channel-title">Kandev — Home</div><div class="blocks">{inner}</div></div>'
        )

    def modal(self) -> str:
        stack = [v for v in self.fake.open_views(self.user.id) if v.is_open]
        if not stack:
            return ""
        view = stack[-1]
        return self.modal_html(view, depth=len(stack))

    def modal_html(self, view: ViewRecord, *, depth: int) -> str:
        d = without_scripts(view.definition)
        blocks = list(d.get("blocks", []))
        errors = self.memory.errors.get(f"{view.id}:{view.hash}", {})
        title = text_html(d.get("title"), self.look())
        close = text_html(d.get("close"), self.look()) or "Cancel"
        submit = d.get("submit")
        submit_html = (
            f'<button type="submit" class="btn btn-primary">{text_html(submit, self.look())}'
            "</button>"
            if submit
            else ""
        )
        back = '<span class="back" title="A modal below this one">‹</span> ' if depth > 1 else ""
        return (
            f'<form class="modal" data-surface="view" data-view-id="{attr(view.id)}" '
            f'data-hash="{attr(view.hash)}" data-depth="{depth}">'
            f'<div class="modal-title">{back}{title}</div>'
            f'<div class="modal-body blocks">{render_blocks(blocks, self.look(errors))}</div>'
            f'<div class="modal-footer"><button type="button" class="btn" data-act="close">'
            f"{close}</button>{submit_html}</div></form>"
        )


def state_version(fake: FakeSlack, memory_count: int, *more: object) -> str:
    """Changes whenever anything the page shows may have changed (cheap: no rendering)."""
    state = fake.state
    with state.lock:
        views = [(v.id, v.is_open, v.hash) for v in state.views.values()]
        stacks = sorted((u, tuple(s)) for u, s in state.modal_stacks.items())
        messages = [
            (m.ts, m.deleted, len(m.versions))
            for ms in state.channel_messages.values()
            for m in ms.values()
        ]
        key = [len(state.calls), len(state.ephemerals), messages, views, stacks, memory_count]
        key += [str(m) for m in more]
    return hashlib.sha1(json.dumps(key).encode()).hexdigest()[:16]
