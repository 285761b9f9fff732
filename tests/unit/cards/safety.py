"""Checks that rendered Slack payloads cannot notify anyone through agent text.

Independent of the renderer's own code: it looks at what would reach Slack (every text object of
a message or view, and the top-level ``text`` fallback that notifications show) for

- a mention or broadcast token: ``<!here``, ``<!channel``, ``<!everyone``, ``<!subteam``, ``<@``
  (allowing only exact ``<@U…>`` mentions of ``allowed_users``, which the bot writes itself),
  with or without invisible characters after ``<``;
- a bare ``@here``/``@channel``/``@everyone`` word: ``@`` then the word (any case), with only
  emphasis marks or invisible characters in between, not followed by a letter or digit.

The word joiner U+2060 right after ``@`` or ``<`` is what the renderer inserts on purpose, so it
alone counts as defusing.
- a mrkdwn text object without ``verbatim: true`` (Slack's automatic parsing of mentions,
  channel names and links stays off for every mrkdwn object the bot sends).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from typing import Any

_INVISIBLE = "\u00ad\u034f\u061c\u180e\u200b-\u200f\u202a-\u202e\u2061-\u2064\u2066-\u206f\ufeff"
TOKEN = re.compile(f"<[{_INVISIBLE}]*(?:!(?:here|channel|everyone|subteam)|@)", re.I)
BARE_WORD = re.compile(
    f"@[{_INVISIBLE}*_~`]*(?:here|channel|everyone)(?![^\\W_])",
    re.IGNORECASE,
)


def notifying(text: str, *, allowed_users: Iterable[str] = ()) -> list[str]:
    """Every token or bare word in ``text`` that could notify someone."""
    for user in allowed_users:
        text = text.replace(f"<@{user}>", "")
    found = [m.group(0) for m in TOKEN.finditer(text)]
    found += [m.group(0) for m in BARE_WORD.finditer(text)]
    return found


def text_objects(node: Any) -> Iterator[dict[str, Any]]:
    if isinstance(node, dict):
        if node.get("type") in ("mrkdwn", "plain_text") and isinstance(node.get("text"), str):
            yield node
        for value in node.values():
            yield from text_objects(value)
    elif isinstance(node, list):
        for value in node:
            yield from text_objects(value)


def notification_problems(payload: dict[str, Any], *, allowed_users: Iterable[str] = ()) -> list:
    """What in a message (``{"text", "blocks"}``) or a view could notify someone."""
    allowed = tuple(allowed_users)
    problems: list[str] = []
    if isinstance(payload.get("text"), str):
        bad = notifying(payload["text"], allowed_users=allowed)
        problems += [f"fallback text: {b!r}" for b in bad]
    for obj in text_objects({k: v for k, v in payload.items() if k != "text"}):
        bad = notifying(obj["text"], allowed_users=allowed)
        problems += [f"{obj['type']}: {b!r}" for b in bad]
        if obj["type"] == "mrkdwn" and obj.get("verbatim") is not True:
            problems.append(f"mrkdwn without verbatim: {obj['text'][:60]!r}")
    return problems


def assert_cannot_notify(payload: dict[str, Any], *, allowed_users: Iterable[str] = ()) -> None:
    problems = notification_problems(payload, allowed_users=allowed_users)
    assert not problems, problems[:5]


def assert_text_cannot_notify(text: str, *, allowed_users: Iterable[str] = ()) -> None:
    """For an ephemeral message's text (it is shown and notified as mrkdwn)."""
    bad = notifying(text, allowed_users=allowed_users)
    assert not bad, bad[:5]


_SAFE_LINK = re.compile(r"<https?://[^\s<>|]+(?:\|[^<>]*)?>")
_DATE = re.compile(r"<!date\^\d+\^[^<>|^]*\|[^<>]*>")
_ANGLE = re.compile(r"<[^<>]*>?")


def unsafe_angles(text: str, *, allowed_users: Iterable[str] = ()) -> list[str]:
    """Every ``<…>`` in ``text`` that is not a vetted http(s) link, a Slack date token or a
    mention of an allowed user."""
    allowed = {f"<@{u}>" for u in allowed_users}
    bad = []
    for match in _ANGLE.finditer(text):
        token = match.group(0)
        if token in allowed or _SAFE_LINK.fullmatch(token) or _DATE.fullmatch(token):
            continue
        bad.append(token)
    return bad
