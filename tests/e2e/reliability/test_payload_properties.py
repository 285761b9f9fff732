"""Guarantee 6, property-based: whatever arrives, parsing fails only in the ways we handle.

Arbitrary JSON-ish values (and near-misses of Slack's shapes) go into the typed payload parser,
the button / private_metadata codecs, the modal submission parsers, the request guard and the
refusal helpers: the only exceptions allowed are PayloadError and CodecError, and what parses
keeps its promises (a user id, an action, input states of Slack's shape).
"""

from __future__ import annotations

import json
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kandev_slack.cards import ids
from kandev_slack.cards.ids import ButtonValue, CodecError, ModalMetadata
from kandev_slack.core.clarification import Option
from kandev_slack.kinds.question.cards.submissions import (
    parse_answer_submission,
    parse_reject_submission,
)
from kandev_slack.slack.parsing import raw_payload
from kandev_slack.slack.parsing.payloads import (
    BlockAction,
    MessageShortcut,
    PayloadError,
    ViewSubmission,
    parse,
)
from kandev_slack.slack.transport.guard import bolt_request, signature_problem
from tests.kit.factories import make_bundle, make_question

PROPERTY = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
FORM_ENCODED = "application/x-www-form-urlencoded"

scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**63), max_value=2**63)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=30)
)
json_values = st.recursive(
    scalars,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=12), inner, max_size=4)
    ),
    max_leaves=20,
)
ids_text = st.sampled_from(["", "U0ALICE001", "C0QUESTION", "kq_option:0", "1712.0001", "x"])
maybe = lambda strategy: strategy | json_values  # noqa: E731 - a right type, or anything


def _obj(**fields: Any) -> st.SearchStrategy[dict[str, Any]]:
    """Dicts with some of ``fields`` (each right-ish or anything) plus random extra keys."""
    return st.fixed_dictionaries({}, optional={k: maybe(v) for k, v in fields.items()}).flatmap(
        lambda d: st.dictionaries(st.text(max_size=8), json_values, max_size=2).map(
            lambda extra: {**extra, **d}
        )
    )


users = _obj(id=ids_text, name=st.text(max_size=5))
actions = _obj(action_id=ids_text, value=st.text(max_size=40), block_id=ids_text)
input_states = _obj(
    type=st.sampled_from(["plain_text_input", "radio_buttons", "static_select"]),
    value=st.text(max_size=40),
    selected_option=_obj(value=st.sampled_from(["a", "b", "#0", "#1", "#9", ""])),
)
block_ids = st.sampled_from(
    ["kq_choice:0:q1", "kq_text:0:q1", "kq_choice:1:q2", "kq_text:1:q2", ids.BLOCK_REASON, "x"]
)
state_values = st.dictionaries(
    block_ids,
    maybe(
        st.dictionaries(
            st.sampled_from([ids.ACTION_CHOICE, ids.ACTION_TEXT, ids.ACTION_REASON, "z"]),
            maybe(input_states),
            max_size=2,
        )
    ),
    max_size=4,
)
views = _obj(
    id=ids_text,
    callback_id=st.sampled_from([ids.CALLBACK_ANSWER, ids.CALLBACK_REJECT, "legacy"]),
    private_metadata=st.text(max_size=40),
    state=_obj(values=state_values),
)
block_actions = _obj(
    type=st.just("block_actions"),
    user=users,
    actions=st.lists(maybe(actions), max_size=3),
    container=_obj(
        type=st.sampled_from(["message", "view"]),
        channel_id=ids_text,
        message_ts=ids_text,
        is_ephemeral=st.booleans(),
    ),
    channel=_obj(id=ids_text),
    response_url=st.text(max_size=20),
    trigger_id=st.text(max_size=10),
)
view_submissions = _obj(type=st.just("view_submission"), user=users, view=views)
shortcuts = _obj(
    type=st.just("message_action"),
    user=users,
    channel=_obj(id=ids_text),
    message=_obj(ts=ids_text),
    callback_id=st.text(max_size=10),
)
payloads = json_values | block_actions | view_submissions | shortcuts


AB = [Option(option_id="a", label="A"), Option(option_id="b", label="B")]
BUNDLE = make_bundle(make_question(1, options=AB), make_question(2, options=AB))


