"""The HTTP transport: bearer auth, bounded retries, 401 and unavailability."""

import threading
import time
from concurrent.futures import ThreadPoolExecutor
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import httpx
import pytest
import respx

from kandev_slack.kandev.errors import KandevAuthError, KandevUnavailable
from kandev_slack.kandev.http import KandevHttp, rest_route
from kandev_slack.ops import metrics

BASE = "http://kandev.test"


def make(**kw) -> KandevHttp:
    return KandevHttp(
        BASE, kw.pop("token", None), retry_initial_wait=0.001, retry_max_wait=0.01, **kw
    )


@respx.mock
def test_sends_the_bearer_token_only_when_set():
    route = respx.get(f"{BASE}/api/v1/workspaces").respond(200, json={})
    make(token="kandev_pat_x").request("GET", "/api/v1/workspaces")
    make().request("GET", "/api/v1/workspaces")
    assert route.calls[0].request.headers["Authorization"] == "Bearer kandev_pat_x"
    assert "Authorization" not in route.calls[1].request.headers


@respx.mock
def test_retries_starting_and_5xx_then_returns_the_answer():
    route = respx.get(f"{BASE}/x").mock(
        side_effect=[
            httpx.Response(503, json={"status": "starting"}),
            httpx.Response(500, json={"error": "claim error"}),
            httpx.Response(200, json={"ok": True}),
        ]
    )
    exchange = make().request("GET", "/x")
    assert exchange.response.json() == {"ok": True}
    assert route.call_count == 3
    assert not exchange.maybe_duplicate


@respx.mock
def test_gives_up_with_kandev_unavailable_after_the_bounded_attempts():
    route = respx.get(f"{BASE}/x").mock(side_effect=httpx.ConnectError("refused"))
    with pytest.raises(KandevUnavailable, match="3 attempt"):
        make(retry_attempts=3).request("GET", "/x")
    assert route.call_count == 3


@respx.mock
def test_retry_false_means_one_attempt():
    route = respx.get(f"{BASE}/x").respond(503, json={"status": "starting"})
    with pytest.raises(KandevUnavailable, match="503"):
        make().request("GET", "/x", retry=False)
    assert route.call_count == 1


@respx.mock
def test_401_is_an_auth_error_at_once():
    route = respx.get(f"{BASE}/x").respond(401, json={"error": "authentication required"})
    with pytest.raises(KandevAuthError, match="KANDEV_TOKEN missing or invalid"):
        make().request("GET", "/x")
    assert route.call_count == 1


@respx.mock
def test_4xx_are_returned_to_the_caller():
    respx.post(f"{BASE}/x").respond(409, json={"code": "not_active"})
    assert make().request("POST", "/x", json={}).response.status_code == 409


@respx.mock
def test_flags_a_possible_duplicate_after_a_read_timeout_but_not_after_a_refused_connect():
    respx.post(f"{BASE}/a").mock(side_effect=[httpx.ReadTimeout("slow"), httpx.Response(200)])
    respx.post(f"{BASE}/b").mock(side_effect=[httpx.ConnectError("no"), httpx.Response(200)])
    assert make().request("POST", "/a").maybe_duplicate
    assert not make().request("POST", "/b").maybe_duplicate


def test_nothing_listening_is_unavailable(unused_port):
    http = KandevHttp(f"http://127.0.0.1:{unused_port}", retry_attempts=2, retry_max_wait=0.01)
    with pytest.raises(KandevUnavailable, match="ConnectError"):
        http.request("GET", "/health")


def test_a_crowd_of_concurrent_calls_reuses_its_connections():
    """The answering lane's 32 calls at once, twice: the second round goes over the first
    round's connections (kept alive), none opened anew."""
    crowd = 32
    peers: set[tuple[str, int]] = set()
    lock = threading.Lock()
    gate = threading.Barrier(crowd)

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_GET(self) -> None:
            with lock:
                peers.add(self.client_address)
            time.sleep(0.3)  # every call of a round is open at once
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", "2")
            self.end_headers()
            self.wfile.write(b"{}")

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    http = KandevHttp(f"http://127.0.0.1:{server.server_address[1]}")

    def call(_n: int) -> int:
        gate.wait()
        return http.request("GET", "/x").response.status_code

    try:
        with ThreadPoolExecutor(crowd) as pool:
            assert list(pool.map(call, range(crowd))) == [200] * crowd
            assert len(peers) == crowd
            assert list(pool.map(call, range(crowd))) == [200] * crowd
        assert len(peers) == crowd, f"{len(peers) - crowd} connections opened anew"
    finally:
        http.close()
        server.shutdown()
        server.server_close()


def _requests(call: str) -> float:
    return (
        metrics.REGISTRY.get_sample_value("kandev_slack_kandev_requests_total", {"call": call})
        or 0.0
    )


@respx.mock
def test_every_attempt_is_counted_by_its_route_without_ids():
    respx.get(f"{BASE}/api/v1/task-sessions/s-1/messages").mock(
        side_effect=[httpx.Response(503), httpx.Response(200, json={})]
    )
    call = rest_route("GET", "/api/v1/task-sessions/s-1/messages")
    assert call == "GET task-sessions/:id/messages"
    before = _requests(call)
    make().request("GET", "/api/v1/task-sessions/s-1/messages")
    assert _requests(call) - before == 2
    assert (
        rest_route("POST", "/api/v1/clarification/p-9/respond") == "POST clarification/:id/respond"
    )
