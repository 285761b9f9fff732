"""Logging that never shows a secret: every record is redacted (bot/redaction.py: configured
secrets of any length, and any URL's userinfo) before any handler sees it."""

from __future__ import annotations

import logging
import sys
import threading
from collections.abc import Iterable
from types import TracebackType

from bot.redaction import Redactor


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


_uncaught = logging.getLogger("bot.uncaught")


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
