"""Slack mrkdwn → HTML, safe by construction: every piece of the input is HTML-escaped before
any markup is added, and the markup added is a fixed set of tags (``b i s code pre blockquote
a span br``) whose only attribute values are escaped too. Links keep only http(s) and mailto
targets. ``<!date^…>`` tokens are written in the viewer's time zone, as Slack's client does.

What Slack sends is already escaped (``&amp; &lt; &gt;``): those three entities are undone
first so that they are shown, not doubled, then everything is escaped for HTML."""

from __future__ import annotations

import html
import re
from collections.abc import Mapping
from datetime import datetime, tzinfo
from zoneinfo import ZoneInfo

#: Who and what a mention names: ``{"U0ANA": "ana"}`` (users, channels, user groups).
Names = Mapping[str, str]

_TOKEN = re.compile(r"<([^<>\n]*)>")
_FENCE = re.compile(r"```(.+?)```", re.S)
_CODE = re.compile(r"`([^`\n]+)`")
_HOLE = re.compile("\x00(\\d+)\x00")
_DATE_PART = re.compile(r"\{(\w+)\}")
_SAFE_URL = re.compile(r"^(https?://|mailto:)[^\s\"'<>]+$", re.I)
_STYLES = (
    (re.compile(r"(?<![\w*])\*(?=\S)([^*\n]+?)(?<=\S)\*(?![\w*])"), "b"),
    (re.compile(r"(?<![\w_])_(?=\S)([^_\n]+?)(?<=\S)_(?![\w_])"), "i"),
    (re.compile(r"(?<![\w~])~(?=\S)([^~\n]+?)(?<=\S)~(?![\w~])"), "s"),
)
_ENTITIES = (("&lt;", "<"), ("&gt;", ">"), ("&amp;", "&"))


def slack_unescape(text: str) -> str:
    """Undo the three escapes Slack's text format uses (``&amp;`` last)."""
    for entity, char in _ENTITIES:
        text = text.replace(entity, char)
    return text


def escape(text: str) -> str:
    """Slack text (its own escapes undone) as HTML text."""
    return html.escape(slack_unescape(text), quote=True)


class _Holes:
    """Finished HTML fragments kept out of the way of the styling passes (``\\x00n\\x00``)."""

    def __init__(self) -> None:
        self.parts: list[str] = []

    def keep(self, fragment: str) -> str:
        self.parts.append(fragment)
        return f"\x00{len(self.parts) - 1}\x00"

    def fill(self, text: str) -> str:
        return _HOLE.sub(lambda m: self.parts[int(m.group(1))], text)


def to_html(text: str, *, names: Names | None = None, tz: tzinfo | None = None) -> str:
    """The HTML of one mrkdwn text (``names``: how mentions are shown; ``tz``: the viewer's)."""
    holes = _Holes()
    source = text.replace("\x00", "")
    source = _FENCE.sub(lambda m: holes.keep(f"<pre>{escape(m.group(1))}</pre>"), source)
    source = _CODE.sub(lambda m: holes.keep(f"<code>{escape(m.group(1))}</code>"), source)
    source = _TOKEN.sub(lambda m: holes.keep(_token(m.group(1), names or {}, tz)), source)
    out = escape(source)
    for pattern, tag in _STYLES:
        out = pattern.sub(rf"<{tag}>\1</{tag}>", out)
    out = _quotes(out)
    return holes.fill(out.replace("\n", "<br>"))


def plain_to_html(text: str) -> str:
    """A plain_text object's text (no markup at all)."""
    return html.escape(text, quote=True).replace("\n", "<br>")


def _quotes(escaped: str) -> str:
    lines = escaped.split("\n")
    out: list[str] = []
    for line in lines:
        if line.startswith("&gt; ") or line == "&gt;":
            out.append(f"<blockquote>{line[5:]}</blockquote>")
        else:
            out.append(line)
    return "\n".join(out).replace("</blockquote>\n<blockquote>", "<br>")


