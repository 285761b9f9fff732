"""The scripted agents of ``kandev-slack preview --with-kandev``: a few realistic questions
asked through a real local Kandev (one question, several at once, context, a critical one
routed to its own channel) and an approval (a tool-permission request)."""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from kandevkit import KandevHarnessError, KandevServer, Permissions, permission_spec, question

log = logging.getLogger("preview.scenario")


@dataclass(frozen=True)
class Ask:
    """One scripted task: its title, the questions its agent asks and what it says first."""

    title: str
    questions: list[dict[str, Any]]
    context: str = ""
    priority: str | None = None
    transcript: list[dict[str, Any]] = field(default_factory=list)


ASKS = (
    Ask(
        "Store the orders of the checkout service",
        [
            question(
                "db",
                "Database",
                "Which database should the *orders* table live in?",
                ("PostgreSQL", "The relational database the other services already use"),
                ("SQLite", "One file next to the service; no server to run"),
                ("DynamoDB", "Managed key-value store; needs an AWS account"),
            )
        ],
        context="The checkout service writes about 200 orders a minute at peak; "
        "see `services/checkout/README.md`.",
        transcript=[
            {"say": "I read the checkout service and found no storage for orders yet."},
            {"tool": "Search the repository", "command": "rg -n 'orders' services/", "exit": 0},
        ],
    ),
    Ask(
        "Design the public API of the invoices module",
        [
            question(
                "style",
                "API style",
                "Which style should the invoices API follow?",
                ("REST", "Resources and verbs, like the rest of our public API"),
                ("GraphQL", "One endpoint; clients choose their fields"),
            ),
            question(
                "auth",
                "Authentication",
                "How do clients authenticate?",
                ("API keys", "One key per customer, sent in a header"),
                ("OAuth 2", "Tokens issued by our identity service"),
            ),
            question(
                "pages",
                "Pagination",
                "How are long lists paged?",
                ("Cursor", "An opaque cursor; stable while invoices are added"),
                ("Offset", "page and per_page; simple but shifts on inserts"),
            ),
        ],
        context="Three decisions block the first endpoint. *Invoices* are read far more "
        "often than written.",
    ),
    Ask(
        "Production deploy is failing",
        [
            question(
                "rollback",
                "Roll back?",
                "The migration `0042_split_names` fails in production. Roll back the release?",
                ("Roll back", "Redeploy v1.41 and keep the migration for tomorrow"),
                ("Fix forward", "Patch the migration and deploy v1.42.1"),
            )
        ],
        context="Checkout is up but the deploy pipeline is red since 09:12.",
        priority="critical",
    ),
)
#: The approval: the agent asks before running a command.
APPROVAL = permission_spec(
    "Run `npm install --save stripe`", "execute", {"command": "npm install --save stripe"}
)


def ask_all(kandev: KandevServer, *, done: Callable[[str], None] = log.info) -> None:
    """Create each scripted task in turn (each returns once Kandev lists its question)."""
    for ask in ASKS:
        try:
            kandev.seed_bundle(
                ask.questions,
                ask.context,
                ask.title,
                priority=ask.priority,
                transcript=ask.transcript,
            )
            done(f"a scripted agent asks: {ask.title}")
        except KandevHarnessError as problem:
            log.warning("a scripted agent could not ask %r: %s", ask.title, problem)
    try:
        Permissions(kandev).seed([APPROVAL], "Add the payment library")
        done("a scripted agent asks for approval: Add the payment library")
    except KandevHarnessError as problem:
        log.warning("the scripted approval could not be requested: %s", problem)
