"""The bot's processes start from bytecode, as an installed package's do."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import kandev_slack
from bench.world import compile_bot

PACKAGE = Path(kandev_slack.__file__).parent


def test_the_bots_modules_are_compiled_before_a_bot_starts(tmp_path: Path) -> None:
    module = PACKAGE / "ops" / "backoff.py"
    cached = Path(importlib.util.cache_from_source(str(module)))
    cached.unlink(missing_ok=True)

    assert compile_bot()

    assert cached.is_file() and cached.stat().st_size > 0
    # a process that may not write bytecode (PYTHONDONTWRITEBYTECODE) loads it from there
    loaded = subprocess.run(
        [sys.executable, "-B", "-v", "-c", "import kandev_slack.ops.backoff"],
        capture_output=True,
        text=True,
        check=True,
        cwd=tmp_path,
    )
    assert f"code object from '{cached}'" in loaded.stderr
