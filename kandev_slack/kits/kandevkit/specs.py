"""Question specs in the shape ``ask_user_question_kandev`` takes, for seeding bundles."""

from __future__ import annotations

from typing import Any

QuestionSpec = dict[str, Any]


def question(qid: str, title: str, prompt: str, *options: tuple[str, str]) -> QuestionSpec:
    """One question: ``options`` are ``(label, description)`` pairs (Kandev wants 2-6)."""
    return {
        "id": qid,
        "title": title,
        "prompt": prompt,
        "options": [{"label": label, "description": description} for label, description in options],
    }


def sample_questions(count: int = 1, options: int = 2) -> list[QuestionSpec]:
    """``count`` distinct questions (ids ``q1``…), each with ``options`` options."""
    return [
        question(
            f"q{n}",
            f"Choice {n}",
            f"Which option do you pick for question **{n}**?",
            *[(f"Option {n}.{m}", f"Description of option {n}.{m}") for m in range(1, options + 1)],
        )
        for n in range(1, count + 1)
    ]


def option_id(question_number: int, option_number: int) -> str:
    """Kandev's id for option ``option_number`` of question ``question_number`` (1-based)."""
    return f"q{question_number}_opt{option_number}"
