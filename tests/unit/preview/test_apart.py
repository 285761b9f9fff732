"""The preview stays apart from the production path: nothing in ``bot`` imports it, except the
command line's ``preview`` command, inside its own branch (so ``run`` never loads it)."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]


def _preview_imports(path: Path) -> list[ast.AST]:
    tree = ast.parse(path.read_text(), str(path))
    found: list[ast.AST] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "preview":
            found.append(node)
        if isinstance(node, ast.Import) and any(
            a.name.split(".")[0] == "preview" for a in node.names
        ):
            found.append(node)
    return found


def test_only_the_preview_command_imports_the_preview() -> None:
    importing = sorted(
        path.relative_to(ROOT).as_posix()
        for path in (ROOT / "bot").rglob("*.py")
        if _preview_imports(path)
    )
    assert importing == ["bot/cli.py"]
    tree = ast.parse((ROOT / "bot" / "cli.py").read_text())
    module_level = {ast.dump(n) for n in tree.body if isinstance(n, ast.Import | ast.ImportFrom)}
    assert all(ast.dump(n) not in module_level for n in _preview_imports(ROOT / "bot" / "cli.py"))
