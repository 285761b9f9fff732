"""The exit codes of the `kandev-slack` command (`run`, `check`, `db upgrade|status`)."""

from __future__ import annotations

#: Ran and stopped normally (SIGTERM / SIGINT: after handing its work over); `check`: every
#: check passed; `db`: done, the schema is up to date.
EXIT_OK = 0
#: Could not run (Kandev or Slack refused at start-up); `check`: a check failed; `db`: the
#: database cannot be used, or (`status`) a migration is still to apply.
EXIT_FAILED = 1
#: The configuration cannot be used; every problem was printed by its variable name (`check`
#: still ran every check the other settings allow).
EXIT_CONFIG = 2
#: Stopped by Ctrl-C (128 + SIGINT, the shell's convention).
EXIT_INTERRUPTED = 130


class StartupError(Exception):
    """The bot cannot start: ``exit_code`` and the lines to print."""

    def __init__(self, exit_code: int, *lines: str) -> None:
        super().__init__("; ".join(lines))
        self.exit_code = exit_code
        self.lines = lines
