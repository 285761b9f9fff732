"""trigger_id rules (issued, once, ≤3 s) and response_url behaviour (≤5 uses, flags)."""

from __future__ import annotations

import time
from typing import Any

import httpx
import pytest
from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError
from slack_sdk.webhook import WebhookClient

from kandev_slack.kits.fakeslack import FakeSlack

CHANNEL = "C0QUESTION"
MODAL: dict[str, Any] = {
    "type": "modal",
    "title": {"type": "plain_text", "text": "Hi"},
    "blocks": [{"type": "section", "text": {"type": "mrkdwn", "text": "hello"}}],
}


@pytest.fixture
def client(fake_slack: FakeSlack) -> WebClient:
    return WebClient(token=fake_slack.workspace.bot_token, base_url=fake_slack.api_url)


def _open_error(client: WebClient, trigger_id: str) -> str:
    with pytest.raises(SlackApiError) as exc:
        client.views_open(trigger_id=trigger_id, view=MODAL)
    return str(exc.value.response["error"])


def test_trigger_ids_are_single_use_and_expire(client: WebClient, fake_slack: FakeSlack) -> None:
    assert _open_error(client, "123.456.deadbeef") == "invalid_trigger_id"
    trigger = fake_slack.issue_trigger("U0ALICE001")
    assert client.views_open(trigger_id=trigger, view=MODAL)["view"]["type"] == "modal"
    assert _open_error(client, trigger) == "exchanged_trigger_id"
    fake_slack.trigger_ttl = 0.2
    late = fake_slack.issue_trigger("U0ALICE001")
    time.sleep(0.3)
    assert _open_error(client, late) == "expired_trigger_id"
    assert len(fake_slack.views_opened()) == 1


def test_the_default_trigger_lifetime_is_three_seconds(fake_slack: FakeSlack) -> None:
    assert fake_slack.trigger_ttl == 3.0


def test_response_url_ephemeral_in_channel_replace_delete(fake_slack: FakeSlack) -> None:
    client = WebClient(token=fake_slack.workspace.bot_token, base_url=fake_slack.api_url)
    ts = client.chat_postMessage(channel=CHANNEL, text="card")["ts"]
    url = fake_slack.issue_response_url(CHANNEL, "U0ALICE001", message_ts=ts)
    hook = WebhookClient(url)
    assert hook.send(text="just for you").status_code == 200
    assert [e.text for e in fake_slack.ephemerals("U0ALICE001")] == ["just for you"]
    hook.send(text="for everyone", response_type="in_channel")
    assert [m.text for m in fake_slack.messages(CHANNEL)] == ["card", "for everyone"]
    hook.send(text="replaced", replace_original=True)
    assert fake_slack.message(CHANNEL, ts).text == "replaced"
    hook.send_dict({"delete_original": True})
    assert [m.text for m in fake_slack.messages(CHANNEL)] == ["for everyone"]
    assert [p.status for p in fake_slack.response_posts()] == [200] * 4


def test_response_url_allows_five_uses(fake_slack: FakeSlack) -> None:
    url = fake_slack.issue_response_url(CHANNEL, "U0ALICE001")
    statuses = [httpx.post(url, json={"text": f"n{i}"}).status_code for i in range(6)]
    assert statuses == [200] * 5 + [404]
    assert fake_slack.response_posts()[-1].response == {"ok": False, "error": "used_url"}


def test_response_url_payloads_are_validated(fake_slack: FakeSlack) -> None:
    url = fake_slack.issue_response_url(CHANNEL, "U0ALICE001")
    header = {"type": "header", "text": {"type": "plain_text", "text": "h" * 151}}
    answer = httpx.post(url, json={"text": "t", "blocks": [header]})
    assert answer.status_code == 400 and answer.json()["error"] == "invalid_blocks"
    assert {v.method for v in fake_slack.take_violations()} == {"response_url"}
    assert fake_slack.ephemerals() == []
