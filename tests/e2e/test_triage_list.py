"""/kandev-questions end to end (real Kandev, fake Slack, the bot built in-process: the process
itself is not what is tested here): listing with and without filters, help and a bad filter,
paging, the empty state, Kandev unreachable, and answering from the list."""

from __future__ import annotations

import socket
import time
import uuid

from kandev_slack.kits.fakeslack import ALICE, Delivery, payloads
from tests.e2e.helpers import (
    assert_sending,
    card_posts,
    db_question,
    open_modal,
    outcome_line,
    response_of,
    start_bot,
    wait_card,
    wait_final,
    wait_outcome,
)
from tests.kit.harness import CHANNEL, KandevProxy, free_port, question
from tests.unit.listing.e2e import (
    COMMAND,
    answer_value,
    newest_reply,
    run_list,
    titles,
    wait_kandev_idle,
)

ANSWER_MODAL = "kq_answer_modal"


def test_listing_with_and_without_filters(app_factory, seed, fake_slack, slack_driver):
    workspace = f"Triage {uuid.uuid4().hex[:8]}"
    workspace_id = seed.server.create_workspace(workspace)  # before the bot caches workspaces
    bot = start_bot(app_factory)
    alpha = seed([db_question()], title="Alpha: pick a datastore")
    beta = seed(
        [
            question(
                "cache",
                "Cache",
                "Should the flux-capacitor cache be warmed up on deploy?",
                ("Yes", "Warm it"),
                ("No", "Lazy"),
            ),
            question(
                "ttl", "TTL", "How long should entries live?", ("1h", "An hour"), ("1d", "A day")
            ),
        ],
        title="Beta: caching",
    )
    gamma = seed([db_question()], title="Gamma: platform DB", workspace_id=workspace_id)
    for bundle in (alpha, beta, gamma):
        wait_card(fake_slack, bundle.pending_id)
    driver = slack_driver(bot.events_url)

    # Everything, oldest first, each with workspace, age, questions, card link and Answer….
    waiting = len(seed.server.list_pending())
    listing = run_list(driver)
    # The ack's own body when ready at once, else an ephemeral in the channel.
    assert listing.source in ("command_ack", "chat.postEphemeral") and listing.channel == CHANNEL
    text = listing.all_text
    assert f"{waiting} questions are waiting for an answer" in text
    shown = titles(text)
    assert [t for t in shown if t.split(":")[0] in ("Alpha", "Beta", "Gamma")] == [
        "Alpha: pick a datastore",
        "Beta: caching",
        "Gamma: platform DB",
    ]
    assert f"Workspace *{workspace}*" in text
    # the questions themselves, and a date token rather than a frozen age (issue 21)
    assert (
        "1/2 · Should the flux-capacitor cache be warmed up on deploy? · "
        "2/2 · How long should entries live?" in text
    )
    assert "asked <!date^" in text
    assert text.count("|View card>") >= 3
    assert "slack.com/archives/C0QUESTION/p" in text
    for bundle in (alpha, beta, gamma):
        assert any(
            b.get("accessory", {}).get("value") == answer_value(bundle.pending_id)
            for b in listing.blocks
        )

    # A workspace name (any case): only that workspace.
    text = run_list(driver, workspace.upper()).all_text
    assert titles(text) == ["Gamma: platform DB"]
    assert f"1 question is waiting for an answer in workspace *{workspace}*" in text

    # Words from a title, and from a prompt (all words must match, any case).
    assert titles(run_list(driver, "beta").all_text) == ["Beta: caching"]
    assert titles(run_list(driver, "FLUX-capacitor warmed").all_text) == ["Beta: caching"]
    assert titles(run_list(driver, "datastore alpha").all_text) == ["Alpha: pick a datastore"]

    # Nothing matches: a friendly empty state with a hint.
    text = run_list(driver, "kafka zookeeper").all_text
    assert "Nothing waiting matches “kafka zookeeper”" in text
    assert workspace in text and "/kandev-questions help" in text

    # help explains; an overly long filter is refused, specifically.
    text = run_list(driver, "help").all_text
    assert "/kandev-questions Platform" in text and "Reject agent question" in text
    text = run_list(driver, "x" * 201).all_text
    assert "That filter is 201 characters long; use at most 200" in text


