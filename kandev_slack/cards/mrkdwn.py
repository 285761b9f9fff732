"""Kandev's Markdown → Slack mrkdwn, safely.

The conversion itself (headings, emphasis, lists, quotes, tables, rules) is done by the
maintained ``markdown-to-mrkdwn`` converter. That converter neither escapes ``&<>`` nor checks
link targets (``[x](!channel)`` would become ``<!channel|x>``), so around it we:

1. take out code blocks, code spans, images, links and autolinks and render them ourselves
   (code escaped verbatim; a link only when its target is an http(s) URL), and drop HTML
   comments (``<!-- … -->``: invisible where Markdown is rendered, e.g. an issue template's
   notes; one inside code stays),
2. escape everything else and defuse ``@channel``/``@here``/``@everyone``,
3. run the converter, then escape any ``<``/``>`` it produced on its own,
4. put our own renderings back, and defuse broadcasts once more over the whole (a rendering put
   back next to an ``@`` — ``@[](here)`` — must not complete a broadcast).

Invariant: every ``<…>`` in the output is ``<http(s)://…|label>`` made here from a Markdown
link; nothing can ping, mention or forge a link. A link whose label names another host than its
target's, or imitates the bot's own links ("Open in Kandev"), keeps its words as plain text and
links only its real host: ``label (<target|evil.example>)``.
"""

from __future__ import annotations

import re
import unicodedata
from urllib.parse import urlsplit

from markdown_to_mrkdwn import SlackMarkdownConverter

from kandev_slack.cards.text import (
    defuse_broadcasts,
    defuse_mrkdwn,
    escape_char,
    escape_url,
    sanitize,
)

MAX_LINK_URL = 1000  # longer targets are shown as text, not linked

_PH = "\x00"  # sanitize() removes NUL from the input, so placeholders cannot be forged
_PLACEHOLDER = re.compile(_PH + r"(\d+)" + _PH)
_FENCED = re.compile(
    r"^[ \t]{0,3}(?P<fence>`{3,}|~{3,})[^\n]*(?:\n(?P<code>.*?))??"
    r"(?:\n[ \t]{0,3}(?P=fence)[ \t]*(?=\n|\Z)|\Z)",
    re.S | re.M,
)
_CODE_SPAN = re.compile(r"(?<!`)(?P<ticks>`+)(?!`)(?P<code>[^\n]+?)(?<!`)(?P=ticks)(?!`)")
_LINK_TAIL = r"\(\s*<?(?P<url>[^\s()<>]*)>?(?:\s+(?:\"[^\"\n]*\"|'[^'\n]*'|\([^)\n]*\)))?\s*\)"
_IMAGE = re.compile(r"!\[(?P<label>[^\]\n]*)\]" + _LINK_TAIL)
_LINK = re.compile(r"\[(?P<label>[^\]\n]*)\]" + _LINK_TAIL)
_HTML_COMMENT = re.compile(r"<!--.*?-->", re.S)
_AUTOLINK = re.compile(r"<(?P<url>https?://[^\s<>]+)>", re.IGNORECASE)
_QUOTE = re.compile(r"^([ \t]*)&gt;", re.M)
_SPACES = re.compile(r"\s+")
_UNSAFE_IN_URL = re.compile(r"[\s<>|\"\\^`{}]")
#: A host name with a top-level domain of letters, or a dotted IPv4 address, in a label.
_HOST_IN_LABEL = re.compile(
    r"(?<![\w.-])((?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}\.?"
    r"|(?:\d{1,3}\.){3}\d{1,3})(?![\w-])"
)
_LOOKALIKES = str.maketrans(
    "аеорсхукіјѕԁһмтвнпьгѵωαοτνіεκρχ",  # Cyrillic, then Greek
    "aeopcxykijsdhmtbhnbrvwaotviekpx",
)
_INVISIBLE = re.compile(
    r"[\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180e\u200b-\u200f"
    r"\u202a-\u202e\u2060-\u2064\u206a-\u206f\u3164\ufeff\uffa0]"
)


def is_safe_http_url(url: str) -> bool:
    """True for an absolute http(s) URL we are willing to turn into a Slack link."""
    if not url or len(url) > MAX_LINK_URL or _UNSAFE_IN_URL.search(url):
        return False
    try:
        parts = urlsplit(url)
    except ValueError:
        return False
    return parts.scheme.lower() in ("http", "https") and bool(parts.netloc)


def _escape(text: str) -> str:
    """Escape ``&<>`` and defuse broadcasts, leaving placeholders alone."""
    return "".join(escape_char(c) for c in defuse_broadcasts(text))


def link(url: str, label: str) -> str:
    """A Slack link ``<url|label>`` to a URL we trust (our own Kandev links)."""
    shown = _escape(_SPACES.sub(" ", label).strip()) or _escape(url)
    return f"<{escape_url(url)}|{shown}>"


def _host(url: str) -> str:
    return (urlsplit(url).hostname or "").rstrip(".").casefold()


def _shown_host(url: str) -> str:
    """The target's host as it really is: a host of non-ASCII letters in its ASCII (IDNA)
    form, so a look-alike of a known host cannot pass for it."""
    host = _host(url)
    try:
        return host.encode("idna").decode("ascii")
    except UnicodeError:
        return host.encode("ascii", "backslashreplace").decode("ascii")


