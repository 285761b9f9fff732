"""A local Kandev ``/ws`` (a real websockets server on 127.0.0.1) for the hints listener tests."""

from __future__ import annotations

import contextlib
import json
import socket
import threading
from collections.abc import Callable

from websockets.sync.server import ServerConnection, serve


class FakeWs:
    """A /ws that answers user.subscribe and then runs one script per connection."""

    def __init__(self, scripts: list[Callable[[ServerConnection], None]], status: int = 101):
        self.scripts = scripts
        self.status = status
        self.connections: list[dict] = []
        self.server = serve(self._handle, "127.0.0.1", 0, process_request=self._check)
        self.port = self.server.socket.getsockname()[1]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def _check(self, connection, request):
        self.connections.append(
            {"path": request.path, "authorization": request.headers.get("Authorization")}
        )
        if self.status != 101:
            return connection.respond(self.status, "nope\n")
        return None

    def _handle(self, ws: ServerConnection) -> None:
        request = json.loads(ws.recv())
        assert request["action"] == "user.subscribe" and request["type"] == "request"
        ws.send(json.dumps({"id": request["id"], "type": "response", "payload": {"success": True}}))
        script = self.scripts.pop(0) if self.scripts else (lambda ws: ws.recv())
        script(ws)

    def close(self):
        self.server.shutdown()


class WsSplit:
    """One loopback port in front of two: connections whose first request is ``GET /ws`` go to
    ``ws_port`` (a :class:`FakeWs`), every other connection to ``http_port`` (a real Kandev):
    the bot, pointed at it, talks to the real Kandev while its push hints meet a scripted /ws."""

    def __init__(self, ws_port: int, http_port: int) -> None:
        self._ports = (ws_port, http_port)
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port = self._listener.getsockname()[1]
        self._open: list[socket.socket] = []
        self._lock = threading.Lock()
        threading.Thread(target=self._accept, daemon=True).start()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return  # closed
            threading.Thread(target=self._splice, args=(client,), daemon=True).start()

    def _splice(self, client: socket.socket) -> None:
        head = b""
        while b"\r\n" not in head:
            chunk = client.recv(4096)
            if not chunk:
                client.close()
                return
            head += chunk
        path = head.split(b" ", 2)[1] if head.count(b" ") >= 2 else b""
        port = self._ports[0] if path.split(b"?")[0] == b"/ws" else self._ports[1]
        try:
            upstream = socket.create_connection(("127.0.0.1", port), timeout=5)
        except OSError:
            client.close()
            return
        upstream.settimeout(None)
        with self._lock:
            self._open += [client, upstream]
        upstream.sendall(head)
        threading.Thread(target=_pipe, args=(upstream, client), daemon=True).start()
        _pipe(client, upstream)

    def close(self) -> None:
        self._listener.close()
        with self._lock:
            sockets, self._open = self._open, []
        for sock in sockets:
            with contextlib.suppress(OSError):
                sock.close()


def _pipe(source: socket.socket, sink: socket.socket) -> None:
    """Copy ``source`` to ``sink`` until either ends, then end both."""
    try:
        while chunk := source.recv(65536):
            sink.sendall(chunk)
    except OSError:
        pass
    for sock in (source, sink):
        with contextlib.suppress(OSError):
            sock.shutdown(socket.SHUT_RDWR)
