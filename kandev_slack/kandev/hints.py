"""Push hints from Kandev's WebSocket ``/ws``, on a background thread, reconnecting forever.

Hints only make discovery faster; the paged list tool stays the source of truth. So:

- ``session.clarification_requested`` (after ``user.subscribe``) → ``on_new_pending(hint)``, a
  :class:`NewPending` (the bundle's pending id, and its task and session when Kandev says);
- ``session.pending_action_changed`` with ``pending_action: null`` → ``on_resolved(hint)``, a
  :class:`Resolved` naming the session (some bundle of it was resolved or ended: read that
  session's conversation to learn which; an empty session id: poll);
- ``session.pending_action_changed`` with ``pending_action: "permission"`` (sent to every client,
  no subscription needed) → ``on_permission(hint)`` when given, a :class:`PermissionWaiting`
  naming the task and session (list that task's permissions to learn which request);
- ``task.status_summary.updated`` (sent to every reader of the task's workspace, also with auth
  on, where ``session.pending_action_changed`` reaches only the workspace's owner:
  kandev-identity.md §6) → ``on_status(hint)`` when given, a :class:`TaskStatus` naming the task,
  its primary session and its pending action (``permission``, ``clarification`` or none). It is
  sent on every change of the task's sessions: a new request, a resolution, a cancelled turn,
  an agent giving up;
- ``on_connected()`` after every (re)connect, once the subscription is in place: notifications
  are not replayed, so the caller polls then; ``on_disconnected()`` when that connection is
  lost (hints may be missed until the next ``on_connected``).

Callbacks run on the hints thread: keep them short (set an event, enqueue work).
"""

from __future__ import annotations

import itertools
import json
import logging
import random
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from websockets.exceptions import ConnectionClosed, InvalidStatus, WebSocketException
from websockets.sync.client import ClientConnection, connect

from kandev_slack.kandev.http import USER_AGENT, auth_headers

log = logging.getLogger(__name__)

CLARIFICATION_REQUESTED = "session.clarification_requested"
PENDING_ACTION_CHANGED = "session.pending_action_changed"
STATUS_SUMMARY_UPDATED = "task.status_summary.updated"
MAX_MESSAGE_BYTES = 32 * 1024 * 1024


@dataclass(frozen=True)
class NewPending:
    pending_id: str
    task_id: str = ""
    session_id: str = ""


@dataclass(frozen=True)
class Resolved:
    session_id: str = ""


@dataclass(frozen=True)
class PermissionWaiting:
    task_id: str
    session_id: str = ""
    workspace_id: str = ""


@dataclass(frozen=True)
class TaskStatus:
    """A task's status summary changed: its primary session's id and its pending action
    (``permission``, ``clarification``; "" when none)."""

    task_id: str
    session_id: str = ""
    workspace_id: str = ""
    pending_action: str = ""


Hint = NewPending | Resolved | PermissionWaiting | TaskStatus


def parse_hint(message: Any) -> Hint | None:
    """The hint carried by one decoded WebSocket message, if any."""
    if not isinstance(message, dict) or message.get("type") != "notification":
        return None
    action = message.get("action")
    payload = message.get("payload")
    payload = payload if isinstance(payload, dict) else {}
    if action == CLARIFICATION_REQUESTED:
        pending_id = payload.get("occurrence_id") or message.get("id")
        if not isinstance(pending_id, str) or not pending_id:
            return None
        task_id, session_id = payload.get("task_id"), payload.get("session_id")
        return NewPending(
            pending_id,
            task_id if isinstance(task_id, str) else "",
            session_id if isinstance(session_id, str) else "",
        )
    if action == STATUS_SUMMARY_UPDATED:
        return _task_status(payload)
    if action != PENDING_ACTION_CHANGED or "pending_action" not in payload:
        return None
    if payload["pending_action"] is None:
        return Resolved(_text(payload.get("session_id")))
    if payload["pending_action"] == "permission" and _text(payload.get("task_id")):
        return PermissionWaiting(
            _text(payload.get("task_id")),
            _text(payload.get("session_id")),
            _text(payload.get("workspace_id")),
        )
    return None


