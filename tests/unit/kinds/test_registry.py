"""The registry of item kinds: every kind has one spec doing every operation, an unknown kind
raises, and no code outside kandev_slack/kinds/ tells kinds apart itself."""

from __future__ import annotations

import ast
import importlib
import inspect
import sys
from pathlib import Path

import pytest
from pydantic import TypeAdapter, ValidationError

from kandev_slack.cards.kinds import CALLED, KindCards, cards_module_name, cards_of_spec
from kandev_slack.core.domain import Item
from kandev_slack.core.pending import ItemKind
from kandev_slack.kinds.registry import (
    SPECS,
    UnknownKindError,
    item_kind_of_payload,
    kind_of_key,
    label_of_key,
    spec_of,
    spec_of_key,
)
from kandev_slack.kinds.spec import KindSpec
from tests.kit.factories import make_bundle

BOT = Path(__file__).resolve().parents[3] / "kandev_slack"
#: The Protocol's operations and facts (everything it names but the Protocol machinery).
OPERATIONS = sorted(
    {n for n in vars(KindSpec) if not n.startswith("_")}
    | set(KindSpec.__annotations__)  # the facts declared as attributes
)
#: core/domain.py holds the pydantic union of the items and Card's typed accessors
#: (Card.bundle / Card.approval narrow by type): the one place outside kinds/ allowed to.
EXEMPT = {BOT / "core" / "domain.py"}


def test_every_kind_has_exactly_one_spec_of_that_kind() -> None:
    assert set(SPECS) == set(ItemKind)
    for kind, spec in SPECS.items():
        assert spec.kind is kind
        assert spec_of(kind) is spec and spec_of(kind.value) is spec


def missing_renderers(spec: object) -> list[str]:
    """What the cards layer calls that ``spec``'s kind's cards module (found by the convention,
    kandev_slack/cards/kinds.py) lacks or takes differently: [] when it has them all."""
    name = cards_module_name(spec)  # type: ignore[arg-type]
    try:
        module = importlib.import_module(name)
    except ModuleNotFoundError:
        return [f"{name} (no such module)"]
    missing = []
    for function in CALLED:
        wanted = [p for p in inspect.signature(getattr(KindCards, function)).parameters][1:]
        found = getattr(module, function, None)
        if not callable(found) or list(inspect.signature(found).parameters) != wanted:
            missing.append(f"{name}.{function}({', '.join(wanted)})")
    return missing


def test_called_names_every_function_of_a_kinds_cards() -> None:
    assert set(CALLED) == {n for n in vars(KindCards) if not n.startswith("_")}


@pytest.mark.parametrize("kind", list(ItemKind))
def test_every_kind_has_its_renderers_in_its_own_package(kind: ItemKind) -> None:
    spec = SPECS[kind]
    package = type(spec).__module__.rpartition(".")[0]
    assert package.startswith("kandev_slack.kinds.")
    assert cards_module_name(spec) == f"{package}.cards"
    assert missing_renderers(spec) == []
    assert cards_of_spec(spec) is importlib.import_module(f"{package}.cards")


