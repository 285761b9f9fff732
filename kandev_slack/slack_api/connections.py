"""HTTP/1.1 connections to Slack kept open between calls.

slack-sdk's WebClient sends each call with ``urllib.request.urlopen``, which opens a connection,
sends ``Connection: close`` and shuts it: every card edit, ephemeral and membership read pays a
TCP connect and, against slack.com, a whole TLS handshake (a round trip or two and a few ms of
CPU) before its request can go. :class:`KeptConnections` keeps a few connections per host open
and sends each call over an idle one, as a browser or urllib3 does.

An idle connection the server closed meanwhile (Slack hangs up on idle clients) is seen before
it is used: its socket reads as ready (the end of the stream) and it is dropped for a new one.
Errors are what ``urlopen`` raises, so slack-sdk's retry handlers decide as before: an error
while connecting or sending is a ``URLError``; one while reading the response is raised as it
is (``RemoteDisconnected``, ``ConnectionResetError``, a timeout).
"""

from __future__ import annotations

import http.client
import select
import socket
import ssl
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from urllib.error import URLError
from urllib.parse import urlsplit

#: Idle connections kept per host: as many as the bot's threads that call Slack at once
#: (listener lanes, the publisher, the workers) usually need; more are opened when needed and
#: closed after their call.
MAX_IDLE = 8


@dataclass(frozen=True)
class Reply:
    """An HTTP reply, read whole."""

    status: int
    reason: str
    headers: http.client.HTTPMessage
    body: bytes


class KeptConnections:
    """Connections kept open per (scheme, host, port), each used by one call at a time."""

    def __init__(self, max_idle: int = MAX_IDLE) -> None:
        self._max_idle = max_idle
        self._lock = threading.Lock()
        self._idle: dict[tuple[str, str, int], list[http.client.HTTPConnection]] = {}
        #: Connections opened so far (a new one for each call that found none idle).
        self.opened = 0

    def send(
        self,
        method: str,
        url: str,
        body: bytes | None,
        headers: Mapping[str, str],
        *,
        timeout: float,
        context: ssl.SSLContext | None = None,
    ) -> Reply:
        """Send one request over an idle connection to its host (or a new one) and read its
        reply whole; the connection is kept for the next call unless either side closes it."""
        parts = urlsplit(url)
        scheme = parts.scheme.lower()
        if scheme not in ("http", "https") or not parts.hostname:
            raise URLError(f"not an HTTP URL: {url}")
        port = parts.port or (443 if scheme == "https" else 80)
        key = (scheme, parts.hostname, port)
        target = parts.path or "/"
        if parts.query:
            target += "?" + parts.query
        conn = self._take(key, timeout, context)
        try:
            try:
                if conn.sock is None:
                    conn.connect()
                    _no_delay(conn)
                conn.request(method, target, body=body, headers=dict(headers))
            except OSError as exc:  # as urlopen: connecting or sending failed
                raise URLError(exc) from exc
            response = conn.getresponse()
            data = response.read()
        except BaseException:
            conn.close()
            raise
        if response.will_close:
            conn.close()
        else:
            self._give_back(key, conn)
        return Reply(response.status, response.reason, response.msg, data)

    def close(self) -> None:
        """Close every idle connection (one in use is closed by its call's end)."""
        with self._lock:
            idle = [conn for conns in self._idle.values() for conn in conns]
            self._idle.clear()
        for conn in idle:
            conn.close()

    def idle(self) -> int:
        with self._lock:
            return sum(len(conns) for conns in self._idle.values())

    def _take(
        self, key: tuple[str, str, int], timeout: float, context: ssl.SSLContext | None
    ) -> http.client.HTTPConnection:
        while True:
            with self._lock:
                conns = self._idle.get(key)
                conn = conns.pop() if conns else None
            if conn is None:
                break
            if _usable(conn):
                conn.timeout = timeout
                if conn.sock is not None:
                    conn.sock.settimeout(timeout)
                return conn
            conn.close()
        scheme, host, port = key
        with self._lock:
            self.opened += 1
        if scheme == "https":
            return http.client.HTTPSConnection(host, port, timeout=timeout, context=context)
        return http.client.HTTPConnection(host, port, timeout=timeout)

    def _give_back(self, key: tuple[str, str, int], conn: http.client.HTTPConnection) -> None:
        with self._lock:
            conns = self._idle.setdefault(key, [])
            if len(conns) < self._max_idle:
                conns.append(conn)
                return
        conn.close()


def _no_delay(conn: http.client.HTTPConnection) -> None:
    """Send each write at once (TCP_NODELAY), as urllib3 does. http.client sends a body of
    2,920 bytes or more (a card) apart from its headers; on a kept connection, whose peer
    acknowledges late (delayed ACK), Nagle's algorithm then holds the body back until the
    headers are acknowledged: ~40 ms per call. A new connection per call never met it (a
    young connection is acknowledged at once)."""
    if conn.sock is not None:
        conn.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)


def _usable(conn: http.client.HTTPConnection) -> bool:
    """An idle connection is usable while nothing can be read from it: a server that closed it
    (end of stream) or sent something unasked makes its socket ready to read."""
    sock = conn.sock
    if sock is None:
        return False
    try:
        poller = select.poll()
        poller.register(sock, select.POLLIN | select.POLLPRI)
        return not poller.poll(0)
    except (OSError, ValueError):
        return False
