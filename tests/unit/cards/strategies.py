"""Hypothesis strategies for whatever Kandev might send: 1–4 questions × 2–6 options, texts up
to 10,000 characters with emoji, ``<>&``, Slack control sequences and Markdown; answers with
several options selected and up to 2,000 characters of free text (what Kandev accepts); and
text built around ``@here``/``@channel``/``@everyone`` and mention tokens. They draw the fields
and leave the building to tests/kit/factories.py."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta

from hypothesis import strategies as st

from kandev_slack.cards.limits import KANDEV_MAX_TEXT
from kandev_slack.core.clarification import Answer, Bundle, Option, Question
from kandev_slack.core.domain import CardOutcome, CardState, TaskInfo
from tests.kit.factories import NOW, make_bundle, make_outcome, make_question, make_task

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


#: Makes the text strategy for one field, given its maximum size (``texts`` by default).
TextsFactory = Callable[[int], st.SearchStrategy[str]]

# ---- text built to notify people -------------------------------------------------------------

BROADCAST_WORDS = ["here", "channel", "everyone"]
#: Invisible characters an agent could slip between ``@`` and the word.
INVISIBLES = ["\u200b", "\u200c", "\u200d", "\u200e", "\u2060", "\u2063", "\ufeff", "\u00ad"]
_EMPHASIS = ["*", "_", "~", "`", "**", "__", "~~"]
_AROUND = [
    *_EMPHASIS,
    *INVISIBLES,
    *"!?.,:;'\"()[]{}<>&|/\\-#+=^%$",
    "“",
    "”",
    "…",
    "_s",
    "s",
    "1",
    "ford",
    " ",
    "\n",
    "> ",
    "- ",
    "# ",
]
MENTION_TOKENS = [
    "<!here>",
    "<!here|here>",
    "<!channel>",
    "<!channel|x>",
    "<!everyone>",
    "<!subteam^S0GROUP>",
    "<!subteam^S0GROUP|@oncall>",
    "<@U0ALICE001>",
    "<@W0BOB0001|bob>",
    "<#C0CHAN>",
]


def _random_case(word: str) -> st.SearchStrategy[str]:
    flips = st.lists(st.booleans(), min_size=len(word), max_size=len(word))
    return flips.map(
        lambda f: "".join(c.upper() if up else c for c, up in zip(word, f, strict=True))
    )


@st.composite
def broadcast_words(draw) -> str:
    """``@here``/``@channel``/``@everyone`` in any case, with emphasis, punctuation, underscores
    or invisible characters before, after and between ``@`` and the word."""
    word = draw(st.sampled_from(BROADCAST_WORDS).flatmap(_random_case))
    gap = "".join(draw(st.lists(st.sampled_from(_EMPHASIS + INVISIBLES), max_size=2)))
    before = "".join(draw(st.lists(st.sampled_from(_AROUND), max_size=2)))
    after = "".join(draw(st.lists(st.sampled_from(_AROUND), max_size=2)))
    return f"{before}@{gap}{word}{after}"


@st.composite
def _markdown_around(draw) -> str:
    """Markdown constructs that could put ``@`` and a broadcast word next to each other once
    rendered (a link, an image, a code span around either part)."""
    word = draw(st.sampled_from(BROADCAST_WORDS).flatmap(_random_case))
    other = draw(st.sampled_from(["", "x", "https://example.com/a", word, f"@{word}", "!" + word]))
    forms = [
        f"@[]({word})",
        f"@[{word}]({other})",
        f"@![]({word})",
        f"[@]({other}){word}",
        f"@`{word}`",
        f"`@`{word}",
        f"@<https://{word}.example>",
        f"[{other}](<!{word}>)",
        f"@**{word}**",
        f"@~~{word}~~",
        f"@\\{word}",
        f"@&#8203;{word}",
    ]
    return draw(st.sampled_from(forms))


def mention_texts(max_size: int = 10_000) -> st.SearchStrategy[str]:
    """Agent text full of would-be notifications, joined with or without separators."""
    piece = st.one_of(
        broadcast_words(),
        st.sampled_from(MENTION_TOKENS),
        _markdown_around(),
        words,
    )
    joined = st.lists(
        st.tuples(piece, st.sampled_from(["", " ", "\n", "*", "_"])), min_size=1, max_size=12
    ).map(lambda parts: "".join(p + sep for p, sep in parts))
    return st.one_of(joined, joined.map(lambda t: _padded(t, max_size)))


ids_text = st.one_of(
    st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789_-", min_size=1, max_size=16),
    st.text(min_size=1, max_size=64),
)


@st.composite
def questions(draw, index: int, question_id: str, text: TextsFactory | None = None) -> Question:
    make = text or texts
    count = draw(st.integers(min_value=2, max_value=6))
    option_ids = draw(
        st.one_of(
            st.just([f"q{index + 1}_opt{j + 1}" for j in range(count)]),
            st.lists(ids_text, min_size=count, max_size=count, unique=True),
        )
    )
    options = [
        Option(option_id=oid, label=draw(make(10_000)), description=draw(make(10_000)))
        for oid in option_ids
    ]
    return make_question(
        index + 1,
        question_id=question_id,
        title=draw(make(200)),
        prompt=draw(make(10_000)),
        options=options,
    )


@st.composite
def bundles(draw, text: TextsFactory | None = None) -> Bundle:
    """A bundle; ``text`` makes its texts (``texts`` by default, ``mention_texts`` for the
    notification properties)."""
    make = text or texts
    count = draw(st.integers(min_value=1, max_value=4))
    qids = draw(st.lists(ids_text, min_size=count, max_size=count, unique=True))
    qs = [draw(questions(i, qid, make)) for i, qid in enumerate(qids)]
    age = draw(st.integers(min_value=0, max_value=10 * 86400))
    return make_bundle(
        *qs,
        pending_id=str(draw(st.uuids())),
        task_id=str(draw(st.uuids())),
        session_id=str(draw(st.uuids())),
        created_at=NOW - timedelta(seconds=age),
        context=draw(make(10_000)),
    )


def tasks_for(bundle: Bundle, text: TextsFactory | None = None) -> st.SearchStrategy[TaskInfo]:
    make = text or texts
    return st.builds(
        make_task,
        task_id=st.just(bundle.task_id),
        title=make(2000),
        workspace_id=st.just("ws"),
        workspace_name=make(500),
    )


def free_texts(text: TextsFactory | None = None) -> st.SearchStrategy[str]:
    """Free text or a reason: anything, often exactly Kandev's maximum of 2,000 characters."""
    make = text or texts
    return st.one_of(make(3000), make(KANDEV_MAX_TEXT).map(lambda t: _padded(t, KANDEV_MAX_TEXT)))


