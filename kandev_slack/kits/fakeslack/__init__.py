"""A faithful local fake of Slack (Web API, response_urls, Socket Mode) and a driver that acts
like Slack toward the bot. See kandev_slack/kits/fakeslack/README.md.

This package's namespace is its public surface: tests and the benchmark import from here
(``from kandev_slack.kits.fakeslack import FakeSlack, SlackDriver, payloads``), never from its
modules."""

from kandev_slack.kits.fakeslack import payloads
from kandev_slack.kits.fakeslack.api.view_state import ViewSubmissionBlocked, build_state_values
from kandev_slack.kits.fakeslack.blockkit import blocks_text_length, validate_message, validate_view
from kandev_slack.kits.fakeslack.config import ALICE, BOB, Channel, SlackUser, Workspace
from kandev_slack.kits.fakeslack.driver import SlackDriver, overflow_option
from kandev_slack.kits.fakeslack.faults import ScriptedResponse
from kandev_slack.kits.fakeslack.layout import (
    ElementRef,
    assign_default_ids,
    blocks_text,
    find_element,
    iter_elements,
)
from kandev_slack.kits.fakeslack.records import (
    CallRecord,
    Ephemeral,
    PostedMessage,
    ResponseUrlPost,
    ViewRecord,
    Violation,
)
from kandev_slack.kits.fakeslack.transport.server import FakeSlack
from kandev_slack.kits.fakeslack.transport.signing import signed_headers
from kandev_slack.kits.fakeslack.transport.socket_mode import NoAck, SocketAck, envelope
from kandev_slack.kits.fakeslack.transport.transports import (
    FORM,
    Ack,
    Delivery,
    HttpTransport,
    Kind,
    Transport,
    parse_body,
)

__all__ = [
    "Kind",
    "blocks_text_length",
    "ScriptedResponse",
    "ALICE",
    "BOB",
    "FORM",
    "Ack",
    "CallRecord",
    "Channel",
    "Delivery",
    "ElementRef",
    "Ephemeral",
    "FakeSlack",
    "HttpTransport",
    "NoAck",
    "envelope",
    "PostedMessage",
    "ResponseUrlPost",
    "SlackDriver",
    "overflow_option",
    "SlackUser",
    "SocketAck",
    "Transport",
    "ViewRecord",
    "ViewSubmissionBlocked",
    "Violation",
    "Workspace",
    "assign_default_ids",
    "blocks_text",
    "build_state_values",
    "find_element",
    "iter_elements",
    "parse_body",
    "payloads",
    "signed_headers",
    "validate_message",
    "validate_view",
]
