"""The `kandev-slack` command: `run`, `check [--json]`, `db upgrade|status`, `secret-key` and
`preview` (the local Slack-like page, package `preview`, imported only when asked for)."""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Sequence

from kandev_slack.config.settings import (
    ConfigError,
    Mode,
    Settings,
    load_settings,
    resolve_flag,
    resolve_mode,
)
from kandev_slack.core.exitcodes import EXIT_CONFIG, EXIT_FAILED, EXIT_INTERRUPTED, EXIT_OK


def _version() -> str:
    """The installed package's version (its metadata: what pip installed)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("kandev-slack")
    except PackageNotFoundError:  # run from a source tree that was never installed
        return "unknown (not installed)"


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="kandev-slack",
        description="Post the questions and tool-permission requests (approvals) of Kandev "
        "agents to Slack and answer them from Slack.",
    )
    parser.add_argument(
        "--version", action="version", version=f"%(prog)s {_version()}", help="print the version"
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    run = commands.add_parser(
        "run",
        help="run the bot (Socket Mode when SLACK_APP_TOKEN is set)",
        description="Run the bot: post the questions and approvals waiting in Kandev "
        "(KANDEV_URL) as Slack cards and send the answers given in Slack back to Kandev. "
        "Socket Mode when SLACK_APP_TOKEN is set, else HTTP mode; the settings are read from "
        "the environment (SLACK_BOT_TOKEN, KANDEV_SLACK_CHANNEL, ...: docs/configuration.md). "
        "Exit 2 on a configuration problem, 1 when Slack refuses a token.",
    )
    check = commands.add_parser(
        "check",
        help="verify Kandev, the Slack tokens and the channels",
        description="Verify everything the bot needs before running it: Kandev (reachable, "
        "token, MCP, version), the Slack tokens and scopes, the channels, and where each "
        "question and approval waiting in Kandev would go. Prints one line per check and "
        "the number that failed. Exit 0 when everything needed to run is fine, 1 when a "
        "check failed, 2 when a setting is missing or invalid.",
    )
    check.add_argument(
        "--json", action="store_true", help="print the report as one JSON document (scripts)"
    )
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
    db = commands.add_parser(
        "db",
        help="the database (DATABASE_URL): upgrade its schema, status",
        description="The bot's database (DATABASE_URL, SQLite or PostgreSQL): apply its "
        "schema migrations or show its state.",
    )
    db_commands = db.add_subparsers(dest="db_command", required=True, metavar="DB_COMMAND")
    db_commands.add_parser(
        "upgrade",
        help="apply the schema migrations (run does it too)",
        description="Apply the schema migrations (Alembic revisions) the database lacks and "
        "print the steps applied; `run` applies them at start-up as well.",
    )
    db_commands.add_parser(
        "status",
        help="schema version, waiting cards, outbox, failed items",
        description="Show the schema version against the newest, the migrations `upgrade` "
        "would apply (exit 1 while one is missing), the waiting cards, the outbox and its "
        "failed items.",
    )
    commands.add_parser(
        "secret-key",
        help="print a new KANDEV_SLACK_SECRET_KEY (and how to rotate keys)",
        description="Print a new random key for KANDEV_SLACK_SECRET_KEY, which encrypts the "
        'people\'s own Kandev tokens in the database (routes with identity = "linked" or '
        '"required"). To rotate, put the new key first, a comma, then the old ones, and '
        "restart: each start seals every token anew under the newest key.",
    )
    shown = commands.add_parser(
        "preview",
        help="try the bot in a local Slack-like page (no Slack app needed)",
        description="Serve a local page (http://127.0.0.1:PORT/) that behaves like a Slack "
        "workspace for this bot: cards, threads, modals, the App Home and /kandev-questions, "
        "on your Kandev (KANDEV_URL) or, with --with-kandev, on a local one whose scripted "
        "agents ask questions. Never calls slack.com.",
    )
    shown.add_argument("--port", type=int, default=3100, help="the page's port (127.0.0.1)")
    shown.add_argument(
        "--with-kandev",
        action="store_true",
        help="start a local Kandev (npm runtime) whose scripted agents ask questions",
    )
    shown.add_argument(
        "--kandev-port",
        type=_port,
        metavar="PORT",
        help="with --with-kandev: its HTTP port (its other ports are the 299 after it)",
    )
    shown.add_argument(
        "--allow-slack-env",
        action="store_true",
        help="start although Slack tokens are set in the environment (they are never used)",
    )
    return parser


def _port(text: str) -> int:
    """A TCP port number (1-65535), for argparse."""
    if not text.strip().isdigit() or not 0 < int(text) <= 65_535:
        raise argparse.ArgumentTypeError(f"not a port number: {text!r}")
    return int(text)


def _report_config(error: ConfigError) -> int:
    print("kandev-slack: configuration problems:", file=sys.stderr)
    for problem in error.problems:
        print(f"  {problem}", file=sys.stderr)
    return EXIT_CONFIG


def _run(settings: Settings, mode: Mode) -> int:
    from kandev_slack.ops.logs import configure_logging

    configure_logging(settings.log_level, settings.log_format)
    # Per-request lines of the HTTP clients would drown the bot's own log.
    for noisy in ("httpx", "httpcore", "slack_sdk.web.base_client", "websockets"):
        logging.getLogger(noisy).setLevel(max(logging.WARNING, logging.getLogger().level))
    from kandev_slack.app import main_run

    try:
        return main_run(settings, mode)
    except KeyboardInterrupt:
        return EXIT_INTERRUPTED


def _check(flag: Mode | None, as_json: bool) -> int:
    """Every check the settings allow, even when some are missing or invalid (those are
    reported as configuration problems, exit 2); exit 1 when a check failed, else 0."""
    from kandev_slack.commands.check import report_json, run_checks
    from kandev_slack.commands.findings import CheckReport
    from kandev_slack.config.settings import load_partial
    from kandev_slack.kandev.client import KandevClient

    partial = load_partial(mode=flag)
    settings = partial.settings
    has_app_token = partial.usable("slack_app_token") and settings.slack_app_token is not None
    mode = resolve_flag(flag, has_app_token)
    slack = partial.usable("slack_bot_token", "slack_api_url")
    store = partial.usable("database_url", "kandev_slack_secret_key")
    if partial.usable("kandev_url", "kandev_token"):
        token = settings.kandev_token.get_secret_value() if settings.kandev_token else None
        with KandevClient(settings.kandev_url, token=token) as kandev:
            findings = run_checks(settings, mode, kandev, slack=slack, store=store)
    else:
        findings = run_checks(settings, mode, None, slack=slack, store=store)
    report = CheckReport(findings, partial.problems)
    if as_json:
        print(report_json(report))
    else:
        if partial.problems:
            _report_config(ConfigError(partial.problems))
        for finding in findings:
            print(finding.line())
        print(report.summary())
    if partial.problems:
        return EXIT_CONFIG
    return EXIT_FAILED if report.failed else EXIT_OK


def _secret_key() -> int:
    """A new key on stdout (one line, for a secret store or ``$(...)``); how to use it and how
    to rotate on stderr."""
    from kandev_slack.ops.vault import SECRET_KEY_SETTING, Vault

    print(Vault.new_key())
    print(
        f"kandev-slack: a new key for {SECRET_KEY_SETTING} (keep it with the other secrets; "
        "without it the stored Kandev tokens cannot be read).\n"
        f"To rotate: put the new key first, a comma, then the old ones "
        f"({SECRET_KEY_SETTING}=<new>,<old>) and restart every replica; each start seals "
        "the tokens anew under the new key, and once every replica runs with it the old key "
        "may be dropped.",
        file=sys.stderr,
    )
    return EXIT_OK


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if args.command == "secret-key":
        return _secret_key()
    if args.command == "check":
        return _check(args.mode, args.json)
    if args.command == "db":
        from kandev_slack.commands.db import main_db

        return main_db(args.db_command)
    if args.command == "preview":
        from kandev_slack.preview.cli import main_preview

        return main_preview(
            args.port,
            with_kandev=args.with_kandev,
            allow_slack_env=args.allow_slack_env,
            kandev_port=args.kandev_port,
        )
    try:
        settings = load_settings(mode=args.mode)
        mode = resolve_mode(settings, args.mode)
    except ConfigError as error:
        return _report_config(error)
    return _run(settings, mode)


if __name__ == "__main__":
    sys.exit(main())
