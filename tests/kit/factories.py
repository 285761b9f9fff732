"""Domain objects for unit tests: bundles as Kandev sends them, the task they belong to, card
outcomes and stored cards. Plain functions with sensible defaults and keyword overrides (plain,
so that worker processes can import them too); ``tests/unit/cards/strategies.py`` builds its
hypothesis strategies on them.

The defaults tell one small story: an agent working on "Pick a datastore" in the "Platform"
workspace asked three minutes before ``NOW`` which database to use (PostgreSQL or MongoDB).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

from kandev_slack.core.clarification import Answer, Bundle, Option, Question
from kandev_slack.core.domain import Card, CardOutcome, CardState, NewCard, TaskInfo
from kandev_slack.store import Database
from kandev_slack.surfaces.waiting import Waiting

NOW = datetime(2026, 11, 30, 7, 30, 52, tzinfo=UTC)
ASKED_AT = NOW - timedelta(minutes=3)
KANDEV_URL = "https://kandev.example.test"
PENDING_ID = "ce0a763b-5d1e-4c8e-9d0e-0a4f6c7b8e21"
TASK_ID = "ef6da45c-1f6e-4a55-8d0b-3f8e4c2b1a90"
SESSION_ID = "8df24f6d-0000-4000-8000-000000000000"
WORKSPACE_ID = "ws-1"
CHANNEL = "C0QUESTION"
TS = "1700000000.000100"
ALICE_ID = "U0ALICE001"
DB_PROMPT = "Which database should we use?"
#: The story's answer: MongoDB (question ``q1``'s second option, as ``make_question`` has it).
MONGO = Answer(question_id="q1", selected_options=["q1_opt2"])

# Questions as Kandev's wire sends them (modelled on the API's own example); ``make_bundle``
# takes these dicts as they are, and tests may spread them to vary one field.
DB_QUESTION: dict[str, Any] = {
    "question_id": "db",
    "title": "Database",
    "prompt": DB_PROMPT,
    "options": [
        {"option_id": "q1_opt1", "label": "PostgreSQL", "description": "Relational"},
        {"option_id": "q1_opt2", "label": "MongoDB", "description": "Document store"},
    ],
}
CACHE_QUESTION: dict[str, Any] = {
    "question_id": "cache",
    "title": "Cache",
    "prompt": "Which cache?",
    "options": [
        {"option_id": "q2_opt1", "label": "Redis", "description": "In-memory"},
        {"option_id": "q2_opt2", "label": "None", "description": ""},
    ],
}
QUEUE_QUESTION: dict[str, Any] = {
    "question_id": "queue",
    "title": "Queue",
    "prompt": "Which queue?",
    "options": [
        {"option_id": "q3_opt1", "label": "RabbitMQ", "description": ""},
        {"option_id": "q3_opt2", "label": "Kafka", "description": ""},
    ],
}


def make_question(
    number: int = 1,
    *,
    question_id: str | None = None,
    title: str = "Database",
    prompt: str = DB_PROMPT,
    options: Sequence[Option] | None = None,
) -> Question:
    """Question ``number`` (id ``q<number>`` unless given) with the PostgreSQL / MongoDB
    options ``q<number>_opt1`` and ``q<number>_opt2`` unless ``options`` are given."""
    if options is None:
        options = [
            Option(option_id=f"q{number}_opt1", label="PostgreSQL", description="Relational"),
            Option(option_id=f"q{number}_opt2", label="MongoDB", description="Document store"),
        ]
    return Question(
        question_id=f"q{number}" if question_id is None else question_id,
        title=title,
        prompt=prompt,
        options=list(options),
    )


def make_questions(
    count: int, *, title: str = "Database", prompt: str = DB_PROMPT
) -> list[Question]:
    """``count`` questions titled "Database", "Database 2", … (``title`` likewise)."""
    return [
        make_question(n, title=title if n == 1 else f"{title} {n}", prompt=prompt)
        for n in range(1, count + 1)
    ]


def make_bundle(
    *questions: Question | Mapping[str, Any],
    pending_id: str = PENDING_ID,
    task_id: str = TASK_ID,
    session_id: str = SESSION_ID,
    created_at: datetime = ASKED_AT,
    context: str = "",
    count: int = 1,
) -> Bundle:
    """A bundle of ``questions`` (models, or dicts in the wire's shape such as
    ``DB_QUESTION``); without any, ``count`` questions from ``make_questions``."""
    return Bundle(
        pending_id=pending_id,
        task_id=task_id,
        session_id=session_id,
        created_at=created_at,
        context=context,
        questions=[Question.model_validate(q) for q in questions] or make_questions(count),
    )


def numbered_bundle(n: int, *questions: Question | Mapping[str, Any], **overrides: Any) -> Bundle:
    """Bundle ``n`` of several: ``pending-00n`` of ``task-00n`` (else as ``make_bundle``)."""
    ids = {
        "pending_id": f"pending-{n:03d}",
        "task_id": f"task-{n:03d}",
        "session_id": f"session-{n:03d}",
    }
    return make_bundle(*questions, **{**ids, **overrides})


def make_task(
    task_id: str = TASK_ID,
    *,
    title: str = "Pick a datastore",
    workspace_id: str = WORKSPACE_ID,
    workspace_name: str = "Platform",
) -> TaskInfo:
    return TaskInfo(
        task_id=task_id, title=title, workspace_id=workspace_id, workspace_name=workspace_name
    )


def make_outcome(
    state: CardState = CardState.ANSWERED,
    *,
    via: str = "kandev",
    by_user: str | None = None,
    answers: Sequence[Answer] = (),
    reason: str = "",
    at: datetime = NOW,
    kandev_user: str = "",
    kandev_name: str = "",
) -> CardOutcome:
    return CardOutcome(
        state=state,
        via=via,
        by_user=by_user,
        answers=list(answers),
        reason=reason,
        at=at,
        kandev_user=kandev_user,
        kandev_name=kandev_name,
    )


def answered(
    by_user: str | None = ALICE_ID, option_id: str = "q1_opt1", *, question_id: str = "q1"
) -> CardOutcome:
    """Answered in Slack by ``by_user``: one option of one question."""
    answer = Answer(question_id=question_id, selected_options=[option_id])
    return make_outcome(CardState.ANSWERED, via="slack", by_user=by_user, answers=[answer])


def make_card(
    bundle: Bundle | None = None,
    *,
    task: TaskInfo | None = None,
    channel: str = CHANNEL,
    ts: str | None = TS,
    state: CardState = CardState.PENDING,
    outcome: CardOutcome | None = None,
    updated_at: datetime = NOW,
) -> Card:
    """The stored card of ``bundle`` (default: ``make_bundle()``), posted at ``ts``."""
    bundle = bundle or make_bundle()
    task = task or make_task(bundle.task_id)
    return Card(
        pending_id=bundle.pending_id,
        task_id=bundle.task_id,
        session_id=bundle.session_id,
        workspace_id=task.workspace_id,
        channel=channel,
        ts=ts,
        state=state,
        item=bundle,
        task=task,
        outcome=outcome,
        created_at=bundle.created_at,
        updated_at=updated_at,
    )


def resolved_card(n: int, state: CardState, *, by_user: str | None = ALICE_ID) -> Card:
    """Card ``n`` of several, resolved ``n`` minutes before ``NOW`` (answered: MongoDB;
    rejected: "not now"); by ``by_user`` in Slack, or in Kandev when None."""
    bundle = numbered_bundle(n)
    outcome = make_outcome(
        state,
        via="slack" if by_user else "kandev",
        by_user=by_user,
        answers=[Answer(question_id="q1", selected_options=["q1_opt2"])]
        if state is CardState.ANSWERED
        else [],
        reason="not now" if state is CardState.REJECTED else "",
        at=NOW - timedelta(minutes=n),
    )
    task = make_task(bundle.task_id, title=f"Resolved task {n}", workspace_id="")
    return make_card(bundle, task=task, ts=f"1700000000.{n:06d}", state=state, outcome=outcome)


def waiting(
    n: int,
    *,
    task_title: str = "Pick a datastore",
    workspace: str = "Platform",
    permalink: str | None = None,
    title: str = "Database",
    prompt: str = DB_PROMPT,
    questions: int = 1,
    age_s: int = 600,
) -> Waiting:
    """Bundle ``n`` as a listing shows it: asked ``age_s`` seconds before ``NOW``."""
    bundle = numbered_bundle(
        n,
        *make_questions(questions, title=title, prompt=prompt),
        created_at=NOW - timedelta(seconds=age_s),
    )
    task = make_task(
        bundle.task_id, title=task_title, workspace_id=f"ws-{workspace}", workspace_name=workspace
    )
    return Waiting(listed=bundle, task=task, permalink=permalink)


def record_card(
    store: Database, pending_id: str, *, channel: str = "C1", **bundle_fields: Any
) -> bool:
    """``store.cards.claim`` for ``make_bundle(pending_id=pending_id, **bundle_fields)``."""
    bundle = make_bundle(pending_id=pending_id, **bundle_fields)
    task = make_task(bundle.task_id)
    return store.cards.record_card(NewCard(bundle, task, channel))
