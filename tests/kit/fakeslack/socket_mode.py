"""A Socket Mode server like Slack's: `hello` on connect, envelopes out, acks back,
`disconnect` messages and dropped connections for reconnect tests."""

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

from tests.kit.fakeslack.ids import envelope_id as new_envelope_id

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


class FakeSocketModeServer:
    def __init__(self, app_id: str, host: str = "127.0.0.1") -> None:
        self.app_id = app_id
        self.host = host
        self.port = 0
        self._cond = threading.Condition()
        self._tickets: set[str] = set()
        self._open: list[ServerConnection] = []
        self._acks: dict[str, tuple[float, JsonDict]] = {}
        self.received: list[JsonDict] = []
        self.sent: list[JsonDict] = []
        self.connections_opened = 0
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
        if self._server is not None:
            self._server.shutdown()
            self._server = None
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    def issue_url(self) -> str:
        """What apps.connections.open returns: a one-connection ticket URL."""
        ticket = uuid.uuid4().hex
        with self._cond:
            self._tickets.add(ticket)
        return f"ws://{self.host}:{self.port}/link/?ticket={ticket}&app_id={self.app_id}"

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
        try:
            message = json.loads(raw)
        except (json.JSONDecodeError, UnicodeDecodeError):
            message = {"unparsable": raw if isinstance(raw, str) else raw.decode("latin-1")}
        with self._cond:
            self.received.append(message)
            eid = message.get("envelope_id") if isinstance(message, dict) else None
            if isinstance(eid, str):
                self._acks[eid] = (time.monotonic(), message)
            self._cond.notify_all()

    def _send(self, conn: ServerConnection, message: JsonDict) -> None:
        conn.send(json.dumps(message))
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

    def _newest(self, timeout: float) -> ServerConnection:
        self.wait_for_connection(1, timeout)
        with self._cond:
            return self._open[-1]

    # -- envelopes ----------------------------------------------------------------------------
    def send_envelope(
        self,
        type: str,
        payload: JsonDict,
        *,
        accepts_response_payload: bool = False,
        retry_attempt: int | None = None,
        retry_reason: str | None = None,
        envelope_id: str | None = None,
        timeout: float = 5.0,
    ) -> SocketAck:
        """Deliver an envelope on the newest connection and wait for the app's ack."""
        eid = envelope_id or new_envelope_id()
        envelope: JsonDict = {
            "envelope_id": eid,
            "payload": payload,
            "type": type,
            "accepts_response_payload": accepts_response_payload,
        }
        if type == "events_api":
            envelope["retry_attempt"] = retry_attempt or 0
            envelope["retry_reason"] = retry_reason or ""
        started = time.monotonic()
        self._send(self._newest(timeout), envelope)
        return self.wait_for_ack(eid, started, timeout)

    def wait_for_ack(self, eid: str, started: float, timeout: float) -> SocketAck:
        deadline = started + timeout
        with self._cond:
            while eid not in self._acks:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise NoAck(f"envelope {eid} was not acknowledged within {timeout}s")
                self._cond.wait(remaining)
            acked_at, message = self._acks[eid]
        payload = message.get("payload")
        return SocketAck(
            eid, payload if isinstance(payload, dict) else None, acked_at - started, message
        )

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
