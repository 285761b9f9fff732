"""A faithful local fake of Slack (Web API, response_urls, Socket Mode) and a driver that acts
like Slack toward the bot. See tests/kit/fakeslack/README.md.

This package's namespace is its public surface: tests and the benchmark import from here
(``from tests.kit.fakeslack import FakeSlack, SlackDriver, payloads``), never from its modules."""

from tests.kit.fakeslack import payloads
from tests.kit.fakeslack.blockkit import validate_message, validate_view
from tests.kit.fakeslack.config import ALICE, BOB, Channel, SlackUser, Workspace
from tests.kit.fakeslack.driver import SlackDriver
from tests.kit.fakeslack.faults import ScriptedResponse
from tests.kit.fakeslack.layout import (
    ElementRef,
    assign_default_ids,
    blocks_text,
    find_element,
    iter_elements,
)
from tests.kit.fakeslack.records import (
    CallRecord,
    Ephemeral,
    PostedMessage,
    ResponseUrlPost,
    ViewRecord,
    Violation,
)
from tests.kit.fakeslack.server import FakeSlack
from tests.kit.fakeslack.signing import signed_headers
from tests.kit.fakeslack.socket_mode import NoAck, SocketAck
from tests.kit.fakeslack.transports import (
    FORM,
    Ack,
    Delivery,
    HttpTransport,
    Transport,
    parse_body,
)
from tests.kit.fakeslack.view_state import ViewSubmissionBlocked, build_state_values

__all__ = [
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
