"""Small, readable bundles for the card tests (modelled on kandev-api.md's own example)."""

from __future__ import annotations

from datetime import UTC, datetime

from bot.kandev.models import Bundle

NOW = datetime(2026, 11, 30, 7, 30, 52, tzinfo=UTC)
KANDEV_URL = "http://localhost:38429"
PENDING_ID = "ce0a763b-5d1e-4c8e-9d0e-0a4f6c7b8e21"
TASK_ID = "ef6da45c-1f6e-4a55-8d0b-3f8e4c2b1a90"


def make_bundle(*questions: dict, context: str = "") -> Bundle:
    return Bundle.model_validate(
        {
            "pending_id": PENDING_ID,
            "task_id": TASK_ID,
            "session_id": "8df24f6d-0000-4000-8000-000000000000",
            "created_at": "2026-11-30T07:27:52Z",
            "context": context,
            "questions": list(questions),
        }
    )


DB_QUESTION = {
    "question_id": "db",
    "title": "Database",
    "prompt": "Which database should we use?",
    "options": [
        {"option_id": "q1_opt1", "label": "PostgreSQL", "description": "Relational"},
        {"option_id": "q1_opt2", "label": "MongoDB", "description": "Document store"},
    ],
}
CACHE_QUESTION = {
    "question_id": "cache",
    "title": "Cache",
    "prompt": "Which cache?",
    "options": [
        {"option_id": "q2_opt1", "label": "Redis", "description": "In-memory"},
        {"option_id": "q2_opt2", "label": "None", "description": ""},
    ],
}
QUEUE_QUESTION = {
    "question_id": "queue",
    "title": "Queue",
    "prompt": "Which queue?",
    "options": [
        {"option_id": "q3_opt1", "label": "RabbitMQ", "description": ""},
        {"option_id": "q3_opt2", "label": "Kafka", "description": ""},
    ],
}
