"""The /kandev-questions filter: help, length limit, workspace names, words, paging."""

from __future__ import annotations

import pytest

from kandev_slack.kandev.models import Workspace
from kandev_slack.surfaces.listing import problem_message
from kandev_slack.surfaces.waiting import Query
from kandev_slack.usecases.views.listing import (
    MAX_FILTER,
    BadFilter,
    HelpRequest,
    matches,
    matching_workspace,
    paginate,
    parse_query,
)
from tests.kit.factories import waiting


@pytest.mark.parametrize("text", ["help", " HELP ", "--help", "-h", "?"])
def test_help_is_recognised(text: str) -> None:
    assert parse_query(text) == HelpRequest()


def test_no_filter_lists_everything() -> None:
    assert parse_query("") == Query()
    assert parse_query("   \n ") == Query()


def test_words_are_one_line_and_casefolded() -> None:
    assert parse_query("  Database\n  MIGRATION\t") == Query(
        text="Database MIGRATION", words=("database", "migration")
    )


def test_an_overly_long_filter_is_refused_with_its_length() -> None:
    assert isinstance(parse_query("x" * MAX_FILTER), Query)
    refused = parse_query("🙂" * (MAX_FILTER + 1))  # code points, as people count them
    assert refused == BadFilter("too_long", length=MAX_FILTER + 1, limit=MAX_FILTER)
    said = problem_message(refused)
    assert f"{MAX_FILTER + 1:,} characters" in said
    assert f"at most {MAX_FILTER:,}" in said
    assert "/kandev-questions help" in said


WORKSPACES = [Workspace(id="ws-1", name="Default Workspace"), Workspace(id="ws-2", name="Platform")]


def test_the_whole_filter_names_a_workspace_by_name_or_id() -> None:
    assert matching_workspace(Query("platform", ("platform",)), WORKSPACES) == WORKSPACES[1]
    assert matching_workspace(Query("ws-1", ("ws-1",)), WORKSPACES) == WORKSPACES[0]
    assert matching_workspace(Query("plat", ("plat",)), WORKSPACES) is None
    assert matching_workspace(Query("Platform db", ("platform", "db")), WORKSPACES) is None
    assert matching_workspace(Query(), WORKSPACES) is None


def test_every_word_must_occur_in_title_question_title_or_prompt() -> None:
    item = waiting(
        1,
        task_title="Migrate the orders service",
        title="Database",
        prompt="Which engine should the **new** store use?",
    )
    assert matches(item, Query())
    assert matches(item, parse_query("orders"))
    assert matches(item, parse_query("ORDERS database"))
    assert matches(item, parse_query("engine new"))
    assert not matches(item, parse_query("orders kafka"))
    assert not matches(item, parse_query("Platform"))  # the workspace is not free text


def test_paging_continues_after_the_last_item_shown() -> None:
    items = [waiting(n, age_s=1000 - n) for n in range(1, 8)]  # oldest first
    first, before, more = paginate(items, None, 3)
    assert [i.bundle.pending_id for i in first] == ["pending-001", "pending-002", "pending-003"]
    assert (before, more) == (0, True)

    second, before, more = paginate(items, first[-1].key, 3)
    assert [i.bundle.pending_id for i in second] == ["pending-004", "pending-005", "pending-006"]
    assert (before, more) == (3, True)

    # pending-004 was answered meanwhile: the next page still starts after pending-006.
    remaining = [i for i in items if i.bundle.pending_id != "pending-004"]
    third, before, more = paginate(remaining, second[-1].key, 3)
    assert [i.bundle.pending_id for i in third] == ["pending-007"]
    assert (before, more) == (5, False)


def test_paging_keeps_kandevs_order_within_a_second() -> None:
    # Same whole second: Kandev orders by more than the reported created_at; keep its order.
    items = [waiting(n, age_s=100) for n in (3, 1, 2)]
    first, _, more = paginate(items, None, 1)
    assert [i.bundle.pending_id for i in first] == ["pending-003"] and more
    second, before, _ = paginate(items, first[-1].key, 1)
    assert [i.bundle.pending_id for i in second] == ["pending-001"] and before == 1
