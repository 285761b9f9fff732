"""Slack mrkdwn → HTML: Slack's formatting, its tokens, and that no input yields markup of its
own (a property over texts full of HTML and Slack syntax)."""

from __future__ import annotations

from datetime import UTC, datetime
from zoneinfo import ZoneInfo

from hypothesis import given, settings
from hypothesis import strategies as st

from kandev_slack.preview.mrkdwn import date_part, to_html
from tests.unit.preview.safe_html import markup_problems
from tests.unit.properties import examples

PIECES = st.sampled_from(
    [
        "<script>alert(1)</script>",
        "<img src=x onerror=alert(1)>",
        "<javascript:alert(1)|click>",
        '<https://example.com/a_b?x=1&y="2"|a *link*>',
        '<http://x.test/" onmouseover="alert(1)>',
        "<mailto:a@b.test|mail>",
        "<@U0ANA>",
        "<#C0DEV|dev>",
        "<!subteam^S0ONCALL|@oncall>",
        "<!here>",
        "<!date^1700000000^{date_short_pretty} at {time}|fallback>",
        "<!date^x^{date}|<b>bad</b>>",
        "&lt;b&gt;",
        "&amp;lt;",
        "&#60;script&#62;",
        "*",
        "_",
        "~",
        "`",
        "```",
        "> ",
        "\n",
        '"',
        "'",
        "\x00",
        "<",
        ">",
        "&",
        "|",
        "^",
    ]
)
TEXTS = st.lists(st.one_of(PIECES, st.text(max_size=8)), max_size=12).map("".join)


@settings(max_examples=examples(300), deadline=None)
@given(TEXTS)
def test_no_text_yields_markup_of_its_own(text: str) -> None:
    out = to_html(text, names={"U0ANA": "<ana>"}, tz=ZoneInfo("Europe/Berlin"))
    assert markup_problems(out) == []
    assert "<script" not in out.lower()


def test_the_formatting_of_slack() -> None:
    out = to_html("*bold* _italic_ ~gone~ `co*de*`\n> quoted")
    assert out == (
        "<b>bold</b> <i>italic</i> <s>gone</s> <code>co*de*</code><br>"
        "<blockquote>quoted</blockquote>"
    )


def test_a_code_block_keeps_its_text_as_is() -> None:
    assert to_html("```a *b* <c>```") == "<pre>a *b* &lt;c&gt;</pre>"


def test_slack_escapes_are_shown_once_and_html_is_escaped() -> None:
    assert to_html('a &lt;b&gt; &amp; "c"') == "a &lt;b&gt; &amp; &quot;c&quot;"


def test_links_keep_their_label_and_only_safe_targets() -> None:
    link = to_html("<https://kandev.test/t/1?a=1&amp;b=2|the task>")
    assert link == (
        '<a href="https://kandev.test/t/1?a=1&amp;b=2" target="_blank" '
        'rel="noopener noreferrer">the task</a>'
    )
    assert to_html("<javascript:alert(1)|click>") == "click"
    assert "<a " not in to_html('<https://x.test/" onclick="x|y>')


def test_mentions_are_named() -> None:
    names = {"U0ANA": "ana", "C0DEV": "dev"}
    assert to_html("<@U0ANA>", names=names) == '<span class="mention">@ana</span>'
    assert to_html("<#C0DEV>", names=names) == '<span class="mention">#dev</span>'
    assert to_html("<!subteam^S0ON|@oncall>") == '<span class="mention">@oncall</span>'
    assert to_html("<!here>") == '<span class="mention">@here</span>'


def test_a_date_token_is_written_in_the_viewers_time_zone() -> None:
    out = to_html(
        "<!date^1700000000^{date_num} {time}|2023-11-14 22:13 UTC>", tz=ZoneInfo("Asia/Tokyo")
    )
    assert out == '<time title="2023-11-14 22:13 UTC">2023-11-15 7:13 AM</time>'
    assert to_html("<!date^soon^{date}|the fallback>") == "the fallback"


def test_the_date_formats() -> None:
    at = datetime(2026, 2, 3, 14, 5, 9, tzinfo=UTC)
    later = datetime(2026, 2, 10, 9, 0, tzinfo=UTC)
    assert date_part("date_num", at, later) == "2026-02-03"
    assert date_part("date", at, later) == "February 3rd, 2026"
    assert date_part("date_short", at, later) == "Feb 3, 2026"
    assert date_part("date_long", at, later) == "Tuesday, February 3rd, 2026"
    assert date_part("date_pretty", at, at) == "today"
    assert date_part("date_short_pretty", at, later) == "Feb 3, 2026"
    assert date_part("time", at, later) == "2:05 PM"
    assert date_part("time_secs", at, later) == "2:05:09 PM"
    assert date_part("ago", at, later) == "6 days ago"
    assert date_part("nonsense", at, later) == "{nonsense}"
