"""Decoding a stored card (kandev_slack/store/cards/card_row.py): a card of a kind this release
does not know
is "unknown, leave alone", never read as an empty question bundle; a waiting card of a kind
older releases do not know (state NULL) is pending."""

from __future__ import annotations

from datetime import UTC, datetime
from types import SimpleNamespace
from typing import Any

import pytest
from pydantic import TypeAdapter, ValidationError

from kandev_slack.core.approval import Approval, ToolOption
from kandev_slack.core.domain import CardState, Item, UnknownKind
from kandev_slack.core.pending import KNOWN_KINDS, ItemKind, known_kind
from kandev_slack.store.cards.card_row import card_from_row
from tests.kit.factories import make_bundle

AT = datetime(2030, 1, 1, tzinfo=UTC)


def _row(item_json: str, *, kind: str, state: str | None = "pending") -> Any:
    return SimpleNamespace(
        pending_id="k-1",
        task_id="t-1",
        session_id="s-1",
        workspace_id="w-1",
        channel="C1",
        ts="1.2",
        thread_of=None,
        thread_ts=None,
        created_at=AT,
        updated_at=AT,
        kind=kind,
        state=state,
        bundle_json=item_json,
        task_json='{"task_id": "t-1"}',
        outcome_json=None,
        past_json=None,
        claim_user=None,
        claim_since=None,
        claim_until=None,
        claim_paused_s=0.0,
    )


def _approval() -> Approval:
    return Approval(
        task_id="t-1",
        session_id="s-1",
        request_id="r-1",
        pending_id="agentctl-1",
        created_at=AT,
        options=(ToolOption(option_id="allow_once", kind="allow_once"),),
    )


def test_the_known_kinds_are_every_item_kind() -> None:
    assert {"question", "approval"} == KNOWN_KINDS
    assert known_kind("approval") is ItemKind.APPROVAL
    assert known_kind("poll") is None and known_kind(None) is None


def test_a_card_of_an_unknown_kind_is_unknown_not_an_empty_bundle() -> None:
    # A newer release's item: what this release once read as a bundle without questions.
    newer = (
        '{"type": "poll", "pending_id": "x", "task_id": "t-1", '
        '"created_at": "2030-01-01T00:00:00Z"}'
    )
    with pytest.raises(UnknownKind) as raised:
        card_from_row(_row(newer, kind="poll"))
    assert (raised.value.pending_id, raised.value.kind) == ("k-1", "poll")
    # Even with a known kind column, an item whose own type is unknown is refused.
    with pytest.raises(ValidationError):
        TypeAdapter(Item).validate_json(newer)


def test_an_item_whose_type_differs_from_its_kind_is_unknown() -> None:
    with pytest.raises(UnknownKind):
        card_from_row(_row(_approval().model_dump_json(), kind="question"))


def test_a_waiting_approval_stored_without_state_is_pending() -> None:
    card = card_from_row(_row(_approval().model_dump_json(), kind="approval", state=None))
    assert card.kind is ItemKind.APPROVAL and card.state is CardState.PENDING
    question = card_from_row(_row(make_bundle().model_dump_json(), kind="question"))
    assert question.kind is ItemKind.QUESTION and question.state is CardState.PENDING
