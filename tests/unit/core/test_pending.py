"""The one pending item: a bundle is one, a card exposes it, and the kind-agnostic parts never
reach for what only a bundle has (so a permission request can reuse them as they are)."""

from __future__ import annotations

import ast
from pathlib import Path

from kandev_slack.core.pending import ItemKind, PendingItem
from tests.kit.factories import make_bundle, make_card

BOT = Path(__file__).resolve().parents[3] / "kandev_slack"

#: Parts that work on any pending item: they key everything by the card's id and read only
#: what PendingItem offers.
KIND_AGNOSTIC = [
    "usecases/followups/reminders.py",
    "usecases/followups/subscriptions.py",
    "usecases/followups/periodic.py",
    "usecases/leases.py",
    "usecases/answering/recovery.py",
    "usecases/views/home.py",
    "usecases/answering/interactions.py",
    "usecases/answerers.py",
    "usecases/tasks.py",
    "store/queues/outbox.py",
    "store/queues/pace.py",
    "store/cards/followups.py",
    "store/people/subscriptions.py",
    "store/audit.py",
    "store/queues/submissions.py",
    "store/cards/copies.py",
    "store/people/home.py",
    "store/retention.py",
]


def test_a_bundle_is_a_pending_item() -> None:
    bundle = make_bundle()
    assert isinstance(bundle, PendingItem)
    assert (bundle.kind, bundle.item_id) == (ItemKind.QUESTION, bundle.pending_id)
    assert bundle.headline == "Which database should we use?"


def test_a_headline_is_one_line_and_falls_back_to_the_title() -> None:
    bundle = make_bundle()
    first = bundle.questions[0].model_copy(update={"prompt": "", "title": "Data\n  base"})
    untitled = bundle.model_copy(update={"questions": [first]})
    assert untitled.headline == "Data base"
    assert bundle.model_copy(update={"questions": []}).headline == ""


def test_a_card_exposes_its_item_and_kind() -> None:
    card = make_card()
    assert card.item is card.bundle and card.kind is ItemKind.QUESTION
    assert card.item.item_id == card.pending_id


def test_the_kind_agnostic_parts_never_touch_a_bundle() -> None:
    reaching = []
    for relative in KIND_AGNOSTIC:
        tree = ast.parse((BOT / relative).read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and node.attr in ("bundle", "questions"):
                reaching.append(f"{relative}:{node.lineno} .{node.attr}")
            if (
                isinstance(node, ast.ImportFrom)
                and node.module == "kandev_slack.kandev.models"
                and any(alias.name == "Bundle" for alias in node.names)
            ):
                reaching.append(f"{relative}:{node.lineno} imports Bundle")
    assert reaching == []
