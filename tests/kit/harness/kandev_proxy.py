"""A reverse proxy in front of a real Kandev that counts (and can hold or drop) answer calls.

The bot talks to ``proxy.base_url`` instead of Kandev. Every request is forwarded as is and
named in ``requests`` (``"GET /api/v1/workspaces/…/tasks"``, an MCP tool call as ``"mcp
<tool>"``). A WebSocket upgrade, ``/ws``'s push hints, is tunnelled to Kandev (``tunnels`` counts
them; most tests run the bot with ``KANDEV_HINTS=off`` all the same), offered no extension (no
compression) so that ``drop_hints(matches)`` can drop the notifications Kandev sends whose
decoded JSON ``matches`` (a lost hint; ``hints_dropped`` counts them) until ``heal()``; every
other frame passes byte for byte. ``freeze_path(pattern)`` answers every GET whose path matches
with the reply Kandev gave the last such GET (same path and query) before it, until ``heal()``
(a task list that does not show a change; ``frozen`` counts them). Answer calls — REST ``POST
/api/v1/clarification/{id}/respond``, MCP ``tools/call answer_question_kandev`` and an
approval's ``resolve_agent_permission_kandev`` (keyed ``perm:<request_id>``, its card's key) —
are recorded per pending_id, which is what "reached Kandev once" is measured on, with whose
token made each (``AnswerCall.bearer``: the personal access token's display prefix
``kandev_pat_<8 hex>``, never the whole token; ``bearer_of(token)`` gives a token's).
``hold(pending_id, then=...)`` keeps that bundle's next answer call waiting (the bot sees a slow
Kandev) until ``release()``: ``then="forward"`` passes it on afterwards (Kandev records it
though its caller may be gone), ``then="drop"`` never delivers it (the connection is cut).
``slow(matches, delay_s)`` makes every request whose body ``matches`` wait ``delay_s`` before it
is forwarded; ``fail_path(pattern, status, body)`` answers every request whose path matches in
Kandev's place until ``heal()``; ``slow_path(pattern, delay_s)`` holds every request whose path
matches for ``delay_s`` before forwarding it, or until ``heal()`` (``slowed``: the paths held so
far, ``slowed_answered``: how many of them were answered). ``fail_tool(name, ...)`` answers the
MCP ``tools/call`` of tool ``name`` (those whose arguments ``when`` accepts) in Kandev's place:
a tool result with ``text`` (``is_error``: a tool error such as ``backend error [INTERNAL]: …``)
or a ``raw`` HTTP 200 body, until ``heal()``; ``tool_faulted`` lists the calls so answered
(tool, arguments).

``inject(pending_id, Fault...)`` makes that bundle's answer calls misbehave (the next ``times``
of them, or all until ``clear``): ``Fault.reply(status, body, headers)`` answers in Kandev's
place without forwarding (Kandev never sees the call); ``Fault.slow(seconds)`` forwards the call
(Kandev records it) and sends Kandev's reply only after ``seconds``; ``Fault.cut()`` forwards
it and then closes the connection without any reply.
"""

from __future__ import annotations

import contextlib
import json
import re
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Literal

import httpx

RESPOND_PATH = re.compile(r"^/api/v1/clarification/([^/]+)/respond$")
ANSWER_TOOL = "answer_question_kandev"
#: An approval's resolve counts as an answer call of its card key, ``perm:<request_id>``.
RESOLVE_TOOL = "resolve_agent_permission_kandev"
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
class Fault:
    """What the proxy does to an answer call instead of passing it through."""

    forward: bool  # the call reaches Kandev (which records it) before the fault
    status: int | None = None  # reply with this instead of Kandev's reply
    body: bytes = b""
    headers: tuple[tuple[str, str], ...] = ()
    delay: float = 0.0  # seconds to wait after forwarding, before replying
    cut: bool = False  # close the connection instead of replying
    times: int | None = None  # how many answer calls it applies to (None: until cleared)

    @classmethod
    def reply(
        cls,
        status: int,
        body: str | bytes = b"",
        headers: dict[str, str] | None = None,
        *,
        times: int | None = None,
    ) -> Fault:
        raw = body.encode() if isinstance(body, str) else body
        return cls(
            forward=False,
            status=status,
            body=raw,
            headers=tuple((headers or {}).items()),
            times=times,
        )

    @classmethod
    def slow(cls, seconds: float, *, times: int | None = None) -> Fault:
        return cls(forward=True, delay=seconds, times=times)

    @classmethod
    def cut_after_forwarding(cls, *, times: int | None = None) -> Fault:
        return cls(forward=True, cut=True, times=times)


