"""The test kit is used through its public surface: tests and the benchmark import the fake
Slack (``kandev_slack.kits.fakeslack``) and the Kandev harness (``kandev_slack.kits.kandevkit``,
through
``tests.kit.harness``) from their packages (never
from a module behind them, never a private name), and nothing imports from a conftest module."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
FAKESLACK, KANDEVKIT = "kandev_slack.kits.fakeslack", "kandev_slack.kits.kandevkit"
KIT = (FAKESLACK, KANDEVKIT, "tests.kit.harness")
KIT_FOLDERS = ("kandev_slack/kits/fakeslack/", "tests/kit/harness/")


def _imports() -> list[tuple[str, int, str, list[str]]]:
    """(file, line, module, names) of every ``from … import …`` of a tests.* or kit module, in
    tests/ and bench/ outside the kit's own packages."""
    found = []
    for folder in ("tests", "bench"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            relative = path.relative_to(ROOT).as_posix()
            if relative.startswith(KIT_FOLDERS):
                continue
            for node in ast.walk(ast.parse(path.read_text(), relative)):
                if isinstance(node, ast.ImportFrom) and (node.module or "").startswith(
                    ("tests", FAKESLACK, KANDEVKIT)
                ):
                    names = [alias.name for alias in node.names]
                    found.append((relative, node.lineno, node.module or "", names))
    return found


def test_the_kit_is_imported_through_its_packages_only() -> None:
    behind = [
        f"{file}:{line} from {module}"
        for file, line, module, _names in _imports()
        if module.startswith(tuple(f"{k}." for k in KIT))
    ]
    assert behind == []


def test_no_private_name_is_imported_from_a_test_module() -> None:
    private = [
        f"{file}:{line} {name} from {module}"
        for file, line, module, names in _imports()
        for name in names
        if name.startswith("_")
    ]
    assert private == []


def test_nothing_imports_from_a_conftest() -> None:
    from_conftest = [
        f"{file}:{line} from {module}"
        for file, line, module, _names in _imports()
        if module.rsplit(".", 1)[-1] == "conftest"
    ]
    assert from_conftest == []