@PROPERTY
@given(payloads)
def test_parse_fails_only_with_payload_error(body: Any) -> None:
    for model in (BlockAction, ViewSubmission, MessageShortcut):
        try:
            parsed = parse(model, body)
        except PayloadError:
            continue
        assert isinstance(parsed.user_id, str) and parsed.user_id
        if isinstance(parsed, BlockAction):
            assert isinstance(parsed.action.action_id, str) and parsed.action.action_id
            assert isinstance(parsed.channel_id, str)
            assert isinstance(parsed.on_message, bool)
        if isinstance(parsed, ViewSubmission):
            for inputs in parsed.view.values.values():
                for state in inputs.values():
                    assert isinstance(state.get("value", ""), str)
                    assert isinstance(state.get("selected_option", {}), dict)


@PROPERTY
@given(view_submissions)
def test_modal_submissions_parse_to_answers_or_field_errors(body: Any) -> None:
    try:
        sub = parse(ViewSubmission, body)
    except PayloadError:
        return
    values = sub.view.values
    try:
        answers = parse_answer_submission(BUNDLE, values)
    except CodecError:
        answers = None
    if isinstance(answers, dict):
        assert answers and all(isinstance(v, str) and v for v in answers.values())
        assert set(answers) <= set(values) | {
            ids.choice_block_id(i, q) for i, q in enumerate(BUNDLE.questions)
        } | {ids.text_block_id(i, q) for i, q in enumerate(BUNDLE.questions)}
    elif answers is not None:
        assert [a.question_id for a in answers] == ["q1", "q2"]
        for answer in answers:
            assert set(answer.selected_options) <= {"a", "b"}
            assert answer.selected_options or answer.custom_text.strip()
            assert len(answer.custom_text) <= 2000
    reason = parse_reject_submission(values)
    if isinstance(reason, str):
        assert reason == reason.strip() and 0 < len(reason) <= 2000
    else:
        assert set(reason) == {ids.BLOCK_REASON}


@PROPERTY
@given(st.text(max_size=200) | json_values.map(json.dumps) | st.none())
def test_codecs_fail_only_with_codec_error(raw: str | None) -> None:
    for decode in (ids.parse_button_value, ids.parse_modal_metadata):
        try:
            decoded = decode(raw)
        except CodecError:
            continue
        assert decoded.pending_id


@PROPERTY
@given(
    st.text(min_size=1, max_size=60),
    st.text(max_size=60),
    st.text(max_size=60),
    st.sampled_from(["card", "list", "home", "shortcut"]),
)
def test_codecs_round_trip(pending_id: str, question_id: str, option_id: str, origin) -> None:
    button = ButtonValue(pending_id=pending_id, question_id=question_id, option_id=option_id)
    assert ids.parse_button_value(button.encode()) == button
    meta = ModalMetadata(pending_id=pending_id, channel=question_id, ts=option_id, origin=origin)
    assert ids.parse_modal_metadata(meta.encode()) == meta


@PROPERTY
@given(
    st.binary(max_size=200) | payloads.map(lambda p: json.dumps(p).encode()),
    st.sampled_from(["application/json", "application/x-www-form-urlencoded", "", "text/x"]),
)
def test_request_guard_never_raises(body: bytes, content_type: str) -> None:
    for signed, kind in ((body, content_type), (b"payload=" + body, FORM_ENCODED)):
        request = bolt_request(signed, headers={"content-type": kind})
        # a request Bolt can dispatch, or why not: never an exception
        assert isinstance(request, str) or isinstance(request.body, dict)


@PROPERTY
@given(st.binary(max_size=100), st.none() | st.text(max_size=20), st.none() | st.text(max_size=80))
def test_signature_check_never_raises_and_refuses_junk(body, timestamp, signature) -> None:
    problem = signature_problem("secret-123456", body, timestamp, signature, now=1_700_000_000)
    assert isinstance(problem, str)  # a random signature is never valid


@PROPERTY
@given(payloads)
def test_refusal_helpers_read_any_payload(body: Any) -> None:
    for read in (
        raw_payload.user_of,
        raw_payload.channel_of,
        raw_payload.response_url_of,
        raw_payload.action_id_of,
    ):
        assert isinstance(read(body), str)
    assert isinstance(raw_payload.quote(body), str)
