"""Every module path CONTRIBUTING.md and docs/ name in backquotes exists (a move that forgets the
guide fails here)."""

from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]
LAYERS = "usecases|cards|store|kandev|slack|slack_api|core|config|ops|kinds|commands|preview|kits"
PATH = re.compile(rf"`((?:kandev_slack/)?(?:{LAYERS})/[\w/]+\.py)`")


def test_every_named_module_exists() -> None:
    missing = []
    guides = [REPO / "CONTRIBUTING.md", REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
    for doc in guides:
        for match in PATH.finditer(doc.read_text(encoding="utf-8")):
            named = match.group(1)
            path = named if named.startswith("kandev_slack/") else f"kandev_slack/{named}"
            if not (REPO / path).exists():
                missing.append(f"{doc.name}: {named}")
    assert missing == []
