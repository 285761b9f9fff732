"""Block Kit checks for the triage surfaces: the fake Slack's validator (what e2e uses) plus
the card tests' own checks (tests/unit/cards/checks.py)."""

from __future__ import annotations

from typing import Any

from kandev_slack.kits.fakeslack import blocks_text, validate_message, validate_view
from tests.unit.cards.checks import message_problems
from tests.unit.cards.safety import unsafe_angles


def assert_valid_message(message: dict[str, Any], *, allowed_users: tuple[str, ...] = ()) -> None:
    found = validate_message("chat.postEphemeral", message["text"], message["blocks"])
    assert not found, [str(v) for v in found]
    assert not message_problems(message, allowed_users=allowed_users)


def assert_valid_home(view: dict[str, Any], *, allowed_users: tuple[str, ...] = ()) -> None:
    found = validate_view("views.publish", view)
    assert not found, [str(v) for v in found]
    assert len(view["blocks"]) <= 100
    bad = unsafe_angles(blocks_text(view["blocks"]), allowed_users=allowed_users)
    assert not bad, bad
