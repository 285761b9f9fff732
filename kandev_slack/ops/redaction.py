"""Secrets never shown: the one redactor for every output (logs, ``kandev-slack check``,
/healthz), and links stripped of credentials.

Three things are redacted: the configured secrets, whatever their length (also as they are
written inside a URL, percent-encoded), the userinfo (``user:password@``) of any URL, so a
URL embedded in a library's exception message gives nothing away either, and anything shaped
like a Kandev personal access token (``kandev_pat_<8 hex>_<43 base64url>``), configured or not:
the people's own tokens are known only while they are used, and none may reach a log line or an
error text.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from urllib.parse import quote, quote_plus, unquote, urlsplit, urlunsplit

REDACTED = "[redacted]"

# scheme://userinfo@ — greedy up to the last "@" of the authority, so that an unencoded "@" in
# a password does not leave the rest of it behind.
_USERINFO = re.compile(r"(?P<scheme>\b[A-Za-z][A-Za-z0-9+.\-]*://)[^\s/?#\"<>\\`{}|]*@")

#: A Kandev personal access token: ``kandev_pat_``, its 8-hex display prefix, ``_`` and its
#: secret (43 base64url characters); a cut or longer secret is scrubbed whole as well.
KANDEV_PAT = re.compile(r"kandev_pat_[0-9A-Fa-f]{8}_[A-Za-z0-9_\-]+")


def _written_forms(secret: str) -> set[str]:
    """A secret as it appears raw, percent-encoded inside a URL, or escaped inside a quoted
    string (a ``repr`` in a log argument, a JSON document) when it holds quotes or backslashes."""
    forms = {secret, quote(secret, safe=""), quote_plus(secret, safe="")}
    forms |= {
        repr(secret)[1:-1],
        json.dumps(secret)[1:-1],
        json.dumps(secret, ensure_ascii=False)[1:-1],
    }
    return forms


class Redactor:
    """``redactor(text)``: ``text`` with every secret, every URL's userinfo and every Kandev
    personal access token replaced by ``[redacted]``."""

    def __init__(self, secrets: Iterable[str] = ()):
        forms: set[str] = set()
        for secret in secrets:
            if secret:
                forms |= _written_forms(secret)
        ordered = sorted(forms, key=len, reverse=True)  # a longer secret wins over its prefix
        self._secrets = re.compile("|".join(map(re.escape, ordered))) if ordered else None

    def __call__(self, text: str) -> str:
        text = _USERINFO.sub(rf"\g<scheme>{REDACTED}@", text)
        text = KANDEV_PAT.sub(REDACTED, text)
        if self._secrets is not None:
            text = self._secrets.sub(REDACTED, text)
        return text


def redact(text: str, secrets: Iterable[str] = ()) -> str:
    """``text`` without ``secrets``, URL userinfo or Kandev tokens (see :class:`Redactor`)."""
    return Redactor(secrets)(text)


def without_userinfo(url: str) -> str:
    """``url`` without its ``user:password@`` part (for links people see and click)."""
    parts = urlsplit(url)
    if "@" not in parts.netloc:
        return url
    return urlunsplit(parts._replace(netloc=parts.netloc.rpartition("@")[2]))


def url_password(url: str) -> str | None:
    """The password written in ``url``'s userinfo (decoded), for redaction; its user name is
    redacted wherever the URL appears, but not elsewhere (it is often a common word)."""
    netloc = urlsplit(url).netloc
    userinfo = netloc.rpartition("@")[0]
    _, has_password, password = userinfo.partition(":")
    return unquote(password) if has_password and password else None
