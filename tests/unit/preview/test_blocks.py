"""Block Kit → HTML: each block and element the bot uses, the data the page's script needs to
act, and that no text in any block yields markup of its own."""

from __future__ import annotations

import json
from html import unescape
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from kandev_slack.preview.blocks import Look, render_blocks
from tests.unit.preview.safe_html import markup_problems
from tests.unit.properties import examples


def md(text: str) -> dict[str, Any]:
    return {"type": "mrkdwn", "text": text}


def plain(text: str) -> dict[str, Any]:
    return {"type": "plain_text", "text": text}


def option(value: str, text: str) -> dict[str, Any]:
    return {"text": plain(text), "value": value}


def render(*blocks: dict[str, Any], look: Look | None = None) -> str:
    out = render_blocks(list(blocks), look or Look())
    assert markup_problems(out) == []
    return out


def test_a_section_with_fields_and_a_button_accessory() -> None:
    out = render(
        {
            "type": "section",
            "block_id": "intro",
            "text": md("*Which* one?"),
            "fields": [md("a"), plain("*b*")],
            "accessory": {
                "type": "button",
                "action_id": "kq_open",
                "value": "v1",
                "text": plain("Open"),
            },
        }
    )
    assert '<div class="block block-section" data-block-id="intro">' in out
    assert "<b>Which</b> one?" in out
    assert '<div class="field">*b*</div>' in out  # plain text is not formatted
    assert 'data-act="click" data-value="v1">Open</button>' in out
    assert 'data-action-id="kq_open" data-block-id="intro"' in out


def test_header_divider_and_context() -> None:
    out = render(
        {"type": "header", "text": plain("Title <x>")},
        {"type": "divider"},
        {"type": "context", "elements": [md("_asked_"), {"type": "image", "alt_text": "bot"}]},
    )
    assert '<h3 class="header">Title &lt;x&gt;</h3>' in out
    assert "<hr>" in out
    assert '<div class="context"><span><i>asked</i></span>' in out
    assert "[image: bot]" in out  # images are never loaded from outside


def test_buttons_keep_their_style_and_confirmation() -> None:
    out = render(
        {
            "type": "actions",
            "block_id": "act",
            "elements": [
                {"type": "button", "action_id": "a", "text": plain("Yes"), "style": "primary"},
                {"type": "button", "action_id": "b", "text": plain("No"), "style": "danger"},
                {"type": "button", "action_id": "c", "text": plain("Odd"), "style": 'x" y'},
                {
                    "type": "button",
                    "action_id": "d",
                    "text": plain("Always"),
                    "confirm": {
                        "title": plain("Sure?"),
                        "text": md("*Every* time"),
                        "confirm": plain("Allow"),
                        "deny": plain("Back"),
                    },
                },
                {
                    "type": "button",
                    "action_id": "e",
                    "text": plain("Kandev"),
                    "url": "https://kandev.test/t/1",
                },
            ],
        }
    )
    assert 'class="btn btn-primary"' in out and 'class="btn btn-danger"' in out
    assert 'class="btn" data-action-id="c"' in out  # an unknown style is no style
    confirm = out.split('data-confirm="')[1].split('"')[0]
    assert json.loads(unescape(confirm)) == {
        "title": "Sure?",
        "text": "<b>Every</b> time",
        "confirm": "Allow",
        "deny": "Back",
    }
    assert '<a class="btn" href="https://kandev.test/t/1" target="_blank"' in out


def test_menus_outside_a_form_act_at_once() -> None:
    out = render(
        {
            "type": "actions",
            "block_id": "menus",
            "elements": [
                {"type": "overflow", "action_id": "more", "options": [option("a", "Archive")]},
                {
                    "type": "static_select",
                    "action_id": "pick",
                    "placeholder": plain("Pick one"),
                    "options": [option("1", "One"), option("2", "Two")],
                    "initial_option": option("2", "Two"),
                },
                {"type": "radio_buttons", "action_id": "r", "options": [option("x", "X")]},
            ],
        }
    )
    assert '<select class="overflow" data-action-id="more"' in out and 'data-act="select"' in out
    assert '<option value="2" selected>Two</option>' in out
    assert '<option value="" disabled>Pick one</option>' in out
    assert 'type="radio" name="menus/r" value="x" data-action-id="r"' in out


