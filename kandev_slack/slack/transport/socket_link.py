"""Slack's Socket Mode links, kept up under faults (a client of our own on ``websockets``).

slack_sdk's built-in client (and its ``websocket-client`` one) were measured under faults
(bench/socket_clients.py): a cut link noticed after ~48 s with a core spinning, a silent one
after ~51 s, an envelope over 1 MB or after a non-UTF-8 frame lost, a link that never says
``hello`` kept forever, and acks held up while a refresh's ``apps.connections.open`` runs. Here:

- every link is read by a thread of its own, which only parses and hands envelopes to a pool;
  acks go back on the link the envelope came on (each link's sends are locked by websockets);
- one manager thread makes links: ``apps.connections.open``, the WebSocket handshake, ``hello``
  within :data:`HELLO_TIMEOUT_S` (else a new URL). A link lost (a cut, a close, keepalive pings
  unanswered for :data:`PING_TIMEOUT_S`) is replaced at once; links that die young back off;
- a ``disconnect`` (``refresh_requested``, ``warning``) makes the new link beside the old one,
  which is read on until Slack closes it (at most :data:`OVERLAP_S` after the new hello);
- only a ``wss://`` URL is followed (a plain ``ws://`` one only to SLACK_API_URL's own host
  when SLACK_API_URL is itself plain ``http://``, as a local fake Slack is);
- frames up to :data:`MAX_FRAME_BYTES` are read (a bigger one closes the link, which is
  replaced; it is never dispatched); a frame that is not JSON text is logged and skipped;
- Health's ``slack`` component is there exactly while no greeted link is open;
- a definite refusal of the app token (:data:`REFUSALS`) before the first link stops serving
  (:class:`SocketModeRefused`); any other failure is retried with backoff.
"""

from __future__ import annotations

import contextlib
import json
import logging
import random
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any
from urllib.parse import urlsplit

from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError
from slack_sdk.socket_mode.request import SocketModeRequest
from slack_sdk.socket_mode.response import SocketModeResponse
from websockets.exceptions import ConnectionClosed
from websockets.sync.client import ClientConnection, connect

from kandev_slack.ops.backoff import doubling, wait_for
from kandev_slack.ops.health import Health

#: A link that has not said ``hello`` this long after its handshake is given up for a new URL.
HELLO_TIMEOUT_S = 10.0
#: Keepalive: a ping every PING_INTERVAL_S; no pong within PING_TIMEOUT_S ends the link (a
#: silent link is declared dead 5–10 s after it went silent).
PING_INTERVAL_S = 5.0
PING_TIMEOUT_S = 5.0
#: After a refresh, how long the old link is read beside the new one at most.
OVERLAP_S = 10.0
#: A link that stayed up this long resets the backoff of the links that die young.
STABLE_S = 30.0
BACKOFF_MAX_S = 30.0
#: apps.connections.open's errors that no retry can mend.
REFUSALS = frozenset(
    {"invalid_auth", "not_authed", "token_revoked", "account_inactive", "not_allowed_token_type"}
)
COMPONENT = "slack"
#: The largest frame (message) read: 16 MiB. Slack documents no envelope limit; its largest
#: carry a message or a modal and its state, bounded by Block Kit's limits (40,000 characters
#: of text, 50 blocks of ≤3,000 characters a message; 100 blocks a modal, inputs of ≤3,000
#: characters): about 1–2 MB even JSON-escaped (a 2 MB envelope is tested). 16 MiB is 8× that
#: and bounds what one frame can make the bot allocate (websockets closes the link with 1009).
MAX_FRAME_BYTES = 16 * 1024 * 1024

Listener = Callable[[Any, SocketModeRequest], None]


class SocketModeRefused(Exception):
    """Slack refused the app token (``error`` is Slack's error code)."""

    def __init__(self, error: str) -> None:
        super().__init__(error)
        self.error = error


#: 0.5 s after the first failed or short-lived link, doubling up to BACKOFF_MAX_S.
LINK_WAIT = doubling(0.5, BACKOFF_MAX_S)


