"""Logging that never shows a secret: every record is redacted (kandev_slack/ops/redaction.py:
configured
secrets of any length, and any URL's userinfo) before any handler sees it.

Two formats (``LOG_FORMAT``): readable text (the default) or one JSON object per line with the
time, level, logger and message, and the card (``pending_id``), person (``user``), channel and
replica the line is about when they are known. What a line is about comes from a context
variable set where the work starts (:func:`log_context`, :func:`bind_log_context`) and carried
into the threads that continue it (:class:`ContextExecutor`).
"""

from __future__ import annotations

import contextvars
import json
import logging
import sys
import threading
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from datetime import UTC, datetime
from types import TracebackType
from typing import Any, Literal, TypeVar

from kandev_slack.ops.redaction import Redactor

LogFormat = Literal["text", "json"]
TEXT_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"
#: What a JSON line may say about its subject, in this order.
CONTEXT_FIELDS = ("pending_id", "user", "channel", "replica")

_context: contextvars.ContextVar[dict[str, str] | None] = contextvars.ContextVar(
    "kandev_slack_log_context", default=None
)
_replica: str | None = None
T = TypeVar("T")


def _merged(fields: dict[str, object]) -> dict[str, str]:
    known = {k: str(v) for k, v in fields.items() if k in CONTEXT_FIELDS and v}
    return {**(_context.get() or {}), **known}


@contextmanager
def log_context(**fields: object) -> Iterator[None]:
    """Log lines written inside the block (and in the work it hands to a ContextExecutor) name
    ``fields`` (``pending_id``, ``user``, ``channel``; empty values are left out)."""
    token = _context.set(_merged(fields))
    try:
        yield
    finally:
        _context.reset(token)


def bind_log_context(**fields: object) -> None:
    """Like :func:`log_context` for the rest of the current job (use it only in code that runs
    in a context of its own: a Slack listener, a lane's job)."""
    _context.set(_merged(fields))


def new_log_context(**fields: object) -> None:
    """Start a new subject in this thread (a Slack request reaching the app): what earlier
    work in the thread named is forgotten, and the work this thread hands to a
    ContextExecutor from now on names ``fields``."""
    known = {k: str(v) for k, v in fields.items() if k in CONTEXT_FIELDS and v}
    _context.set(known)


def set_replica(name: str) -> None:
    """The name this process goes by in every JSON log line (its lease owner id)."""
    global _replica
    _replica = name


def current_log_context() -> dict[str, str]:
    fields = dict(_context.get() or {})
    if _replica:
        fields.setdefault("replica", _replica)
    return fields


def log_failure(logger: logging.Logger, message: str, *args: object) -> None:
    """Log the exception being handled under ``message``: with its traceback, unless it says
    it was told already where it arose (``said``, e.g. the store's ``DatabaseLost``, logged
    once when the file was found lost): then one warning line naming it, each time."""
    error = sys.exc_info()[1]
    if getattr(error, "said", False):
        logger.warning(message + ": %s", *args, error)
    else:
        logger.exception(message, *args)


class ContextExecutor(ThreadPoolExecutor):
    """A thread pool whose jobs run in a copy of the submitter's context (so they log with
    the card, person and channel of the work they continue)."""

    def submit(self, fn: Callable[..., T], /, *args: Any, **kwargs: Any) -> Future[T]:
        return super().submit(contextvars.copy_context().run, fn, *args, **kwargs)


class JsonFormatter(logging.Formatter):
    """One JSON object per line: time (UTC, ISO 8601), level, logger, message, the context
    fields that are known, and the traceback (``exception``) if any.

    Written by hand on purpose: python-json-logger's formatter would need as many lines of
    overrides (this time format, the context fields, keeping records' other attributes out of
    the line) and formats ``record.exc_info`` itself, past the redacted ``exc_text``."""

    def format(self, record: logging.LogRecord) -> str:
        line: dict[str, Any] = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        context = getattr(record, "log_context", None)
        for name in CONTEXT_FIELDS:
            value = getattr(record, name, None) or (context or {}).get(name)
            if value:
                line[name] = str(value)
        if record.exc_info and not record.exc_text:
            record.exc_text = self.formatException(record.exc_info)
        if record.exc_text:
            line["exception"] = record.exc_text
        if record.stack_info:
            line["stack"] = record.stack_info
        return json.dumps(line, ensure_ascii=False)


class AddContext(logging.Filter):
    """Stamps each record with the log context of the thread that wrote it."""

    def filter(self, record: logging.LogRecord) -> bool:
        record.log_context = current_log_context()
        return True


def configure_logging(level: str, fmt: LogFormat = "text") -> None:
    """The root handler on stderr in ``fmt`` (install_redaction then adds the redactor)."""
    handler = logging.StreamHandler()
    handler.setFormatter(JsonFormatter() if fmt == "json" else logging.Formatter(TEXT_FORMAT))
    handler.addFilter(AddContext())
    root = logging.getLogger()
    for old in list(root.handlers):
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(level)
    # Alembic 1.18+ announces each of its plugins at INFO when it is imported (outside any
    # migration run, which the store quiets): noise on every start, and on stderr before the
    # one-line start-up errors.
    logging.getLogger("alembic.runtime.plugins").setLevel(logging.WARNING)


class RedactSecrets(logging.Filter):
    """Rewrites every record (message, arguments, traceback, stack) through the redactor."""

    def __init__(self, redactor: Redactor):
        super().__init__()
        self.redact = redactor

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        if record.exc_info and not record.exc_text:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        record.msg = self.redact(message)
        record.args = None
        if record.exc_text:
            record.exc_text = self.redact(record.exc_text)
        if record.stack_info:
            record.stack_info = self.redact(record.stack_info)
        return True


def install_redaction(secrets: Iterable[str]) -> None:
    """Attach the redacting filter to every handler of the root logger, and send what would
    otherwise bypass logging (uncaught exceptions in any thread, warnings) through it."""
    redactor = RedactSecrets(Redactor(secrets))
    root = logging.getLogger()
    if not root.handlers:
        logging.basicConfig()
    for handler in root.handlers:
        handler.addFilter(redactor)
    logging.captureWarnings(True)
    threading.excepthook = _log_thread_exception
    sys.excepthook = _log_uncaught


_uncaught = logging.getLogger("kandev_slack.uncaught")


def _log_thread_exception(args: threading.ExceptHookArgs) -> None:
    """Python would print this traceback straight to stderr, past the redacting filter."""
    if args.exc_type is SystemExit or args.exc_value is None:
        return
    name = args.thread.name if args.thread is not None else "?"
    _uncaught.error(
        "uncaught exception in thread %s",
        name,
        exc_info=(args.exc_type, args.exc_value, args.exc_traceback),
    )


def _log_uncaught(
    exc_type: type[BaseException], exc: BaseException, tb: TracebackType | None
) -> None:
    if issubclass(exc_type, KeyboardInterrupt):
        sys.__excepthook__(exc_type, exc, tb)
        return
    _uncaught.critical("uncaught exception", exc_info=(exc_type, exc, tb))
