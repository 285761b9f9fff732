"""Seeding survives Kandev refusing requests for its own database for a moment
(``persistence_unavailable``, 503): a benchmark's crowd loaded the machine, a probe of Kandev's
database timed out, and every request was refused in a middleware until the next probe — the
2026-12-06 18:57 whole run lost every scenario after the crowd to it."""

from __future__ import annotations

import json

import httpx

from kandev_slack.kits.kandevkit import retried_while_persistence_unavailable

REFUSED = {
    "action": "Check the database connection and the persistence diagnostics, then retry.",
    "code": "persistence_unavailable",
    "error": "required persistence is unavailable",
}


def _sends(*responses: httpx.Response):
    sent: list[int] = []
    queue = list(responses)

    def send() -> httpx.Response:
        sent.append(1)
        return queue.pop(0) if len(queue) > 1 else queue[0]

    return send, sent


def test_a_request_refused_for_kandevs_database_is_sent_again() -> None:
    created = httpx.Response(200, json={"id": "t1"})
    send, sent = _sends(
        httpx.Response(503, json=REFUSED), httpx.Response(503, json=REFUSED), created
    )

    slept: list[float] = []
    assert retried_while_persistence_unavailable(send, sleep=slept.append) is created
    assert slept == [0.25, 0.5]
    assert len(sent) == 3


def test_other_refusals_are_returned_at_once() -> None:
    for other in (
        httpx.Response(503, text="upstream unavailable"),
        httpx.Response(503, json={"code": "something_else"}),
        httpx.Response(400, json=REFUSED),
    ):
        send, sent = _sends(other)
        assert retried_while_persistence_unavailable(send) is other
        assert len(sent) == 1


def test_a_database_that_stays_away_is_given_up_on() -> None:
    send, sent = _sends(httpx.Response(503, content=json.dumps(REFUSED).encode()))
    response = retried_while_persistence_unavailable(send, within_s=0.3)
    assert response.status_code == 503 and len(sent) >= 2
