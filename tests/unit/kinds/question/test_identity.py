"""Identical questions (issue 33): one card per identical bundle in a channel. The same
workspace, number of questions and, for each, title, prompt, option labels and option
descriptions, normalised — never the context the agent gave around them."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from kandev_slack.core.clarification import Option
from kandev_slack.kinds.question.spec import QuestionSpec
from tests.kit.factories import make_bundle, make_question, numbered_bundle

SPEC = QuestionSpec()


def key(bundle, workspace: str = "ws-1") -> str | None:
    return SPEC.identity_key(bundle, workspace)


def options(*pairs: tuple[str, str]) -> list[Option]:
    return [
        Option(option_id=f"o{n}", label=label, description=d) for n, (label, d) in enumerate(pairs)
    ]


def test_two_agents_asking_the_same_share_one_key_whatever_their_context() -> None:
    one = numbered_bundle(1, make_question(), context="I looked at the schema.")
    two = numbered_bundle(2, make_question(), context="Something else entirely")
    assert key(one) is not None and key(one) == key(two)


def test_case_spaces_emphasis_and_trailing_punctuation_do_not_matter() -> None:
    plain = make_bundle(make_question(title="Database", prompt="Which database should we use?"))
    shouted = make_bundle(make_question(title="*DATABASE*", prompt="which  database should we use"))
    assert key(plain) == key(shouted)


def test_option_ids_do_not_matter_but_their_labels_and_descriptions_do() -> None:
    base = make_bundle(
        make_question(options=options(("PostgreSQL", "Relational"), ("MongoDB", "Doc")))
    )
    renamed = make_bundle(
        make_question(
            options=[
                Option(option_id="x", label="PostgreSQL", description="Relational"),
                Option(option_id="y", label="MongoDB", description="Doc"),
            ]
        )
    )
    other_description = make_bundle(
        make_question(options=options(("PostgreSQL", "Relational"), ("MongoDB", "Documents")))
    )
    other_label = make_bundle(
        make_question(options=options(("Postgres", "Relational"), ("MongoDB", "Doc")))
    )
    reordered = make_bundle(
        make_question(options=options(("MongoDB", "Doc"), ("PostgreSQL", "Relational")))
    )
    assert key(base) == key(renamed)
    assert len({key(base), key(other_description), key(other_label), key(reordered)}) == 4


def test_another_workspace_title_prompt_or_number_of_questions_is_another_item() -> None:
    base = make_bundle(make_question())
    assert key(base) != key(base, "ws-2")
    assert key(base) != key(make_bundle(make_question(title="Storage")))
    assert key(base) != key(make_bundle(make_question(prompt="Which store?")))
    assert key(make_bundle(count=2)) != key(make_bundle(count=3))
    # A description moved from one option to the next is another question.
    one = make_bundle(make_question(options=options(("A", "x"), ("B", ""))))
    two = make_bundle(make_question(options=options(("A", ""), ("B", "x"))))
    assert key(one) != key(two)


def test_multi_question_bundles_have_a_key_too() -> None:
    assert key(make_bundle(count=3)) == key(numbered_bundle(2, count=3))


text = st.text(max_size=30)


@given(text, text, text, text, text, text)
def test_parts_never_run_into_each_other(a: str, b: str, c: str, d: str, e: str, f: str) -> None:
    """Two bundles have one key only if their normalised parts are the same (no separator in
    a text can make two different ones collide)."""
    one = make_bundle(make_question(title=a, prompt=b, options=options((c, "x"))))
    two = make_bundle(make_question(title=d, prompt=e, options=options((f, "x"))))
    from kandev_slack.core.normalise import normalise

    same = [normalise(s) for s in (a, b, c)] == [normalise(s) for s in (d, e, f)]
    assert (key(one) == key(two)) == same
