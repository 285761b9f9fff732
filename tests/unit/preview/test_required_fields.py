"""The preview shows what Slack's client shows for a required field left empty: the form is not
sent and the field says so (the answer form's choice is required since issue 21)."""

from __future__ import annotations

from kandev_slack.preview.actions import REQUIRED, required_empty


def test_required_inputs_left_empty_are_named() -> None:
    blocks = [
        {"type": "section", "text": {"type": "mrkdwn", "text": "hi"}},
        {"type": "input", "block_id": "choice", "element": {}, "optional": False},
        {"type": "input", "block_id": "text", "element": {}, "optional": True},
        {"type": "input", "block_id": "picked", "element": {}},
    ]
    values = {"choice": {"kq_choice": None}, "picked": {"kq_choice": "a"}}
    assert required_empty(blocks, values) == ["choice"]
    assert required_empty(blocks, {"picked": {"kq_choice": "a"}}) == ["choice"]
    assert REQUIRED == "Please complete this required field."
