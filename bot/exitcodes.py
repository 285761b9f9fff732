"""The exit codes of the `kandev-slack` command (`run` and `check`)."""

from __future__ import annotations

#: Ran and stopped normally; `check`: every check passed.
EXIT_OK = 0
#: Could not run (Kandev or Slack refused at start-up); `check`: a check failed.
EXIT_FAILED = 1
#: The configuration cannot be used; every problem was printed by its variable name.
EXIT_CONFIG = 2
#: Stopped by Ctrl-C (128 + SIGINT, the shell's convention).
EXIT_INTERRUPTED = 130
