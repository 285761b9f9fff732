"""A Socket Mode server like Slack's: `hello` on connect, envelopes out, acks back,
`disconnect` messages and dropped connections for reconnect tests.

It can misbehave as a network or Slack does: cut TCP without a close frame
(:meth:`drop_connections`), close without `disconnect` (:meth:`close_connections`), go silent
(``relayed = True`` before the link is made, then :meth:`silence_links`: pings unanswered, nothing
closed), never greet (``greet = False``), send an invalid UTF-8 text frame (:meth:`send_raw`) or
an envelope of any size; apps.connections.open's faults are the Web API's (``faults.script``)."""

from __future__ import annotations

import contextlib
import json
import logging
import socket
import threading
import time
import uuid
from dataclasses import dataclass
from http import HTTPStatus
from typing import Any
from urllib.parse import parse_qs, urlsplit

from websockets.exceptions import ConnectionClosed
from websockets.http11 import Request, Response
from websockets.sync.server import Server, ServerConnection, serve

from kandev_slack.kits.fakeslack.ids import envelope_id as new_envelope_id
from kandev_slack.kits.fakeslack.transport.socket_relay import Relay

JsonDict = dict[str, Any]
log = logging.getLogger(__name__)


class NoAck(TimeoutError):
    """The app did not acknowledge an envelope in time."""


@dataclass(frozen=True)
class SocketAck:
    envelope_id: str
    payload: JsonDict | None
    elapsed: float
    raw: JsonDict


def envelope(
    type: str,
    payload: JsonDict,
    *,
    accepts_response_payload: bool = False,
    retry_attempt: int | None = None,
    retry_reason: str | None = None,
    envelope_id: str | None = None,
) -> JsonDict:
    """A Socket Mode envelope as Slack sends it (a new envelope id unless ``envelope_id``)."""
    made: JsonDict = {
        "envelope_id": envelope_id or new_envelope_id(),
        "payload": payload,
        "type": type,
        "accepts_response_payload": accepts_response_payload,
    }
    if type == "events_api" or retry_attempt is not None:  # a redelivery of any kind
        made["retry_attempt"] = retry_attempt or 0
        made["retry_reason"] = retry_reason or ""
    return made


