"""The front door of HTTP mode: authenticate every Slack request before anything reads it.

Bolt parses a request body (JSON, form, the interaction ``payload``) *before* its own signature
check, so a forged request with a garbage body would get a 500 instead of a 401, and a signed
body Bolt cannot digest (a JSON list, a number, a ``user`` that is not an object…) crashes its
request parsing with a 500. This WSGI middleware sits in front of Bolt's handler and:

- refuses bodies above :data:`MAX_BODY_BYTES` (413) without reading them (the server refuses
  them too, before buffering anything: see http_server.py);
- answers Slack's unsigned ``ssl_check=1`` probe with 200, and does nothing else for it;
- verifies Slack's v0 signature and its 5-minute timestamp window with slack_sdk's
  ``SignatureVerifier`` (401, nothing else happens: no parsing, no listener, no Slack or Kandev
  call, no audit entry);
- refuses signed bodies Bolt cannot turn into a request (400 with a short reason);
- hands everything else to Bolt unchanged, with the request it made of it
  (:data:`PARSED_REQUEST`: Bolt's handler dispatches that one instead of parsing again).
"""

from __future__ import annotations

import io
import json
import logging
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from types import FrameType
from typing import Any
from urllib.parse import parse_qs

from slack_bolt.adapter.wsgi.http_request import WsgiHttpRequest
from slack_bolt.request import BoltRequest
from slack_sdk.signature import Clock, SignatureVerifier

log = logging.getLogger(__name__)

#: Slack's interaction payloads are a few kilobytes; a card's blocks stay far below this.
MAX_BODY_BYTES = 1_000_000
#: Slack (and Bolt) refuse requests whose timestamp is further than this from now.
MAX_CLOCK_SKEW_S = 300

_BOT_ROOT = str(Path(__file__).resolve().parents[2])

WsgiApp = Callable[[dict, Callable], Iterable[bytes]]


class _FixedClock(Clock):
    def __init__(self, now: float):
        self._now = now

    def now(self) -> float:
        return self._now


def signature_problem(
    secret: str, body: bytes, timestamp: str | None, signature: str | None, now: float
) -> str | None:
    """Why this request is not signed by Slack with ``secret`` (None: it is)."""
    if not timestamp or not signature:
        return "missing signature headers"
    try:
        int(timestamp)
    except ValueError:
        return "malformed timestamp"
    try:
        text = body.decode("utf-8")  # Slack signs UTF-8 text; the verifier decodes it so too
    except UnicodeDecodeError:
        return "the body is not UTF-8"
    verifier = SignatureVerifier(secret, clock=_FixedClock(now))
    if not verifier.is_valid(body=text, timestamp=timestamp, signature=signature):
        return "signature mismatch or stale timestamp"
    return None


def _is_utf8(body: bytes) -> bool:
    try:
        body.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def is_ssl_check(body: bytes, content_type: str) -> bool:
    """Slack's unsigned certificate probe (``ssl_check=1&token=…``, form-encoded)."""
    if content_type != "application/x-www-form-urlencoded" or b"ssl_check" not in body:
        return False
    form = parse_qs(body.decode("utf-8", errors="replace"))
    return form.get("ssl_check") == ["1"]


def bolt_request(body: bytes, *, headers: dict[str, Any], query: str = "") -> BoltRequest | str:
    """The request Bolt makes of this (signed) body, or why it cannot make one."""
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError:
        return "the body is not UTF-8"
    try:
        request = BoltRequest(body=text, query=query, headers=headers)
    except Exception as exc:  # JSON errors, and Bolt's context extraction on odd shapes
        return f"the body cannot be parsed ({type(exc).__name__})"
    if not isinstance(request.body, dict):
        return "the body is not a JSON object"
    return request


#: Where the guard leaves the request Bolt makes of a body it let through, for Bolt's WSGI
#: handler to dispatch as it is (http_server.py): parsing a click's payload (URL-decoding a
#: card's worth of JSON) once, not twice, before its ack.
PARSED_REQUEST = "kandev_slack.bolt_request"


def _answer(start_response: Callable, status: str, error: str) -> list[bytes]:
    body = json.dumps({"ok": False, "error": error}).encode()
    start_response(
        status, [("Content-Type", "application/json"), ("Content-Length", str(len(body)))]
    )
    return [body]


