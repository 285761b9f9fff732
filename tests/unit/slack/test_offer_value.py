"""The value of the offer to send a won answer to the others: the answered bundle and exactly
the bundles offered; an offer made before it named them (a plain button value) names none."""

from __future__ import annotations

from typing import Any

from kandev_slack.cards.ids import AnswerAllValue, ButtonValue
from kandev_slack.slack.parsing.requests import offer_click, offer_members


def _body(value: str) -> dict[str, Any]:
    return {
        "type": "block_actions",
        "user": {"id": "U1"},
        "channel": {"id": "C1"},
        "response_url": "https://hooks.slack.com/actions/T/1/x",
        "actions": [{"action_id": "kq_answer_all", "value": value}],
    }


def test_the_offer_names_its_bundles() -> None:
    body = _body(AnswerAllValue(pending_id="p1", members=("p2", "p3")).encode())
    assert offer_click(body)[0] == "p1"
    assert offer_members(body) == ("p2", "p3")


def test_an_older_offer_names_the_answered_bundle_only() -> None:
    body = _body(ButtonValue(pending_id="p1").encode())
    assert offer_click(body)[0] == "p1" and offer_members(body) is None


def test_a_value_not_made_here_names_nothing() -> None:
    for raw in ("", "{}", '{"p":"p1","m":[]}', '{"p":"p1","m":["p2"],"x":1}', "nope"):
        assert offer_members(_body(raw)) is None