def _shown(fake, page):
    """The ephemeral message ``page`` as Slack shows it now."""
    for shown in fake.ephemerals(user=ALICE.id):
        if (shown.channel, shown.message_ts) == (page.channel, page.message_ts):
            return shown
    return None


def _click_page(driver, fake, page, label: str):
    """Click ``label`` on ``page``; the page a response_url then puts in its place (Slack
    shows the new page instead: the same ephemeral message, replaced once more)."""
    before = _shown(fake, page).replaced
    assert driver.click_ephemeral(page, text=label).status == 200

    def newer():
        shown = _shown(fake, page)
        return shown if shown is not None and shown.replaced > before else None

    return fake.wait_for(newer, 10, f"the page after {label!r}")


WAYS = (("Alpha", "The first way"), ("Beta", "The second way"))


def test_paging_with_a_next_button(app_factory, seed, fake_slack, slack_driver):
    bot = start_bot(app_factory, KANDEV_LIST_PAGE_SIZE="2")
    # Different questions: identical ones would be one row (issue 33, test_identical_rows.py).
    seeded = [
        seed(
            [question("q1", f"Part {n}", f"Which way for part {n}?", *WAYS)],
            title=f"Harness bundle {n}",
        )
        for n in range(1, 6)
    ]
    for bundle in seeded:
        wait_card(fake_slack, bundle.pending_id, timeout=15)
    driver = slack_driver(bot.events_url)
    listed = seed.server.list_pending()  # Kandev's order: oldest first
    total = len(listed)
    title_of = {b.task_id: f"Harness bundle {n}" for n, b in enumerate(seeded, start=1)}
    ours = [title_of[b["task_id"]] for b in listed if b["task_id"] in title_of]

    pages = [run_list(driver)]
    assert (
        f"*{total} questions are waiting for an answer*, most urgent first, then oldest · "
        "showing 1–2" in pages[0].all_text
    )
    assert "Previous page" not in pages[0].all_text
    while "Next page" in pages[-1].all_text:
        pages.append(_click_page(driver, fake_slack, pages[-1], "Next page"))
        assert len(pages) <= total

    shown = [titles(p.all_text) for p in pages]
    assert all(len(s) == 2 for s in shown[:-1]) and 1 <= len(shown[-1]) <= 2, shown
    flat = [t for page in shown for t in page]
    assert len(flat) == len(set(flat)) == total  # every bundle exactly once
    assert [t for t in flat if t in ours] == ours  # oldest first across pages
    assert f"Page {len(pages)}" in pages[-1].all_text and "the last one" in pages[-1].all_text
    assert "showing 3–4" in pages[1].all_text
    assert "Page 2" in pages[1].all_text
    # ... and back: "Previous page" shows page 1 again (issue 21)
    back = _click_page(driver, fake_slack, pages[1], "Previous page")
    assert titles(back.all_text) == shown[0] and "Page 1" in back.all_text


def test_empty_state(app_factory, seed, fake_slack, slack_driver):
    wait_kandev_idle(seed.server)
    bot = start_bot(app_factory)
    listing = run_list(slack_driver(bot.events_url))
    assert "Nothing is waiting for an answer right now" in listing.all_text
    assert "Answer…" not in listing.all_text


def test_kandev_unreachable_is_reported(app_factory, fake_slack, slack_driver):
    dead = f"http://127.0.0.1:{free_port()}"
    bot = start_bot(app_factory, KANDEV_URL=dead)
    reply = run_list(slack_driver(bot.events_url), timeout=30)
    assert f"Kandev cannot be reached at {dead}" in reply.all_text
    assert "try again" in reply.all_text


