"""The crowd's checks wait once for a round, however many answers never come."""

from __future__ import annotations

import time
from types import SimpleNamespace

from slack_sdk import WebClient

from bench.cardlog import CardLog
from bench.scenarios import crowd
from bench.scenarios.crowd import CrowdRun, _check, _Sent
from kandev_slack.kits.fakeslack import Ack, FakeSlack, SlackUser
from tests.kit.harness import SeededBundle


class _Unanswered:
    """Kandev's side when it refused the crowd: no agent ever has its answer. Records how
    long each look at a task's agent was allowed to wait."""

    def __init__(self) -> None:
        self.waits: list[tuple[str, float]] = []

    def agent_result(self, task_id: str, timeout: float = 10.0) -> None:
        self.waits.append((task_id, timeout))
        time.sleep(min(timeout, 0.05))


def test_answers_that_never_come_cost_one_wait_not_one_each(monkeypatch) -> None:
    monkeypatch.setattr(crowd, "AGENT_TIMEOUT_S", 0.3)
    monkeypatch.setattr(crowd, "EDIT_TIMEOUT_S", 0.3)
    fake = FakeSlack().start()
    try:
        web = WebClient(token=fake.workspace.bot_token, base_url=fake.api_url)
        log = CardLog(fake)  # it reads the calls made from now on
        bundles = [SeededBundle(f"p{n}", f"t{n}", f"s{n}", "w", f"m{n}") for n in range(8)]
        for b in bundles:
            meta = {"event_type": "kandev_card", "event_payload": {"pending_id": b.pending_id}}
            web.chat_postMessage(channel="C0QUESTION", text="card", metadata=meta)
        assert log.wait_posted([b.pending_id for b in bundles], timeout=5)
        people = [SlackUser(id=f"U{n}", name=f"u{n}") for n in range(len(bundles))]
        sent = [_Sent(at=time.time(), ack=Ack(200, None, 0.01)) for _ in bundles]
        kandev = _Unanswered()
        out = CrowdRun(mode="http")

        _check(SimpleNamespace(kandev=kandev), fake, log, bundles, people, sent, 0, out)

        assert out.delivered == 0 and out.cards_won == 0
        assert sum("the agent got no answer" in p for p in out.problems) == len(bundles)
        assert sum("was not edited" in p for p in out.problems) == len(bundles)
        # one deadline for the round: the first agent's wait used it up, the others' only
        # looked (one wait each made 8 of 0.3 s, and 50 of 30 s in a real crowd)
        assert {task for task, timeout in kandev.waits if timeout > 0} == {"t0"}
        assert {task for task, _ in kandev.waits} == {b.task_id for b in bundles}
    finally:
        fake.stop()
