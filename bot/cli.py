"""The `kandev-slack` command: `run [--http | --socket]` and `check [--http | --socket]`."""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Sequence

from bot.config import ConfigError, Mode, Settings, load_settings, resolve_mode
from bot.exitcodes import EXIT_CONFIG, EXIT_FAILED, EXIT_INTERRUPTED, EXIT_OK


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="kandev-slack",
        description="Post the questions of Kandev agents to Slack and answer them from Slack.",
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    run = commands.add_parser("run", help="run the bot (Socket Mode when SLACK_APP_TOKEN is set)")
    check = commands.add_parser("check", help="verify Kandev, the Slack tokens and the channels")
    for sub in (run, check):
        mode = sub.add_mutually_exclusive_group()
        mode.add_argument(
            "--http",
            dest="mode",
            action="store_const",
            const="http",
            help="serve POST /slack/events on $PORT (needs SLACK_SIGNING_SECRET)",
        )
        mode.add_argument(
            "--socket",
            dest="mode",
            action="store_const",
            const="socket",
            help="connect over Socket Mode (needs SLACK_APP_TOKEN)",
        )
    return parser


def _report_config(error: ConfigError) -> int:
    print("kandev-slack: configuration problems:", file=sys.stderr)
    for problem in error.problems:
        print(f"  {problem}", file=sys.stderr)
    return EXIT_CONFIG


def _run(settings: Settings, mode: Mode) -> int:
    logging.basicConfig(
        level=settings.log_level, format="%(asctime)s %(levelname)s %(name)s: %(message)s"
    )
    # Per-request lines of the HTTP clients would drown the bot's own log.
    for noisy in ("httpx", "httpcore", "slack_sdk.web.base_client", "websockets"):
        logging.getLogger(noisy).setLevel(max(logging.WARNING, logging.getLogger().level))
    from bot.app import main_run

    try:
        return main_run(settings, mode)
    except KeyboardInterrupt:
        return EXIT_INTERRUPTED


def _check(settings: Settings, mode: Mode) -> int:
    from bot.checks import run_checks
    from bot.kandev.client import KandevClient

    token = settings.kandev_token.get_secret_value() if settings.kandev_token else None
    with KandevClient(settings.kandev_url, token=token) as kandev:
        findings = run_checks(settings, mode, kandev)
    for finding in findings:
        print(finding.line())
    failed = sum(not f.ok for f in findings)
    print(f"{failed} of {len(findings)} checks failed" if failed else "all checks passed")
    return EXIT_FAILED if failed else EXIT_OK


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        settings = load_settings(mode=args.mode)
        mode = resolve_mode(settings, args.mode)
    except ConfigError as error:
        return _report_config(error)
    if args.command == "run":
        return _run(settings, mode)
    return _check(settings, mode)


if __name__ == "__main__":
    sys.exit(main())