@dataclass(frozen=True)
class PathFault:
    """Answer requests whose path matches ``pattern`` with ``status`` and ``body`` instead of
    forwarding them (Kandev never sees them)."""

    pattern: re.Pattern[str]
    status: int
    body: bytes
    content_type: str


@dataclass(frozen=True)
class ToolFault:
    """Answer the ``tools/call`` of ``name`` whose arguments ``when`` accepts in Kandev's place:
    with a result whose content is ``text`` (an error result when ``is_error``), or with the
    ``raw`` HTTP 200 body (a reply that is not JSON-RPC at all)."""

    name: str
    when: Callable[[dict[str, Any]], bool]
    text: str = ""
    is_error: bool = False
    raw: bytes | None = None

    def body(self, request_id: object) -> bytes:
        if self.raw is not None:
            return self.raw
        result = {"content": [{"type": "text", "text": self.text}], "isError": self.is_error}
        return json.dumps({"jsonrpc": "2.0", "id": request_id, "result": result}).encode()


@dataclass(frozen=True)
class AnswerCall:
    pending_id: str
    transport: str  # rest | mcp
    body: dict[str, Any]
    delivered: bool  # forwarded to Kandev (False: dropped by a hold)
    #: Whose token made it: its display prefix (``bearer_of``), "" without one.
    bearer: str = ""


#: A Kandev personal access token: ``kandev_pat_<8 hex display prefix>_<secret>``.
_PAT = re.compile(r"^(kandev_pat_[0-9a-f]{8})_")


def bearer_of(token: str | None) -> str:
    """The part of ``token`` a recorded call keeps: a personal access token's display prefix
    (``kandev_pat_<8 hex>``), ``"other"`` for any other token, ``""`` for none."""
    if not token:
        return ""
    match = _PAT.match(token)
    return match.group(1) if match else "other"


def _bearer(authorization: str | None) -> str:
    scheme, _, token = (authorization or "").partition(" ")
    return bearer_of(token.strip()) if scheme == "Bearer" else ""


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
        if not isinstance(params, dict) or message.get("method") != "tools/call":
            return None
        arguments = params.get("arguments") or {}
        if params.get("name") == ANSWER_TOOL:
            return str(arguments.get("pending_id", "")), "mcp"
        if params.get("name") == RESOLVE_TOOL:
            return "perm:" + str(arguments.get("request_id", "")), "mcp"
    return None


