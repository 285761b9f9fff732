"""A reverse proxy in front of a real Kandev that counts (and can hold or drop) answer calls,
and can make chosen requests slow.

The bot talks to ``proxy.base_url`` instead of Kandev (WebSocket hints do not pass: run the
bot with ``KANDEV_HINTS=off``). Every request is forwarded as is; answer calls — REST
``POST /api/v1/clarification/{id}/respond`` and MCP ``tools/call answer_question_kandev`` — are
recorded per pending_id, which is what "reached Kandev once" is measured on. ``hold(pending_id,
then=...)`` keeps that bundle's next answer call waiting (the bot sees a slow Kandev) until
``release()``: ``then="forward"`` passes it on afterwards (Kandev records it though its caller
may be gone), ``then="drop"`` never delivers it (the connection is cut). ``slow(matches,
delay_s)`` makes every request whose body ``matches`` wait ``delay_s`` before it is forwarded.
"""

from __future__ import annotations

import contextlib
import json
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Literal

import httpx

RESPOND_PATH = re.compile(r"^/api/v1/clarification/([^/]+)/respond$")
ANSWER_TOOL = "answer_question_kandev"
_HOP_BY_HOP = {
    "connection",
    "keep-alive",
    "transfer-encoding",
    "te",
    "trailer",
    "upgrade",
    "content-length",
    "host",
}
Then = Literal["forward", "drop"]


@dataclass
class _Hold:
    then: Then
    arrived: threading.Event = field(default_factory=threading.Event)
    released: threading.Event = field(default_factory=threading.Event)


@dataclass(frozen=True)
class PathFault:
    """Answer requests whose path matches ``pattern`` with ``status`` and ``body`` instead of
    forwarding them (Kandev never sees them)."""

    pattern: re.Pattern[str]
    status: int
    body: bytes
    content_type: str


@dataclass(frozen=True)
class AnswerCall:
    pending_id: str
    transport: str  # rest | mcp
    body: dict[str, Any]
    delivered: bool  # forwarded to Kandev (False: dropped by a hold)


def answer_target(path: str, body: bytes) -> tuple[str, str] | None:
    """(pending_id, transport) when this request answers a bundle."""
    match = RESPOND_PATH.match(path.split("?", 1)[0])
    if match:
        return match.group(1), "rest"
    if path.split("?", 1)[0] == "/mcp" and body:
        try:
            message = json.loads(body)
        except ValueError:
            return None
        params = message.get("params") if isinstance(message, dict) else None
        if (
            isinstance(params, dict)
            and message.get("method") == "tools/call"
            and params.get("name") == ANSWER_TOOL
        ):
            return str((params.get("arguments") or {}).get("pending_id", "")), "mcp"
    return None


