"""The approval sweep behind a fault-injecting proxy (the real Kandev behind it): a sweep that
cannot complete (Kandev repeating a page of tasks forever) shows in /healthz until one does;
a sweep stuck on a slow Kandev never delays a new approval's card, which push hints (tunnelled
through the proxy) bring on their own."""

from __future__ import annotations

import json
import time

import pytest

from kandev_slack.core.approval import approval_key
from tests.e2e.helpers import start_bot, wait_card
from tests.kit.harness import permission_spec

RM = permission_spec("Run rm -rf build", "execute", {"command": "rm -rf build", "cwd": "/repo/app"})
#: The route only the sweep reads: a workspace's tasks, page by page.
WORKSPACE_TASKS = r"^/api/v1/workspaces/[^/]+/tasks$"
#: A full page (100 tasks, the bot's page size) that is always the same, of a workspace that
#: says it has far more tasks.
SAME_PAGE = json.dumps(
    {"tasks": [{"id": f"t-same-{n}"} for n in range(100)], "total": 100_000}
).encode()


def _wait_health(bot, ok: bool, timeout: float = 30.0) -> dict:
    deadline = time.monotonic() + timeout
    while True:
        status, body = bot.health()
        if (status == 200) == ok:
            return body
        assert time.monotonic() < deadline, f"/healthz never said {'ok' if ok else 'degraded'}"
        time.sleep(0.2)


@pytest.mark.fault("an approval sweep that cannot complete")
def test_a_sweep_that_cannot_complete_shows_in_healthz(
    app_factory, kandev_proxy, reliability
) -> None:
    kandev_proxy.fail_path(WORKSPACE_TASKS, 200, SAME_PAGE)
    bot = start_bot(app_factory, KANDEV_URL=kandev_proxy.base_url, KANDEV_HINTS="off")
    degraded = _wait_health(bot, ok=False)
    reasons = [r for r in degraded["reasons"] if r.startswith("approval_sweep:")]
    kandev_proxy.heal()
    healed = _wait_health(bot, ok=True)
    reliability.record(
        "an approval sweep that cannot complete: said in /healthz",
        survived=bool(reasons) and healed["status"] == "ok",
    )
    assert reasons == ["approval_sweep: approval sweep failed (KandevProtocolError)"], degraded
    assert len(kandev_proxy.faulted) < 10  # a repeated page is not read forever


@pytest.mark.fault("a new approval while the sweep is stuck on a slow Kandev")
def test_a_new_approval_s_card_never_waits_for_a_stuck_sweep(
    app_factory, seed, kandev_proxy, fake_slack, reliability
) -> None:
    # Every read of a workspace's tasks (the sweep's, nothing else's) hangs until heal().
    kandev_proxy.slow_path(WORKSPACE_TASKS, 120.0)
    start_bot(app_factory, KANDEV_URL=kandev_proxy.base_url)  # push hints through the proxy
    fake_slack.wait_for(lambda: kandev_proxy.slowed and kandev_proxy.tunnels, 15, "a stuck sweep")
    time.sleep(0.5)  # the hints' user.subscribe answered

    try:
        seeded = seed.permission([RM], title="Asked while the sweep is stuck")
        card = wait_card(fake_slack, approval_key(seeded.request_id), timeout=20)
        stuck = kandev_proxy.slowed_answered == 0  # the sweep has not read a single page yet
    finally:
        kandev_proxy.heal()
    reliability.record(
        "a new approval while the sweep is stuck: posted on its own", survived=bool(card and stuck)
    )
    assert stuck, "the card came only once the sweep had gone on"
