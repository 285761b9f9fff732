"""A faithful local fake of Slack (Web API, response_urls, Socket Mode) and a driver that acts
like Slack toward the bot. See tests/fakeslack/README.md."""

from tests.fakeslack.config import ALICE, BOB, Channel, SlackUser, Workspace
from tests.fakeslack.driver import SlackDriver
from tests.fakeslack.records import (
    CallRecord,
    Ephemeral,
    PostedMessage,
    ResponseUrlPost,
    ViewRecord,
    Violation,
)
from tests.fakeslack.server import FakeSlack
from tests.fakeslack.socket_mode import NoAck, SocketAck
from tests.fakeslack.transports import Ack, Delivery
from tests.fakeslack.view_state import ViewSubmissionBlocked

__all__ = [
    "ALICE",
    "BOB",
    "Ack",
    "CallRecord",
    "Channel",
    "Delivery",
    "Ephemeral",
    "FakeSlack",
    "NoAck",
    "PostedMessage",
    "ResponseUrlPost",
    "SlackDriver",
    "SlackUser",
    "SocketAck",
    "ViewRecord",
    "ViewSubmissionBlocked",
    "Violation",
    "Workspace",
]
