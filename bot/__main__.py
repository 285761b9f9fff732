"""``python -m bot``: the same as the ``kandev-slack`` command."""

from bot.cli import main

if __name__ == "__main__":
    raise SystemExit(main())
