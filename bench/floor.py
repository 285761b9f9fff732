"""The floor: a bare WebSocket client of Kandev that only notes when each new bundle is pushed.

It subscribes like the bot does (``user.subscribe``) and records, per ``pending_id``, the
wall-clock time its ``session.clarification_requested`` notification arrived. Nothing can show
a card sooner than that.
"""

from __future__ import annotations

import json
import threading
import time

from websockets.exceptions import ConnectionClosed
from websockets.sync.client import ClientConnection, connect

from bot.kandev.hints import CLARIFICATION_REQUESTED, ws_url


class FloorClient:
    def __init__(self, base_url: str, token: str | None = None) -> None:
        self._url = ws_url(base_url)
        self._headers = {"Authorization": f"Bearer {token}"} if token else {}
        self._ws: ClientConnection | None = None
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()
        self.arrivals: dict[str, float] = {}

    def start(self, timeout: float = 10.0) -> FloorClient:
        ws = connect(self._url, additional_headers=self._headers, open_timeout=timeout)
        ws.send(json.dumps({"id": "floor-1", "type": "request", "action": "user.subscribe"}))
        deadline = time.monotonic() + timeout
        while True:  # wait for the subscription's response
            message = json.loads(ws.recv(timeout=max(deadline - time.monotonic(), 0.01)))
            if message.get("type") == "response" and message.get("id") == "floor-1":
                break
        self._ws = ws
        self._thread = threading.Thread(target=self._listen, name="floor-ws", daemon=True)
        self._thread.start()
        return self

    def _listen(self) -> None:
        assert self._ws is not None
        while True:
            try:
                raw = self._ws.recv()
            except ConnectionClosed:
                return
            at = time.time()
            message = json.loads(raw)
            if message.get("action") != CLARIFICATION_REQUESTED:
                continue
            payload = message.get("payload") or {}
            pending_id = payload.get("occurrence_id") or message.get("id")
            if pending_id:
                with self._lock:
                    self.arrivals.setdefault(pending_id, at)

    def arrival(self, pending_id: str) -> float | None:
        with self._lock:
            return self.arrivals.get(pending_id)

    def stop(self) -> None:
        if self._ws is not None:
            self._ws.close()
        if self._thread is not None:
            self._thread.join(5)
