"""The bot keeps glibc's heap in a few arenas (kandev_slack/ops/runtime.py): what each thread
once decoded is not kept in an arena of its own. The memory this saves is measured by the
benchmark's footprint (1,000 waiting: peak 105 → 98 MB on SQLite)."""

from __future__ import annotations

import ctypes
import subprocess
import sys

import pytest

from kandev_slack.ops import runtime


def test_glibc_takes_the_limit_before_any_thread_starts() -> None:
    script = (
        "from kandev_slack.ops.runtime import fewer_malloc_arenas;"
        "import sys; sys.exit(0 if fewer_malloc_arenas(2) else 3)"
    )
    assert subprocess.run([sys.executable, "-c", script], timeout=60).returncode == 0


def test_without_glibc_nothing_changes_and_nothing_fails(monkeypatch: pytest.MonkeyPatch) -> None:
    def no_libc(_name: str | None) -> ctypes.CDLL:
        raise OSError("no C library here")

    monkeypatch.setattr(runtime.ctypes, "CDLL", no_libc)
    assert runtime.fewer_malloc_arenas() is False


def test_a_c_library_without_mallopt_is_left_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    class Musl:
        pass

    monkeypatch.setattr(runtime.ctypes, "CDLL", lambda _name: Musl())
    assert runtime.fewer_malloc_arenas() is False
