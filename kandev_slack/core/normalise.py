"""Text as the bot compares it (past answers, identical items): :func:`normalise`, and the
:func:`digest` of a sequence of such parts (pure)."""

from __future__ import annotations

import hashlib
import re
import unicodedata
from collections.abc import Sequence

_MARKUP = re.compile(r"[*_`~]+")
_SPACE = re.compile(r"\s+")
_TRAILING = re.compile(r"[\s?!.:;,…]+$")


def normalise(text: str) -> str:
    """Text as compared: NFKC, casefolded, without Markdown emphasis, one space between
    words, no trailing punctuation."""
    text = unicodedata.normalize("NFKC", text).casefold()
    text = _MARKUP.sub("", text)
    text = _SPACE.sub(" ", text).strip()
    return _TRAILING.sub("", text)


def digest(parts: Sequence[str]) -> str:
    """The SHA-256 of ``parts`` (each escaped, so that no two sequences share one)."""
    joined = "\x1e".join(p.replace("\\", "\\\\").replace("\x1e", "\\x1e") for p in parts)
    return hashlib.sha256(joined.encode("utf-8", "surrogatepass")).hexdigest()
