"""Crash recovery never keeps a card in flight forever: re-sends that settle nothing (Kandev
refusing, rate-limiting, timing out or answering garbage) are counted durably and bounded; then
the recovery gives up visibly, telling the truth about what Kandev recorded (read from its
conversation, nothing sent): recorded → the card shows it; still open → "not recorded" and the
card stays answerable; unknown → "could not find out", never "not recorded".

Real store, answer service and fake Slack; Kandev's wire replies scripted (see test_recovery).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import httpx
import pytest

from kandev_slack.core.domain import CardState
from kandev_slack.kandev.errors import KandevUnavailable
from kandev_slack.kits.fakeslack import ALICE, FakeSlack
from kandev_slack.usecases.answering.recovery import MAX_RESENDS
from tests.e2e.reliability.test_recovery import MONGO, PENDING, POSTGRES, World, won_by
from tests.unit.kandev.fake_mcp import FakeMcp, ToolError

#: A re-send each of these answers settles nothing (the first attempt's fate stays unknown).
UNSETTLING = [
    lambda r: httpx.Response(403, json={"error": "forbidden"}),
    lambda r: httpx.Response(429, headers={"Retry-After": "600"}, text="slow down"),
    lambda r: httpx.Response(502, text="<html>Bad Gateway</html>"),
    lambda r: httpx.Response(200, text="<html>Welcome</html>"),
    lambda r: httpx.Response(422, json={"error": "unprocessable"}),
]


class BoundedWorld(World):
    """World whose Kandev also answers the conversation read (``conversation``: the status of
    the bundle there and the answer it shows, or None for a failing read)."""

    def __init__(self, tmp_path: Path, fake: FakeSlack) -> None:
        super().__init__(tmp_path, fake)
        self.conversation: tuple[str, dict | None] | None = ("pending", None)
        self.mcp = FakeMcp({"get_task_conversation_kandev": self._read})
        self.replies = iter(UNSETTLING)

    def _kandev(self, request: httpx.Request) -> httpx.Response:
        if request.url.path == "/mcp":
            return self.mcp(request)
        return super()._kandev(request)

    def _read(self, arguments: dict) -> object:
        if self.conversation is None:
            return ToolError("backend error [INTERNAL]: database is locked")
        status, answer = self.conversation
        metadata = {
            "pending_id": PENDING,
            "question_id": "db",
            "question_index": 0,
            "question_total": 1,
            "status": status,
        }
        if answer:
            metadata["response"] = answer
        message = {"id": "m1", "type": "clarification_request", "metadata": metadata}
        if status != "pending":  # Kandev recorded it now, after the submission was first sent
            message["updated_at"] = datetime.now(UTC).isoformat()
        return {"messages": [message], "has_more": False}

    def cycle(self) -> None:
        """One recovery cycle, as the worker runs it (Kandev unreachable ends the cycle)."""
        with contextlib.suppress(KandevUnavailable):
            self.recovery.run_once()

    def sends_unsettled(self) -> None:
        self.reply = lambda request: next(self.replies)(request)


@pytest.fixture
def world(tmp_path: Path, fake_slack: FakeSlack) -> Iterator[BoundedWorld]:
    w = BoundedWorld(tmp_path, fake_slack)
    w.card()
    yield w
    w.kandev.close()
    w.store.close()


def _audit(world: World) -> list[tuple[str, str, str]]:
    return [(e.source, e.result, e.detail) for e in world.store.audit_log.audit_entries(PENDING)]


@pytest.mark.fault("recovery re-sends that never settle (bounded, then gives up)", guarantee=5)
def test_unsettled_resends_stop_and_an_open_question_is_told_not_recorded(world, reliability):
    world.sends_unsettled()
    key = world.orphan()
    for n in range(1, MAX_RESENDS):
        world.cycle()
        sub = world.store.submissions.get_submission(key)
        assert sub is not None and not sub.finished and sub.resends == n
        assert world.told() == []  # nothing is known yet: nothing is said
    world.cycle()  # the last re-send: the recovery gives up and reads Kandev's record

    gone = world.store.submissions.get_submission(key)
    card = world.store.cards.get(PENDING)
    told = world.told()
    audit = _audit(world)
    reliability.record(
        "recovery re-sent 5 times, settled nothing, gave up",
        survived=gone is None and card.state is CardState.PENDING and len(told) == 1,
    )
    assert len(world.sent) == MAX_RESENDS
    assert gone is None  # dropped: the same answer may be sent again from the card
    assert card.state is CardState.PENDING
    assert len(told) == 1 and "not* recorded" in told[0] and "send it again" in told[0]
    assert audit[0][:2] == ("recovery", "not_recorded")
    assert f"gave up after {MAX_RESENDS} re-sends" in audit[0][2]
    world.cycle()
    assert len(world.sent) == MAX_RESENDS  # never re-sent again


@pytest.mark.fault("recovery gives up, Kandev's record shows our answer", guarantee=6)
def test_giving_up_when_kandev_recorded_our_answer_shows_it(world, reliability):
    world.sends_unsettled()
    world.conversation = ("answered", MONGO)
    key = world.orphan()
    for _ in range(MAX_RESENDS):
        world.cycle()

    card = world.store.cards.get(PENDING)
    told = world.told()
    reliability.record(
        "recovery gives up; Kandev had recorded the answer",
        survived=card.state is CardState.ANSWERED and not any("not* recorded" in t for t in told),
    )
    assert card.state is CardState.ANSWERED
    assert (card.outcome.via, card.outcome.by_user) == ("slack", ALICE.id)
    assert world.store.submissions.get_submission(key).verdict == "won"
    assert len(told) == 1 and "recorded in Kandev" in told[0]
    assert _audit(world)[0][1] == "won"


def test_giving_up_when_someone_else_won_names_the_winner(world):
    world.sends_unsettled()
    world.conversation = ("answered", POSTGRES)
    world.orphan()
    for _ in range(MAX_RESENDS):
        world.cycle()
    assert world.store.cards.get(PENDING).state is CardState.ANSWERED
    assert any("PostgreSQL" in t and "not sent" in t for t in world.told()), world.told()


@pytest.mark.fault("recovery gives up, Kandev's record unreadable", guarantee=6)
def test_giving_up_without_knowing_never_says_not_recorded(world, reliability):
    def unreachable(request: httpx.Request) -> httpx.Response:
        raise httpx.ReadTimeout("no reply", request=request)

    world.reply = unreachable
    world.conversation = None
    key = world.orphan()
    for _ in range(MAX_RESENDS):
        world.cycle()

    told = world.told()
    reliability.record(
        "recovery gives up while Kandev never answers",
        survived=len(told) == 1 and "not* recorded" not in told[0],
    )
    assert world.store.submissions.get_submission(key) is None  # not in flight any more
    assert world.store.cards.get(PENDING).state is CardState.PENDING
    assert len(told) == 1 and "not* recorded" not in told[0]
    assert "could not find out" in told[0]
    assert _audit(world)[0][:2] == ("recovery", "unconfirmed")


def test_a_settling_resend_before_the_bound_needs_no_giving_up(world):
    world.sends_unsettled()
    key = world.orphan()
    world.cycle()
    world.cycle()
    world.reply = won_by(MONGO, claimed=False)  # our first attempt had won after all
    world.cycle()
    assert world.store.submissions.get_submission(key).verdict == "won"
    assert world.store.cards.get(PENDING).outcome.by_user == ALICE.id


def test_each_resend_that_settles_nothing_doubles_the_wait(world):
    world.recovery.stale_after_s = 10.0
    assert [world.recovery._backoff(n) for n in range(6)] == [10, 10, 20, 40, 80, 160]
