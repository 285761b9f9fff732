"""Shortening: within the limit measured after escaping, never mid-word / mid-entity /
mid-link / mid-emoji, and always visibly."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from kandev_slack.cards.limits import slack_len
from kandev_slack.cards.text import (
    LONG_TOKEN,
    escape_mrkdwn,
    fit_escaped,
    fit_plain,
    grapheme_boundary,
    shorten_mrkdwn,
    shortened_note,
)

NOTE = shortened_note("https://kandev.example/t/abc?x=1&y=2")


def test_note_links_to_the_full_text():
    assert (
        NOTE == "… _(shortened — <https://kandev.example/t/abc?x=1&amp;y=2|full text in Kandev>)_"
    )


def test_fit_plain_cuts_between_words_and_marks_it():
    assert fit_plain("alpha beta gamma", 16) == ("alpha beta gamma", False)
    assert fit_plain("alpha beta gamma", 15) == ("alpha beta…", True)
    assert fit_plain("alpha beta gamma", 11) == ("alpha beta…", True)
    assert fit_plain("alpha beta gamma", 10) == ("alpha…", True)


def test_fit_escaped_measures_after_escaping_and_never_splits_an_entity():
    text, cut = fit_escaped("a & b & c & d", 16)
    assert cut and slack_len(text) <= 16
    assert text == "a &amp; b &amp;…"
    assert fit_escaped("&&&&&&&&&&", 10)[0] == "&amp;…"  # a second &amp; would not fit


def test_long_tokens_are_cut_at_a_grapheme_boundary():
    url = "https://example.com/" + "a" * 200
    text, cut = fit_plain("see " + url, 60)
    assert cut and len(text) == 60 and text.startswith("see https://example.com/aaa")


def test_emoji_sequences_are_not_split():
    family = "👨‍👩‍👧"
    text = family * 30
    for limit in range(5, 60):
        out, cut = fit_plain(text, limit)
        assert cut and slack_len(out) <= limit
        body = out.removesuffix("…")
        assert body == family * (len(body) // len(family))
    flags = "🇫🇷🇩🇪🇮🇹"
    for i in range(len(flags) + 1):
        assert grapheme_boundary(flags, i) % 2 == 0
    assert grapheme_boundary("e\u0301x", 1) == 0
    assert grapheme_boundary("👍🏽x", 1) == 0


def test_shorten_mrkdwn_keeps_links_whole():
    text = "intro " + " ".join(f"<https://example.com/{i}|link number {i}>" for i in range(100))
    out, cut = shorten_mrkdwn(text, 500, note=NOTE)
    assert cut and slack_len(out) <= 500 and out.endswith(" " + NOTE)
    body = out.removesuffix(" " + NOTE)
    assert body.count("<") == body.count(">") and body.endswith(">")


def test_shorten_mrkdwn_closes_an_open_code_block():
    text = "before\n```\n" + "code line\n" * 400 + "```\nafter"
    out, cut = shorten_mrkdwn(text, 300, note=NOTE)
    assert cut and slack_len(out) <= 300
    assert out.count("```") % 2 == 0
    assert out.endswith("\n```\n" + NOTE)


def test_shorten_mrkdwn_leaves_short_text_alone():
    assert shorten_mrkdwn("short", 3000, note=NOTE) == ("short", False)


words = st.one_of(
    st.sampled_from(["a", "&", "<", ">", "&amp;", "👍🏽", "word", "🇫🇷", "e\u0301", "x" * 50]),
    st.text(max_size=10),
)


@settings(max_examples=200, deadline=None, database=None)
@given(parts=st.lists(words, max_size=80), limit=st.integers(min_value=20, max_value=300))
def test_fit_escaped_property(parts, limit):
    raw = " ".join(parts)
    full = escape_mrkdwn(raw)
    out, cut = fit_escaped(raw, limit)
    assert slack_len(out) <= limit
    if not cut:
        assert out == full
        return
    assert out.endswith("…")
    body = out.removesuffix("…")
    assert full.startswith(body)
    rest = full[len(body) :]
    # a whole word ends here, or the token being cut is no word (too long) / the first one
    if body and rest and not rest[0].isspace():
        token = (body.split()[-1:] or [""])[0] + rest.split(maxsplit=1)[0]
        assert len(token) > LONG_TOKEN or not any(c.isspace() for c in body)
