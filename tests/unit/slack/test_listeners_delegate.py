"""The click and form listeners only parse, ack, delegate and tell: they check no result
types and build no views or words themselves (kandev_slack/usecases/answering/interactions.py runs
the pipeline,
kandev_slack/slack/presenters/tell.py shows its results)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import kandev_slack.slack.listeners

#: What only the pipeline and the presenter may use.
NOT_IN_A_LISTENER = (
    "kandev_slack.usecases.answering.admission",
    "kandev_slack.usecases.answering.answers",
    "kandev_slack.usecases.answering.verdicts",
    "kandev_slack.usecases.answering.interactions",
    "kandev_slack.kinds.question.cards.modals",
    "kandev_slack.cards.words",
)


def _imported(path: Path) -> set[str]:
    named: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            named.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            named.add(node.module)
            named.update(f"{node.module}.{alias.name}" for alias in node.names)
    return named


@pytest.mark.parametrize("name", ["actions.py", "views.py", "shortcuts.py"])
def test_the_interaction_listeners_import_no_results_views_or_words(name: str) -> None:
    path = Path(kandev_slack.slack.listeners.__file__).parent / name
    assert sorted(_imported(path) & set(NOT_IN_A_LISTENER)) == []
