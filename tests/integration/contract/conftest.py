"""Fixtures of the contract tests: a KandevClient on the real Kandev, and seeding on the
auth-enabled server. (``kandev``, ``kandev_auth`` and ``seed`` come from
tests/conftest.py.)"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from kandev_slack.kandev.client import KandevClient
from tests.kit.harness import Seeder


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
