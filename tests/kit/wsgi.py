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
    ``app``: its status line and body (what it wrote through ``start_response``'s ``write``
    callable, then what it returned). A second ``start_response`` without ``exc_info`` fails,
    as waitress's does."""
    status: list[str] = []
    written: list[bytes] = []

    def start_response(line: str, _headers: list[tuple[str, str]], exc_info: Any = None):
        if status and exc_info is None:
            raise AssertionError("start_response called a second time without exc_info")
        status.append(line)
        return written.append

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
    returned = b"".join(app(env, start_response))
    return status[-1], b"".join(written) + returned
