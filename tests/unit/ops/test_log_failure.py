"""log_failure: a loop's failure with its traceback, unless the error was told where it arose
(the store's DatabaseLost): then one warning line."""

from __future__ import annotations

import logging

import pytest

from kandev_slack.ops.logs import log_failure
from kandev_slack.store.errors import DatabaseLost

log = logging.getLogger("tests.loop")


def _fail_with(error: Exception) -> None:
    try:
        raise error
    except Exception:
        log_failure(log, "%s: a round failed; retrying", "periodic")


def test_an_error_told_already_is_one_warning_line(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.DEBUG):
        _fail_with(DatabaseLost("the database file kandev-slack.db was deleted"))
    [record] = caplog.records
    assert record.levelno == logging.WARNING and record.exc_info is None
    assert record.getMessage() == (
        "periodic: a round failed; retrying: the database file kandev-slack.db was deleted"
    )


def test_any_other_error_keeps_its_traceback(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.DEBUG):
        _fail_with(ValueError("a bug"))
    [record] = caplog.records
    assert record.levelno == logging.ERROR and record.exc_info is not None