def _task_status(payload: dict[str, Any]) -> TaskStatus | None:
    task_id = _text(payload.get("task_id"))
    if not task_id:
        return None
    summary = payload.get("status_summary")
    summary = summary if isinstance(summary, dict) else {}
    primary = summary.get("primary_session")
    primary = primary if isinstance(primary, dict) else {}
    return TaskStatus(
        task_id,
        _text(primary.get("id")),
        _text(payload.get("workspace_id")),
        _text(summary.get("pending_action")),
    )


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


def ws_url(base_url: str) -> str:
    """``http(s)://host[:port][/prefix]`` → ``ws(s)://host[:port][/prefix]/ws``."""
    parts = urlsplit(base_url.rstrip("/"))
    scheme = {"http": "ws", "https": "wss"}.get(parts.scheme, parts.scheme)
    return urlunsplit((scheme, parts.netloc, parts.path + "/ws", "", ""))


class KandevHints:
    """Listens to ``/ws`` on its own thread; ``start()`` once, ``stop()`` to end."""

    def __init__(
        self,
        base_url: str,
        token: str | None,
        on_new_pending: Callable[[NewPending], None],
        on_resolved: Callable[[Resolved], None],
        on_connected: Callable[[], None],
        *,
        backoff_initial: float = 0.5,
        backoff_max: float = 30.0,
        stable_after: float = 30.0,
        open_timeout: float = 10.0,
        subscribe_timeout: float = 5.0,
        on_permission: Callable[[PermissionWaiting], None] | None = None,
        on_status: Callable[[TaskStatus], None] | None = None,
        on_disconnected: Callable[[], None] | None = None,
    ):
        self._url = ws_url(base_url)
        self._headers = {"User-Agent": USER_AGENT, **auth_headers(token)}
        self._on_new_pending = on_new_pending
        self._on_resolved = on_resolved
        self._on_connected = on_connected
        self._on_permission = on_permission
        self._on_status = on_status
        self._on_disconnected = on_disconnected
        self._announced = False
        self._backoff_initial = backoff_initial
        self._backoff_max = backoff_max
        self._stable_after = stable_after
        self._open_timeout = open_timeout
        self._subscribe_timeout = subscribe_timeout
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._ws: ClientConnection | None = None
        self._thread: threading.Thread | None = None
        self._request_ids = itertools.count(1)
        self.connections = 0
        """How many times a connection was established and subscribed (for health/tests)."""

    @property
    def connected(self) -> bool:
        return self._ws is not None

    def start(self) -> None:
        if self._thread is not None:
            raise RuntimeError("KandevHints already started")
        self._thread = threading.Thread(target=self._run, name="kandev-hints", daemon=True)
        self._thread.start()

    def stop(self, timeout: float = 5.0) -> None:
        self._stop.set()
        with self._lock:
            ws = self._ws
        if ws is not None:
            ws.close()
        if self._thread is not None:
            self._thread.join(timeout)

    def __enter__(self) -> KandevHints:
        self.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    # ---- the thread -------------------------------------------------------------------

    def _run(self) -> None:
        delay = self._backoff_initial
        while not self._stop.is_set():
            try:
                with connect(
                    self._url,
                    additional_headers=self._headers,
                    open_timeout=self._open_timeout,
                    max_size=MAX_MESSAGE_BYTES,
                    user_agent_header=None,
                ) as ws:
                    with self._lock:
                        self._ws = ws
                    if self._stop.is_set():
                        break
                    opened = time.monotonic()
                    # A link that is dropped right after subscribing is no proof that Kandev
                    # is back: only one that stayed up resets the backoff (no reconnect storm).
                    if self._listen(ws) and time.monotonic() - opened >= self._stable_after:
                        delay = self._backoff_initial
            except InvalidStatus as exc:
                status = exc.response.status_code
                if status == 401:
                    log.error("Kandev /ws refused the connection: KANDEV_TOKEN missing or invalid")
                else:
                    log.warning("Kandev /ws refused the connection: HTTP %s", status)
            except (OSError, TimeoutError, WebSocketException) as exc:
                if not self._stop.is_set():
                    log.warning("Kandev /ws connection failed: %s", exc)
            finally:
                with self._lock:
                    self._ws = None
                if self._announced:
                    self._announced = False
                    if self._on_disconnected is not None:
                        self._call(self._on_disconnected)
            if self._stop.wait(delay * random.uniform(0.8, 1.2)):
                break
            delay = min(delay * 2, self._backoff_max)

    def _listen(self, ws: ClientConnection) -> bool:
        """Subscribe and dispatch until the connection closes; True if it got subscribed."""
        request_id = f"kandev-slack-{next(self._request_ids)}"
        ws.send(
            json.dumps(
                {"id": request_id, "type": "request", "action": "user.subscribe", "payload": {}}
            )
        )
        subscribed = False
        while True:
            try:
                raw = ws.recv(timeout=None if subscribed else self._subscribe_timeout)
            except ConnectionClosed as exc:
                if not self._stop.is_set():
                    log.warning("Kandev /ws connection closed: %s", exc)
                return subscribed
            except TimeoutError:
                log.warning("Kandev /ws: no answer to user.subscribe; continuing without it")
                subscribed = self._announce()
                continue
            if subscribed and not _may_hint(raw):
                continue  # none of the actions a hint comes from: never decoded
            message = _decode(raw)
            if not subscribed and _is_response(message, request_id):
                if not (message.get("payload") or {}).get("success", True):
                    log.warning("Kandev /ws: user.subscribe refused: %s", message.get("payload"))
                subscribed = self._announce()
                continue
            self._dispatch(message)

    def _announce(self) -> bool:
        self.connections += 1
        self._announced = True
        self._call(self._on_connected)
        return True

    def _dispatch(self, message: Any) -> None:
        hint = parse_hint(message)
        if isinstance(hint, NewPending):
            self._call(self._on_new_pending, hint)
        elif isinstance(hint, Resolved):
            self._call(self._on_resolved, hint)
        elif isinstance(hint, PermissionWaiting) and self._on_permission is not None:
            self._call(self._on_permission, hint)
        elif isinstance(hint, TaskStatus) and self._on_status is not None:
            self._call(self._on_status, hint)

    @staticmethod
    def _call(callback: Callable[..., None], *args: Any) -> None:
        try:
            callback(*args)
        except Exception:
            log.exception("Kandev hints callback %r failed", callback)


#: The actions a hint comes from (:func:`parse_hint`), as they appear in a raw message.
_HINT_ACTIONS = (CLARIFICATION_REQUESTED, PENDING_ACTION_CHANGED, STATUS_SUMMARY_UPDATED)
_HINT_ACTIONS_BYTES = tuple(action.encode() for action in _HINT_ACTIONS)


def _may_hint(raw: str | bytes) -> bool:
    """Whether a raw message names an action a hint comes from. Kandev pushes every change
    of every session to every subscriber (its messages, their streamed updates, task edits):
    while 150 clicks were answered, 57 % of the messages and 87 % of the bytes carried no
    hint, and decoding them was most of the listener's CPU. A message that names none of the
    actions cannot be a hint (Kandev's JSON writes an action's ASCII as it is)."""
    if isinstance(raw, bytes):
        return any(action in raw for action in _HINT_ACTIONS_BYTES)
    return any(action in raw for action in _HINT_ACTIONS)


def _decode(raw: str | bytes) -> Any:
    try:
        return json.loads(raw)
    except ValueError:
        return None


def _is_response(message: Any, request_id: str) -> bool:
    return (
        isinstance(message, dict)
        and message.get("type") == "response"
        and message.get("id") == request_id
    )
