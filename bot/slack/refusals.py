"""Refusing an interaction the bot cannot act on: what to say, and to whom, read defensively.

The listeners call these when a payload is malformed or names something this app never made;
the person is told (ephemerally, when the payload says who and where) and the attempt is
audited. Nothing here trusts the payload's shape: every field is checked before it is used.
"""

from __future__ import annotations

import logging
from typing import Any

from bot.slack.services import Services

log = logging.getLogger(__name__)

#: Longest piece of a payload quoted in a log line or an audit entry.
_QUOTE = 120


def malformed_message() -> str:
    return "Slack sent this app a request it could not understand; nothing was sent to Kandev."


def unknown_action_message() -> str:
    return (
        "This button is not (or no longer) handled by this app, so nothing was sent. "
        "If it is on an old message, use the current card or `/kandev-questions`."
    )


def unknown_form_message() -> str:
    return "This form is not (or no longer) handled by this app; nothing was sent."


def unknown_command_message(command: str) -> str:
    return f"`{quote(command, 40)}` is not a command this app handles; try `/kandev-questions`."


def quote(value: Any, limit: int = _QUOTE) -> str:
    text = value if isinstance(value, str) else repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _str(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _obj(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def user_of(body: Any) -> str:
    """The acting user's id, if the payload has a usable one."""
    body = _obj(body)
    return _str(_obj(body.get("user")).get("id")) or _str(body.get("user_id"))


def channel_of(body: Any) -> str:
    body = _obj(body)
    return (
        _str(_obj(body.get("container")).get("channel_id"))
        or _str(_obj(body.get("channel")).get("id"))
        or _str(body.get("channel_id"))
    )


def response_url_of(body: Any) -> str:
    return _str(_obj(body).get("response_url"))


def action_id_of(body: Any) -> str:
    actions = _obj(body).get("actions")
    first = actions[0] if isinstance(actions, list) and actions else {}
    return _str(_obj(first).get("action_id"))


def refuse(
    svc: Services,
    body: Any,
    *,
    action: str,
    source: str,
    result: str,
    message: str,
    detail: str = "",
    pending_id: str | None = None,
) -> None:
    """Audit the refused attempt and tell the person why (best effort, never raises)."""
    user = user_of(body)
    try:
        svc.store.audit(pending_id, user or None, action, source, result, quote(detail))
    except Exception:
        log.exception("could not audit a refused %s", action)
    if not user:
        log.warning("refused %s (%s): no user to tell", action, result)
        return
    try:
        svc.tell(
            user,
            message,
            channel=channel_of(body) or None,
            response_url=response_url_of(body) or None,
        )
    except Exception:
        log.exception("could not tell %s why their %s was refused", user, action)