class KandevProxy:
    def __init__(self, upstream: str) -> None:
        self.upstream = upstream.rstrip("/")
        self._lock = threading.Lock()
        self._holds: dict[str, _Hold] = {}
        self._faults: dict[str, tuple[Fault, int]] = {}  # pending_id -> (fault, calls left)
        self._path_faults: list[PathFault] = []
        self.faulted: list[str] = []  # paths answered by a path fault instead of Kandev
        self._tool_faults: list[ToolFault] = []
        #: (tool, arguments) of each call a tool fault answered instead of Kandev.
        self.tool_faulted: list[tuple[str, dict[str, Any]]] = []
        self._slow: tuple[Callable[[bytes], bool], float] | None = None
        self._slow_paths: list[tuple[re.Pattern[str], float]] = []
        self._healed = threading.Event()
        self.slowed: list[str] = []  # paths a slow_path held
        self.slowed_answered = 0  # of them, answered (Kandev's reply passed on)
        self.tunnels = 0  # WebSocket connections tunnelled to Kandev
        #: Every request forwarded (or answered in Kandev's place), by name, in order.
        self.requests: list[str] = []
        self._drop_hints: Callable[[dict[str, Any]], bool] | None = None
        self.hints_dropped = 0
        self._frozen: list[re.Pattern[str]] = []
        self._last_get: dict[str, tuple[int, tuple[tuple[str, str], ...], bytes]] = {}
        self.frozen = 0  # GETs answered from an earlier reply
        self.calls: list[AnswerCall] = []
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
        self._healed.set()  # nothing still held waits out its delay
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

    def wait_held(self, pending_id: str, timeout: float = 10.0) -> None:
        """Wait until the held answer call of ``pending_id`` arrived at the proxy."""
        with self._lock:
            hold = self._holds[pending_id]
        if not hold.arrived.wait(timeout):
            raise TimeoutError(f"no answer call for {pending_id} reached the proxy")

    def slow(self, matches: Callable[[bytes], bool], delay_s: float) -> None:
        """Requests whose body ``matches`` wait ``delay_s`` seconds before being forwarded."""
        self._slow = (matches, delay_s)

    def fail_path(
        self,
        pattern: str,
        status: int,
        body: bytes = b'{"error":"injected"}',
        content_type: str = "application/json",
    ) -> None:
        """Answer every request whose path matches ``pattern`` (a regex) with this reply."""
        with self._lock:
            self._path_faults.append(PathFault(re.compile(pattern), status, body, content_type))

    def slow_path(self, pattern: str, delay_s: float) -> None:
        """Hold every request whose path matches ``pattern`` (a regex) ``delay_s`` seconds, or
        until ``heal()``, before forwarding it (a Kandev slow on that route only)."""
        with self._lock:
            self._healed.clear()
            self._slow_paths.append((re.compile(pattern), delay_s))

    def fail_tool(
        self,
        name: str,
        *,
        text: str = "",
        is_error: bool = False,
        raw: bytes | None = None,
        when: Callable[[dict[str, Any]], bool] = lambda arguments: True,
    ) -> None:
        """Answer the calls of MCP tool ``name`` (those ``when`` accepts) in Kandev's place."""
        with self._lock:
            self._tool_faults.append(ToolFault(name, when, text, is_error, raw))

    def drop_hints(self, matches: Callable[[dict[str, Any]], bool] = lambda message: True) -> None:
        """Drop the WebSocket notifications Kandev sends (those whose decoded JSON ``matches``)
        until ``heal()``: hints lost while the link stays up."""
        with self._lock:
            self._drop_hints = matches

    def freeze_path(self, pattern: str) -> None:
        """Answer every GET whose path matches ``pattern`` (a regex) with Kandev's reply to
        the last such GET before it, until ``heal()`` (forwarded when there was none)."""
        with self._lock:
            self._frozen.append(re.compile(pattern))

    def heal(self) -> None:
        """Forward every path and every tool call again."""
        with self._lock:
            self._path_faults.clear()
            self._tool_faults.clear()
            self._slow_paths.clear()
            self._drop_hints = None
            self._frozen.clear()
            self._healed.set()

    def inject(self, pending_id: str, fault: Fault) -> None:
        """Apply ``fault`` to the answer calls of ``pending_id`` (see the module docstring)."""
        with self._lock:
            self._faults[pending_id] = (fault, fault.times if fault.times is not None else -1)

    def clear(self, pending_id: str) -> None:
        """Let the answer calls of ``pending_id`` through again."""
        with self._lock:
            self._faults.pop(pending_id, None)

    def _take_fault(self, pending_id: str) -> Fault | None:
        with self._lock:
            entry = self._faults.get(pending_id)
            if entry is None:
                return None
            fault, left = entry
            if left == 1:
                del self._faults[pending_id]
            elif left > 1:
                self._faults[pending_id] = (fault, left - 1)
            return fault

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
                if self.headers.get("Upgrade", "").lower() == "websocket":
                    proxy._tunnel(self)
                else:
                    proxy._forward(self)

            def do_POST(self) -> None:
                proxy._forward(self)

            def do_DELETE(self) -> None:
                proxy._forward(self)

            def do_PUT(self) -> None:
                proxy._forward(self)

            def do_PATCH(self) -> None:
                proxy._forward(self)

            def log_message(self, format: str, *args: object) -> None:
                pass

        return Handler

    def _tunnel(self, req: BaseHTTPRequestHandler) -> None:
        """Pass a WebSocket upgrade and everything after it through to Kandev, byte for byte."""
        host, port = httpx.URL(self.upstream).host, httpx.URL(self.upstream).port
        try:
            upstream = socket.create_connection((host, port or 80), timeout=10)
        except OSError:
            req.send_error(502, "Kandev unreachable through the test proxy")
            return
        upstream.settimeout(None)
        with self._lock:
            self.tunnels += 1
        kept = [(k, v) for k, v in req.headers.items() if k.lower() != "sec-websocket-extensions"]
        head = req.requestline + "\r\n" + "".join(f"{k}: {v}\r\n" for k, v in kept)
        client = req.connection
        req.close_connection = True

        def pump(source: socket.socket, sink: socket.socket) -> None:
            with contextlib.suppress(OSError):
                while data := source.recv(65536):
                    sink.sendall(data)
            with contextlib.suppress(OSError):
                sink.shutdown(socket.SHUT_WR)

        def pump_frames(source: socket.socket, sink: socket.socket) -> None:
            """Kandev → the bot: its 101 reply, then whole frames, some hints dropped."""
            buffer, head_done = b"", False
            with contextlib.suppress(OSError):
                while data := source.recv(65536):
                    buffer += data
                    out = b""
                    if not head_done:
                        end = buffer.find(b"\r\n\r\n")
                        if end < 0:
                            continue
                        out, buffer, head_done = buffer[: end + 4], buffer[end + 4 :], True
                    while (size := _frame_size(buffer)) is not None:
                        frame, buffer = buffer[:size], buffer[size:]
                        if not self._drops(frame):
                            out += frame
                    if out:
                        sink.sendall(out)
            with contextlib.suppress(OSError):
                sink.shutdown(socket.SHUT_WR)

        with upstream:
            upstream.sendall((head + "\r\n").encode("latin-1"))
            back = threading.Thread(target=pump_frames, args=(upstream, client), daemon=True)
            back.start()
            pump(client, upstream)
            back.join()

    def _drops(self, frame: bytes) -> bool:
        """Whether a frame from Kandev is a notification to drop (``drop_hints``)."""
        with self._lock:
            matches = self._drop_hints
        if matches is None or frame[0] != 0x81:  # only whole, unfragmented text frames
            return False
        try:
            message = json.loads(_frame_payload(frame))
        except ValueError:
            return False
        if not isinstance(message, dict) or message.get("type") != "notification":
            return False
        if not matches(message):
            return False
        with self._lock:
            self.hints_dropped += 1
        return True

    def _name(self, req: BaseHTTPRequestHandler, body: bytes) -> str:
        path = req.path.split("?", 1)[0]
        if path == "/mcp" and body:
            with contextlib.suppress(ValueError, AttributeError):
                message = json.loads(body)
                if message.get("method") == "tools/call":
                    return f"mcp {(message.get('params') or {}).get('name', '')}"
        return f"{req.command} {path}"

    def _frozen_reply(
        self, req: BaseHTTPRequestHandler
    ) -> tuple[int, tuple[tuple[str, str], ...], bytes] | None:
        if req.command != "GET":
            return None
        with self._lock:
            path = req.path.split("?", 1)[0]
            if not any(p.search(path) for p in self._frozen):
                return None
            reply = self._last_get.get(req.path)
            if reply is not None:
                self.frozen += 1
            return reply

    def _slow_delay(self, path: str) -> float | None:
        with self._lock:
            delay = next((d for p, d in self._slow_paths if p.search(path)), None)
            if delay is not None:
                self.slowed.append(path)
            return delay

    def _path_fault(self, path: str) -> PathFault | None:
        with self._lock:
            fault = next((f for f in self._path_faults if f.pattern.search(path)), None)
            if fault is not None:
                self.faulted.append(path)
            return fault

    def _tool_fault(self, path: str, body: bytes) -> bytes | None:
        """The body to answer a faulted MCP tool call with (None: not faulted)."""
        if path != "/mcp" or not body:
            return None
        try:
            message = json.loads(body)
        except ValueError:
            return None
        params = message.get("params") if isinstance(message, dict) else None
        if not isinstance(params, dict) or message.get("method") != "tools/call":
            return None
        arguments = params.get("arguments") or {}
        with self._lock:
            fault = next(
                (
                    f
                    for f in self._tool_faults
                    if f.name == params.get("name") and f.when(arguments)
                ),
                None,
            )
            if fault is None:
                return None
            self.tool_faulted.append((fault.name, dict(arguments)))
        return fault.body(message.get("id"))

    def _forward(self, req: BaseHTTPRequestHandler) -> None:
        length = int(req.headers.get("Content-Length") or 0)
        body = req.rfile.read(length) if length else b""
        name = self._name(req, body)
        with self._lock:
            self.requests.append(name)
        frozen = self._frozen_reply(req)
        if frozen is not None:
            self._reply(req, *frozen)
            return
        path_fault = self._path_fault(req.path.split("?", 1)[0])
        if path_fault is not None:
            headers = (("Content-Type", path_fault.content_type),)
            self._reply(req, path_fault.status, headers, path_fault.body)
            return
        tool_reply = self._tool_fault(req.path.split("?", 1)[0], body)
        if tool_reply is not None:
            self._reply(req, 200, (("Content-Type", "application/json"),), tool_reply)
            return
        if self._slow is not None and self._slow[0](body):
            time.sleep(self._slow[1])
        slowed = self._slow_delay(req.path.split("?", 1)[0])
        if slowed is not None:
            self._healed.wait(slowed)
        target = answer_target(req.path, body)
        bearer = _bearer(req.headers.get("Authorization"))
        if target is not None and not self._pass_hold(target[0]):
            self._record(target, body, delivered=False, bearer=bearer)
            req.close_connection = True
            return  # dropped: the caller sees the connection cut, Kandev sees nothing
        fault = self._take_fault(target[0]) if target is not None else None
        if target is not None and fault is not None and not fault.forward:
            self._record(target, body, delivered=False, bearer=bearer)
            self._reply(req, fault.status or 502, fault.headers, fault.body)
            return
        headers = {k: v for k, v in req.headers.items() if k.lower() not in _HOP_BY_HOP}
        try:
            upstream = self._client.request(req.command, req.path, content=body, headers=headers)
        except httpx.HTTPError:
            req.send_error(502, "Kandev unreachable through the test proxy")
            return
        if target is not None:
            self._record(target, body, delivered=True, bearer=bearer)
        if fault is not None:
            time.sleep(fault.delay)
            if fault.cut:
                req.close_connection = True
                return  # Kandev got it; the caller sees the connection closed, no reply
            if fault.status is not None:
                self._reply(req, fault.status, fault.headers, fault.body)
                return
        kept = tuple(
            (key, value)
            for key, value in upstream.headers.items()
            if key.lower() not in _HOP_BY_HOP and key.lower() != "content-encoding"
        )
        if slowed is not None:
            with self._lock:
                self.slowed_answered += 1
        if req.command == "GET":
            with self._lock:
                self._last_get[req.path] = (upstream.status_code, kept, upstream.content)
        self._reply(req, upstream.status_code, kept, upstream.content)

    @staticmethod
    def _reply(
        req: BaseHTTPRequestHandler,
        status: int,
        headers: tuple[tuple[str, str], ...],
        content: bytes,
    ) -> None:
        with contextlib.suppress(OSError):  # the caller may be gone (killed, or timed out)
            req.send_response(status)
            for key, value in headers:
                req.send_header(key, value)
            req.send_header("Content-Length", str(len(content)))
            req.end_headers()
            req.wfile.write(content)

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

    def _record(
        self, target: tuple[str, str], body: bytes, *, delivered: bool, bearer: str = ""
    ) -> None:
        try:
            parsed = json.loads(body) if body else {}
        except ValueError:
            parsed = {"raw": body.decode("latin-1")}
        with self._lock:
            self.calls.append(AnswerCall(target[0], target[1], parsed, delivered, bearer))


def _frame_size(buffer: bytes) -> int | None:
    """The size of the WebSocket frame at the start of ``buffer`` (None: not all there yet)."""
    if len(buffer) < 2:
        return None
    length, offset = buffer[1] & 0x7F, 2
    if length == 126:
        if len(buffer) < 4:
            return None
        length, offset = int.from_bytes(buffer[2:4], "big"), 4
    elif length == 127:
        if len(buffer) < 10:
            return None
        length, offset = int.from_bytes(buffer[2:10], "big"), 10
    if buffer[1] & 0x80:
        offset += 4  # a masking key (never from a server)
    size = offset + length
    return size if len(buffer) >= size else None


def _frame_payload(frame: bytes) -> bytes:
    length, offset = frame[1] & 0x7F, 2
    if length == 126:
        offset = 4
    elif length == 127:
        offset = 10
    if frame[1] & 0x80:
        key, offset = frame[offset : offset + 4], offset + 4
        return bytes(b ^ key[i % 4] for i, b in enumerate(frame[offset:]))
    return frame[offset:]