def test_inputs_of_a_modal_are_named_and_show_their_error() -> None:
    look = Look(errors={"q1": "Choose an option *or* write"})
    out = render(
        {
            "type": "input",
            "block_id": "q1",
            "label": plain("Database"),
            "optional": True,
            "element": {
                "type": "radio_buttons",
                "action_id": "choice",
                "options": [
                    {**option("q1_opt1", "PostgreSQL"), "description": plain("Relational")},
                    option("q1_opt2", "SQLite"),
                ],
            },
        },
        {
            "type": "input",
            "block_id": "t1",
            "label": plain("Your answer"),
            "hint": plain("In your words"),
            "element": {
                "type": "plain_text_input",
                "action_id": "text",
                "multiline": True,
                "max_length": 2000,
                "placeholder": plain("Write"),
            },
        },
        {
            "type": "input",
            "block_id": "c1",
            "label": plain("Also"),
            "element": {
                "type": "checkboxes",
                "action_id": "boxes",
                "options": [option("a", "A")],
                "initial_options": [option("a", "A")],
            },
        },
        {
            "type": "input",
            "block_id": "s1",
            "label": plain("Pick"),
            "element": {"type": "static_select", "action_id": "sel", "options": [option("v", "V")]},
        },
        {
            "type": "input",
            "block_id": "line",
            "label": plain("Reason"),
            "element": {"type": "plain_text_input", "action_id": "why", "initial_value": 'a"b'},
        },
        look=look,
    )
    assert 'Database <span class="optional">(optional)</span>' in out
    assert '<input type="radio" name="q1/choice" value="q1_opt1">' in out
    assert '<div class="option-description">Relational</div>' in out
    assert '<div class="field-error" role="alert">Choose an option <b>or</b> write</div>' in out
    assert '<textarea name="t1/text" rows="3" placeholder="Write" maxlength="2000">' in out
    assert '<div class="hint">In your words</div>' in out
    assert '<input type="checkbox" name="c1/boxes" value="a" checked>' in out
    assert (
        '<select class="select" name="s1/sel">' in out
        and "data-act" not in out.split("s1/sel")[1][:40]
    )
    assert 'value="a&quot;b"' in out


def test_an_unknown_block_or_element_says_it_is_not_shown() -> None:
    out = render(
        {"type": "video", "block_id": "v"},
        {"type": "actions", "elements": [{"type": "datepicker", "action_id": "d"}]},
    )
    assert '(a "video" block: not shown by the preview)' in out
    assert '(a "datepicker" element)' in out


def test_rich_text_shows_its_words() -> None:
    out = render(
        {
            "type": "rich_text",
            "elements": [
                {"type": "rich_text_section", "elements": [{"type": "text", "text": "<hi>"}]}
            ],
        }
    )
    assert "<div>&lt;hi&gt;</div>" in out


WORDS = st.text(max_size=30) | st.sampled_from(['"><script>x</script>', "<javascript:x|y>", "'"])


@settings(max_examples=examples(200), deadline=None)
@given(WORDS, WORDS, WORDS, WORDS)
def test_no_text_in_any_block_yields_markup_of_its_own(a: str, b: str, c: str, d: str) -> None:
    blocks = [
        {"type": "section", "block_id": a, "text": md(b), "fields": [plain(c)]},
        {"type": "header", "text": plain(d)},
        {"type": "context", "elements": [md(a), {"type": "image", "alt_text": b}]},
        {
            "type": "actions",
            "block_id": c,
            "elements": [
                {"type": "button", "action_id": d, "value": a, "text": plain(b), "url": c},
                {"type": "static_select", "action_id": a, "options": [option(b, c)]},
            ],
        },
        {
            "type": "input",
            "block_id": d,
            "label": plain(a),
            "element": {"type": "plain_text_input", "action_id": b, "initial_value": c},
        },
        {"type": d},
    ]
    render(*blocks, look=Look(errors={d: b}))