def _padded(text: str, size: int) -> str:
    """``text`` repeated to exactly ``size`` characters."""
    unit = text or "x"
    return (unit * (size // len(unit) + 1))[:size]


@st.composite
def answers_for(draw, bundle: Bundle, text: TextsFactory | None = None) -> list[Answer]:
    """One answer per question: several options selected (Kandev accepts multi-select; an id
    it does not know still reaches the renderer from old conversations), and free text."""
    answers = []
    for question in bundle.questions:
        known = [o.option_id for o in question.options]
        picks = draw(
            st.one_of(
                st.lists(st.one_of(st.sampled_from(known), ids_text), max_size=2),
                st.lists(st.sampled_from(known), unique=True, max_size=len(known)),
                st.just(known),
            )
        )
        answers.append(
            Answer(
                question_id=question.question_id,
                selected_options=picks,
                custom_text=draw(free_texts(text)),
            )
        )
    return draw(st.permutations(answers))


@st.composite
def outcomes_for(
    draw, bundle: Bundle, state: CardState, text: TextsFactory | None = None
) -> CardOutcome | None:
    if draw(st.booleans()) and draw(st.booleans()):
        return None
    return make_outcome(
        draw(st.one_of(st.just(state), st.sampled_from(list(CardState)))),
        via=draw(st.sampled_from(["slack", "kandev"])),
        by_user=draw(st.one_of(st.none(), st.just("U0123ABC"), st.just("<!channel>"), ids_text)),
        answers=draw(answers_for(bundle, text)),
        reason=draw(free_texts(text)),
        **draw(kandev_accounts(text)),
    )


@st.composite
def kandev_accounts(draw, text: TextsFactory | None = None) -> dict[str, str]:
    """Who in Kandev resolved it (``kandev_user``, ``kandev_name``): nobody, or an account
    whose display name is whatever Kandev accepted (long, a mention, a broadcast…)."""
    if draw(st.booleans()):
        return {"kandev_user": "", "kandev_name": ""}
    make = text or texts
    name = draw(st.one_of(st.just("Ana"), st.just(""), make(300), mention_texts(300)))
    return {"kandev_user": draw(ids_text), "kandev_name": name}