class SlackRequestGuard:
    """WSGI middleware in front of Bolt's handler for ``POST path`` (see the module doc)."""

    def __init__(
        self,
        app: WsgiApp,
        signing_secret: str,
        *,
        path: str,
        clock: Callable[[], float] = time.time,
    ):
        self.app = app
        self.signing_secret = signing_secret
        self.path = path
        self.clock = clock

    def __call__(self, environ: dict[str, Any], start_response: Callable) -> Iterable[bytes]:
        if environ.get("PATH_INFO") != self.path or environ.get("REQUEST_METHOD") != "POST":
            return self.app(environ, start_response)
        try:
            length = int(environ.get("CONTENT_LENGTH") or 0)
        except ValueError:
            return _answer(start_response, "400 Bad Request", "bad Content-Length")
        if length > MAX_BODY_BYTES:
            log.warning("refused a %d-byte request (limit %d)", length, MAX_BODY_BYTES)
            return _answer(start_response, "413 Payload Too Large", "request too large")
        body = environ["wsgi.input"].read(length) if length > 0 else b""
        content_type = (environ.get("CONTENT_TYPE") or "").split(";")[0].strip()
        if not _is_utf8(body):
            # Slack only sends UTF-8; such a body cannot even be verified (nothing runs for it).
            log.warning("refused a Slack request whose body is not UTF-8")
            return _answer(start_response, "400 Bad Request", "malformed request: not UTF-8")
        if is_ssl_check(body, content_type):
            start_response("200 OK", [("Content-Type", "text/plain"), ("Content-Length", "0")])
            return [b""]

        problem = signature_problem(
            self.signing_secret,
            body,
            environ.get("HTTP_X_SLACK_REQUEST_TIMESTAMP"),
            environ.get("HTTP_X_SLACK_SIGNATURE"),
            self.clock(),
        )
        if problem is not None:
            log.warning("refused an unauthenticated request to %s: %s", self.path, problem)
            return _answer(start_response, "401 Unauthorized", "invalid request signature")

        forwarded = dict(environ)
        forwarded["wsgi.input"] = io.BytesIO(body)
        forwarded["CONTENT_LENGTH"] = str(len(body))
        # The request as Bolt's WSGI handler makes it (the same headers and query).
        wsgi = WsgiHttpRequest(forwarded)
        request = bolt_request(body, headers=wsgi.get_headers(), query=wsgi.query_string)
        if isinstance(request, str):
            log.warning("refused a malformed Slack request: %s", request)
            return _answer(start_response, "400 Bad Request", f"malformed request: {request}")
        forwarded[PARSED_REQUEST] = request
        try:
            return self.app(forwarded, start_response)
        except Exception as exc:
            # Bolt's matching (and its error handler) index into the payload without checking
            # its shape; what they choke on is a request Slack would never send.
            log_undispatched(exc, log, "request guard")
            return _answer(start_response, "400 Bad Request", "malformed request")


def _frames_below_catcher(error: BaseException) -> list[Any]:
    """The frames ``error`` went through, innermost last, without the frame that caught it
    (the catcher is whoever logs it: the guard, the Socket Mode handler, Bolt)."""
    frames = []
    tb = error.__traceback__
    tb = tb.tb_next if tb is not None else None
    while tb is not None:
        frames.append(tb.tb_frame)
        tb = tb.tb_next
    return frames


#: The bot's frames a request passes through on its way into Bolt, by file: their functions'
#: names (PromptAckApp.answer runs Bolt's dispatch, reached through acks.answer, acks.py;
#: _ParsedOnce.__call__ hands Bolt the guard's request, http_server.py). An error raised below
#: them is not the bot's; one raised in them is.
_HANDING_ON = {
    str(Path(__file__).resolve().with_name("acks.py")): (
        "PromptAckApp.",
        "_ack_events_at_once",
        "answer",
    ),
    str(Path(__file__).resolve().with_name("http_server.py")): ("_ParsedOnce.",),
}


def _hands_on(frame: FrameType) -> bool:
    code = frame.f_code
    names = _HANDING_ON.get(code.co_filename)
    return names is not None and code.co_qualname.startswith(names)


def raised_in_bot(error: BaseException) -> bool:
    """Whether ``error`` was raised in this package's code (a bug to log with its traceback)
    rather than in a library handling a payload it did not expect."""
    frames = _frames_below_catcher(error)
    return any(
        frame.f_code.co_filename.startswith(_BOT_ROOT)
        and (not _hands_on(frame) or frame is frames[-1])
        for frame in frames
    )


def log_undispatched(error: BaseException, logger: logging.Logger, where: str) -> None:
    """Log a request that failed while being dispatched: our own bug (with its traceback), or
    a payload Bolt's matching choked on (a warning: a request Slack would never send)."""
    if raised_in_bot(error):
        logger.error("a Slack request failed in the bot (%s)", where, exc_info=error)
    else:
        logger.warning(
            "refused a malformed Slack request Bolt could not dispatch: %s: %s",
            type(error).__name__,
            str(error)[:120],
        )


#: Where Bolt reads a request's payload (``payload_utils``: ``body["view"]["type"]``…) without
#: checking its shape.
_BOLT_PAYLOAD_READING = "slack_bolt.request"
_MISREAD = (LookupError, TypeError, AttributeError)


def bolt_misread(error: BaseException) -> str | None:
    """Why ``error`` shows its payload malformed: Bolt's own payload reading indexed into a
    shape Slack never sends (a ``view`` without ``type``, a ``view`` that is null). None: it
    does not."""
    frames = _frames_below_catcher(error)
    if not frames or not isinstance(error, _MISREAD):
        return None
    module = str(frames[-1].f_globals.get("__name__") or "")
    if module != _BOLT_PAYLOAD_READING and not module.startswith(_BOLT_PAYLOAD_READING + "."):
        return None
    return f"Bolt cannot read it ({type(error).__name__} in {module})"


def raised_in(error: BaseException) -> str:
    """The top-level package whose code raised ``error``: ``slack_bolt``, ``slack_sdk``, ``bot``…"""
    frames = _frames_below_catcher(error)
    if not frames:
        return "the caller"
    module = frames[-1].f_globals.get("__name__") or "?"
    return module.split(".")[0]
