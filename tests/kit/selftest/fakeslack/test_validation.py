"""Every blocks / view payload is checked against Slack's limits; violations are answered like
Slack does and recorded."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError

from kandev_slack.kits.fakeslack import FakeSlack

CHANNEL = "C0QUESTION"


def _button(text: str, action_id: str = "b", value: str = "v") -> dict[str, Any]:
    return {
        "type": "button",
        "action_id": action_id,
        "text": {"type": "plain_text", "text": text},
        "value": value,
    }


def _radio_modal(options: int) -> dict[str, Any]:
    return {
        "type": "modal",
        "title": {"type": "plain_text", "text": "Pick"},
        "submit": {"type": "plain_text", "text": "Send"},
        "blocks": [
            {
                "type": "input",
                "block_id": "q",
                "label": {"type": "plain_text", "text": "Question"},
                "element": {
                    "type": "radio_buttons",
                    "action_id": "choice",
                    "options": [
                        {"text": {"type": "plain_text", "text": f"o{i}"}, "value": f"v{i}"}
                        for i in range(options)
                    ],
                },
            }
        ],
    }


@pytest.fixture
def client(fake_slack: FakeSlack) -> WebClient:
    return WebClient(token=fake_slack.workspace.bot_token, base_url=fake_slack.api_url)


def _rejected(client: WebClient, **kwargs: Any) -> dict[str, Any]:
    with pytest.raises(SlackApiError) as exc:
        client.chat_postMessage(channel=CHANNEL, text="fallback", **kwargs)
    return exc.value.response.data  # type: ignore[return-value]


def _overflow(values: list[str]) -> dict[str, Any]:
    options = [
        {"text": {"type": "plain_text", "text": f"o{i}"}, "value": v} for i, v in enumerate(values)
    ]
    return {"type": "overflow", "action_id": "more", "options": options}


BAD_MESSAGES: dict[str, tuple[list[dict[str, Any]], str]] = {
    "51 blocks": ([{"type": "divider"}] * 51, "/blocks"),
    "151-char header": (
        [{"type": "header", "text": {"type": "plain_text", "text": "h" * 151}}],
        "/blocks/0/text/text",
    ),
    "76-char button text": (
        [{"type": "actions", "elements": [_button("b" * 76)]}],
        "/blocks/0/elements/0/text/text",
    ),
    "2001-char button value": (
        [{"type": "actions", "elements": [_button("ok", value="v" * 2001)]}],
        "/blocks/0/elements/0/value",
    ),
    "3001-char section": (
        [{"type": "section", "text": {"type": "mrkdwn", "text": "s" * 3001}}],
        "/blocks/0/text/text",
    ),
    "11 fields": (
        [{"type": "section", "fields": [{"type": "mrkdwn", "text": "f"}] * 11}],
        "/blocks/0/fields",
    ),
    "26 actions": (
        [{"type": "actions", "elements": [_button("x", f"a{i}") for i in range(26)]}],
        "/blocks/0/elements",
    ),
    "11 context elements": (
        [{"type": "context", "elements": [{"type": "mrkdwn", "text": "c"}] * 11}],
        "/blocks/0/elements",
    ),
    "duplicate block_id": (
        [{"type": "divider", "block_id": "same"}, {"type": "divider", "block_id": "same"}],
        "/blocks/1/block_id",
    ),
    "duplicate action_id": (
        [{"type": "actions", "elements": [_button("a", "dup"), _button("b", "dup")]}],
        "/blocks/0/elements/1/action_id",
    ),
    "256-char block_id": (
        [{"type": "divider", "block_id": "b" * 256}],
        "/blocks/0/block_id",
    ),
    "overflow of 6 options": (
        [{"type": "actions", "elements": [_overflow([str(i) for i in range(6)])]}],
        "/blocks/0/elements/0/options",
    ),
    "overflow of 1 option": (
        [{"type": "actions", "elements": [_overflow(["a"])]}],
        "/blocks/0/elements/0/options",
    ),
    "overflow option value of 151 characters": (
        [{"type": "actions", "elements": [_overflow(["a", "v" * 151])]}],
        "/blocks/0/elements/0/options/1/value",
    ),
    "256-char action_id": (
        [{"type": "actions", "elements": [_button("a", "x" * 256)]}],
        "/blocks/0/elements/0/action_id",
    ),
}


@pytest.mark.parametrize("case", sorted(BAD_MESSAGES))
def test_message_limit_violations_are_rejected_like_slack(
    case: str, client: WebClient, fake_slack: FakeSlack
) -> None:
    blocks, pointer = BAD_MESSAGES[case]
    response = _rejected(client, blocks=blocks)
    assert response["error"] == "invalid_blocks"
    messages = response["response_metadata"]["messages"]
    assert any(m.startswith("[ERROR]") and f"[json-pointer:{pointer}]" in m for m in messages)
    found = fake_slack.take_violations()
    assert any(v.pointer == pointer and v.level == "error" for v in found), found
    assert fake_slack.messages(CHANNEL) == []


def test_missing_text_fallback_is_a_recorded_warning(
    client: WebClient, fake_slack: FakeSlack
) -> None:
    blocks = [{"type": "section", "text": {"type": "mrkdwn", "text": "hi"}}]
    with pytest.warns(UserWarning, match="text"):
        assert client.chat_postMessage(channel=CHANNEL, blocks=blocks)["ok"]
    (violation,) = fake_slack.take_violations()
    assert (violation.level, violation.pointer) == ("warning", "/text")


def test_update_and_ephemeral_are_validated_too(client: WebClient, fake_slack: FakeSlack) -> None:
    ts = client.chat_postMessage(channel=CHANNEL, text="ok")["ts"]
    long_header = [{"type": "header", "text": {"type": "plain_text", "text": "h" * 151}}]
    with pytest.raises(SlackApiError):
        client.chat_update(channel=CHANNEL, ts=ts, text="t", blocks=long_header)
    with pytest.raises(SlackApiError):
        client.chat_postEphemeral(channel=CHANNEL, user="U0ALICE001", text="t", blocks=long_header)
    assert fake_slack.message(CHANNEL, ts).text == "ok"
    errors = {v.method for v in fake_slack.take_violations() if v.level == "error"}
    assert errors == {"chat.update", "chat.postEphemeral"}


def _modal(**overrides: Any) -> dict[str, Any]:
    view = _radio_modal(2)
    view.update(overrides)
    return view


BAD_VIEWS: dict[str, tuple[dict[str, Any], str]] = {
    "11 radio options": (_radio_modal(11), "/view/blocks/0/element/options"),
    "25-char title": (_modal(title={"type": "plain_text", "text": "t" * 25}), "/view/title/text"),
    "25-char submit": (
        _modal(submit={"type": "plain_text", "text": "s" * 25}),
        "/view/submit/text",
    ),
    "3001-char private_metadata": (_modal(private_metadata="m" * 3001), "/view/private_metadata"),
    "101 blocks": (
        _modal(blocks=[{"type": "divider"}] * 101, submit=None),
        "/view/blocks",
    ),
    "max_length 3001": (
        _modal(
            blocks=[
                {
                    "type": "input",
                    "label": {"type": "plain_text", "text": "Free text"},
                    "element": {
                        "type": "plain_text_input",
                        "action_id": "t",
                        "max_length": 3001,
                    },
                }
            ]
        ),
        "/view/blocks/0/element/max_length",
    ),
    "input without submit": (_modal(submit=None), "/view/submit"),
}


@pytest.mark.parametrize("case", sorted(BAD_VIEWS))
def test_view_limit_violations_are_rejected_like_slack(
    case: str, client: WebClient, fake_slack: FakeSlack
) -> None:
    view, pointer = BAD_VIEWS[case]
    view = {k: v for k, v in view.items() if v is not None}
    with pytest.raises(SlackApiError) as exc:
        client.views_open(trigger_id=fake_slack.issue_trigger("U0ALICE001"), view=view)
    assert exc.value.response["error"] == "invalid_arguments"
    assert any(
        f"[json-pointer:{pointer}]" in m
        for m in exc.value.response["response_metadata"]["messages"]
    )
    assert any(v.pointer == pointer for v in fake_slack.take_violations())
    assert fake_slack.views_opened() == []


def test_a_valid_ten_option_modal_passes(client: WebClient, fake_slack: FakeSlack) -> None:
    trigger = fake_slack.issue_trigger("U0ALICE001")
    assert client.views_open(trigger_id=trigger, view=_radio_modal(10))["ok"]
    assert fake_slack.violations == []


def test_the_fixture_fails_a_test_that_leaves_violations(tmp_path: Path) -> None:
    """Run pytest on a throw-away test using the plugin: a leftover violation fails it."""
    (tmp_path / "test_leaky.py").write_text(
        textwrap.dedent(
            """
            from slack_sdk import WebClient

            def test_leaves_a_warning(fake_slack):
                client = WebClient(token=fake_slack.workspace.bot_token,
                                   base_url=fake_slack.api_url)
                blocks = [{"type": "divider"}]
                client.chat_postMessage(channel="C0QUESTION", blocks=blocks)

            def test_consumes_its_warning(fake_slack):
                client = WebClient(token=fake_slack.workspace.bot_token,
                                   base_url=fake_slack.api_url)
                client.chat_postMessage(channel="C0QUESTION", blocks=[{"type": "divider"}])
                assert len(fake_slack.take_violations()) == 1
            """
        )
    )
    root = Path(__file__).resolve().parents[4]
    env = {**os.environ, "PYTHONPATH": str(root)}
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-W",
            "ignore::UserWarning",
            "-p",
            "kandev_slack.kits.fakeslack.fixtures",
            str(tmp_path),
        ],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=env,
        timeout=120,
    )
    assert "2 passed, 1 error" in result.stdout, result.stdout + result.stderr
    assert "ERROR at teardown of test_leaves_a_warning" in result.stdout
    assert "top-level text fallback is missing" in result.stdout
