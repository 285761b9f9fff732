"""The layer order of ``bot/`` (CONTRIBUTING, "Where a change goes"), as a test: every import
between two of bot's folders goes down, never up, nor sideways between edges the table keeps
apart. An import from any place in a module counts (a function-local one too).

Today's code breaks the order in places; those imports are listed, each with its reason, in
:data:`KNOWN`. The list may only shrink: an import not in it fails, and so does an entry that no
longer happens (remove it). See them all with
``python -c "from tests.unit.test_layers import report; report()"``.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator, Mapping
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BOT = ROOT / "bot"

CORE, OPS, CONFIG, USECASES = "core", "ops", "config", "usecases"
KANDEV, SLACK_API, SLACK, CARDS, STORE = "kandev", "slack_api", "slack", "cards", "store"
COMMANDS, ROOT_LAYER = "commands", "root"
EDGES = frozenset({KANDEV, SLACK_API, SLACK, CARDS, STORE})

#: What each layer may import of bot (besides itself). The ground floor (core, and ops beside
#: it) imports nothing of ours; config stands on it; the use-cases on those; the edges on the
#: use-cases; the commands on everything but the composition root (bot/app.py, bot/wiring.py,
#: bot/cli.py, bot/__main__.py), which may import anything.
ALLOWED: Mapping[str, frozenset[str]] = {
    CORE: frozenset(),
    OPS: frozenset(),
    CONFIG: frozenset({CORE, OPS}),
    USECASES: frozenset({CORE, OPS, CONFIG}),
    KANDEV: frozenset({CORE, OPS, CONFIG, USECASES}),
    SLACK_API: frozenset({CORE, OPS, CONFIG, USECASES}),
    STORE: frozenset({CORE, OPS, CONFIG, USECASES}),
    CARDS: frozenset({CORE, OPS, CONFIG, USECASES}),
    # The inbound Slack edge presents results: with the cards (tell.py, said.py) and through
    # the outbound gateway's notifier (an ephemeral message, a DM).
    SLACK: frozenset({CORE, OPS, CONFIG, USECASES, CARDS, SLACK_API}),
    COMMANDS: frozenset({CORE, OPS, CONFIG, USECASES} | EDGES),
    ROOT_LAYER: frozenset({CORE, OPS, CONFIG, USECASES, COMMANDS, ROOT_LAYER} | EDGES),
}

#: Our other top-level packages: bot never imports them, but for the CLI's lazy ``preview``.
OUTSIDE = frozenset({"preview", "kandevkit", "fakeslack", "tests"})
OUTSIDE_ALLOWED = frozenset({("bot.cli", "preview.cli")})

# Reasons shared by many entries of KNOWN.
_KANDEV_ERRORS = (
    "catches Kandev's exception types, defined in the edge (a port's errors belong lower)"
)
_KANDEV_MODELS = (
    "Kandev's models (Outcome, Workspace…) are the use-cases' vocabulary: they belong in core"
)
_KANDEV_CLIENT = "typed on the concrete KandevClient, not on a narrow Protocol of the use-case"
_STORE_REPOS = (
    "typed on the store's concrete repositories / records, not on ports (Protocols) of the use-case"
)
_STORE_ERRORS = "asks the store whether an error means the database is down (is_unavailable)"
_SLACK_GATEWAY = (
    "typed on the outbound gateway (SlackGateway, Message, SlackError) instead of a port of its own"
)
_RENDERS = (
    "the use-case renders or words (cards) itself instead of returning a kind the presenter renders"
)
_CARD_TYPES = (
    "a result / value type defined in cards (the renderer's input) that the use-case builds"
)

#: Today's upward or sideways imports, (importer, imported module) → why it is still there.
#: The list may only shrink.
KNOWN: Mapping[tuple[str, str], str] = {
    # cards (pure rendering) reaching into other edges
    (
        "bot.cards.conversation",
        "bot.kandev.models",
    ): "renders Kandev's SessionMessage wire model directly",
    ("bot.cards.waiting", "bot.kandev.models"): "renders Kandev's Workspace wire model directly",
    (
        "bot.cards.subscriptions",
        "bot.store.subscriptions",
    ): "renders the store's Subscription record (ScopeKind) directly",
    # config reaching up
    (
        "bot.config.routing",
        "bot.kandev.models",
    ): "DEFAULT_PRIORITY and Workspace are Kandev's models: they belong in core",
    (
        "bot.config.routing_file",
        "bot.kandev.models",
    ): "the routing file validates priorities against Kandev's PRIORITIES (belongs in core)",
    (
        "bot.config.settings",
        "bot.store.errors",
    ): "the settings raise the store's StoreError for a bad DATABASE_URL",
    (
        "bot.config.settings",
        "bot.store.url",
    ): "the default database URL and its normalisation live in the store",
    # use-cases on the cards: rendering / words in the use-case
    ("bot.usecases.claims", "bot.cards.claims"): _RENDERS + " (lapsed / taken-over texts)",
    ("bot.usecases.conversation", "bot.cards.conversation"): _CARD_TYPES
    + " (Conversation, Problem)",
    (
        "bot.usecases.groups",
        "bot.cards.groups",
    ): "takes MAX_LINKS, a rendering limit, from the cards",
    ("bot.usecases.home", "bot.cards.home"): _RENDERS + " (render_home, the Home's limits)",
    ("bot.usecases.home", "bot.cards.subscriptions"): _RENDERS + " (with_home_blocks)",
    ("bot.usecases.home", "bot.cards.waiting"): _CARD_TYPES + " (Waiting)",
    ("bot.usecases.listing", "bot.cards.listing"): _RENDERS + " (listing, NextPage)",
    ("bot.usecases.listing", "bot.cards.text"): _RENDERS + " (one_line)",
    ("bot.usecases.listing", "bot.cards.waiting"): _CARD_TYPES + " (Query, PageKey, ListingPage…)",
    ("bot.usecases.messages", "bot.cards"): _RENDERS
    + " (messages.py is how each outbox message reads)",
    ("bot.usecases.messages", "bot.cards.approval"): _RENDERS,
    ("bot.usecases.messages", "bot.cards.copy"): _RENDERS,
    ("bot.usecases.messages", "bot.cards.followups"): _RENDERS,
    ("bot.usecases.messages", "bot.cards.limits"): _RENDERS + " (MAX_MESSAGE_TEXT)",
    ("bot.usecases.messages", "bot.cards.plain"): _RENDERS,
    ("bot.usecases.messages", "bot.cards.snooze"): _RENDERS,
    ("bot.usecases.messages", "bot.cards.text"): _RENDERS,
    ("bot.usecases.reminders", "bot.cards.followups"): _RENDERS + " (reminder / escalation texts)",
    ("bot.usecases.snooze", "bot.cards.snooze"): _RENDERS + " (back_text)",
    ("bot.usecases.subscriptions", "bot.cards.subscriptions"): _RENDERS
    + " (the subcommands' replies)",
    ("bot.usecases.waiting", "bot.cards.waiting"): _CARD_TYPES + " (Waiting)",
    (
        "bot.usecases.whole_text",
        "bot.cards.approval_view",
    ): "asks the renderer whether a text fits a view (fits_view, thread_parts)",
    # use-cases on the Kandev edge
    ("bot.usecases.answers", "bot.kandev.client"): _KANDEV_CLIENT,
    ("bot.usecases.answers", "bot.kandev.errors"): _KANDEV_ERRORS,
    ("bot.usecases.answers", "bot.kandev.models"): _KANDEV_MODELS,
    ("bot.usecases.approval_turns", "bot.kandev.errors"): _KANDEV_ERRORS,
    (
        "bot.usecases.approval_turns",
        "bot.kandev.permission_wire",
    ): "the permission wire models (PermissionRequest…) are the use-case's input",
    ("bot.usecases.approvals", "bot.kandev.errors"): _KANDEV_ERRORS,
    ("bot.usecases.approvals", "bot.kandev.models"): _KANDEV_MODELS,
    (
        "bot.usecases.approvals",
        "bot.kandev.permission_wire",
    ): "the permission wire models (PermissionRecord…) are the use-case's input",
    ("bot.usecases.conversation", "bot.kandev.client"): _KANDEV_CLIENT,
    ("bot.usecases.conversation", "bot.kandev.errors"): _KANDEV_ERRORS,
    ("bot.usecases.conversation", "bot.kandev.models"): _KANDEV_MODELS,
    (
        "bot.usecases.discovery",
        "bot.kandev.hints",
    ): "the push hints' NewPending is the use-case's input",
    ("bot.usecases.discovery", "bot.kandev.models"): _KANDEV_MODELS,
    ("bot.usecases.home", "bot.kandev.errors"): _KANDEV_ERRORS,
    ("bot.usecases.listing", "bot.kandev.client"): _KANDEV_CLIENT,
    ("bot.usecases.listing", "bot.kandev.errors"): _KANDEV_ERRORS,
    ("bot.usecases.listing", "bot.kandev.models"): _KANDEV_MODELS,
    ("bot.usecases.reconciler", "bot.kandev.errors"): _KANDEV_ERRORS,
    ("bot.usecases.reconciler", "bot.kandev.models"): _KANDEV_MODELS,
    ("bot.usecases.recovery", "bot.kandev.client"): _KANDEV_CLIENT,
    ("bot.usecases.recovery", "bot.kandev.errors"): _KANDEV_ERRORS,
    ("bot.usecases.recovery", "bot.kandev.models"): _KANDEV_MODELS,
    ("bot.usecases.resolving", "bot.kandev.models"): _KANDEV_MODELS,
    ("bot.usecases.subscriptions", "bot.kandev.client"): _KANDEV_CLIENT,
    ("bot.usecases.subscriptions", "bot.kandev.errors"): _KANDEV_ERRORS,
    ("bot.usecases.sweep_watch", "bot.kandev.errors"): _KANDEV_ERRORS,
    ("bot.usecases.sync", "bot.kandev.client"): _KANDEV_CLIENT,
    ("bot.usecases.sync", "bot.kandev.errors"): _KANDEV_ERRORS,
    (
        "bot.usecases.sync",
        "bot.kandev.hints",
    ): "the push hints' NewPending / Resolved are the loop's input",
    ("bot.usecases.tasks", "bot.kandev.client"): _KANDEV_CLIENT,
    ("bot.usecases.tasks", "bot.kandev.errors"): _KANDEV_ERRORS,
    ("bot.usecases.waiting", "bot.kandev.client"): _KANDEV_CLIENT,
    ("bot.usecases.waiting", "bot.kandev.errors"): _KANDEV_ERRORS,
    ("bot.usecases.workspace_check", "bot.kandev.errors"): _KANDEV_ERRORS,
    ("bot.usecases.workspace_check", "bot.kandev.models"): _KANDEV_MODELS,
    # use-cases on the outbound Slack edge
    ("bot.usecases.forgotten", "bot.slack_api.errors"): _SLACK_GATEWAY,
    ("bot.usecases.home", "bot.slack_api.gateway"): _SLACK_GATEWAY,
    ("bot.usecases.messages", "bot.slack_api.gateway"): _SLACK_GATEWAY,
    ("bot.usecases.publisher", "bot.slack_api.gateway"): _SLACK_GATEWAY,
    ("bot.usecases.waiting", "bot.slack_api.gateway"): _SLACK_GATEWAY,
    ("bot.usecases.writes", "bot.slack_api.errors"): _SLACK_GATEWAY,
    ("bot.usecases.writes", "bot.slack_api.gateway"): _SLACK_GATEWAY,
    # use-cases on the store
    ("bot.usecases.admission", "bot.store"): _STORE_REPOS,
    ("bot.usecases.answers", "bot.store"): _STORE_REPOS,
    ("bot.usecases.approvals", "bot.store"): _STORE_REPOS,
    ("bot.usecases.claims", "bot.store"): _STORE_REPOS,
    ("bot.usecases.claims", "bot.store.followups"): _STORE_REPOS,
    ("bot.usecases.ended", "bot.store"): _STORE_REPOS,
    ("bot.usecases.home", "bot.store"): _STORE_REPOS,
    ("bot.usecases.housekeeping", "bot.store.retention"): _STORE_REPOS,
    ("bot.usecases.interactions", "bot.store.errors"): _STORE_ERRORS,
    ("bot.usecases.leases", "bot.store"): _STORE_REPOS,
    ("bot.usecases.messages", "bot.store.copies"): _STORE_REPOS,
    ("bot.usecases.outbox_ports", "bot.store.copies"): _STORE_REPOS + " (the ports' own types)",
    ("bot.usecases.outbox_ports", "bot.store.records"): _STORE_REPOS + " (the ports' own types)",
    ("bot.usecases.pacing", "bot.store.pace"): _STORE_REPOS,
    ("bot.usecases.periodic", "bot.store"): _STORE_REPOS,
    ("bot.usecases.publisher", "bot.store.copies"): _STORE_REPOS,
    ("bot.usecases.publisher", "bot.store.errors"): _STORE_ERRORS,
    ("bot.usecases.publisher", "bot.store.pace"): _STORE_REPOS,
    ("bot.usecases.publisher", "bot.store.records"): _STORE_REPOS,
    ("bot.usecases.reconciler", "bot.store.records"): _STORE_REPOS,
    ("bot.usecases.recovery", "bot.store"): _STORE_REPOS,
    ("bot.usecases.reminders", "bot.store.followups"): _STORE_REPOS,
    ("bot.usecases.snooze", "bot.store"): _STORE_REPOS,
    ("bot.usecases.snooze", "bot.store.followups"): _STORE_REPOS,
    ("bot.usecases.subscriptions", "bot.store"): _STORE_REPOS,
    ("bot.usecases.subscriptions", "bot.store.followups"): _STORE_REPOS,
    ("bot.usecases.subscriptions", "bot.store.subscriptions"): _STORE_REPOS,
    ("bot.usecases.thread_replies", "bot.store.errors"): _STORE_ERRORS,
    ("bot.usecases.thread_replies", "bot.store.thread_replies"): _STORE_REPOS
    + " (a thread reply's states)",
    ("bot.usecases.verdicts", "bot.store"): _STORE_REPOS,
    ("bot.usecases.verdicts", "bot.store.records"): _STORE_REPOS,
    ("bot.usecases.waiting", "bot.store"): _STORE_REPOS,
    ("bot.usecases.writes", "bot.store.copies"): _STORE_REPOS,
    ("bot.usecases.writes", "bot.store.records"): _STORE_REPOS,
}


def layer_of(module: str) -> str | None:
    """The layer of a module of bot (None: not ours)."""
    parts = module.split(".")
    if parts[0] != "bot":
        return None
    if len(parts) == 1 or parts[1] in {"app", "wiring", "cli", "__main__"}:
        return ROOT_LAYER
    return parts[1]


def imports(module: str, source: str, known: frozenset[str]) -> Iterator[tuple[str, int]]:
    """(imported module, line) for every import in ``source`` (the module ``module``), relative
    ones resolved; ``from a import b`` names ``a.b`` when that is a module in ``known``."""
    is_package = module in known and f"{module}.__init__" in known
    package = module if is_package else module.rpartition(".")[0]
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, node.lineno
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            for alias in node.names:
                sub = f"{target}.{alias.name}"
                yield (sub if sub in known else target), node.lineno


def violations(sources: Mapping[str, str]) -> Iterator[tuple[str, str, int]]:
    """(importer, imported, line) for every import of ``sources`` (module → text) that breaks
    the layer order."""
    known = frozenset(sources) | frozenset(f"{m}.__init__" for m in _packages(sources))
    for module, source in sources.items():
        here = layer_of(module)
        assert here is not None and here in ALLOWED, f"{module}: no layer (add it to ALLOWED)"
        for target, line in imports(module, source, known):
            top = target.split(".")[0]
            if top in OUTSIDE:
                if (module, target) not in OUTSIDE_ALLOWED:
                    yield module, target, line
                continue
            there = layer_of(target)
            if there is None or there == here:
                continue
            if there not in ALLOWED[here]:
                yield module, target, line


def _packages(sources: Mapping[str, str]) -> set[str]:
    return {m for m in sources if any(o.startswith(f"{m}.") for o in sources)}


def bot_sources() -> dict[str, str]:
    sources = {}
    for path in sorted(BOT.rglob("*.py")):
        parts = path.relative_to(ROOT).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        sources[".".join(parts)] = path.read_text(encoding="utf-8")
    return sources


def report() -> None:
    """Print every import that breaks the layer order, allowed or not."""
    for module, target, line in sorted(set(violations(bot_sources()))):
        print(f"{module}:{line} -> {target}  [{KNOWN.get((module, target), 'NEW')}]")


def test_every_folder_of_bot_has_a_layer() -> None:
    folders = {p.name for p in BOT.iterdir() if p.is_dir() and (p / "__init__.py").exists()}
    assert folders <= set(ALLOWED), folders - set(ALLOWED)


def test_bot_imports_go_down_the_layers() -> None:
    found = {(m, t): line for m, t, line in violations(bot_sources())}
    new = sorted(f"{m}:{line} imports {t}" for (m, t), line in found.items() if (m, t) not in KNOWN)
    assert not new, (
        "imports against the layer order (CONTRIBUTING, 'Where a change goes'): "
        "move the shared thing down (core, a use-case port) instead\n" + "\n".join(new)
    )


def test_the_known_exceptions_only_shrink() -> None:
    found = {(m, t) for m, t, _ in violations(bot_sources())}
    gone = sorted(f"{m} -> {t}" for m, t in KNOWN if (m, t) not in found)
    assert not gone, "fixed: remove these from KNOWN\n" + "\n".join(gone)


@pytest.mark.parametrize(
    ("module", "source", "caught"),
    [
        ("bot.usecases.x", "from bot.slack.tell import tell\n", "bot.slack.tell"),
        ("bot.usecases.x", "from bot import cards\n", "bot.cards"),
        ("bot.usecases.x", "from ..store import Thing\n", "bot.store"),
        ("bot.usecases.x", "def f():\n    import bot.kandev.client\n", "bot.kandev.client"),
        ("bot.usecases.x", "from bot.wiring import build\n", "bot.wiring"),
        ("bot.core.x", "from bot.ops import metrics\n", "bot.ops"),
        ("bot.config.x", "from bot.usecases.y import Y\n", "bot.usecases.y"),
        ("bot.cards.x", "from bot.store.cards import CardsRepository\n", "bot.store.cards"),
        (
            "bot.store.x",
            "from bot.slack_api.gateway import SlackGateway\n",
            "bot.slack_api.gateway",
        ),
        ("bot.commands.x", "from bot.app import build\n", "bot.app"),
        ("bot.slack.x", "from tests.kit.fakes import FakeKandev\n", "tests.kit.fakes"),
    ],
)
def test_an_upward_import_is_caught(module: str, source: str, caught: str) -> None:
    sources = {
        "bot": "",
        "bot.cards": "",
        "bot.cards.x": "",
        "bot.usecases": "",
        "bot.usecases.y": "",
        "bot.kandev.client": "",
        "bot.store.cards": "",
        "bot.slack.tell": "",
        "bot.slack_api.gateway": "",
        "bot.ops": "",
        "bot.app": "",
        "bot.wiring": "",
        module: source,
    }
    assert [t for m, t, _ in violations(sources) if m == module] == [caught]


@pytest.mark.parametrize(
    ("module", "source"),
    [
        ("bot.slack.x", "from bot.cards.card import render\nfrom bot.usecases.y import Y\n"),
        ("bot.usecases.x", "from bot.core.domain import Card\nfrom . import y\n"),
        ("bot.commands.x", "from bot.slack.tell import tell\n"),
        ("bot.wiring", "from bot.commands.x import run\n"),
        ("bot.ops.x", "import logging\nfrom .metrics import m\n"),
    ],
)
def test_a_downward_import_passes(module: str, source: str) -> None:
    sources = {"bot": "", "bot.usecases": "", "bot.usecases.y": "", module: source}
    assert list(violations(sources)) == []
