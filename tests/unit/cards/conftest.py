"""Fixtures of the card tests."""

from __future__ import annotations

import pytest

from kandev_slack.core.clarification import Bundle
from kandev_slack.core.domain import TaskInfo
from tests.kit.factories import (
    CACHE_QUESTION,
    DB_QUESTION,
    QUEUE_QUESTION,
    make_bundle,
    make_task,
)


@pytest.fixture
def one_question() -> Bundle:
    return make_bundle(DB_QUESTION, context="why the agent asks")


@pytest.fixture
def three_questions() -> Bundle:
    return make_bundle(DB_QUESTION, CACHE_QUESTION, QUEUE_QUESTION)


@pytest.fixture
def task() -> TaskInfo:
    return make_task(workspace_id="")
