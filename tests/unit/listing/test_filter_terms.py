"""``/kandev-questions`` filter terms: ``label:``, ``priority:`` and the agent's name."""

from __future__ import annotations

from kandev_slack.core.domain import TaskInfo
from kandev_slack.kandev.models import Workspace
from kandev_slack.surfaces.listing import problem_message
from kandev_slack.surfaces.waiting import Waiting
from kandev_slack.usecases.views.listing import BadFilter, matches, matching_workspace, parse_query
from tests.kit.factories import make_bundle


def item(labels=(), priority="medium", agent="claude", title="Migrate orders") -> Waiting:
    task = TaskInfo(
        task_id="t",
        title=title,
        workspace_id="ws-1",
        workspace_name="Platform",
        agent_name=agent,
        labels=tuple(labels),
        priority=priority,
    )
    return Waiting(listed=make_bundle(), task=task)


def test_label_terms_need_every_label() -> None:
    both = item(labels=["Database", "infra"])
    assert matches(both, parse_query("label:database"))
    assert matches(both, parse_query("label:database LABEL:Infra"))
    assert not matches(both, parse_query("label:database label:ui"))
    assert not matches(item(), parse_query("label:database"))


def test_priority_terms_match_any_and_default_to_medium() -> None:
    assert matches(item(priority="critical"), parse_query("priority:critical"))
    assert matches(item(priority="high"), parse_query("priority:critical priority:high"))
    assert not matches(item(priority="low"), parse_query("priority:critical"))
    assert matches(item(priority=""), parse_query("priority:medium"))


def test_words_match_the_agent_name_and_combine_with_terms() -> None:
    assert matches(item(agent="claude-code"), parse_query("claude"))
    assert matches(item(labels=["db"], agent="codex"), parse_query("codex label:db orders"))
    assert not matches(item(labels=["db"], agent="codex"), parse_query("claude label:db"))


def test_a_workspace_with_terms_is_still_the_workspace() -> None:
    spaces = [Workspace(id="ws-1", name="Platform")]
    assert matching_workspace(parse_query("platform label:db"), spaces) == spaces[0]
    assert matching_workspace(parse_query("label:db"), spaces) is None


def test_bad_terms_say_what_to_type() -> None:
    bad = parse_query("priority:urgent")
    assert isinstance(bad, BadFilter) and bad.kind == "unknown_priority"
    assert bad.value == "urgent" and "`priority:critical`" in problem_message(bad)
    empty = parse_query("label:")
    assert isinstance(empty, BadFilter) and empty.kind == "empty_term"
    assert "`label:database`" in problem_message(empty)
