"""Fault injection: 429 + Retry-After, 5xx, slow answers, Slack's per-channel post limit."""

from __future__ import annotations

import time

import pytest
from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError
from slack_sdk.http_retry.builtin_handlers import (
    RateLimitErrorRetryHandler,
    ServerErrorRetryHandler,
)

from kandev_slack.kits.fakeslack import FakeSlack

CHANNEL = "C0QUESTION"


def _client(fake: FakeSlack, *handlers: object) -> WebClient:
    client = WebClient(token=fake.workspace.bot_token, base_url=fake.api_url)
    for handler in handlers:
        client.retry_handlers.append(handler)  # type: ignore[arg-type]
    return client


def test_rate_limit_answer_has_slacks_shape(fake_slack: FakeSlack) -> None:
    fake_slack.faults.rate_limit("chat.postMessage", retry_after=7)
    with pytest.raises(SlackApiError) as exc:
        _client(fake_slack).chat_postMessage(channel=CHANNEL, text="x")
    response = exc.value.response
    assert response.status_code == 429
    assert response.headers["Retry-After"] == "7"
    assert response.data == {"ok": False, "error": "ratelimited"}
    assert fake_slack.messages(CHANNEL) == []


def test_webclient_retry_handler_honours_retry_after(fake_slack: FakeSlack) -> None:
    fake_slack.faults.rate_limit("chat.postMessage", retry_after=1, times=1)
    client = _client(fake_slack, RateLimitErrorRetryHandler(max_retry_count=2))
    started = time.monotonic()
    result = client.chat_postMessage(channel=CHANNEL, text="after the limit")
    elapsed = time.monotonic() - started
    assert result["ok"] and elapsed >= 1.0
    calls = fake_slack.calls("chat.postMessage")
    assert [c.status for c in calls] == [429, 200]
    assert calls[1].at - calls[0].at >= 1.0
    assert len(fake_slack.messages(CHANNEL)) == 1


def test_a_rate_limit_for_one_channel_lets_the_others_pass(fake_slack: FakeSlack) -> None:
    client = _client(fake_slack)
    dm = fake_slack.ctx.resolve_channel("U0BOB00002")
    fake_slack.faults.allow("chat.postMessage", channel=dm)
    fake_slack.faults.rate_limit("chat.postMessage", retry_after=2, times=1, channel=dm)
    client.chat_postMessage(channel=CHANNEL, text="elsewhere")  # not the DM: passes
    client.chat_postMessage(channel="U0BOB00002", text="first")  # the DM (by user id): allowed
    with pytest.raises(SlackApiError) as exc:
        client.chat_postMessage(channel=dm, text="second")
    assert exc.value.response.status_code == 429
    assert exc.value.response.headers["Retry-After"] == "2"
    client.chat_postMessage(channel=dm, text="third")  # the limit was for one call
    assert [m.text for m in fake_slack.messages(dm)] == ["first", "third"]
    assert [c.status for c in fake_slack.calls("chat.postMessage")] == [200, 200, 429, 200]


def test_server_errors_and_retry(fake_slack: FakeSlack) -> None:
    fake_slack.faults.server_error("chat.update", status=503, times=1)
    ts = _client(fake_slack).chat_postMessage(channel=CHANNEL, text="v1")["ts"]
    client = _client(fake_slack, ServerErrorRetryHandler(max_retry_count=1))
    client.chat_update(channel=CHANNEL, ts=ts, text="v2")
    assert [c.status for c in fake_slack.calls("chat.update")] == [503, 200]
    fake_slack.faults.server_error("*", status=500, times=None)
    with pytest.raises(SlackApiError) as exc:
        _client(fake_slack).auth_test()
    assert exc.value.response.status_code == 500
    fake_slack.faults.clear()
    assert _client(fake_slack).auth_test()["ok"]


def test_scripted_error_and_slow_answer(fake_slack: FakeSlack) -> None:
    fake_slack.faults.error("chat.postMessage", "not_in_channel")
    client = _client(fake_slack)
    with pytest.raises(SlackApiError) as exc:
        client.chat_postMessage(channel=CHANNEL, text="x")
    assert exc.value.response["error"] == "not_in_channel"
    fake_slack.faults.slow("chat.postMessage", 0.4)
    started = time.monotonic()
    assert client.chat_postMessage(channel=CHANNEL, text="slow")["ok"]
    assert time.monotonic() - started >= 0.4


def test_per_channel_post_message_limit(fake_slack: FakeSlack) -> None:
    fake_slack.faults.limit_post_message(per_second=1.0, burst=2)
    client = _client(fake_slack)
    client.chat_postMessage(channel=CHANNEL, text="1")
    client.chat_postMessage(channel=CHANNEL, text="2")
    with pytest.raises(SlackApiError) as exc:
        client.chat_postMessage(channel=CHANNEL, text="3")
    assert exc.value.response.status_code == 429
    assert int(exc.value.response.headers["Retry-After"]) >= 1
    client.chat_postMessage(channel="C0PLATFORM", text="another channel is fine")
    retrying = _client(fake_slack, RateLimitErrorRetryHandler(max_retry_count=3))
    retrying.chat_postMessage(channel=CHANNEL, text="3 again")
    assert [m.text for m in fake_slack.messages(CHANNEL)] == ["1", "2", "3 again"]


def test_accept_then_drop_posts_but_never_replies(fake_slack: FakeSlack) -> None:
    fake_slack.faults.accept_then_drop("chat.postMessage", times=1)
    client = WebClient(token=fake_slack.workspace.bot_token, base_url=fake_slack.api_url)
    client.retry_handlers.clear()
    with pytest.raises(ConnectionError):  # http.client.RemoteDisconnected
        client.chat_postMessage(channel=CHANNEL, text="did it land?")
    assert [m.text for m in fake_slack.messages(CHANNEL)] == ["did it land?"]
    [call] = fake_slack.calls("chat.postMessage")
    assert call.ok  # recorded as Slack carried it out
    # slack-sdk's default retry handler re-sends blindly: the message is posted twice.
    fake_slack.faults.accept_then_drop("chat.postMessage", times=1)
    default = WebClient(token=fake_slack.workspace.bot_token, base_url=fake_slack.api_url)
    default.chat_postMessage(channel=CHANNEL, text="twice")
    assert [m.text for m in fake_slack.messages(CHANNEL)].count("twice") == 2
