"""The layer order of ``kandev_slack/`` (CONTRIBUTING, "Where a change goes"), as a test: every
import
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
PACKAGE = "kandev_slack"
BOT = ROOT / PACKAGE

CORE, OPS, CONFIG, USECASES = "core", "ops", "config", "usecases"
KANDEV, SLACK_API, SLACK, CARDS, STORE = "kandev", "slack_api", "slack", "cards", "store"
COMMANDS, ROOT_LAYER = "commands", "root"
KITS, PREVIEW, KINDS = "kits", "preview", "kinds"
EDGES = frozenset({KANDEV, SLACK_API, SLACK, CARDS, STORE})

#: What each layer may import of bot (besides itself). The ground floor (core, and ops beside
#: it) imports nothing of ours; config stands on it; the use-cases on those; the edges on the
#: use-cases; the commands on everything but the composition root (kandev_slack/app.py,
#: kandev_slack/wiring.py,
#: kandev_slack/cli.py, kandev_slack/__main__.py), which may import anything.
ALLOWED: Mapping[str, frozenset[str]] = {
    CORE: frozenset(),
    OPS: frozenset(),
    CONFIG: frozenset({CORE, OPS}),
    # The item kinds (kandev_slack/kinds/) stand on core, ops and config, below the use-cases
    # and every edge, which all ask ``spec_of(...)``. They never import an edge: a kind's
    # operation that calls Kandev is given the client (a port, kinds/spec.py's Resolver) by its
    # caller, which got it from the composition root. A kind's renderers, in its own
    # package's cards/ (kandev_slack/kinds/<kind>/cards/), stand in the cards layer (layer_of).
    KINDS: frozenset({CORE, OPS, CONFIG}),
    USECASES: frozenset({CORE, OPS, CONFIG, KINDS}),
    KANDEV: frozenset({CORE, OPS, CONFIG, KINDS, USECASES}),
    SLACK_API: frozenset({CORE, OPS, CONFIG, KINDS, USECASES}),
    STORE: frozenset({CORE, OPS, CONFIG, KINDS, USECASES}),
    CARDS: frozenset({CORE, OPS, CONFIG, KINDS, USECASES}),
    # The inbound Slack edge presents results: with the cards (tell.py, said.py) and through
    # the outbound gateway's notifier (an ephemeral message, a DM).
    SLACK: frozenset({CORE, OPS, CONFIG, KINDS, USECASES, CARDS, SLACK_API}),
    COMMANDS: frozenset({CORE, OPS, CONFIG, KINDS, USECASES} | EDGES),
    ROOT_LAYER: frozenset(
        {CORE, OPS, CONFIG, KINDS, USECASES, COMMANDS, ROOT_LAYER, PREVIEW} | EDGES
    ),
    # The kits (a fake Slack, a local Kandev) stand apart: they import nothing of the product,
    # so they fake Slack and Kandev as those are, not as the bot believes them to be.
    KITS: frozenset(),
    # The preview runs the whole bot (kandev_slack/inproc.py) on the kits.
    PREVIEW: frozenset({CORE, OPS, CONFIG, KINDS, USECASES, COMMANDS, KITS, ROOT_LAYER} | EDGES),
}

#: What the package never imports: the tests.
OUTSIDE = frozenset({"tests"})
OUTSIDE_ALLOWED: frozenset[tuple[str, str]] = frozenset()

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
        "kandev_slack.cards.views.conversation",
        "kandev_slack.kandev.models",
    ): "renders Kandev's SessionMessage wire model directly",
    (
        "kandev_slack.cards.views.waiting",
        "kandev_slack.kandev.models",
    ): "renders Kandev's Workspace wire model directly",
    (
        "kandev_slack.cards.views.subscriptions",
        "kandev_slack.store.people.subscriptions",
    ): "renders the store's Subscription record (ScopeKind) directly",
    # config reaching up
    (
        "kandev_slack.config.routing",
        "kandev_slack.kandev.models",
    ): "DEFAULT_PRIORITY and Workspace are Kandev's models: they belong in core",
    (
        "kandev_slack.config.routing_file",
        "kandev_slack.kandev.models",
    ): "the routing file validates priorities against Kandev's PRIORITIES (belongs in core)",
    (
        "kandev_slack.config.settings",
        "kandev_slack.store.errors",
    ): "the settings raise the store's StoreError for a bad DATABASE_URL",
    (
        "kandev_slack.config.settings",
        "kandev_slack.store.sql.url",
    ): "the default database URL and its normalisation live in the store",
    # use-cases on the cards: rendering / words in the use-case
    ("kandev_slack.usecases.answering.claims", "kandev_slack.cards.views.claims"): _RENDERS
    + " (lapsed / taken-over texts)",
    (
        "kandev_slack.usecases.views.conversation",
        "kandev_slack.cards.views.conversation",
    ): _CARD_TYPES + " (Conversation, Problem)",
    ("kandev_slack.usecases.views.home", "kandev_slack.cards.views.home"): _RENDERS
    + " (render_home, the Home's limits)",
    ("kandev_slack.usecases.views.home", "kandev_slack.cards.views.subscriptions"): _RENDERS
    + " (with_home_blocks)",
    ("kandev_slack.usecases.views.home", "kandev_slack.cards.views.waiting"): _CARD_TYPES
    + " (Waiting)",
    ("kandev_slack.usecases.views.listing", "kandev_slack.cards.views.listing"): _RENDERS
    + " (listing, NextPage)",
    ("kandev_slack.usecases.views.listing", "kandev_slack.cards.text"): _RENDERS + " (one_line)",
    ("kandev_slack.usecases.views.listing", "kandev_slack.cards.views.waiting"): _CARD_TYPES
    + " (Query, PageKey, ListingPage…)",
    ("kandev_slack.usecases.outbox.messages", "kandev_slack.cards.kinds"): _RENDERS
    + " (which renderer draws a card of each kind)",
    ("kandev_slack.usecases.outbox.messages", "kandev_slack.cards.copy"): _RENDERS,
    ("kandev_slack.usecases.outbox.messages", "kandev_slack.cards.views.followups"): _RENDERS,
    ("kandev_slack.usecases.outbox.messages", "kandev_slack.cards.limits"): _RENDERS
    + " (MAX_MESSAGE_TEXT)",
    ("kandev_slack.usecases.outbox.messages", "kandev_slack.cards.plain"): _RENDERS,
    ("kandev_slack.usecases.outbox.messages", "kandev_slack.cards.views.snooze"): _RENDERS,
    ("kandev_slack.usecases.outbox.messages", "kandev_slack.cards.text"): _RENDERS,
    ("kandev_slack.usecases.followups.reminders", "kandev_slack.cards.views.followups"): _RENDERS
    + " (reminder / escalation texts)",
    ("kandev_slack.usecases.answering.snooze", "kandev_slack.cards.views.snooze"): _RENDERS
    + " (back_text)",
    (
        "kandev_slack.usecases.followups.subscriptions",
        "kandev_slack.cards.views.subscriptions",
    ): _RENDERS + " (the subcommands' replies)",
    ("kandev_slack.usecases.views.waiting", "kandev_slack.cards.views.waiting"): _CARD_TYPES
    + " (Waiting)",
    (
        "kandev_slack.usecases.views.whole_text",
        "kandev_slack.kinds.approval.cards.view",
    ): "asks the renderer whether a text fits a view (fits_view, thread_parts)",
    # use-cases on the Kandev edge
    ("kandev_slack.usecases.answering.answers", "kandev_slack.kandev.client"): _KANDEV_CLIENT,
    ("kandev_slack.usecases.answering.answers", "kandev_slack.kandev.errors"): _KANDEV_ERRORS,
    ("kandev_slack.usecases.answering.answers", "kandev_slack.kandev.models"): _KANDEV_MODELS,
    ("kandev_slack.usecases.intake.approval_turns", "kandev_slack.kandev.errors"): _KANDEV_ERRORS,
    (
        "kandev_slack.usecases.intake.approval_turns",
        "kandev_slack.kandev.approvals.wire",
    ): "the permission wire models (PermissionRequest…) are the use-case's input",
    ("kandev_slack.usecases.intake.approvals", "kandev_slack.kandev.errors"): _KANDEV_ERRORS,
    ("kandev_slack.usecases.intake.approvals", "kandev_slack.kandev.models"): _KANDEV_MODELS,
    (
        "kandev_slack.usecases.intake.approvals",
        "kandev_slack.kandev.approvals.wire",
    ): "the permission wire models (PermissionRecord…) are the use-case's input",
    ("kandev_slack.usecases.views.conversation", "kandev_slack.kandev.client"): _KANDEV_CLIENT,
    ("kandev_slack.usecases.views.conversation", "kandev_slack.kandev.errors"): _KANDEV_ERRORS,
    ("kandev_slack.usecases.views.conversation", "kandev_slack.kandev.models"): _KANDEV_MODELS,
    (
        "kandev_slack.usecases.intake.discovery",
        "kandev_slack.kandev.hints",
    ): "the push hints' NewPending is the use-case's input",
    ("kandev_slack.usecases.intake.discovery", "kandev_slack.kandev.models"): _KANDEV_MODELS,
    ("kandev_slack.usecases.views.home", "kandev_slack.kandev.errors"): _KANDEV_ERRORS,
    ("kandev_slack.usecases.views.listing", "kandev_slack.kandev.client"): _KANDEV_CLIENT,
    ("kandev_slack.usecases.views.listing", "kandev_slack.kandev.errors"): _KANDEV_ERRORS,
    ("kandev_slack.usecases.views.listing", "kandev_slack.kandev.models"): _KANDEV_MODELS,
    ("kandev_slack.usecases.intake.reconciler", "kandev_slack.kandev.errors"): _KANDEV_ERRORS,
    ("kandev_slack.usecases.intake.reconciler", "kandev_slack.kandev.models"): _KANDEV_MODELS,
    ("kandev_slack.usecases.answering.recovery", "kandev_slack.kandev.client"): _KANDEV_CLIENT,
    ("kandev_slack.usecases.answering.recovery", "kandev_slack.kandev.errors"): _KANDEV_ERRORS,
    ("kandev_slack.usecases.answering.recovery", "kandev_slack.kandev.models"): _KANDEV_MODELS,
    ("kandev_slack.usecases.answering.resolving", "kandev_slack.kandev.models"): _KANDEV_MODELS,
    ("kandev_slack.usecases.followups.subscriptions", "kandev_slack.kandev.client"): _KANDEV_CLIENT,
    ("kandev_slack.usecases.followups.subscriptions", "kandev_slack.kandev.errors"): _KANDEV_ERRORS,
    ("kandev_slack.usecases.intake.sweep_watch", "kandev_slack.kandev.errors"): _KANDEV_ERRORS,
    ("kandev_slack.usecases.intake.sync", "kandev_slack.kandev.client"): _KANDEV_CLIENT,
    ("kandev_slack.usecases.intake.sync", "kandev_slack.kandev.errors"): _KANDEV_ERRORS,
    (
        "kandev_slack.usecases.intake.sync",
        "kandev_slack.kandev.hints",
    ): "the push hints' NewPending / Resolved are the loop's input",
    ("kandev_slack.usecases.tasks", "kandev_slack.kandev.client"): _KANDEV_CLIENT,
    ("kandev_slack.usecases.tasks", "kandev_slack.kandev.errors"): _KANDEV_ERRORS,
    ("kandev_slack.usecases.views.waiting", "kandev_slack.kandev.client"): _KANDEV_CLIENT,
    ("kandev_slack.usecases.views.waiting", "kandev_slack.kandev.errors"): _KANDEV_ERRORS,
    ("kandev_slack.usecases.intake.workspace_check", "kandev_slack.kandev.errors"): _KANDEV_ERRORS,
    ("kandev_slack.usecases.intake.workspace_check", "kandev_slack.kandev.models"): _KANDEV_MODELS,
    # use-cases on the outbound Slack edge
    ("kandev_slack.usecases.outbox.forgotten", "kandev_slack.slack_api.errors"): _SLACK_GATEWAY,
    ("kandev_slack.usecases.views.home", "kandev_slack.slack_api.gateway"): _SLACK_GATEWAY,
    ("kandev_slack.usecases.outbox.messages", "kandev_slack.slack_api.gateway"): _SLACK_GATEWAY,
    ("kandev_slack.usecases.outbox.publisher", "kandev_slack.slack_api.gateway"): _SLACK_GATEWAY,
    ("kandev_slack.usecases.views.waiting", "kandev_slack.slack_api.gateway"): _SLACK_GATEWAY,
    ("kandev_slack.usecases.outbox.writes", "kandev_slack.slack_api.errors"): _SLACK_GATEWAY,
    ("kandev_slack.usecases.outbox.writes", "kandev_slack.slack_api.gateway"): _SLACK_GATEWAY,
    # use-cases on the store
    ("kandev_slack.usecases.answering.admission", "kandev_slack.store"): _STORE_REPOS,
    ("kandev_slack.usecases.answering.answers", "kandev_slack.store"): _STORE_REPOS,
    ("kandev_slack.usecases.intake.approvals", "kandev_slack.store"): _STORE_REPOS,
    ("kandev_slack.usecases.answering.claims", "kandev_slack.store"): _STORE_REPOS,
    ("kandev_slack.usecases.answering.claims", "kandev_slack.store.cards.followups"): _STORE_REPOS,
    ("kandev_slack.usecases.intake.ended", "kandev_slack.store"): _STORE_REPOS,
    ("kandev_slack.usecases.views.home", "kandev_slack.store"): _STORE_REPOS,
    ("kandev_slack.usecases.followups.housekeeping", "kandev_slack.store.retention"): _STORE_REPOS,
    ("kandev_slack.usecases.answering.interactions", "kandev_slack.store.errors"): _STORE_ERRORS,
    ("kandev_slack.usecases.leases", "kandev_slack.store"): _STORE_REPOS,
    ("kandev_slack.usecases.outbox.messages", "kandev_slack.store.cards.copies"): _STORE_REPOS,
    ("kandev_slack.usecases.outbox.writes", "kandev_slack.store.cards.copies"): _STORE_REPOS
    + " (the ports' own types)",
    ("kandev_slack.usecases.outbox.writes", "kandev_slack.store.records"): _STORE_REPOS
    + " (the ports' own types)",
    ("kandev_slack.usecases.outbox.pacing", "kandev_slack.store.queues.pace"): _STORE_REPOS,
    ("kandev_slack.usecases.followups.periodic", "kandev_slack.store"): _STORE_REPOS,
    ("kandev_slack.usecases.outbox.publisher", "kandev_slack.store.cards.copies"): _STORE_REPOS,
    ("kandev_slack.usecases.outbox.publisher", "kandev_slack.store.errors"): _STORE_ERRORS,
    ("kandev_slack.usecases.outbox.publisher", "kandev_slack.store.queues.pace"): _STORE_REPOS,
    ("kandev_slack.usecases.outbox.publisher", "kandev_slack.store.records"): _STORE_REPOS,
    ("kandev_slack.usecases.intake.reconciler", "kandev_slack.store.records"): _STORE_REPOS,
    ("kandev_slack.usecases.answering.recovery", "kandev_slack.store"): _STORE_REPOS,
    (
        "kandev_slack.usecases.followups.reminders",
        "kandev_slack.store.cards.followups",
    ): _STORE_REPOS,
    ("kandev_slack.usecases.answering.snooze", "kandev_slack.store"): _STORE_REPOS,
    ("kandev_slack.usecases.answering.snooze", "kandev_slack.store.cards.followups"): _STORE_REPOS,
    ("kandev_slack.usecases.followups.subscriptions", "kandev_slack.store"): _STORE_REPOS,
    (
        "kandev_slack.usecases.followups.subscriptions",
        "kandev_slack.store.cards.followups",
    ): _STORE_REPOS,
    (
        "kandev_slack.usecases.followups.subscriptions",
        "kandev_slack.store.people.subscriptions",
    ): _STORE_REPOS,
    ("kandev_slack.usecases.answering.thread_replies", "kandev_slack.store.errors"): _STORE_ERRORS,
    (
        "kandev_slack.usecases.answering.thread_replies",
        "kandev_slack.store.cards.thread_replies",
    ): _STORE_REPOS + " (a thread reply's states)",
    ("kandev_slack.usecases.answering.verdicts", "kandev_slack.store"): _STORE_REPOS,
    ("kandev_slack.usecases.answering.verdicts", "kandev_slack.store.records"): _STORE_REPOS,
    ("kandev_slack.usecases.views.waiting", "kandev_slack.store"): _STORE_REPOS,
}


def layer_of(module: str) -> str | None:
    """The layer of a module of bot (None: not ours)."""
    parts = module.split(".")
    if parts[0] != PACKAGE:
        return None
    if len(parts) == 1 or parts[1] in {"app", "wiring", "cli", "inproc", "__main__"}:
        return ROOT_LAYER
    if parts[1] == KINDS and parts[3:4] == [CARDS]:
        # A kind package is a vertical slice: its rendering half (kinds/<kind>/cards/) stands
        # in the cards layer, the rest of it in the low kinds layer.
        return CARDS
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
        (
            "kandev_slack.usecases.x",
            "from kandev_slack.slack.presenters.tell import tell\n",
            "kandev_slack.slack.presenters.tell",
        ),
        ("kandev_slack.usecases.x", "from kandev_slack import cards\n", "kandev_slack.cards"),
        ("kandev_slack.usecases.x", "from ..store import Thing\n", "kandev_slack.store"),
        (
            "kandev_slack.usecases.x",
            "def f():\n    import kandev_slack.kandev.client\n",
            "kandev_slack.kandev.client",
        ),
        (
            "kandev_slack.usecases.x",
            "from kandev_slack.wiring import build\n",
            "kandev_slack.wiring",
        ),
        ("kandev_slack.core.x", "from kandev_slack.ops import metrics\n", "kandev_slack.ops"),
        (
            "kandev_slack.config.x",
            "from kandev_slack.usecases.y import Y\n",
            "kandev_slack.usecases.y",
        ),
        (
            "kandev_slack.cards.x",
            "from kandev_slack.store.cards.cards import CardsRepository\n",
            "kandev_slack.store.cards.cards",
        ),
        (
            "kandev_slack.store.x",
            "from kandev_slack.slack_api.gateway import SlackGateway\n",
            "kandev_slack.slack_api.gateway",
        ),
        ("kandev_slack.commands.x", "from kandev_slack.app import build\n", "kandev_slack.app"),
        ("kandev_slack.slack.x", "from tests.kit.fakes import FakeKandev\n", "tests.kit.fakes"),
        (
            "kandev_slack.kinds.x.spec",
            "from kandev_slack.kinds.x.cards.card import render\n",
            "kandev_slack.kinds.x.cards.card",
        ),
    ],
)
def test_an_upward_import_is_caught(module: str, source: str, caught: str) -> None:
    sources = {
        PACKAGE: "",
        "kandev_slack.cards": "",
        "kandev_slack.cards.x": "",
        "kandev_slack.usecases": "",
        "kandev_slack.usecases.y": "",
        "kandev_slack.kandev.client": "",
        "kandev_slack.store.cards.cards": "",
        "kandev_slack.slack.presenters.tell": "",
        "kandev_slack.slack_api.gateway": "",
        "kandev_slack.ops": "",
        "kandev_slack.app": "",
        "kandev_slack.wiring": "",
        module: source,
    }
    assert [t for m, t, _ in violations(sources) if m == module] == [caught]


@pytest.mark.parametrize(
    ("module", "source"),
    [
        (
            "kandev_slack.slack.x",
            "from kandev_slack.cards.blocks import render\nfrom kandev_slack.usecases.y import Y\n",
        ),
        ("kandev_slack.usecases.x", "from kandev_slack.core.domain import Card\nfrom . import y\n"),
        ("kandev_slack.commands.x", "from kandev_slack.slack.presenters.tell import tell\n"),
        ("kandev_slack.wiring", "from kandev_slack.commands.x import run\n"),
        ("kandev_slack.ops.x", "import logging\nfrom .metrics import m\n"),
        (
            "kandev_slack.kinds.x.cards.card",
            "from kandev_slack.cards.blocks import render\n"
            "from kandev_slack.kinds.x.spec import S\n",
        ),
    ],
)
def test_a_downward_import_passes(module: str, source: str) -> None:
    sources = {
        PACKAGE: "",
        "kandev_slack.usecases": "",
        "kandev_slack.usecases.y": "",
        module: source,
    }
    assert list(violations(sources)) == []


#: A folder's top holds at most this many modules (its ``__init__.py`` aside): past it, the
#: folder is split by what varies (CONTRIBUTING, "Where a change goes").
MAX_MODULES_AT_TOP = 12
#: Alembic's revisions: one file per schema version, append-only history named by Alembic.
NOT_A_ROOM = frozenset({"store/alembic/versions"})


def test_no_folder_has_more_than_twelve_modules_at_its_top() -> None:
    crowded = {}
    for folder in [BOT, *sorted(p for p in BOT.rglob("*") if p.is_dir())]:
        if folder.name == "__pycache__" or folder.relative_to(BOT).as_posix() in NOT_A_ROOM:
            continue
        modules = [p for p in folder.glob("*.py") if p.name != "__init__.py"]
        if len(modules) > MAX_MODULES_AT_TOP:
            crowded[folder.relative_to(ROOT).as_posix()] = len(modules)
    assert crowded == {}
