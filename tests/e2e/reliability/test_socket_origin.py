"""Socket Mode logs name the real origin of an error: the bot's own code (an error with its
traceback), a malformed envelope (a warning), or Bolt / slack_sdk failing on a well-formed one
(an error naming the library); the WebSocket client logs under slack_sdk's name."""

from __future__ import annotations

import logging

import pytest
from slack_bolt import App
from slack_sdk.signature import SignatureVerifier
from slack_sdk.socket_mode.request import SocketModeRequest
from slack_sdk.socket_mode.response import SocketModeResponse

from kandev_slack.config.settings import ConfigError, load_settings
from kandev_slack.kits.fakeslack import Delivery
from kandev_slack.slack.transport.guard import raised_in, raised_in_bot
from kandev_slack.slack.transport.socket_mode import GuardedSocketModeHandler, log_failure

WELL_FORMED = {"type": "block_actions", "user": {"id": "U1"}, "actions": []}


class Connection:
    """Stands in for slack_sdk's WebSocket client: records the acks the handler sends."""

    logger = logging.getLogger("tests.socket")

    def __init__(self) -> None:
        self.acks: list[SocketModeResponse] = []

    def send_socket_mode_response(self, response: SocketModeResponse) -> None:
        self.acks.append(response)


@pytest.fixture
def handler() -> GuardedSocketModeHandler:
    app = App(
        token="xoxb-test",
        signing_secret="unused",
        token_verification_enabled=False,
        request_verification_enabled=False,
    )
    return GuardedSocketModeHandler(app, app_token="xapp-test")


def _envelope(payload: dict) -> SocketModeRequest:
    return SocketModeRequest(type="interactive", envelope_id="env-1", payload=payload)


def _records(caplog: pytest.LogCaptureFixture) -> list[tuple[str, int, str]]:
    return [(r.name, r.levelno, r.getMessage()) for r in caplog.records]


@pytest.mark.parametrize(
    "payload",
    [
        {"type": "block_actions", "user": 5},
        {"type": "block_actions", "user": {"id": "U1"}, "channel": 5},
    ],
)
def test_a_malformed_envelope_is_a_warning_not_a_bot_failure(handler, caplog, payload) -> None:
    connection = Connection()
    with caplog.at_level(logging.DEBUG):
        handler.handle(connection, _envelope(payload))  # type: ignore[arg-type]
    assert [a.envelope_id for a in connection.acks] == ["env-1"]
    records = _records(caplog)
    assert not [r for r in records if r[1] >= logging.ERROR], records
    assert any(
        "malformed Socket Mode interactive envelope" in m and "slack_bolt" in m
        for _, _, m in records
    ), records


def test_an_error_raised_in_the_bots_code_is_a_bot_failure(caplog) -> None:
    try:
        load_settings({})
    except ConfigError as exc:
        error = exc
    assert raised_in_bot(error) and raised_in(error) == "kandev_slack"
    with caplog.at_level(logging.DEBUG):
        log_failure(_envelope(WELL_FORMED), error)
    [record] = caplog.records
    assert record.levelno == logging.ERROR and record.exc_info is not None
    assert "failed in the bot" in record.getMessage()


def test_a_library_error_on_a_well_formed_envelope_names_the_library(caplog) -> None:
    try:
        SignatureVerifier("")
    except ValueError as exc:
        error = exc
    assert not raised_in_bot(error) and raised_in(error) == "slack_sdk"
    with caplog.at_level(logging.DEBUG):
        log_failure(_envelope(WELL_FORMED), error)
    [record] = caplog.records
    assert record.levelno == logging.ERROR and record.exc_info is not None
    message = record.getMessage()
    assert message.startswith("slack_sdk failed on a well-formed") and "not the bot's" in message


def test_the_websocket_client_logs_under_slack_sdks_name(handler) -> None:
    assert handler.client.logger.name.startswith("slack_sdk")


def test_the_running_bot_logs_malformed_envelopes_as_such(bot_factory, fake_slack) -> None:
    bot = bot_factory(mode="socket")
    for payload in (
        {"type": "block_actions", "user": 5},
        {"type": "view_submission", "user": {"id": "U1"}, "channel": 5},
    ):
        fake_slack.socket.send_envelope("interactive", payload, timeout=5)  # raises if unacked
    logs = bot.logs()
    assert logs.count("refused a malformed Socket Mode interactive envelope") == 2, logs[-3000:]
    assert "failed in the bot" not in logs
    assert " ERROR bot." not in logs, logs[-3000:]


#: View payloads Bolt's own payload reading chokes on (slack_bolt.request.payload_utils indexes
#: ``view["type"]`` and ``view`` itself): Slack never sends them, replays of samples do.
MALFORMED_VIEWS = [
    {"type": "view_submission", "user": {"id": "U1"}, "view": {"callback_id": "kq_answer_modal"}},
    {"type": "view_submission", "user": {"id": "U1"}, "view": None},
    {"type": "view_closed", "user": None, "view": None},
]


@pytest.mark.fault("malformed view submissions (logged as bad input)", guarantee=6)
@pytest.mark.parametrize("mode", ["http", "socket"])
def test_malformed_view_submissions_are_bad_input_on_both_transports(
    bot_factory, fake_slack, slack_driver, mode, reliability
) -> None:
    """One WARNING line each, no traceback and no ERROR, over HTTP as over Socket Mode."""
    bot = bot_factory(mode=mode)
    driver = slack_driver(transport="socket") if mode == "socket" else slack_driver(bot.events_url)
    for payload in MALFORMED_VIEWS:
        ack = driver.transport.deliver(
            "interactive", payload, accepts_response_payload=False, delivery=Delivery()
        )
        assert ack.status in (200, 400), ack  # a Socket Mode ack is a 200; HTTP calls it a 400
    logs = bot.logs()
    warned = [line for line in logs.splitlines() if " WARNING " in line and "malformed" in line]
    assert len(warned) == len(MALFORMED_VIEWS), logs[-3000:]
    assert "Traceback" not in logs, logs[-3000:]
    assert " ERROR " not in logs, logs[-3000:]
    reliability.record(
        f"malformed view submissions over {mode} (logged as bad input)",
        survived=True,
        detail=f"{len(MALFORMED_VIEWS)} one-line warnings",
    )
