"""A request to a WSGI application in process, as waitress hands it over."""

from __future__ import annotations

import io
from collections.abc import Callable, Iterable
from typing import Any


def post(
    app: Callable[[dict[str, Any], Callable], Iterable[bytes]],
    path: str,
    body: bytes,
    headers: dict[str, str],
    **environ: Any,
) -> tuple[str, bytes]:
    """POST ``body`` (form-encoded unless CONTENT_TYPE says otherwise) with ``headers`` to
    ``app``: its status line and body."""
    status: list[str] = []
    env = {
        "PATH_INFO": path,
        "REQUEST_METHOD": "POST",
        "SERVER_PROTOCOL": "HTTP/1.1",
        "QUERY_STRING": "",
        "CONTENT_LENGTH": str(len(body)),
        "CONTENT_TYPE": "application/x-www-form-urlencoded",
        "wsgi.input": io.BytesIO(body),
        **{f"HTTP_{k.upper().replace('-', '_')}": v for k, v in headers.items()},
        **environ,
    }
    out = b"".join(app(env, lambda s, _h: status.append(s)))
    return status[0], out
