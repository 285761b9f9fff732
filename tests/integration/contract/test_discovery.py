"""Contract: listing active bundles, task/workspace lookups and the probe, on a real Kandev."""

from datetime import UTC, datetime, timedelta

import pytest

from kandev_slack.kandev.errors import KandevNotFoundError
from tests.kit.harness import KANDEV_VERSION, option_id, question, sample_questions

pytestmark = pytest.mark.kandev


def test_list_pending_follows_the_cursor_across_pages(kandev, client, seed):
    mine = seed.many(3, sample_questions(1))
    everything = client.list_pending()
    paged = client.list_pending(page_size=2)  # at least 2 pages for our 3 bundles alone
    ids = [b.pending_id for b in paged]
    assert ids == [b.pending_id for b in everything]
    assert len(ids) == len(set(ids))
    assert {b.pending_id for b in mine} <= set(ids)
    created = [b.created_at for b in paged]
    assert created == sorted(created)  # oldest first


def test_a_bundle_carries_its_questions_options_and_context(kandev, client, seed):
    spec = [
        question(
            "db",
            "Database",
            "Which **database**?",
            ("PostgreSQL", "Relational"),
            ("Mongo", "Documents"),
        ),
        question(
            "lang",
            "Language",
            "Which language?",
            ("Go", "fast"),
            ("Python", "easy"),
            ("Rust", "safe"),
        ),
    ]
    seeded_bundle = seed(spec, context="Choosing the stack")
    bundle = next(b for b in client.list_pending() if b.pending_id == seeded_bundle.pending_id)
    assert bundle.task_id == seeded_bundle.task_id
    assert bundle.session_id == seeded_bundle.session_id
    assert bundle.context == "Choosing the stack"
    assert [q.question_id for q in bundle.questions] == ["db", "lang"]
    db = bundle.question("db")
    assert db.title == "Database" and db.prompt == "Which **database**?"
    assert [(o.option_id, o.label, o.description) for o in db.options] == [
        (option_id(1, 1), "PostgreSQL", "Relational"),
        (option_id(1, 2), "Mongo", "Documents"),
    ]
    assert [o.option_id for o in bundle.question("lang").options] == [
        "q2_opt1",
        "q2_opt2",
        "q2_opt3",
    ]


def test_list_pending_filters_by_workspace_and_creation_time(kandev, client, seed):
    bundle = seed(sample_questions(1))
    in_workspace = client.list_pending(workspace_id=bundle.workspace_id)
    assert bundle.pending_id in {b.pending_id for b in in_workspace}
    assert client.list_pending(workspace_id="00000000-0000-0000-0000-000000000000") == []
    future = datetime.now(UTC) + timedelta(hours=1)
    assert bundle.pending_id not in {
        b.pending_id for b in client.list_pending(created_since=future)
    }
    past = datetime.now(UTC) - timedelta(hours=1)
    assert bundle.pending_id in {b.pending_id for b in client.list_pending(created_since=past)}


def test_task_and_workspace_lookups(kandev, client, seed):
    bundle = seed(sample_questions(1), title="Lookup me")
    task = client.task(bundle.task_id)
    assert (task.id, task.title, task.workspace_id) == (
        bundle.task_id,
        "Lookup me",
        bundle.workspace_id,
    )
    workspace = next((w for w in client.workspaces() if w.id == bundle.workspace_id), None)
    assert workspace is not None and workspace.name
    with pytest.raises(KandevNotFoundError):
        client.task("00000000-0000-0000-0000-000000000000")


def test_mcp_session_refused_is_renewed_transparently(kandev, client):
    client.list_pending()
    # Kandev accepts any well-formed "mcp-session-<uuid>" (ids survive restarts); a malformed
    # one is refused with 404 "Invalid session ID", which the client must absorb.
    client._mcp._session_id = "bogus-session"
    client.list_pending()
    assert client._mcp.session_id.startswith("mcp-session-")


def test_probe_of_a_healthy_kandev(kandev, client):
    result = client.probe()
    assert result.ok, result
    assert result.version == f"v{KANDEV_VERSION}"
    assert not result.token_sent


def test_a_bundle_read_from_its_conversation_is_the_bundle_the_list_shows(kandev, client, seed):
    spec = [
        question(
            "db",
            "Database",
            "Which **database**?",
            ("PostgreSQL", "Relational"),
            ("Mongo", "Documents"),
        ),
        question("lang", "Language", "Which language?", ("Go", "fast"), ("Python", "easy")),
    ]
    seeded = seed(spec, context="Choosing the stack")
    listed = next(b for b in client.list_pending() if b.pending_id == seeded.pending_id)

    read = client.conversation_bundle(
        seeded.task_id, seeded.pending_id, session_id=seeded.session_id
    )

    assert read is not None
    assert read.model_dump(exclude={"age_seconds"}) == listed.model_dump(exclude={"age_seconds"})
    # Without its session (a hint that names none), from the task's conversation.
    assert client.conversation_bundle(seeded.task_id, seeded.pending_id) == read
    assert client.conversation_bundle(seeded.task_id, "no-such-bundle") is None


def test_the_list_for_views_is_the_same_bundles_decoded_on_demand(kandev, client, seed):
    """A view of the whole list (Home, the listing, digests) keeps each bundle undecoded until
    it shows it: the same bundles, in the same order, with the same ids and creation times."""
    bundle = seed(sample_questions(2))
    listed = client.list_listed()
    assert [b.decode() for b in listed] == client.list_pending()
    mine = next(b for b in listed if b.pending_id == bundle.pending_id)
    assert (mine.task_id, mine.created_at) == (mine.decode().task_id, mine.decode().created_at)
    assert [b.pending_id for b in client.list_listed(workspace_id=bundle.workspace_id)] == [
        b.pending_id for b in client.list_pending(workspace_id=bundle.workspace_id)
    ]
