"""The floors: bare WebSocket clients of Kandev that only note when something new is pushed.

``FloorClient`` subscribes like the bot does (``user.subscribe``) and records, per
``pending_id``, the wall-clock time its ``session.clarification_requested`` notification
arrived. Nothing can show a card sooner than that. ``PendingActionFloor`` does the least a
client can to learn a tool-permission request (no push names one): on
``session.pending_action_changed`` → ``permission`` it lists that task's requests over its own
warm MCP session and records when each was first listed.
"""

from __future__ import annotations

import json
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from websockets.exceptions import ConnectionClosed
from websockets.sync.client import ClientConnection, connect

from kandev_slack.kandev.hints import CLARIFICATION_REQUESTED, PENDING_ACTION_CHANGED, ws_url
from tests.kit.harness import LIST_TOOL, McpSession


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
            self._note(json.loads(raw), time.time())

    def _note(self, message: dict[str, Any], at: float) -> None:
        if message.get("action") != CLARIFICATION_REQUESTED:
            return
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


class PendingActionFloor(FloorClient):
    """``arrivals`` here are keyed by task; ``listed_at`` by request id."""

    def __init__(self, base_url: str, token: str | None = None) -> None:
        super().__init__(base_url, token)
        self._mcp = McpSession(base_url, token)
        self._pool = ThreadPoolExecutor(2, thread_name_prefix="floor-list")
        self.listed_at: dict[str, float] = {}
        self._requests: dict[str, dict[str, Any]] = {}  # the first listed request per task

    def _note(self, message: dict[str, Any], at: float) -> None:
        payload = message.get("payload") or {}
        if message.get("action") != PENDING_ACTION_CHANGED:
            return
        task_id = payload.get("task_id")
        if payload.get("pending_action") != "permission" or not task_id:
            return
        with self._lock:
            self.arrivals.setdefault(task_id, at)
        self._pool.submit(self._list, task_id)

    def _list(self, task_id: str, patience: float = 5.0) -> None:
        deadline = time.monotonic() + patience
        while True:
            try:
                listed = self._mcp.call_tool(LIST_TOOL, {"task_id": task_id})["permissions"]
            except Exception:  # Kandev answers INTERNAL_ERROR while an agent starts: again
                listed = []
            if listed or time.monotonic() > deadline:
                break
            time.sleep(0.05)
        at = time.time()
        with self._lock:
            for request in listed:
                self.listed_at.setdefault(request["request_id"], at)
                self._requests.setdefault(task_id, request)

    def listed(self, task_id: str) -> dict[str, Any] | None:
        with self._lock:
            return self._requests.get(task_id)

    def stop(self) -> None:
        super().stop()
        self._pool.shutdown(wait=True)
        self._mcp.close()