def test_answer_from_the_list(app_factory, seed, fake_slack, slack_driver):
    bot = start_bot(app_factory)
    bundle = seed([db_question()], title="Answer me from the list")
    card = wait_card(fake_slack, bundle.pending_id)
    driver = slack_driver(bot.events_url)
    listing = run_list(driver, "answer me from the list")
    assert titles(listing.all_text) == ["Answer me from the list"]

    mark = fake_slack.mark()
    ack = driver.click_ephemeral(listing, value=answer_value(bundle.pending_id))
    assert ack.status == 200
    view = open_modal(fake_slack, ANSWER_MODAL, after=mark)
    assert view.user == ALICE.id
    assert '"o":"list"' in view.private_metadata
    [choice] = [b["block_id"] for b in view.blocks if b["block_id"].startswith("kq_choice:")]
    ack = driver.submit_view(view, {choice: {"kq_choice": "q1_opt2"}})
    assert_sending(ack)

    final = wait_final(seed.server, bundle.task_id, bundle.pending_id, "answered")
    assert response_of(final, "db")["selected_options"] == ["q1_opt2"]
    edited = wait_outcome(fake_slack, card.ts, "✅")
    assert outcome_line(edited) == f"✅ Answered by <@{ALICE.id}> in Slack: MongoDB"
    assert len(card_posts(fake_slack, bundle.pending_id)) == 1

    # The list no longer shows it.
    assert "Answer me from the list" not in run_list(driver, "answer me from the list").all_text


def test_a_slow_kandev_gets_an_empty_ack_then_the_list(app_factory, seed, fake_slack, slack_driver):
    proxy = KandevProxy(seed.server.base_url).start()
    proxy.slow(lambda body: b"list_pending_questions" in body, delay_s=2.5)
    try:
        bot = start_bot(app_factory, KANDEV_URL=proxy.base_url, KANDEV_HINTS="off")
        bundle = seed([db_question()], title="Listed after a while")
        wait_card(fake_slack, bundle.pending_id, timeout=20)
        driver = slack_driver(bot.events_url)

        seen = len(fake_slack.ephemerals(user=ALICE.id))
        ack = driver.slash(COMMAND, "after a while", user=ALICE, channel=CHANNEL)
        assert ack.status == 200 and ack.elapsed < 3.0, ack
        assert ack.body in ("", None) and not ack.json, ack  # Slack shows nothing for it
        reply = newest_reply(fake_slack, ALICE.id, seen, timeout=15)
        assert reply.source == "chat.postEphemeral"
        assert titles(reply.all_text) == ["Listed after a while"]
        assert len(fake_slack.ephemerals(user=ALICE.id)) == seen + 1  # one message in all
    finally:
        proxy.close()


def test_a_listing_reaches_the_person_at_once_though_the_response_url_does_not_answer(
    app_factory, seed, fake_slack, slack_driver
):
    """bolt-python's sample ``/kandev-questions Hi``, its response_url on a host that never
    answers (hooks.slack.com, from here): the listing, later than the ack (Kandev is slow), is
    shown within seconds, by chat.postEphemeral in the channel the command came from."""
    proxy = KandevProxy(seed.server.base_url).start()
    proxy.slow(lambda body: b"list_pending_questions" in body, delay_s=0.5)
    black_hole = socket.create_server(("127.0.0.1", 0))  # accepts connections, never answers
    try:
        bot = start_bot(app_factory, KANDEV_URL=proxy.base_url, KANDEV_HINTS="off")
        bundle = seed([db_question()], title="Hi there, which database")
        wait_card(fake_slack, bundle.pending_id, timeout=20)
        driver = slack_driver(bot.events_url)
        unanswered = f"http://127.0.0.1:{black_hole.getsockname()[1]}/commands/T1/1/x"
        payload = payloads.slash_command(
            driver.ws,
            driver.user(ALICE),
            driver.ws.channels[CHANNEL],
            command=COMMAND,
            text="Hi",
            trigger_id=fake_slack.issue_trigger(ALICE.id),
            response_url=unanswered,
        )

        seen = len(fake_slack.ephemerals(user=ALICE.id))
        sent = time.monotonic()
        ack = driver.transport.deliver(
            "slash_commands", payload, accepts_response_payload=True, delivery=Delivery()
        )
        assert ack.status == 200 and ack.elapsed < 3.0, ack
        reply = newest_reply(fake_slack, ALICE.id, seen, timeout=15)
        took = time.monotonic() - sent

        assert titles(reply.all_text) == ["Hi there, which database"], reply.all_text
        assert reply.source == "chat.postEphemeral" and reply.channel == CHANNEL
        assert took < 5.0, took  # 0.5 s of Kandev; it was 10.5 s (the response_url's timeout)
    finally:
        black_hole.close()
        proxy.close()
