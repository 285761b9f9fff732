"""A Slack message's markup as the person typed it (kandev_slack/slack/parsing/markup.py): mentions
as names,
channels and special mentions as ``#ops`` / ``@here``, links as URLs, Slack's escapes undone."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kandev_slack.slack.parsing.markup import decode, escape, unescape
from tests.unit.properties import examples

PROPERTY = settings(max_examples=examples(300), deadline=None)
TEXT = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=80)
USER_ID = st.from_regex(r"\AU[0-9A-Z]{8,10}\Z")
NAME = st.text(st.characters(codec="utf-8", exclude_categories=("Cs", "Cc")), min_size=1).filter(
    str.strip
)
HOST = st.from_regex(r"\A[a-z][a-z0-9-]{0,20}\.(com|org|io)\Z")
PATH = st.from_regex(r"\A(/[A-Za-z0-9._~-]{0,10}){0,3}(\?[a-z]=[A-Za-z0-9&]{0,8})?\Z")


@PROPERTY
@given(text=TEXT)
def test_plain_text_comes_back_as_typed(text: str) -> None:
    assert decode(escape(text)) == text
    assert unescape(escape(text)) == text


@PROPERTY
@given(before=TEXT, after=TEXT, user=USER_ID, name=NAME)
def test_a_mention_is_the_person_s_name(before: str, after: str, user: str, name: str) -> None:
    sent = f"{escape(before)}<@{user}>{escape(after)}"
    assert decode(sent, {user: name}.get) == f"{before}@{name}{after}"
    assert decode(sent) == f"{before}@{user}{after}"  # no name known: the id


@PROPERTY
@given(before=TEXT, host=HOST, path=PATH, label=NAME)
def test_a_link_is_its_url(before: str, host: str, path: str, label: str) -> None:
    url = f"https://{host}{path}"
    assert decode(f"{escape(before)}<{escape(url)}>") == before + url
    assert decode(f"<{escape(url)}|{escape(url)}>") == url
    shown = decode(f"<{escape(url)}|{escape(label)}>")
    assert shown == (url if label == url else f"{label} ({url})")
    # Slack links what looks like an address: the person typed it without the scheme.
    assert decode(f"<http://{host}|{host}>") == host


@PROPERTY
@given(name=st.from_regex(r"\A[a-z0-9_-]{1,20}\Z"), channel=st.from_regex(r"\AC[0-9A-Z]{8}\Z"))
def test_a_channel_is_its_name(name: str, channel: str) -> None:
    assert decode(f"see <#{channel}|{name}>") == f"see #{name}"
    assert decode(f"<#{channel}>") == f"#{channel}"


@pytest.mark.parametrize(
    ("sent", "typed"),
    [
        ("<!here> look", "@here look"),
        ("<!channel>", "@channel"),
        ("<!everyone|everyone>", "@everyone"),
        ("ask <!subteam^S0DBA|@dbas>", "ask @dbas"),
        ("<!subteam^S0DBA>", "@S0DBA"),
        ("<!date^1392734382^{date}|Feb 18, 2014>", "Feb 18, 2014"),
        ("<mailto:ana@example.com|ana@example.com>", "ana@example.com"),
        ("<@U0BEN0001|ben>", "@ben"),  # an older form carrying the name
        ("a &amp;lt; b", "a &lt; b"),  # the text "&lt;", typed
        ("<https://x.io/a?b=1&amp;c=2|the doc>", "the doc (https://x.io/a?b=1&c=2)"),
        ("1 &lt; 2 &gt; 0", "1 < 2 > 0"),
    ],
)
def test_special_mentions_and_escapes(sent: str, typed: str) -> None:
    assert decode(sent) == typed


def test_a_name_lookup_that_fails_leaves_the_id() -> None:
    def broken(_user: str) -> str | None:
        raise RuntimeError("users.info failed")

    assert decode("<@U0BEN0001> knows", broken) == "@U0BEN0001 knows"