def backoff_s(failures: int) -> float:
    """The wait before the next link after ``failures`` failed or short-lived ones (±20 %, so
    that replicas cut off together do not all come back at the same moment)."""
    if failures <= 0:
        return 0.0
    return wait_for(LINK_WAIT, failures) * random.uniform(0.8, 1.2)


def link_url_problem(url: str, api_url: str) -> str | None:
    """Why the bot must not follow ``url`` (apps.connections.open's answer), else None: only
    ``wss://``; a plain ``ws://`` only to ``api_url``'s own host when ``api_url`` is itself
    plain ``http://`` (a local fake Slack). Never says the URL (its ticket is a credential)."""
    try:
        link, api = urlsplit(url), urlsplit(api_url)
        host, api_host = link.hostname, api.hostname
    except ValueError:
        return "not a URL"
    if not host:
        return "no host"
    if link.scheme == "wss":
        return None
    if link.scheme != "ws":
        return f"{link.scheme or 'no'} scheme, not wss://"
    if api.scheme != "http":
        return "plain ws:// while SLACK_API_URL is https://"
    if host != api_host:
        return "plain ws:// to a host other than SLACK_API_URL's"
    return None


def _error_name(error: Exception) -> str:
    """Slack's error code of a refused call (``ratelimited``, ``internal_error``…), else the
    exception's type."""
    if isinstance(error, SlackApiError):
        code = error.response.get("error") if error.response is not None else None
        if isinstance(code, str) and code.isidentifier():
            return code
    return type(error).__name__


def _retry_after_s(error: Exception) -> float:
    """The Retry-After of a 429 answer (0 for any other failure)."""
    response = error.response if isinstance(error, SlackApiError) else None
    if response is None or response.status_code != 429:
        return 0.0
    value = str(response.headers.get("Retry-After") or response.headers.get("retry-after") or 1)
    return min(float(value), BACKOFF_MAX_S) if value.isdigit() else 1.0


class _Link:
    """One WebSocket link and what it said."""

    def __init__(self, conn: ClientConnection) -> None:
        self.conn = conn
        self.hello = threading.Event()
        self.retiring = False
        self.done = threading.Event()
        self.greeted_at: float | None = None

    def send(self, text: str) -> bool:
        try:
            self.conn.send(text)
        except (ConnectionClosed, OSError, RuntimeError):
            return False
        return True

    def close(self) -> None:
        with contextlib.suppress(Exception):  # closing a broken link: nothing more to do
            self.conn.close()


class _Reply:
    """What a listener acks through: the link its envelope came on, else the current one."""

    def __init__(self, links: SocketLinks, link: _Link) -> None:
        self._links = links
        self._link = link
        self.logger = links.logger

    def send_socket_mode_response(self, response: SocketModeResponse | dict) -> None:
        body = response.to_dict() if isinstance(response, SocketModeResponse) else response
        self._links.send(json.dumps(body), prefer=self._link)


