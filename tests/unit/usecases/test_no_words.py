"""Use-cases return kinds, never sentences: no module under kandev_slack/usecases imports
kandev_slack/cards/words.py (the words are chosen at the edge,
kandev_slack/slack/presenters/said.py)."""

from __future__ import annotations

import ast
from pathlib import Path

import kandev_slack.usecases

WORDS = "kandev_slack.cards.words"


def _imports(tree: ast.AST) -> set[str]:
    """Every module an import names (``from a import b`` names ``a`` and ``a.b``)."""
    named: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            named.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            named.add(node.module)
            named.update(f"{node.module}.{alias.name}" for alias in node.names)
    return named


def test_no_use_case_imports_the_words_said_to_people() -> None:
    root = Path(kandev_slack.usecases.__file__).parent
    offenders = {
        path.name: sorted(n for n in _imports(ast.parse(path.read_text())) if n == WORDS)
        for path in sorted(root.rglob("*.py"))
    }
    assert {name: found for name, found in offenders.items() if found} == {}


def test_the_walk_sees_an_import_of_the_words() -> None:
    assert WORDS in _imports(ast.parse("from kandev_slack.cards import words as said"))
    assert WORDS in _imports(ast.parse("import kandev_slack.cards.words"))
    assert WORDS in _imports(ast.parse("from kandev_slack.cards.words import busy_message"))
