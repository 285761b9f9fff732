"""The preview stays apart from the production path: nothing of the product imports it or
the kits it runs on, except the command line's ``preview`` command, inside its own branch (so
``run`` never loads it)."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]


def _preview_imports(path: Path) -> list[ast.AST]:
    tree = ast.parse(path.read_text(), str(path))
    found: list[ast.AST] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith(
            ("kandev_slack.preview", "kandev_slack.kits")
        ):
            found.append(node)
        if isinstance(node, ast.Import) and any(
            a.name.startswith(("kandev_slack.preview", "kandev_slack.kits")) for a in node.names
        ):
            found.append(node)
    return found


def test_only_the_preview_command_imports_the_preview() -> None:
    importing = sorted(
        path.relative_to(ROOT).as_posix()
        for path in (ROOT / "kandev_slack").rglob("*.py")
        if _preview_imports(path)
        and not {"preview", "kits"} & set(path.relative_to(ROOT / "kandev_slack").parts)
    )
    assert importing == ["kandev_slack/cli.py"]
    tree = ast.parse((ROOT / "kandev_slack" / "cli.py").read_text())
    module_level = {ast.dump(n) for n in tree.body if isinstance(n, ast.Import | ast.ImportFrom)}
    assert all(
        ast.dump(n) not in module_level for n in _preview_imports(ROOT / "kandev_slack" / "cli.py")
    )
