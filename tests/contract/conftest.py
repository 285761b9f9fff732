"""Shared pieces of the contract tests: a KandevClient on the real Kandev, seeding on the
auth-enabled server, and polling. (``kandev``, ``kandev_auth`` and ``seed`` come from
tests/conftest.py.)"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator

import pytest

from bot.kandev import KandevClient
from tests.harness.seeder import Seeder


@pytest.fixture
def client(kandev) -> Iterator[KandevClient]:
    with KandevClient(kandev.base_url, kandev.token, timeout=30.0) as c:
        yield c


@pytest.fixture
def seed_auth(kandev_auth) -> Iterator[Seeder]:
    """Like ``seed``, on the auth-enabled server."""
    seeder = Seeder(kandev_auth)
    yield seeder
    seeder.cleanup()


def eventually(check: Callable[[], object], timeout: float = 15.0, interval: float = 0.1):
    """Poll ``check`` until it returns something truthy; return it (fail after ``timeout``)."""
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"condition not met within {timeout}s (last: {value!r})")
        time.sleep(interval)
