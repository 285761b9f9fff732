"""Construct only in the composition root; narrow ports (issue 31), as tests.

*Components* — the use-cases, the workers, the services the Slack listeners delegate to, the
repositories and clients, the lanes, the long-lived presenters: things with behaviour and
collaborators — are built once, in the composition root, and handed to whoever uses them. No
use-case, listener, presenter or service builds another one (not in its ``__init__`` nor its
``__post_init__``, not as a field's ``default_factory``), so every collaborator is visible, and
replaceable, where the parts are wired.

The composition root is kandev_slack/app.py (``kandev-slack run``) and kandev_slack/wiring.py
(its half that knows the use-cases). Other builders of a whole bot are roots of their own:
kandev_slack/inproc.py (the in-process bot of the preview and the tests), kandev_slack/cli.py
and kandev_slack/commands/ (each command builds what it runs: ``check``, ``check-slack``,
``db``), kandev_slack/preview/ (the preview app), kandev_slack/store/ (the database builds its
own repositories around its one engine) and the kits (fakes that stand apart from the
product).

What may be made anywhere: values, results, reports and exceptions (frozen or not), Protocols,
and the *replies* of one interaction (kandev_slack/slack/presenters/: they hold that
interaction's ack and place, so they cannot exist before it — they are made where the
interaction arrives, in kandev_slack/slack/services.py, from components it was given).

A component in this sense is a class defined in :data:`COMPONENT_MODULES` that is not a value
(:func:`is_value`). The list of violations still open is :data:`KNOWN`; it may only shrink.

Narrow ports: no class implements a method only to refuse it (a body that is only ``raise
AssertionError`` / ``raise NotImplementedError``): a port names only what each use calls, so
every implementation implements all it declares (an abstract method says so with
``@abstractmethod``).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BOT = ROOT / "kandev_slack"

#: Where components may be built (see the module's docstring).
COMPOSITION_ROOTS = (
    "app.py",
    "wiring.py",
    "inproc.py",
    "cli.py",
    "__main__.py",
    "commands/",
    "preview/",
    "store/",
    "kits/",
)

#: Where the components are defined.
COMPONENT_MODULES = (
    "usecases/",
    "slack/services.py",
    "slack/presenters/",
    "slack/transport/lanes.py",
    "slack_api/notify.py",
    "slack_api/gateway.py",
    "kandev/client.py",
    "kandev/hints.py",
    "store/__init__.py",
    "store/repositories/",
)

#: Classes of the component modules that are data, not components (mutable values), or a
#: handle a component gives out (a lane's reserved place).
DATA = frozenset({"Begun", "RecoveryReport", "SweepReport", "SyncReport", "Unroutable", "Place"})

#: The replies of one interaction (kandev_slack/slack/presenters/): made where the interaction
#: arrives, in the inbound Slack edge (kandev_slack/slack/), from components it was given.
REPLIES = frozenset(
    {
        "ClickReply",
        "ModalClickReply",
        "FormOpener",
        "FormAnswer",
        "FormReply",
        "ConversationOpener",
        "WholeOpener",
        "ReplyPrompt",
        "AnswerAll",
        "_MemberReply",
        "ConnectAnswer",
        "ParkedPrompt",
    }
)

#: Components still built outside the composition root: (module, class built) -> why. May only
#: shrink.
KNOWN: dict[tuple[str, str], str] = {}

#: Functions that raise by design (not a port's stub): (module, function).
REFUSING = frozenset(
    {
        # Every migration's ``downgrade``: the schema only moves forward.
        ("store/sql/ddl.py", "forward_only"),
    }
)


def _rel(path: Path) -> str:
    return path.relative_to(BOT).as_posix()


def _modules() -> Iterator[tuple[str, ast.Module]]:
    for path in sorted(BOT.rglob("*.py")):
        yield _rel(path), ast.parse(path.read_text(), filename=str(path))


def _in(rel: str, places: tuple[str, ...]) -> bool:
    return any(rel == p or (p.endswith("/") and rel.startswith(p)) for p in places)


def _decorator_name(node: ast.expr) -> str:
    target = node.func if isinstance(node, ast.Call) else node
    return target.attr if isinstance(target, ast.Attribute) else getattr(target, "id", "")


def is_value(cls: ast.ClassDef) -> bool:
    """A frozen dataclass, an exception, a Protocol, an enum or a typed tuple/dict: made
    anywhere."""
    for deco in cls.decorator_list:
        if _decorator_name(deco) == "dataclass" and isinstance(deco, ast.Call):
            for kw in deco.keywords:
                if kw.arg == "frozen" and isinstance(kw.value, ast.Constant) and kw.value.value:
                    return True
    bases = {_decorator_name(base) for base in cls.bases}
    valued = {"Protocol", "Enum", "StrEnum", "IntEnum", "NamedTuple", "TypedDict"}
    return bool(bases & valued) or any(b.endswith(("Error", "Exception")) for b in bases)


def components() -> dict[str, str]:
    """Every component class: its name -> its module."""
    found: dict[str, str] = {}
    for rel, tree in _modules():
        if not _in(rel, COMPONENT_MODULES):
            continue
        for node in tree.body:
            if isinstance(node, ast.ClassDef) and not is_value(node) and node.name not in DATA:
                found[node.name] = rel
    return found


def constructions() -> set[tuple[str, str]]:
    """(module, class) for every component built outside the composition root (a call of its
    name, or its name as a ``default_factory``)."""
    names = components()
    built: set[tuple[str, str]] = set()
    for rel, tree in _modules():
        if _in(rel, COMPOSITION_ROOTS):
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Call):
                name = _decorator_name(node.func) if not isinstance(node.func, ast.Call) else ""
                if name in names and not (name in REPLIES and rel.startswith("slack/")):
                    built.add((rel, name))
                for kw in node.keywords:
                    if kw.arg == "default_factory" and _decorator_name(kw.value) in names:
                        built.add((rel, _decorator_name(kw.value)))
    return built


def stubs() -> set[tuple[str, str]]:
    """(module, function) of every function whose whole body (its docstring aside) is a
    ``raise AssertionError`` / ``raise NotImplementedError``."""
    found: set[tuple[str, str]] = set()
    for rel, tree in _modules():
        for node in ast.walk(tree):
            if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            body = list(node.body)
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                body = body[1:]
            if len(body) != 1 or not isinstance(body[0], ast.Raise) or body[0].exc is None:
                continue
            if _decorator_name(body[0].exc) in ("AssertionError", "NotImplementedError"):
                found.add((rel, node.name))
    return found - REFUSING


def test_components_are_built_only_in_the_composition_root() -> None:
    built = constructions()
    assert sorted(built - KNOWN.keys()) == [], "build these in kandev_slack/wiring.py or app.py"
    assert sorted(KNOWN.keys() - built) == [], "no longer built there: remove them from KNOWN"


def test_the_composition_rules_see_the_components() -> None:
    found = components()
    for name in ("Approvals", "SyncEngine", "Services", "Interactions", "Lane", "Teller"):
        assert name in found, name
    assert "Verdict" not in found  # a value


def test_no_port_is_implemented_by_refusing_it() -> None:
    assert sorted(stubs()) == [], "narrow the port instead of refusing its methods"


def test_nothing_is_patched_after_construction() -> None:
    """The composition root hands every part in at construction: it assigns no attribute of
    an object it built (``bot.workers = ...``)."""
    patched: list[str] = []
    for rel, tree in _modules():
        if rel not in ("app.py", "wiring.py"):
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef) and node.name == "__init__":
                continue  # a class of the root setting up its own fields
            for target in _assigned(node):
                if isinstance(target, ast.Attribute) and not _is_self(target.value):
                    patched.append(f"{rel}:{target.lineno} {ast.unparse(target)}")
    assert patched == []


def _assigned(node: ast.AST) -> list[ast.expr]:
    if isinstance(node, ast.Assign):
        return [t for target in node.targets for t in _flatten(target)]
    if isinstance(node, ast.AugAssign | ast.AnnAssign):
        return [node.target]
    return []


def _flatten(target: ast.expr) -> list[ast.expr]:
    if isinstance(target, ast.Tuple | ast.List):
        return [t for element in target.elts for t in _flatten(element)]
    return [target]


def _is_self(node: ast.expr) -> bool:
    return isinstance(node, ast.Name) and node.id == "self"


def report() -> None:
    for rel, name in sorted(constructions()):
        print(f"{rel}: {name}")
