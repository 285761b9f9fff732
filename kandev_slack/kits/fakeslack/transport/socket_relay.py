"""A TCP relay in front of the fake Socket Mode server, for links that go silent: once
:meth:`Relay.silence` is called, every byte either way is dropped and nothing is closed, as when
a NAT or a load balancer forgets a connection (no FIN, no RST, pings unanswered)."""

from __future__ import annotations

import contextlib
import socket
import threading


class _Pair:
    def __init__(self, client: socket.socket, upstream: socket.socket) -> None:
        self.client = client
        self.upstream = upstream
        self.silent = threading.Event()

    def pump(self, src: socket.socket, dst: socket.socket) -> None:
        while True:
            try:
                data = src.recv(65536)
            except OSError:
                data = b""
            if not data:
                break
            if self.silent.is_set():
                continue  # dropped on the floor
            try:
                dst.sendall(data)
            except OSError:
                break
        if not self.silent.is_set():  # an ordinary end passes through; a silent one does not
            with contextlib.suppress(OSError):
                dst.shutdown(socket.SHUT_WR)

    def close(self) -> None:
        for s in (self.client, self.upstream):
            with contextlib.suppress(OSError):
                s.close()


class Relay:
    def __init__(self, target_host: str, target_port: int) -> None:
        self._target = (target_host, target_port)
        self._listener = socket.create_server((target_host, 0))
        self.port = self._listener.getsockname()[1]
        self._pairs: list[_Pair] = []
        self._lock = threading.Lock()
        threading.Thread(target=self._accept, name="fake-slack-relay", daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            upstream = socket.create_connection(self._target)
            pair = _Pair(client, upstream)
            with self._lock:
                self._pairs.append(pair)
            for src, dst in ((client, upstream), (upstream, client)):
                threading.Thread(target=pair.pump, args=(src, dst), daemon=True).start()

    def silence(self) -> None:
        """Every link relayed so far goes silent (new ones are relayed normally)."""
        with self._lock:
            for pair in self._pairs:
                pair.silent.set()

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self._listener.close()
        with self._lock:
            pairs, self._pairs = self._pairs, []
        for pair in pairs:
            pair.close()
