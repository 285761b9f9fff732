"""A Slack message's text as the person typed it (pure): Slack sends a message's ``text`` in
its markup — ``<@U0BEN0001>`` for a mention, ``<#C0OPS|ops>`` for a channel, ``<!here>``,
``<https://example.com|the doc>`` for a link — with ``&``, ``<`` and ``>`` escaped. What an
agent is sent reads as the person wrote it: mentions as names, links as URLs.

https://docs.slack.dev/messaging/formatting-message-text (“Retrieving messages”).
"""

from __future__ import annotations

import re
from collections.abc import Callable

#: One piece of markup: Slack escapes ``<`` and ``>`` everywhere else, so ``<…>`` never nests.
_TOKEN = re.compile(r"<([^<>]*)>")
#: Special mentions Slack writes ``<!here>``.
_BROADCASTS = frozenset({"here", "channel", "everyone"})
_SCHEMES = ("https://", "http://", "mailto:", "tel:")


def unescape(text: str) -> str:
    """Undo Slack's three escapes (``&amp;`` last: ``&amp;lt;`` is the text ``&lt;``)."""
    return text.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")


def escape(text: str) -> str:
    """What Slack sends for plain text ``text`` (the inverse of :func:`unescape`)."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _no_names(_user_id: str) -> str | None:
    return None


def decode(text: str, name_of: Callable[[str], str | None] = _no_names) -> str:
    """``text`` (a message's, in Slack's markup) as the person typed it: ``<@U…>`` →
    ``@name`` (``name_of`` the user's display name; the id when it gives none), ``<#C…|ops>``
    → ``#ops``, ``<!here>`` → ``@here``, ``<!subteam^S…|@team>`` → ``@team``, ``<url>`` → the
    URL, ``<url|label>`` → the label when it is the URL as typed (``example.com``), else
    ``label (url)``; everything else unescaped."""
    parts: list[str] = []
    last = 0
    for match in _TOKEN.finditer(text):
        parts.append(unescape(text[last : match.start()]))
        parts.append(_token(match.group(1), name_of))
        last = match.end()
    parts.append(unescape(text[last:]))
    return "".join(parts)


def _token(inner: str, name_of: Callable[[str], str | None]) -> str:
    target, _, raw_label = inner.partition("|")
    label = unescape(raw_label)
    if target.startswith("@"):
        user_id = target[1:]
        return "@" + (_name(name_of, user_id) or label.lstrip("@") or user_id)
    if target.startswith("#"):
        return "#" + (label.lstrip("#") or target[1:])
    if target.startswith("!"):
        word, _, rest = target[1:].partition("^")
        if word in _BROADCASTS:
            return "@" + word
        if word == "subteam":
            return label if label.startswith("@") else "@" + (label or rest)
        return label or word  # <!date^…|fallback> and the like: their fallback text
    url = unescape(target)
    if not label or label == url or any(url == scheme + label for scheme in _SCHEMES):
        return label or url
    return f"{label} ({url})"


def _name(name_of: Callable[[str], str | None], user_id: str) -> str | None:
    try:
        return name_of(user_id)
    except Exception:  # a name is a nicety: the id stands in
        return None
