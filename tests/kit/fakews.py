"""A local Kandev ``/ws`` (a real websockets server on 127.0.0.1) for the hints listener tests."""

from __future__ import annotations

import json
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
