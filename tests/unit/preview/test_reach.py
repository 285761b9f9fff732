"""Whether the preview's Kandev answers: when nothing does at its URL, the page says which URL
(never its password), and it says so again once Kandev answers no more."""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from kandev_slack.kits.kandevkit import free_port
from kandev_slack.preview.reach import KandevWatch, problem_at


class _Health(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        self.send_response(200)
        self.send_header("Content-Length", "2")
        self.end_headers()
        self.wfile.write(b"{}")

    def log_message(self, format: str, *args: object) -> None:
        pass


def test_an_unreachable_kandev_is_named_by_its_url_without_its_password() -> None:
    port = free_port()  # nothing listens there
    said = problem_at(f"http://kandev:pw-123@127.0.0.1:{port}")
    assert said is not None
    assert f"Cannot reach Kandev at http://127.0.0.1:{port}" in said
    assert "pw-123" not in said and "KANDEV_URL" in said and "--with-kandev" in said


def test_the_watch_says_when_kandev_answers_and_when_it_stops() -> None:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Health)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    changes: list[int] = []
    watch = KandevWatch(f"http://127.0.0.1:{server.server_address[1]}", lambda: changes.append(1))
    try:
        assert watch.check() is None and watch.problem is None
        server.shutdown()
        server.server_close()
        assert watch.check() is not None and watch.problem is not None
        assert len(changes) == 1
    finally:
        watch.stop()
