"""Fixtures of the question card tests: the card tests' own (tests/unit/cards/conftest.py)."""

from tests.unit.cards.conftest import one_question, task, three_questions

__all__ = ["one_question", "task", "three_questions"]
