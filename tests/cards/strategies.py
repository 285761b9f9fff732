"""Hypothesis strategies for whatever Kandev might send: 1–4 questions × 2–6 options, texts up
to 10,000 characters with emoji, ``<>&``, Slack control sequences and Markdown. They draw the
fields and leave the building to tests/factories.py."""

from __future__ import annotations

from datetime import timedelta

from hypothesis import strategies as st

from bot.domain import CardOutcome, CardState, TaskInfo
from bot.kandev.models import Answer, Bundle, Option, Question
from tests.factories import NOW, make_bundle, make_outcome, make_question, make_task

NASTY_PIECES = [
    "<!channel>",
    "<!here>",
    "<@U12345>",
    "<#C12345>",
    "<!subteam^S123>",
    "<http://evil.example|Click>",
    "<https://ok.example/a>",
    "&",
    "&amp;",
    "&lt;",
    "<",
    ">",
    "@channel",
    "@here",
    "👍🏽",
    "👨‍👩‍👧",
    "🇫🇷🇩🇪",
    "e\u0301",
    "```",
    "```python\nx = 1\n",
    "`",
    "**",
    "*",
    "_",
    "~~",
    "[docs](https://example.com/a?b=1&c=2)",
    "[x](!channel)",
    "[y](javascript:alert(1))",
    "![img](https://example.com/i.png)",
    "\n",
    "\n\n",
    "# ",
    "- ",
    "> ",
    "1. ",
    "| a | b |\n|---|---|\n| 1 | 2 |\n",
    "x" * 120,
    "https://example.com/" + "a" * 300,
    "\t",
    "\u202e",
    "\x00",
    " ",
    "",
]

words = st.one_of(
    st.sampled_from(NASTY_PIECES),
    st.text(min_size=1, max_size=12),
    st.sampled_from(["the", "database", "should", "we", "use", "PostgreSQL", "MongoDB", "é"]),
)


@st.composite
def _long_text(draw, max_size: int) -> str:
    piece = draw(st.lists(words, min_size=1, max_size=8).map(" ".join))
    repeat = draw(st.integers(min_value=1, max_value=max(1, max_size // max(1, len(piece)))))
    return (piece * repeat)[:max_size]


def texts(max_size: int = 10_000) -> st.SearchStrategy[str]:
    return st.one_of(
        st.just(""),
        st.text(max_size=40),
        st.lists(words, max_size=30).map(" ".join),
        _long_text(max_size),
    )


ids_text = st.one_of(
    st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789_-", min_size=1, max_size=16),
    st.text(min_size=1, max_size=64),
)


@st.composite
def questions(draw, index: int, question_id: str) -> Question:
    count = draw(st.integers(min_value=2, max_value=6))
    option_ids = draw(
        st.one_of(
            st.just([f"q{index + 1}_opt{j + 1}" for j in range(count)]),
            st.lists(ids_text, min_size=count, max_size=count, unique=True),
        )
    )
    options = [
        Option(option_id=oid, label=draw(texts()), description=draw(texts())) for oid in option_ids
    ]
    return make_question(
        index + 1,
        question_id=question_id,
        title=draw(texts(200)),
        prompt=draw(texts()),
        options=options,
    )


@st.composite
def bundles(draw) -> Bundle:
    count = draw(st.integers(min_value=1, max_value=4))
    qids = draw(st.lists(ids_text, min_size=count, max_size=count, unique=True))
    qs = [draw(questions(i, qid)) for i, qid in enumerate(qids)]
    age = draw(st.integers(min_value=0, max_value=10 * 86400))
    return make_bundle(
        *qs,
        pending_id=str(draw(st.uuids())),
        task_id=str(draw(st.uuids())),
        session_id=str(draw(st.uuids())),
        created_at=NOW - timedelta(seconds=age),
        context=draw(texts()),
    )


def tasks_for(bundle: Bundle) -> st.SearchStrategy[TaskInfo]:
    return st.builds(
        make_task,
        task_id=st.just(bundle.task_id),
        title=texts(2000),
        workspace_id=st.just("ws"),
        workspace_name=texts(500),
    )


@st.composite
def answers_for(draw, bundle: Bundle) -> list[Answer]:
    answers = []
    for question in bundle.questions:
        picks = draw(
            st.lists(
                st.one_of(
                    st.sampled_from([o.option_id for o in question.options]),
                    ids_text,
                ),
                max_size=2,
            )
        )
        answers.append(
            Answer(
                question_id=question.question_id,
                selected_options=picks,
                custom_text=draw(texts(3000)),
            )
        )
    return draw(st.permutations(answers))


@st.composite
def outcomes_for(draw, bundle: Bundle, state: CardState) -> CardOutcome | None:
    if draw(st.booleans()) and draw(st.booleans()):
        return None
    return make_outcome(
        draw(st.one_of(st.just(state), st.sampled_from(list(CardState)))),
        via=draw(st.sampled_from(["slack", "kandev"])),
        by_user=draw(st.one_of(st.none(), st.just("U0123ABC"), st.just("<!channel>"), ids_text)),
        answers=draw(answers_for(bundle)),
        reason=draw(texts(3000)),
    )