def test_a_new_kind_is_its_package_and_one_registry_line(tmp_path, monkeypatch) -> None:
    """A third kind's package (its spec, then its cards/) is found by the convention alone;
    without its cards/ the registry test fails."""
    package = tmp_path / "thirdkind"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "spec.py").write_text("class ThirdSpec:\n    pass\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    for name in [m for m in sys.modules if m.startswith("thirdkind")]:
        monkeypatch.delitem(sys.modules, name)
    spec = importlib.import_module("thirdkind.spec").ThirdSpec()
    assert missing_renderers(spec) == ["thirdkind.cards (no such module)"]

    (package / "cards").mkdir()
    (package / "cards" / "__init__.py").write_text(
        "def render_message(card, kandev_url, now, also_asked, reader):\n    return {}\n"
    )
    importlib.invalidate_caches()
    assert missing_renderers(spec) == ["thirdkind.cards.outcome_line(card, outcome)"]
    with (package / "cards" / "__init__.py").open("a") as module:
        module.write("def outcome_line(card, outcome):\n    return ''\n")
    monkeypatch.delitem(sys.modules, "thirdkind.cards")
    assert missing_renderers(spec) == []


@pytest.mark.parametrize("kind", list(ItemKind))
def test_each_spec_does_every_operation(kind: ItemKind) -> None:
    spec = SPECS[kind]
    missing = [name for name in OPERATIONS if not hasattr(spec, name)]
    assert not missing, f"{kind}: {missing}"


@pytest.mark.parametrize("what", ["bogus", "", None, 3, "perm:abc"])
def test_an_unknown_kind_raises(what: object) -> None:
    with pytest.raises(UnknownKindError):
        spec_of(what)


def test_keys_name_exactly_one_kind_or_raise() -> None:
    assert kind_of_key("perm:r1") is ItemKind.APPROVAL
    assert kind_of_key("b7c1-42") is ItemKind.QUESTION
    assert spec_of_key("perm:r1") is SPECS[ItemKind.APPROVAL]
    for bad in ("future:x", "", None):
        with pytest.raises(UnknownKindError):
            kind_of_key(bad)
    assert label_of_key("future:x") == "unknown"


def test_an_outbox_write_without_a_card_key_follows_the_named_legacy_rule() -> None:
    assert item_kind_of_payload(None) is ItemKind.QUESTION
    assert item_kind_of_payload("perm:r1") is ItemKind.APPROVAL
    with pytest.raises(UnknownKindError):
        item_kind_of_payload("future:x")


def _kind_checks(tree: ast.AST) -> list[int]:
    """Lines of isinstance(..., Bundle|Approval) and comparisons with ItemKind members."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and getattr(node.func, "id", "") == "isinstance":
            names = {n.id for n in ast.walk(node.args[1]) if isinstance(n, ast.Name)}
            names |= {n.attr for n in ast.walk(node.args[1]) if isinstance(n, ast.Attribute)}
            if names & {"Bundle", "Approval"}:
                found.append(node.lineno)
        if isinstance(node, ast.Compare):
            for side in (node.left, *node.comparators):
                for sub in ast.walk(side):
                    if (
                        isinstance(sub, ast.Attribute)
                        and isinstance(sub.value, ast.Name)
                        and sub.value.id == "ItemKind"
                    ):
                        found.append(node.lineno)
    return found


def test_no_kind_checks_outside_the_kinds() -> None:
    offenders = []
    for path in sorted(BOT.rglob("*.py")):
        if (BOT / "kinds") in path.parents or path in EXEMPT:
            continue
        for line in _kind_checks(ast.parse(path.read_text(encoding="utf-8"))):
            offenders.append(f"{path.relative_to(BOT.parent)}:{line}")
    assert not offenders, "ask spec_of(...) instead:\n" + "\n".join(offenders)


def test_the_check_catches_kind_checks() -> None:
    source = "isinstance(x, Approval)\ncard.kind is ItemKind.QUESTION\nisinstance(x, str)\n"
    assert _kind_checks(ast.parse(source)) == [1, 2]


@pytest.mark.parametrize(
    "stored",
    [
        {"type": "future", "pending_id": "x", "task_id": "t"},
        {"pending_id": "x", "task_id": "t", "created_at": "2026-01-01T00:00:00Z"},
    ],
)
def test_a_stored_item_of_no_known_shape_is_refused_not_read_as_a_bundle(stored: dict) -> None:
    with pytest.raises(ValidationError):
        TypeAdapter(Item).validate_python(stored)


def test_a_stored_bundle_is_read_by_its_named_untagged_shape() -> None:
    bundle = make_bundle()
    assert TypeAdapter(Item).validate_json(bundle.model_dump_json()) == bundle


def _kind_packages() -> list[Path]:
    return sorted(p.parent for p in (BOT / "kinds").glob("*/__init__.py"))


def test_a_kind_package_imports_no_other_kind() -> None:
    """Each kind is a slice of its own: what two kinds share is kind-neutral (core, kinds/spec.py,
    the cards' top), so a kind can be added or removed alone."""
    offenders = []
    names = {p.name for p in _kind_packages()}
    assert {"question", "approval"} <= names
    for package in _kind_packages():
        others = {f"kandev_slack.kinds.{n}" for n in names - {package.name}}
        for path in sorted(package.rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                targets = (
                    [a.name for a in node.names]
                    if isinstance(node, ast.Import)
                    else [node.module or ""]
                    if isinstance(node, ast.ImportFrom)
                    else []
                )
                for target in targets:
                    if any(target == o or target.startswith(f"{o}.") for o in others):
                        offenders.append(f"{path.relative_to(BOT.parent)}:{node.lineno} {target}")
    assert not offenders, "\n".join(offenders)
