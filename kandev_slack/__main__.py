"""``python -m kandev_slack``: the same as the ``kandev-slack`` command."""

from kandev_slack.cli import main

if __name__ == "__main__":
    raise SystemExit(main())
