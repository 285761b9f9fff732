"""Markdown → mrkdwn: what the converter renders, and that untrusted text can never ping,
mention or forge a link."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kandev_slack.cards import escape_mrkdwn, markdown_to_mrkdwn
from kandev_slack.cards.mrkdwn import is_safe_http_url
from tests.unit.cards.safety import unsafe_angles

CONTROL_SEQUENCES = [
    "<!channel>",
    "<!here>",
    "<!everyone>",
    "<@U123>",
    "<#C123>",
    "<!subteam^S123>",
    "<http://evil.example|Click here>",
    "<!date^1^{date}|x>",
]


@pytest.mark.parametrize("sequence", CONTROL_SEQUENCES)
def test_slack_control_sequences_are_shown_not_parsed(sequence):
    for render in (markdown_to_mrkdwn, escape_mrkdwn):
        out = render(f"before {sequence} after")
        assert "<" not in out and ">" not in out
        assert out.replace("&lt;", "<").replace("&gt;", ">") == f"before {sequence} after"


def test_ampersands_and_entities_are_escaped_once():
    assert escape_mrkdwn("R&D &amp; <co>") == "R&amp;D &amp;amp; &lt;co&gt;"
    assert markdown_to_mrkdwn("R&D &amp;") == "R&amp;D &amp;amp;"


def test_broadcast_words_are_defused_with_an_invisible_joiner():
    out = markdown_to_mrkdwn("ping @here and @Channel, not @hereford")
    assert out == "ping @\u2060here and @\u2060Channel, not @hereford"


def test_markdown_links_become_slack_links_only_for_http_urls():
    out = markdown_to_mrkdwn(
        "[docs](https://example.com/a?b=1&c=2) [x](!channel) [y](javascript:alert(1)) "
        "[z](mailto:a@b.c) <https://auto.example/p>"
    )
    assert "<https://example.com/a?b=1&amp;c=2|docs>" in out
    assert "x (!channel)" in out
    assert "<https://auto.example/p|https://auto.example/p>" in out
    assert unsafe_angles(out) == []


def test_link_labels_and_targets_cannot_break_out():
    out = markdown_to_mrkdwn("[a|<!here>](https://example.com/x|y) [b>](https://ok.example/)")
    assert unsafe_angles(out) == []
    assert "<https://ok.example/|b&gt;>" in out


def test_headings_emphasis_lists_quotes():
    out = markdown_to_mrkdwn(
        "# Title\n## Sub\nSome **bold**, *italic* and ~~gone~~.\n- one\n  - nested\n"
        "1. first\n> quoted & <x>"
    )
    assert out == (
        "*Title*\n*Sub*\nSome *bold*, _italic_ and ~gone~.\n• one\n  • nested\n"
        "1. first\n> quoted &amp; &lt;x&gt;"
    )


def test_code_blocks_and_spans_are_verbatim_but_escaped():
    out = markdown_to_mrkdwn(
        "Run `x = *a* <b>` then:\n```python\nif a < b and c > d:\n    **not bold**\n```\nend"
    )
    assert out == (
        "Run `x = *a* &lt;b&gt;` then:\n```\nif a &lt; b and c &gt; d:\n    **not bold**\n```\nend"
    )


def test_unclosed_code_block_is_closed():
    assert markdown_to_mrkdwn("```\ncode <x>\nmore") == "```\ncode &lt;x&gt;\nmore\n```"


def test_images_become_links_and_tables_are_flattened():
    out = markdown_to_mrkdwn(
        "![diagram](https://example.com/d.png)\n\n| a | b |\n|---|---|\n| 1 | 2 |"
    )
    assert out == "<https://example.com/d.png|diagram>\n\n*a* | *b*\n1 | 2"


def test_malformed_markdown_the_converter_would_link_is_neutralised():
    out = markdown_to_mrkdwn("a [b](c d) e")
    assert unsafe_angles(out) == [] and "<" not in out


def test_control_characters_and_bidi_overrides_are_dropped():
    assert markdown_to_mrkdwn("a\x00b\u202ec\x07d\r\ne") == "abcd\ne"


def test_empty_input():
    assert markdown_to_mrkdwn("") == "" and markdown_to_mrkdwn("  \n ") == ""


@pytest.mark.parametrize(
    ("url", "ok"),
    [
        ("https://example.com/a?b=1", True),
        ("HTTP://EXAMPLE.COM", True),
        ("javascript:alert(1)", False),
        ("!channel", False),
        ("https://", False),
        ("https://example.com/a|b", False),
        ("https://example.com/" + "a" * 2000, False),
    ],
)
def test_is_safe_http_url(url, ok):
    assert is_safe_http_url(url) is ok


def test_html_comments_are_dropped_as_rendered_markdown_hides_them():
    text = "Fix the build.\n\n<!-- Template: describe the bug -->\nThen <!-- a\nnote --> ship."
    assert markdown_to_mrkdwn(text) == "Fix the build.\n\n\nThen  ship."
    # Inside code a comment is code; an unclosed one is text (escaped).
    assert markdown_to_mrkdwn("`<!-- x -->`") == "`&lt;!-- x --&gt;`"
    assert markdown_to_mrkdwn("a <!-- b") == "a &lt;!-- b"


_NO_CODE = st.text(st.characters(blacklist_characters="`~"), max_size=200)  # no code to hide in


@given(_NO_CODE, _NO_CODE)
def test_a_comment_never_shows_and_never_lets_its_neighbours_break_out(before, after):
    hidden = markdown_to_mrkdwn(f"{before}<!-- <@U123> <!channel> secret -->{after}")
    assert "secret" not in hidden or "secret" in before + after
    assert "<@" not in hidden and "<!channel" not in hidden