class KandevProxy:
    def __init__(self, upstream: str) -> None:
        self.upstream = upstream.rstrip("/")
        self._lock = threading.Lock()
        self._holds: dict[str, _Hold] = {}
        self._slow: tuple[Callable[[bytes], bool], float] | None = None
        self.calls: list[AnswerCall] = []
        self._faults: list[PathFault] = []
        self.faulted: list[str] = []  # paths answered by a fault instead of Kandev
        self._client = httpx.Client(base_url=self.upstream, timeout=120.0, trust_env=False)
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler_class())
        self._server.daemon_threads = True
        self._thread: threading.Thread | None = None

    # ---- lifecycle -------------------------------------------------------------------------
    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def start(self) -> KandevProxy:
        self._thread = threading.Thread(
            target=self._server.serve_forever,
            kwargs={"poll_interval": 0.05},
            name="kandev-proxy",
            daemon=True,
        )
        self._thread.start()
        return self

    def close(self) -> None:
        self.release()
        self._server.shutdown()
        self._server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
        self._client.close()

    # ---- what tests use ------------------------------------------------------------------------
    def answer_calls(self, pending_id: str, *, delivered_only: bool = True) -> list[AnswerCall]:
        with self._lock:
            return [
                c
                for c in self.calls
                if c.pending_id == pending_id and (c.delivered or not delivered_only)
            ]

    def hold(self, pending_id: str, *, then: Then = "forward") -> None:
        """Hold the next answer call for ``pending_id`` until :meth:`release`."""
        with self._lock:
            self._holds[pending_id] = _Hold(then)

    def slow(self, matches: Callable[[bytes], bool], delay_s: float) -> None:
        """Requests whose body ``matches`` wait ``delay_s`` seconds before being forwarded."""
        self._slow = (matches, delay_s)

    def wait_held(self, pending_id: str, timeout: float = 10.0) -> None:
        """Wait until the held answer call of ``pending_id`` arrived at the proxy."""
        with self._lock:
            hold = self._holds[pending_id]
        if not hold.arrived.wait(timeout):
            raise TimeoutError(f"no answer call for {pending_id} reached the proxy")

    def fail_path(
        self,
        pattern: str,
        status: int,
        body: bytes = b'{"error":"injected"}',
        content_type: str = "application/json",
    ) -> None:
        """Answer every request whose path matches ``pattern`` (a regex) with this reply."""
        with self._lock:
            self._faults.append(PathFault(re.compile(pattern), status, body, content_type))

    def heal(self) -> None:
        """Forward everything again."""
        with self._lock:
            self._faults.clear()

    def release(self) -> None:
        """Let every held call go on (forwarded or dropped, as each hold said)."""
        with self._lock:
            holds, self._holds = list(self._holds.values()), {}
        for hold in holds:
            hold.released.set()

    # ---- forwarding ----------------------------------------------------------------------------
    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_GET(self) -> None:
                proxy._forward(self)

            def do_POST(self) -> None:
                proxy._forward(self)

            def do_DELETE(self) -> None:
                proxy._forward(self)

            def log_message(self, format: str, *args: object) -> None:
                pass

        return Handler

    def _fault_for(self, path: str) -> PathFault | None:
        with self._lock:
            fault = next((f for f in self._faults if f.pattern.search(path)), None)
            if fault is not None:
                self.faulted.append(path)
            return fault

    def _forward(self, req: BaseHTTPRequestHandler) -> None:
        length = int(req.headers.get("Content-Length") or 0)
        body = req.rfile.read(length) if length else b""
        fault = self._fault_for(req.path.split("?", 1)[0])
        if fault is not None:
            req.send_response(fault.status)
            req.send_header("Content-Type", fault.content_type)
            req.send_header("Content-Length", str(len(fault.body)))
            req.end_headers()
            req.wfile.write(fault.body)
            return
        if self._slow is not None and self._slow[0](body):
            time.sleep(self._slow[1])
        target = answer_target(req.path, body)
        if target is not None and not self._pass_hold(target[0]):
            self._record(target, body, delivered=False)
            req.close_connection = True
            return  # dropped: the caller sees the connection cut, Kandev sees nothing
        headers = {k: v for k, v in req.headers.items() if k.lower() not in _HOP_BY_HOP}
        try:
            upstream = self._client.request(req.command, req.path, content=body, headers=headers)
        except httpx.HTTPError:
            req.send_error(502, "Kandev unreachable through the test proxy")
            return
        if target is not None:
            self._record(target, body, delivered=True)
        with contextlib.suppress(OSError):  # the caller may be gone (killed while waiting)
            req.send_response(upstream.status_code)
            for key, value in upstream.headers.items():
                if key.lower() not in _HOP_BY_HOP and key.lower() != "content-encoding":
                    req.send_header(key, value)
            req.send_header("Content-Length", str(len(upstream.content)))
            req.end_headers()
            req.wfile.write(upstream.content)

    def _pass_hold(self, pending_id: str) -> bool:
        """Wait out a hold on this bundle; False when the call is to be dropped."""
        with self._lock:
            hold = self._holds.get(pending_id)
        if hold is None:
            return True
        hold.arrived.set()
        deadline = time.monotonic() + 120.0
        while not hold.released.wait(0.05):
            if time.monotonic() > deadline:
                break
        return hold.then == "forward"

    def _record(self, target: tuple[str, str], body: bytes, *, delivered: bool) -> None:
        try:
            parsed = json.loads(body) if body else {}
        except ValueError:
            parsed = {"raw": body.decode("latin-1")}
        with self._lock:
            self.calls.append(AnswerCall(target[0], target[1], parsed, delivered))