class SocketLinks:
    """Keeps Socket Mode links up and hands each envelope to ``socket_mode_request_listeners``
    (each called as ``listener(reply, request)``, ``reply.send_socket_mode_response(ack)``)."""

    def __init__(
        self,
        app_token: str,
        web_client: WebClient,
        health: Health,
        *,
        workers: int,
        logger: logging.Logger | None = None,
    ) -> None:
        self.app_token = app_token
        self.web_client = web_client
        self.health = health
        self.logger = logger or logging.getLogger("slack_sdk.socket_mode")
        self.socket_mode_request_listeners: list[Listener] = []
        self.refused: SocketModeRefused | None = None
        self.connected = threading.Event()
        self._pool = ThreadPoolExecutor(workers, thread_name_prefix="socket-envelope")
        self._stop = threading.Event()
        self._wake = threading.Event()
        self._lock = threading.Lock()
        self._links: list[_Link] = []
        self._current: _Link | None = None
        self._manager: threading.Thread | None = None
        #: Slack's Retry-After of a rate-limited apps.connections.open (0: none).
        self._retry_after_s = 0.0
        health.problem(COMPONENT, "Socket Mode is not connected yet")

    # -- lifecycle ----------------------------------------------------------------------------
    def connect(self) -> None:
        """Start keeping links up (returns at once; see :attr:`connected`, :attr:`refused`)."""
        self._manager = threading.Thread(target=self._manage, name="socket-links", daemon=True)
        self._manager.start()

    def close(self) -> None:
        self._stop.set()
        self._wake.set()
        if self._manager is not None:  # it may be inside a slow call: it stops after it
            self._manager.join(timeout=1.0)
        with self._lock:
            links, self._links = list(self._links), []
        for link in links:
            link.close()
        self._pool.shutdown(wait=False, cancel_futures=True)

    def wait(self, stop: threading.Event, timeout: float | None = None) -> bool:
        """Wait until a first link is greeted (True), or Slack refused the token, ``stop`` is
        set or ``timeout`` passed (False)."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while not self.connected.is_set():
            if self.refused is not None or stop.is_set() or self._stop.is_set():
                return False
            if deadline is not None and time.monotonic() >= deadline:
                return False
            self.connected.wait(0.1)
        return True

    # -- sending ------------------------------------------------------------------------------
    def send(self, text: str, prefer: _Link | None = None) -> None:
        """Send ``text`` on ``prefer`` if it is open, else on the newest open link."""
        if prefer is not None and not prefer.done.is_set() and prefer.send(text):
            return
        with self._lock:
            others = [link for link in reversed(self._links) if link is not prefer]
        for link in others:
            if not link.done.is_set() and link.send(text):
                return
        self.logger.warning("no open Socket Mode link to send an ack on (Slack redelivers)")

    def send_socket_mode_response(self, response: SocketModeResponse | dict) -> None:
        body = response.to_dict() if isinstance(response, SocketModeResponse) else response
        self.send(json.dumps(body))

    # -- the manager --------------------------------------------------------------------------
    def _manage(self) -> None:
        failures = 0
        while not self._stop.is_set():
            wait_s, self._retry_after_s = max(backoff_s(failures), self._retry_after_s), 0.0
            if self._stop.wait(wait_s):
                return
            link = self._new_link()
            if self.refused is not None:
                return
            if link is None:
                failures += 1
                continue
            lived = self._watch(link)
            failures = 0 if lived >= STABLE_S else failures + 1
            if link.retiring and not link.done.is_set():
                failures = 0  # a refresh: the next link at once, beside this one

    def _new_link(self) -> _Link | None:
        """A greeted link (made the current one), or None after a failure (said in health)."""
        try:
            url = self._open_url()
        except SocketModeRefused as refused:
            self._refused(refused)
            return None
        except Exception as exc:  # Slack down, slow, rate limited: try again
            self._retry_after_s = _retry_after_s(exc)
            self._down(f"apps.connections.open failed ({_error_name(exc)})", exc)
            return None
        problem = link_url_problem(url, str(self.web_client.base_url))
        if problem is not None:
            self._down(f"apps.connections.open gave a URL not followed ({problem})", None)
            return None
        try:
            conn = connect(
                url,
                open_timeout=HELLO_TIMEOUT_S,
                ping_interval=PING_INTERVAL_S,
                ping_timeout=PING_TIMEOUT_S,
                close_timeout=2,
                max_size=MAX_FRAME_BYTES,
                compression=None,
            )
        except Exception as exc:  # refused, reset, timed out
            self._down(f"the WebSocket handshake failed ({type(exc).__name__})", exc)
            return None
        conn.__enter__()  # websockets 17.1+ wants a connection entered before it is used
        link = _Link(conn)
        with self._lock:
            if self._stop.is_set():  # closed meanwhile: this link must not outlive the client
                link.close()
                return None
            self._links.append(link)
        threading.Thread(target=self._read, args=(link,), name="socket-read", daemon=True).start()
        if not self._hello(link):
            link.close()
            return None
        return link if self._greeted(link) else None

    def _hello(self, link: _Link) -> bool:
        """Wait for ``link``'s hello (False: it closed, the client stops, or
        HELLO_TIMEOUT_S passed: then a new URL is asked for)."""
        deadline = time.monotonic() + HELLO_TIMEOUT_S
        while not link.hello.wait(0.1):
            if link.done.is_set() or self._stop.is_set():
                return False
            if time.monotonic() >= deadline:
                self._down(f"no hello within {HELLO_TIMEOUT_S:.0f}s: asking for a new URL", None)
                return False
        return True

    def _open_url(self) -> str:
        try:
            response = self.web_client.apps_connections_open(app_token=self.app_token)
        except SlackApiError as exc:
            error = str(exc.response.get("error"))
            if error in REFUSALS and not self.connected.is_set():
                raise SocketModeRefused(error) from exc
            raise
        return str(response["url"])

    def _greeted(self, link: _Link) -> bool:
        """``link`` said hello: it is the current one; the one it replaces is retired."""
        link.greeted_at = time.monotonic()
        with self._lock:
            old, self._current = self._current, link
        if link.done.is_set():
            return False
        self.health.clear(COMPONENT)
        first = not self.connected.is_set()
        self.connected.set()
        self.logger.info("Socket Mode link greeted%s", " (first)" if first else "")
        if old is not None and old is not link and not old.done.is_set():
            timer = threading.Timer(OVERLAP_S, old.close)
            timer.daemon = True
            timer.start()
        return True

    def _watch(self, link: _Link) -> float:
        """Wait until ``link`` ends or asks to be replaced; how long it was up."""
        while not self._stop.is_set() and not link.done.is_set() and not link.retiring:
            self._wake.wait(1.0)
            self._wake.clear()
        return time.monotonic() - (link.greeted_at or time.monotonic())

    def _down(self, why: str, error: Exception | None) -> None:
        if not self._any_open():
            self.health.problem(COMPONENT, f"Socket Mode is not connected: {why}")
        if error is None:
            self.logger.warning("Socket Mode: %s", why)
        else:
            self.logger.warning("Socket Mode: %s: %s", why, error)

    def _refused(self, refused: SocketModeRefused) -> None:
        self.refused = refused
        self.health.problem(COMPONENT, f"Slack refused SLACK_APP_TOKEN ({refused.error})")

    def _any_open(self) -> bool:
        with self._lock:
            return any(link.hello.is_set() and not link.done.is_set() for link in self._links)

    # -- a link's reader ----------------------------------------------------------------------
    def _read(self, link: _Link) -> None:
        try:
            while True:
                self._on_frame(link, link.conn.recv(decode=False))
        except ConnectionClosed as closed:
            if closed.sent is not None and closed.sent.code == 1009:  # too big: not read
                self.logger.warning(
                    "Socket Mode: a frame over %d bytes: link closed, not read", MAX_FRAME_BYTES
                )
            else:
                self.logger.info("Socket Mode link closed (%s)", closed)
        except Exception:  # the reader must end, and say why, whatever broke
            self.logger.exception("Socket Mode link failed")
        finally:
            link.close()
            self._ended(link)

    def _ended(self, link: _Link) -> None:
        link.done.set()
        with self._lock:
            if link in self._links:
                self._links.remove(link)
        if not self._stop.is_set() and not self._any_open():
            self.health.problem(COMPONENT, "Socket Mode is not connected: the link was lost")
        self._wake.set()

    def _on_frame(self, link: _Link, data: bytes | str) -> None:
        try:
            message = json.loads(data)
        except ValueError:  # not JSON, or not UTF-8: skip it, read on
            self.logger.warning(
                "skipped a Socket Mode frame that is not JSON text (%d bytes)", len(data)
            )
            return
        kind = message.get("type") if isinstance(message, dict) else None
        if kind == "hello":
            link.hello.set()
        elif kind == "disconnect":
            self.logger.info("Slack asked to reconnect (%s)", message.get("reason"))
            link.retiring = True
            self._wake.set()
        elif isinstance(message, dict) and "envelope_id" in message:
            request = SocketModeRequest.from_dict(message)
            if request is None:
                self.logger.warning("skipped a Socket Mode envelope without a type or payload")
                return
            self._pool.submit(self._dispatch, link, request)

    def _dispatch(self, link: _Link, request: SocketModeRequest) -> None:
        reply = _Reply(self, link)
        for listener in self.socket_mode_request_listeners:
            try:
                listener(reply, request)
            except Exception:  # one listener's failure must not stop the others
                self.logger.exception("a Socket Mode listener failed")
