"""A faithful local fake of Slack (Web API, response_urls, Socket Mode) and a driver that acts
like Slack toward the bot. See fakeslack/README.md.

This package's namespace is its public surface: tests and the benchmark import from here
(``from fakeslack import FakeSlack, SlackDriver, payloads``), never from its modules."""

from fakeslack import payloads
from fakeslack.blockkit import blocks_text_length, validate_message, validate_view
from fakeslack.config import ALICE, BOB, Channel, SlackUser, Workspace
from fakeslack.driver import SlackDriver, overflow_option
from fakeslack.faults import ScriptedResponse
from fakeslack.layout import (
    ElementRef,
    assign_default_ids,
    blocks_text,
    find_element,
    iter_elements,
)
from fakeslack.records import (
    CallRecord,
    Ephemeral,
    PostedMessage,
    ResponseUrlPost,
    ViewRecord,
    Violation,
)
from fakeslack.server import FakeSlack
from fakeslack.signing import signed_headers
from fakeslack.socket_mode import NoAck, SocketAck
from fakeslack.transports import (
    FORM,
    Ack,
    Delivery,
    HttpTransport,
    Kind,
    Transport,
    parse_body,
)
from fakeslack.view_state import ViewSubmissionBlocked, build_state_values

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