class FakeSocketModeServer:
    def __init__(self, app_id: str, host: str = "127.0.0.1") -> None:
        self.app_id = app_id
        self.host = host
        self.port = 0
        self._cond = threading.Condition()
        self._tickets: set[str] = set()
        self._open: list[ServerConnection] = []
        self._acks: dict[str, tuple[float, JsonDict]] = {}
        #: When each envelope's frame was handed to the link (what its ack is timed from).
        self._sent_at: dict[str, float] = {}
        #: One event per envelope whose ack is awaited: an ack wakes its own waiter only (a
        #: crowd of waiters on one condition would all wake at every ack and delay the next).
        self._ack_events: dict[str, threading.Event] = {}
        self.received: list[JsonDict] = []
        self.sent: list[JsonDict] = []
        self.connections_opened = 0
        #: WebSocket connections accepted (greeted or not).
        self.accepted = 0
        #: Send `hello` on connect (False: a link that accepts and never greets).
        self.greet = True
        #: Issue URLs through a relay that :meth:`silence_links` can silence.
        self.relayed = False
        #: The host issued URLs name (None: the host it listens on); a test sets another name
        #: of the same server (``localhost``) to play a URL pointing elsewhere.
        self.url_host: str | None = None
        #: Issue this URL instead (None: this server's): the app links to another Socket Mode
        #: server, e.g. one in a process of its own that sends and times a benchmark's
        #: envelopes (bench/socket_burst.py) while this process answers the Web API.
        self.redirect_url: str | None = None
        self._relay: Relay | None = None
        self._server: Server | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle ----------------------------------------------------------------------------
    def start(self) -> None:
        self._server = serve(
            self._handle,
            self.host,
            0,
            process_request=self._check_ticket,
            compression=None,
            ping_interval=10,
            ping_timeout=10,
            close_timeout=2,
            logger=log,
        )
        self.port = self._server.socket.getsockname()[1]
        self._thread = threading.Thread(
            target=self._server.serve_forever, name="fake-slack-socket-mode", daemon=True
        )
        self._thread.start()

    def stop(self) -> None:
        if self._relay is not None:
            self._relay.close()
            self._relay = None
        if self._server is not None:
            self._server.shutdown()
            self._server = None
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    def issue_url(self) -> str:
        """What apps.connections.open returns: a one-connection ticket URL."""
        if self.redirect_url is not None:
            return self.redirect_url
        ticket = uuid.uuid4().hex
        with self._cond:
            self._tickets.add(ticket)
            if self.relayed and self._relay is None:
                self._relay = Relay(self.host, self.port)
            port = self._relay.port if self.relayed and self._relay else self.port
        host = self.url_host or self.host
        return f"ws://{host}:{port}/link/?ticket={ticket}&app_id={self.app_id}"

    def silence_links(self) -> None:
        """Every relayed link goes silent: no byte passes either way, nothing is closed."""
        assert self._relay is not None, "set relayed = True before the link is made"
        self._relay.silence()

    # -- connections --------------------------------------------------------------------------
    def _check_ticket(self, conn: ServerConnection, request: Request) -> Response | None:
        ticket = parse_qs(urlsplit(request.path).query).get("ticket", [""])[0]
        with self._cond:
            if ticket in self._tickets:
                self._tickets.discard(ticket)
                return None
        return conn.respond(HTTPStatus.UNAUTHORIZED, "invalid or used ticket\n")

    def _handle(self, conn: ServerConnection) -> None:
        try:
            with self._cond:
                count = len(self._open) + 1
                self.accepted += 1
                self._cond.notify_all()
            if not self.greet:
                for _ in conn:  # read (and answer pings), never greet, never deliver
                    pass
                return
            self._send(conn, self._hello(count))
            with self._cond:  # counted as connected once greeted, as a Slack client sees it
                self._open.append(conn)
                self.connections_opened += 1
                self._cond.notify_all()
            for raw in conn:
                self._on_client_message(raw)
        except ConnectionClosed:
            pass
        finally:
            with self._cond:
                if conn in self._open:
                    self._open.remove(conn)
                self._cond.notify_all()

    def _hello(self, count: int) -> JsonDict:
        return {
            "type": "hello",
            "num_connections": count,
            "debug_info": {
                "host": "applink-fake-1",
                "build_number": 1,
                "approximate_connection_time": 18060,
            },
            "connection_info": {"app_id": self.app_id},
        }

    def _on_client_message(self, raw: str | bytes) -> None:
        at = time.monotonic()  # as Slack times an ack: when it arrives, before any of our waits
        try:
            message = json.loads(raw)
        except (json.JSONDecodeError, UnicodeDecodeError):
            message = {"unparsable": raw if isinstance(raw, str) else raw.decode("latin-1")}
        event = None
        with self._cond:
            self.received.append(message)
            eid = message.get("envelope_id") if isinstance(message, dict) else None
            if isinstance(eid, str):
                self._acks[eid] = (at, message)
                event = self._ack_events.pop(eid, None)
        if event is not None:
            event.set()

    def _send(self, conn: ServerConnection, message: JsonDict) -> None:
        text = json.dumps(message)
        eid = message.get("envelope_id")
        if isinstance(eid, str):
            with self._cond:
                self._sent_at[eid] = time.monotonic()
        conn.send(text)
        with self._cond:
            self.sent.append(message)

    @property
    def open_connections(self) -> int:
        with self._cond:
            return len(self._open)

    def wait_for_connection(self, opened: int = 1, timeout: float = 5.0) -> None:
        """Wait until `opened` connections were made in total and one is open now."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while self.connections_opened < opened or not self._open:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise TimeoutError(
                        f"no Socket Mode connection (opened so far: {self.connections_opened})"
                    )
                self._cond.wait(remaining)

    def _link(self, timeout: float, link: int = -1) -> ServerConnection:
        """An open connection: the newest (-1), the oldest (0)…"""
        self.wait_for_connection(1, timeout)
        with self._cond:
            return self._open[link]

    def wait_for(self, what: str, at_least: int, timeout: float) -> None:
        """Wait until the counter ``what`` ("accepted", "connections_opened") or the number of
        open connections ("open") reaches ``at_least``."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while self._count(what) < at_least:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise TimeoutError(f"{what} stayed at {self._count(what)} (< {at_least})")
                self._cond.wait(remaining)

    def _count(self, what: str) -> int:
        return len(self._open) if what == "open" else int(getattr(self, what))

    # -- envelopes ----------------------------------------------------------------------------
    def send_envelope(
        self, type: str, payload: JsonDict, *, timeout: float = 5.0, **options: Any
    ) -> SocketAck:
        """Deliver an envelope on the newest connection (or ``link``) and wait for the app's
        ack; ``options`` as :meth:`deliver`'s."""
        started = time.monotonic()
        eid = self.deliver(type, payload, timeout=timeout, **options)
        return self.wait_for_ack(eid, started, timeout)

    def deliver(
        self,
        type: str,
        payload: JsonDict,
        *,
        accepts_response_payload: bool = False,
        retry_attempt: int | None = None,
        retry_reason: str | None = None,
        envelope_id: str | None = None,
        timeout: float = 5.0,
        link: int = -1,
    ) -> str:
        """Deliver an envelope without waiting for its ack; its envelope id."""
        made = envelope(
            type,
            payload,
            accepts_response_payload=accepts_response_payload,
            retry_attempt=retry_attempt,
            retry_reason=retry_reason,
            envelope_id=envelope_id,
        )
        self._send(self._link(timeout, link), made)
        return str(made["envelope_id"])

    def send_raw(self, data: bytes, *, link: int = -1, timeout: float = 5.0) -> None:
        """Send ``data`` as one text frame, valid UTF-8 or not."""
        self._link(timeout, link).send(data, text=True)

    def wait_for_ack(self, eid: str, started: float, timeout: float) -> SocketAck:
        """The ack of ``eid``, timed from when its frame went (else ``started``) to when the
        ack arrived; :class:`NoAck` when none came ``timeout`` after ``started``."""
        deadline = started + timeout
        with self._cond:
            sent_at = self._sent_at.pop(eid, started)
            event = None
            if eid not in self._acks:
                event = self._ack_events.setdefault(eid, threading.Event())
        if event is not None and not event.wait(max(deadline - time.monotonic(), 0.0)):
            with self._cond:
                self._ack_events.pop(eid, None)
                if eid not in self._acks:
                    raise NoAck(f"envelope {eid} was not acknowledged within {timeout}s")
        with self._cond:
            acked_at, message = self._acks[eid]
        payload = message.get("payload")
        elapsed = acked_at - sent_at
        return SocketAck(eid, payload if isinstance(payload, dict) else None, elapsed, message)

    def send_disconnect(self, reason: str = "refresh_requested") -> None:
        """Slack's "please reconnect" (reasons: warning, refresh_requested, link_disabled)."""
        with self._cond:
            connections = list(self._open)
        for conn in connections:
            self._send(
                conn,
                {"type": "disconnect", "reason": reason, "debug_info": {"host": "applink-fake-1"}},
            )

    def drop_connections(self) -> None:
        """Cut every connection without a close handshake (network failure)."""
        with self._cond:
            connections = list(self._open)
        for conn in connections:
            with contextlib.suppress(OSError):
                conn.socket.shutdown(socket.SHUT_RDWR)

    def close_connections(self, code: int = 1001, reason: str = "going away") -> None:
        """Close every connection with a WebSocket close frame."""
        with self._cond:
            connections = list(self._open)
        for conn in connections:
            conn.close(code, reason)
