"""Identifiers and codecs: button values and private_metadata round-trip, garbage is refused
clearly, and everything fits Slack's limits."""

from __future__ import annotations

import json

import pytest

from kandev_slack.cards import (
    ACTION_OPTION_PATTERN,
    ButtonValue,
    CodecError,
    ModalMetadata,
    option_action_id,
    parse_button_value,
    parse_modal_metadata,
)
from kandev_slack.cards.ids import choice_block_id, option_from_value, option_value, text_block_id
from kandev_slack.core.clarification import Option
from tests.kit.factories import PENDING_ID, make_question


def test_button_value_round_trip_is_compact():
    value = ButtonValue(pending_id=PENDING_ID, question_id="db", option_id="q1_opt2")
    encoded = value.encode()
    assert json.loads(encoded) == {"p": PENDING_ID, "q": "db", "o": "q1_opt2"}
    assert parse_button_value(encoded) == value
    bare = ButtonValue(pending_id=PENDING_ID)
    assert json.loads(bare.encode()) == {"p": PENDING_ID}
    assert parse_button_value(bare.encode()) == bare


@pytest.mark.parametrize(
    "garbage",
    [None, "", "x", "[]", "{}", '{"p": ""}', '{"p": 1}', '{"p": "a", "z": 1}', '"str"', "null"],
)
def test_garbage_button_values_are_refused_clearly(garbage):
    with pytest.raises(CodecError, match="button value"):
        parse_button_value(garbage)


def test_button_value_too_long_is_refused_at_encoding():
    with pytest.raises(CodecError, match="2000"):
        ButtonValue(pending_id="p", option_id="o" * 2000).encode()


def test_modal_metadata_round_trip():
    meta = ModalMetadata(
        pending_id=PENDING_ID,
        channel="C0123",
        ts="1764488872.000100",
        origin="list",
        response_url="https://hooks.slack.com/actions/T/1/abc",
    )
    assert parse_modal_metadata(meta.encode()) == meta
    default = ModalMetadata(pending_id=PENDING_ID)
    assert default.origin == "card" and parse_modal_metadata(default.encode()) == default
    with pytest.raises(CodecError, match="private_metadata"):
        parse_modal_metadata('{"p": "x", "o": "elsewhere"}')
    with pytest.raises(CodecError, match="3000"):
        ModalMetadata(pending_id="p", response_url="u" * 3000).encode()


def test_option_action_ids_are_unique_and_matchable():
    ids = [option_action_id(i) for i in range(6)]
    assert len(set(ids)) == 6 and all(ACTION_OPTION_PATTERN.match(i) for i in ids)
    assert not ACTION_OPTION_PATTERN.match("kq_other")


def test_block_ids_encode_the_question_id_and_stay_short():
    q = make_question(question_id="db", options=[])
    assert choice_block_id(0, q) == "kq_choice:0:db" and text_block_id(2, q) == "kq_text:2:db"
    odd = make_question(question_id="x" * 300 + " <&>", options=[])
    block_id = choice_block_id(1, odd)
    assert len(block_id) <= 255 and block_id.startswith("kq_choice:1:#")
    assert block_id == choice_block_id(1, odd)  # stable


def test_option_values_use_ids_or_an_index_when_too_long():
    q = make_question(
        question_id="q",
        options=[Option(option_id="q1_opt1", label="a"), Option(option_id="o" * 151, label="b")],
    )
    assert option_value(q, 0) == "q1_opt1" and option_value(q, 1) == "#1"
    assert option_from_value(q, "q1_opt1") == "q1_opt1"
    assert option_from_value(q, "#1") == "o" * 151
    assert option_from_value(q, "#0") is None  # option 0 is addressed by its id
    assert option_from_value(q, "nope") is None and option_from_value(q, "#9") is None


def test_option_values_stay_unique_whatever_the_ids():
    q = make_question(
        question_id="q",
        options=[
            Option(option_id="#1", label="a"),
            Option(option_id="#0", label="b"),
            Option(option_id="dup", label="c"),
            Option(option_id="dup", label="d"),
            Option(option_id="", label="e"),
        ],
    )
    values = [option_value(q, i) for i in range(5)]
    assert values == ["#0", "#1", "dup", "#3", "#4"]
    assert [option_from_value(q, v) for v in values] == ["#1", "#0", "dup", "dup", ""]
