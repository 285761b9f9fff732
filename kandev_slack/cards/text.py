"""Text hygiene for Slack: sanitising, mrkdwn escaping, and shortening that says so.

Two kinds of text reach Slack:
- mrkdwn (section/context text): ``&``, ``<`` and ``>`` are control characters and must be
  escaped (``&amp;`` ``&lt;`` ``&gt;``); a stray ``<!channel>`` would ping a whole channel.
- plain_text (buttons, headers, options, labels): shown literally, so it is only sanitised.

In both, ``@here``/``@channel``/``@everyone`` words (any case, whatever emphasis marks or
invisible characters sit between ``@`` and the word) are defused with an invisible word joiner
after the ``@``, and in plain text so are ``<!…``/``<@…`` tokens: nothing an agent writes can be
turned into a notification by any automatic parsing.

Shortening never cuts inside a word (a token longer than ``LONG_TOKEN`` characters, such as a
URL or a hash, is not a word and may be cut), an escape sequence, a ``<…>`` link or (as far as
practical) a grapheme cluster such as an emoji with modifiers, and always leaves a visible mark.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable

from kandev_slack.cards.limits import char_units, slack_len

ELLIPSIS = "…"
LONG_TOKEN = 40

_LINE_SEPARATORS = re.compile(r"\r\n|[\r\u2028\u2029]")
_WORD_JOINER = "\u2060"
# Invisible characters (soft hyphen, zero-width, direction marks and friends; then the word
# joiner, which is what defusing inserts).
_INVISIBLE_BUT_JOINER = "\u00ad\u034f\u061c\u180e\u200b-\u200f\u2061-\u2064\u206a-\u206f\ufeff"
_INVISIBLE = _INVISIBLE_BUT_JOINER + _WORD_JOINER
_INVISIBLE_RUN = re.compile(f"[{_INVISIBLE}]+")
# "@", then only emphasis/code marks or invisible characters, then a broadcast word that does
# not go on as a longer word ("@hereford" is left alone, "@here_" is not).
_BROADCAST = re.compile(
    f"@(?P<gap>[{_INVISIBLE}*_~`]*)(?P<word>channel|here|everyone)(?![^\\W_])", re.IGNORECASE
)
# A cut that leaves "@" and the start of a longer word ("@channel" of "@channels") would make
# a broadcast word of it.
_BROADCAST_AT_END = re.compile(
    f"@[{_INVISIBLE_BUT_JOINER}*_~`]*(?:channel|here|everyone)$", re.IGNORECASE
)
# "<" then "!" or "@": the start of a Slack mention/broadcast token, in plain text.
_TOKEN_START = re.compile(f"<[{_INVISIBLE}]*(?=[!@])")
# A Slack token the renderers made: <target> or <target|label>.
_SLACK_TOKEN = re.compile(r"<(?P<target>[^<>|]*)(?:\|(?P<label>[^<>]*))?>")
_ZWJ = "\u200d"
_ESCAPES = {"&": "&amp;", "<": "&lt;", ">": "&gt;"}
_WHITESPACE_RUN = re.compile(r"\s+")


_REMOVED = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\ud800-\udfff\u202a-\u202e\u2066-\u2069]")


def sanitize(text: str) -> str:
    """Drop what must never reach Slack: control characters (except newline and tab), lone
    surrogates and bidi overrides (they can disguise text); normalise line breaks to ``\\n``."""
    return _REMOVED.sub("", _LINE_SEPARATORS.sub("\n", text))


def _defused(match: re.Match[str]) -> str:
    gap = _INVISIBLE_RUN.sub("", match.group("gap"))
    return "@" + _WORD_JOINER + gap + match.group("word")


def defuse_broadcasts(text: str) -> str:
    """Put one invisible word joiner right after the ``@`` of ``@channel``/``@here``/
    ``@everyone`` (in any case, with emphasis marks or invisible characters before the word,
    which are dropped) so that no automatic parsing can ever turn untrusted text into a
    broadcast. Idempotent."""
    return _BROADCAST.sub(_defused, text)


def defuse_plain(text: str) -> str:
    """Plain text with broadcasts defused and a word joiner after the ``<`` of anything that
    looks like a mention token (``<!here>``, ``<@U…>``): Slack never parses plain_text, and
    text copied from it cannot notify either. Idempotent."""
    return _TOKEN_START.sub("<" + _WORD_JOINER, defuse_broadcasts(text))


def defuse_mrkdwn(text: str) -> str:
    """The last step before mrkdwn reaches Slack: defuse broadcasts everywhere except inside
    the targets of the ``<…>`` tokens the renderers made (links, dates, vetted mentions), so
    that no composition of safe pieces (``@`` at the end of one, ``here`` at the start of the
    next) can form a broadcast. Idempotent."""
    out: list[str] = []
    pos = 0
    for token in _SLACK_TOKEN.finditer(text):
        out.append(defuse_broadcasts(text[pos : token.start()]))
        label = token.group("label")
        shown = "" if label is None else "|" + defuse_broadcasts(label)
        out.append(f"<{token.group('target')}{shown}>")
        pos = token.end()
    out.append(defuse_broadcasts(text[pos:]))
    return "".join(out)


def escape_char(ch: str) -> str:
    return _ESCAPES.get(ch, ch)


def escape_mrkdwn(text: str) -> str:
    """Untrusted text → mrkdwn that shows exactly that text: sanitised, ``&<>`` escaped,
    broadcasts defused. The result contains no ``<`` or ``>`` at all."""
    return "".join(_ESCAPES.get(ch, ch) for ch in defuse_broadcasts(sanitize(text)))


def one_line(text: str) -> str:
    """Sanitised text with every run of whitespace (newlines included) turned into one space."""
    return _WHITESPACE_RUN.sub(" ", sanitize(text)).strip()


# ---- cut positions ---------------------------------------------------------------------------


def _is_extender(ch: str) -> bool:
    """Characters that continue the grapheme before them."""
    cp = ord(ch)
    return (
        unicodedata.category(ch) in ("Mn", "Me", "Mc")
        or cp == 0x200D
        or 0xFE00 <= cp <= 0xFE0F
        or 0x1F3FB <= cp <= 0x1F3FF
        or 0xE0020 <= cp <= 0xE007F
        or 0xE0100 <= cp <= 0xE01EF
    )


def _is_regional_indicator(ch: str) -> bool:
    return 0x1F1E6 <= ord(ch) <= 0x1F1FF


def grapheme_boundary(text: str, index: int) -> int:
    """The largest position ≤ ``index`` that does not split a grapheme cluster (approximation
    covering combining marks, ZWJ sequences, variation selectors, skin tones, tags and flags)."""
    i = max(0, min(index, len(text)))
    while 0 < i < len(text) and (_is_extender(text[i]) or text[i - 1] == _ZWJ):
        i -= 1
    if 0 < i < len(text) and _is_regional_indicator(text[i]):
        run = 0
        k = i - 1
        while k >= 0 and _is_regional_indicator(text[k]):
            run += 1
            k -= 1
        if run % 2 == 1:
            i -= 1
    return i


def word_boundary(text: str, index: int) -> int:
    """The cut position ≤ ``index`` that keeps words whole: the start of the word ``index``
    falls into, unless that token is longer than ``LONG_TOKEN`` or starts the text, in which
    case the nearest grapheme boundary."""
    if index >= len(text):
        return len(text)
    if index <= 0:
        return 0
    if text[index].isspace() or text[index - 1].isspace():
        return index
    start = index
    while start > 0 and not text[start - 1].isspace():
        start -= 1
    end = index
    while end < len(text) and not text[end].isspace():
        end += 1
    if start == 0 or end - start > LONG_TOKEN:
        return grapheme_boundary(text, index)
    return start


def _no_broadcast_left(text: str, cut: int) -> int:
    """``cut``, or earlier if cutting there would leave an undefused broadcast word at the end
    (``@hereford`` cut after ``@here``)."""
    left = _BROADCAST_AT_END.search(text[:cut].rstrip())
    return left.start() if left else cut


def _prefix_within(costs: Iterable[int], budget: int) -> int:
    """How many leading items fit in ``budget``."""
    total = 0
    count = 0
    for cost in costs:
        total += cost
        if total > budget:
            return count
        count += 1
    return count


# ---- shortening ----------------------------------------------------------------------------


def fit_plain(text: str, limit: int, *, mark: str = ELLIPSIS) -> tuple[str, bool]:
    """Plain text (for plain_text objects) within ``limit``, sanitised and defused
    (``defuse_plain``); when shortened, ends with ``mark``. Returns ``(text, shortened)``."""
    text = defuse_plain(sanitize(text))
    if slack_len(text) <= limit:
        return text, False
    budget = max(0, limit - slack_len(mark))
    cut = word_boundary(text, _prefix_within(map(char_units, text), budget))
    return text[: _no_broadcast_left(text, cut)].rstrip() + mark, True


def fit_escaped(raw: str, limit: int, *, mark: str = ELLIPSIS) -> tuple[str, bool]:
    """Untrusted text escaped for mrkdwn, within ``limit`` measured AFTER escaping; when
    shortened, ends with ``mark`` (which must itself be safe mrkdwn). Cuts are made in the raw
    text, so an escape sequence is never split."""
    text = defuse_broadcasts(sanitize(raw))
    escaped = "".join(escape_char(c) for c in text)
    if slack_len(escaped) <= limit:
        return escaped, False
    budget = max(0, limit - slack_len(mark))
    costs = (slack_len(escape_char(c)) for c in text)
    cut = _no_broadcast_left(text, word_boundary(text, _prefix_within(costs, budget)))
    return "".join(escape_char(c) for c in text[:cut].rstrip()) + mark, True


_FENCE = "```"


def _unsafe_mrkdwn_cut(text: str, cut: int) -> int | None:
    """If cutting at ``cut`` would split a ``<…>`` link or an ``&…;`` entity, the position to
    cut at instead (its start); else None."""
    lt = text.rfind("<", 0, cut)
    if lt != -1 and text.find(">", lt, cut) == -1:
        return lt
    amp = text.rfind("&", max(0, cut - 8), cut)
    if amp != -1 and ";" not in text[amp:cut]:
        semi = text.find(";", amp)
        if semi != -1 and semi - amp <= 8:
            return amp
    return None


def shorten_mrkdwn(text: str, limit: int, *, note: str) -> tuple[str, bool]:
    """Already-safe mrkdwn within ``limit``: cut at a word boundary outside links and entities,
    close an open code block, and append ``note`` (safe mrkdwn saying it was shortened)."""
    if slack_len(text) <= limit:
        return text, False
    costs = map(char_units, text)
    closing = "\n" + _FENCE
    budget = max(0, limit - slack_len(note) - slack_len(closing))
    cut = word_boundary(text, _prefix_within(costs, budget))
    while (earlier := _unsafe_mrkdwn_cut(text, cut)) is not None:
        cut = word_boundary(text, earlier)
    head = text[: _no_broadcast_left(text, cut)].rstrip()
    if head.count(_FENCE) % 2 == 1:  # the cut fell inside a code block: close it
        head = head[: -len(_FENCE)].rstrip() if head.endswith(_FENCE) else head + closing
    separator = "\n" if head.endswith(_FENCE) else " " if head else ""
    return head + separator + note, True


def shortened_note(url: str | None) -> str:
    """The visible mark appended to shortened mrkdwn, linking to where the full text is."""
    if url:
        return f"{ELLIPSIS} _(shortened — <{escape_url(url)}|full text in Kandev>)_"
    return f"{ELLIPSIS} _(shortened — full text in Kandev)_"


def escape_url(url: str) -> str:
    """A URL for use inside ``<url|label>``: ``&`` escaped, and characters that would end the
    link (``|``, ``<``, ``>``, whitespace) percent-encoded."""
    out = []
    for ch in url:
        if ch == "&":
            out.append("&amp;")
        elif ch in '|<> \t\n"' or ord(ch) < 0x20:
            out.append("".join(f"%{b:02X}" for b in ch.encode()))
        else:
            out.append(ch)
    return "".join(out)
