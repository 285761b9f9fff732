"""Small builders of domain objects for store tests (plain functions, importable by workers)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from bot.domain import CardOutcome, CardState, TaskInfo
from bot.kandev.models import Answer, Bundle, Option, Question
from bot.store import Store

CREATED = datetime(2030, 1, 1, tzinfo=UTC)


class FakeClock:
    """A settable UTC clock for the store (``clock.advance(10)``)."""

    def __init__(self, start: datetime) -> None:
        self.now = start

    def __call__(self) -> datetime:
        return self.now

    def advance(self, seconds: float) -> datetime:
        self.now += timedelta(seconds=seconds)
        return self.now


def bundle(pending_id: str, *, task_id: str = "task-1", questions: int = 1) -> Bundle:
    return Bundle(
        pending_id=pending_id,
        task_id=task_id,
        session_id="session-1",
        created_at=CREATED,
        context="Which **database** should we use?",
        questions=[
            Question(
                question_id=f"q{n}",
                title=f"Question {n}",
                prompt=f"Pick one ({n})",
                options=[
                    Option(option_id="o1", label="PostgreSQL", description="relational"),
                    Option(option_id="o2", label="MongoDB"),
                ],
            )
            for n in range(1, questions + 1)
        ],
    )


def task_info(task_id: str = "task-1") -> TaskInfo:
    return TaskInfo(
        task_id=task_id, title="Pick a DB", workspace_id="ws-1", workspace_name="Platform"
    )


def claim(store: Store, pending_id: str, *, channel: str = "C1") -> bool:
    return store.claim(
        pending_id,
        task_id="task-1",
        session_id="session-1",
        workspace_id="ws-1",
        channel=channel,
        bundle=bundle(pending_id),
        task=task_info(),
    )


def answered(by_user: str, option_id: str = "o1") -> CardOutcome:
    return CardOutcome(
        state=CardState.ANSWERED,
        via="slack",
        by_user=by_user,
        answers=[Answer(question_id="q1", selected_options=[option_id])],
        at=CREATED,
    )