def _hosts_named(label: str) -> list[str]:
    """The host names (or IPv4 addresses) a label shows, as a reader would take them."""
    return [m.group(1).rstrip(".") for m in _HOST_IN_LABEL.finditer(_as_read(label))]


def _as_read(label: str) -> str:
    """A label as a reader sees it: compatibility forms folded (a one-dot leader reads as a
    dot), invisible characters dropped, case ignored, Cyrillic and Greek look-alikes of Latin
    letters read as those letters."""
    folded = _INVISIBLE.sub("", unicodedata.normalize("NFKC", label)).casefold()
    return folded.translate(_LOOKALIKES)


def is_deceptive_label(label: str, url: str) -> bool:
    """True when an agent's link label could pass for something it is not: it names a host
    (``docs.python.org``, ``https://kandev.example/t/1``, ``10.0.0.1``) that is not the
    target's (nor a domain the target is under), or it imitates the bot's own link texts
    ("Open in Kandev", anything naming Kandev)."""
    target = _host(url)
    if _as_read(label).strip().rstrip("/") in (target, url.casefold().rstrip("/")):
        return False  # the label is the target itself
    for named in _hosts_named(label):
        if named != target and not target.endswith("." + named):
            return True
    letters = "".join(c for c in _as_read(label) if c.isalpha())
    return "kandev" in letters


def _render_link(label: str, url: str, read_as: str | None = None) -> str:
    """``read_as``: the label as it will read once what was taken out of it (a code span) is
    put back, which is what the deception check must see."""
    label = _SPACES.sub(" ", label).strip()
    if is_safe_http_url(url):
        if label and is_deceptive_label(read_as if read_as is not None else label, url):
            # The words stay, but only the real destination is the link.
            return f"{_escape(label)} ({link(url, _shown_host(url))})"
        return link(url, label)
    # Not a link we will make: show the text, and the target so that nothing is hidden.
    if url and url != label:
        return f"{_escape(label)} ({_escape(url)})" if label else _escape(url)
    return _escape(label)


def _render_code_block(code: str) -> str:
    code = code.replace("```", "`\u200b``")  # a fence inside cannot end the block early
    if not code.strip():
        return ""
    return "```\n" + _escape(code) + "\n```"


def _render_code_span(code: str) -> str:
    code = code.strip().replace("`", "\u02cb")
    return "`" + _escape(code) + "`" if code else ""


def markdown_to_mrkdwn(markdown: str) -> str:
    """Render untrusted Markdown as safe Slack mrkdwn (see the module docstring)."""
    text = sanitize(markdown)
    if not text.strip():
        return ""
    kept: list[str] = []

    def keep(rendered: str) -> str:
        kept.append(rendered)
        return f"{_PH}{len(kept) - 1}{_PH}"

    text = _FENCED.sub(lambda m: keep(_render_code_block(m.group("code") or "")), text)
    text = _CODE_SPAN.sub(lambda m: keep(_render_code_span(m.group("code"))), text)
    text = _HTML_COMMENT.sub("", text)
    text = _IMAGE.sub(
        lambda m: keep(_render_link(m.group("label") or "image", m.group("url"))), text
    )

    def expand(label: str) -> str:
        return _PLACEHOLDER.sub(lambda m: kept[int(m.group(1))], label)

    text = _LINK.sub(
        lambda m: keep(_render_link(m.group("label"), m.group("url"), expand(m.group("label")))),
        text,
    )
    text = _AUTOLINK.sub(lambda m: keep(_render_link(m.group("url"), m.group("url"))), text)

    converted = SlackMarkdownConverter().convert(_escape(text))
    # Anything the converter turned into <…> on its own was not vetted by us: neutralise it.
    converted = converted.replace("<", "&lt;").replace(">", "&gt;")
    converted = _QUOTE.sub(r"\1>", converted)  # Markdown quotes stay Slack quotes
    while _PH in converted:
        converted = _PLACEHOLDER.sub(lambda m: kept[int(m.group(1))], converted)
    return defuse_mrkdwn(converted.strip())


_MD_LINK = re.compile(r"!?\[([^\]]*)\]\([^)]*\)")
_MD_STRONG = re.compile(r"(\*\*|__|~~)(?=\S)(.+?)(?<=\S)\1")
_MD_EMPHASIS = re.compile(r"(?<![\w*])([*_])(?=\S)(.+?)(?<=\S)\1(?![\w*])")
_MD_HEADING = re.compile(r"^\s{0,3}#{1,6}\s+")


def markdown_to_plain(markdown: str) -> str:
    """Kandev Markdown as plain words, for a line quoted in the bot's own mrkdwn (a
    reminder): link labels kept, code kept without its backticks, emphasis and heading marks
    dropped. Not escaped (the caller escapes it for where it goes)."""
    text = _MD_HEADING.sub("", markdown.strip())
    text = _MD_LINK.sub(lambda m: m.group(1), text)
    text = text.replace("`", "")
    for _ in range(3):  # nested emphasis (***both***) unwraps in a few passes
        text = _MD_STRONG.sub(lambda m: m.group(2), text)
        text = _MD_EMPHASIS.sub(lambda m: m.group(2), text)
    return text
