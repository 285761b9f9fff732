"""Small waiting bundles and resolved cards for the triage tests."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from bot.cards.waiting import Waiting
from bot.domain import Card, CardOutcome, CardState, TaskInfo
from bot.kandev.models import Answer, Bundle, Option, Question

NOW = datetime(2026, 11, 30, 12, 0, 0, tzinfo=UTC)
KANDEV_URL = "https://kandev.example.test"


def bundle(
    n: int,
    *,
    title: str = "Database",
    prompt: str = "Which database should we use?",
    questions: int = 1,
    age_s: int = 600,
) -> Bundle:
    return Bundle(
        pending_id=f"pending-{n:03d}",
        task_id=f"task-{n:03d}",
        session_id=f"session-{n:03d}",
        created_at=NOW - timedelta(seconds=age_s),
        questions=[
            Question(
                question_id=f"q{i}",
                title=title if i == 1 else f"{title} {i}",
                prompt=prompt,
                options=[
                    Option(option_id=f"q{i}_opt1", label="PostgreSQL", description="Relational"),
                    Option(option_id=f"q{i}_opt2", label="MongoDB", description="Documents"),
                ],
            )
            for i in range(1, questions + 1)
        ],
    )


def waiting(
    n: int,
    *,
    task_title: str = "Pick a datastore",
    workspace: str = "Platform",
    permalink: str | None = None,
    **bundle_args,
) -> Waiting:
    b = bundle(n, **bundle_args)
    task = TaskInfo(
        task_id=b.task_id,
        title=task_title,
        workspace_id=f"ws-{workspace}",
        workspace_name=workspace,
    )
    return Waiting(bundle=b, task=task, permalink=permalink)


def resolved_card(n: int, state: CardState, *, by_user: str | None = "U0ALICE001") -> Card:
    b = bundle(n)
    outcome = CardOutcome(
        state=state,
        via="slack" if by_user else "kandev",
        by_user=by_user,
        answers=[Answer(question_id="q1", selected_options=["q1_opt2"])]
        if state is CardState.ANSWERED
        else [],
        reason="not now" if state is CardState.REJECTED else "",
        at=NOW - timedelta(minutes=n),
    )
    return Card(
        pending_id=b.pending_id,
        task_id=b.task_id,
        channel="C0QUESTION",
        ts=f"1700000000.{n:06d}",
        state=state,
        bundle=b,
        task=TaskInfo(task_id=b.task_id, title=f"Resolved task {n}", workspace_name="Platform"),
        outcome=outcome,
        created_at=b.created_at,
        updated_at=NOW,
    )
