"""How a ``cards`` row becomes a :class:`bot.core.domain.Card` (shared by the repositories
that read cards: cards and their copies, follow-ups)."""

from __future__ import annotations

from typing import Any

from bot.core.clarification import Bundle
from bot.core.domain import Card, CardOutcome, CardState, PastAnswer, TaskInfo


def card_from_row(row: Any) -> Card:
    return Card(
        pending_id=row.pending_id,
        task_id=row.task_id,
        session_id=row.session_id,
        workspace_id=row.workspace_id,
        channel=row.channel,
        ts=row.ts,
        state=CardState(row.state),
        bundle=Bundle.model_validate_json(row.bundle_json),
        task=TaskInfo.model_validate_json(row.task_json),
        outcome=CardOutcome.model_validate_json(row.outcome_json) if row.outcome_json else None,
        past=PastAnswer.model_validate_json(row.past_json) if row.past_json else None,
        created_at=row.created_at,
        updated_at=row.updated_at,
    )