def _token(body: str, names: Names, tz: tzinfo | None) -> str:
    """One ``<…>`` token: a mention, a special mention, a date or a link."""
    head, _, label = body.partition("|")
    if head.startswith("@"):
        return _mention("@", names.get(head[1:], label or head[1:]))
    if head.startswith("#"):
        return _mention("#", label or names.get(head[1:], head[1:]))
    if head.startswith("!subteam^"):
        group = head.removeprefix("!subteam^")
        return _mention("@", label.lstrip("@") or names.get(group, group))
    if head.startswith("!date^"):
        return _date_token(head, label, tz)
    if head.startswith("!"):
        return _mention("@", head[1:])
    url = slack_unescape(head)
    shown = escape(label) if label else html.escape(url, quote=True)
    if not _SAFE_URL.match(url):
        return shown
    href = html.escape(url, quote=True)
    return f'<a href="{href}" target="_blank" rel="noopener noreferrer">{shown}</a>'


def _mention(sign: str, name: str) -> str:
    return f'<span class="mention">{sign}{escape(name)}</span>'


def _date_token(head: str, fallback: str, tz: tzinfo | None) -> str:
    """``!date^<unix>^<format>[^<link>]``: the format's tokens written out, the fallback as
    its title; an unreadable token shows its fallback."""
    parts = head.split("^")
    try:
        at = datetime.fromtimestamp(int(parts[1]), tz or ZoneInfo("UTC"))
        pattern = parts[2]
    except (IndexError, ValueError, OverflowError, OSError):
        return escape(fallback)
    now = datetime.now(at.tzinfo)
    shown = _DATE_PART.sub(lambda m: date_part(m.group(1), at, now), slack_unescape(pattern))
    title = html.escape(slack_unescape(fallback), quote=True)
    return f'<time title="{title}">{html.escape(shown, quote=True)}</time>'


def _ordinal(day: int) -> str:
    suffix = "th" if 10 <= day % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(day % 10, "th")
    return f"{day}{suffix}"


def _clock(at: datetime, *, seconds: bool = False) -> str:
    hour = at.hour % 12 or 12
    tail = f":{at.second:02d}" if seconds else ""
    return f"{hour}:{at.minute:02d}{tail} {'AM' if at.hour < 12 else 'PM'}"


def _day(at: datetime, style: str) -> str:
    if style == "short":
        return f"{at:%b} {at.day}, {at.year}"
    long = f"{at:%B} {_ordinal(at.day)}, {at.year}"
    return f"{at:%A}, {long}" if style == "long" else long


def _ago(at: datetime, now: datetime) -> str:
    seconds = int((now - at).total_seconds())
    future, seconds = seconds < 0, abs(seconds)
    for unit, size in (("day", 86400), ("hour", 3600), ("minute", 60)):
        if seconds >= size:
            count = seconds // size
            amount = f"{count} {unit}{'s' if count != 1 else ''}"
            return f"in {amount}" if future else f"{amount} ago"
    return "just now"


def date_part(name: str, at: datetime, now: datetime) -> str:
    """One ``{token}`` of a date format as Slack writes it (an unknown one is kept)."""
    if name == "date_num":
        return f"{at:%Y-%m-%d}"
    if name == "time":
        return _clock(at)
    if name == "time_secs":
        return _clock(at, seconds=True)
    if name == "ago":
        return _ago(at, now)
    style, _, pretty = name.removeprefix("date").strip("_").partition("_")
    if name.startswith("date") and style in ("", "short", "long", "pretty"):
        if style == "pretty":
            style, pretty = "", "pretty"
        if pretty == "pretty":
            days = (now.date() - at.date()).days
            relative = {0: "today", 1: "yesterday", -1: "tomorrow"}.get(days)
            if relative:
                return relative
        if pretty in ("", "pretty"):
            return _day(at, style)
    return "{" + name + "}"
