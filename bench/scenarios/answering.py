"""2. Click to answer, 3. ack latency, 4. resolved elsewhere — on bundles whose mock agent waits.

One bot (push on, production defaults) has posted a card for every seeded bundle. Then, one at
a time and interleaved so both see the same conditions:

- a signed click on an option button of a card → the agent has the answer (the mock agent's
  record of the tool result, stamped when it arrived) and → the card was edited;
- a reply in a card's thread (``2``), its prompt's **Send** clicked → the agent has the answer
  and → the card was edited (timed from the Send click, beside the option click's rows);
- Kandev's own ``POST /clarification/{id}/respond`` from a bare, warmed-up httpx client: its
  HTTP round trip, → the agent has the answer, and → the bot edited the card (4.);

then, on each card left for a modal, the "Reject agent question" message shortcut is run (its
ack) and "Other answer…" is opened and submitted with free text (button ack, submission ack —
the form turns into "Sending…" — the time until ``views.update`` replaces "Sending…" with the
result, and submission → agent has the answer). ``/kandev-questions`` is run (3.) if the bot has
it, and an App Home "Answer…" button clicked (the Home action's ack) as often.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import httpx

from bench.cardlog import CardLog
from bench.kandev import delete_tasks, seed_spread
from bench.stats import Summary
from bench.transport import KeepAliveTransport
from bench.world import World, wait_synced
from kandev_slack.cards import ids
from kandev_slack.cards.ids import SHORTCUT_REJECT, parse_modal_metadata
from kandev_slack.kits.fakeslack import SlackDriver, ViewRecord, iter_elements
from tests.kit.harness import KandevServer, SeededBundle

SLASH_COMMAND = "/kandev-questions"
AGENT_TIMEOUT_S = 20.0
EDIT_TIMEOUT_S = 15.0
PAUSE_S = 0.1


@dataclass
class Answering:
    clicks: int
    rests: int
    modals: int
    replies: int = 0
    respond_http: Summary | None = None
    respond_agent: Summary | None = None
    click_agent: Summary | None = None
    click_card: Summary | None = None
    reply_agent: Summary | None = None  # a thread reply's Send → agent has the answer
    reply_card: Summary | None = None  # a thread reply's Send → card edited
    submit_agent: Summary | None = None
    elsewhere_card: Summary | None = None
    ack_button: Summary | None = None
    ack_modal: Summary | None = None
    ack_slash: Summary | None = None
    ack_shortcut: Summary | None = None
    ack_home: Summary | None = None
    modal_result: Summary | None = None  # submission sent → "Sending…" replaced (views.update)
    slash_note: str = ""
    home_note: str = ""
    problems: list[str] = field(default_factory=list)


@dataclass
class _Samples:
    respond_http: list[float] = field(default_factory=list)
    respond_agent: list[float] = field(default_factory=list)
    click_agent: list[float] = field(default_factory=list)
    click_card: list[float] = field(default_factory=list)
    reply_agent: list[float] = field(default_factory=list)
    reply_card: list[float] = field(default_factory=list)
    submit_agent: list[float] = field(default_factory=list)
    elsewhere_card: list[float] = field(default_factory=list)
    ack_button: list[float] = field(default_factory=list)
    ack_modal: list[float] = field(default_factory=list)
    ack_slash: list[float] = field(default_factory=list)
    ack_shortcut: list[float] = field(default_factory=list)
    ack_home: list[float] = field(default_factory=list)
    modal_result: list[float] = field(default_factory=list)


def run(
    world: World, *, clicks: int, rests: int, modals: int, slash: int, replies: int = 0
) -> Answering:
    kandev = world.kandev
    fake = world.fake_slack()
    bot = world.bot(fake, "answers")
    result = Answering(clicks, rests, modals, replies)
    samples = _Samples()
    bundles: list[SeededBundle] = []
    transport = KeepAliveTransport(bot.events_url, fake.workspace.signing_secret)
    rest = httpx.Client(base_url=f"{kandev.base_url}/api/v1", timeout=30.0, trust_env=False)
    try:
        bot.start()
        wait_synced(bot)
        log = CardLog(fake)
        bundles = seed_spread(kandev, world.workspace_ids, clicks + rests + modals + replies)
        if not log.wait_posted([b.pending_id for b in bundles], timeout=60.0):
            result.problems.append("not every seeded bundle got a card within 60 s")
        fake.settle(quiet=1.0, timeout=60.0)
        driver = SlackDriver(fake, transport)
        _slash(driver, world.routes[0].channel, slash, samples, result)
        _home(driver, fake, slash, samples, result)
        rest.get("/workspaces").raise_for_status()  # warm the bare client's connection
        by_click, by_rest = bundles[:clicks], bundles[clicks : clicks + rests]
        by_reply = bundles[clicks + rests : clicks + rests + replies]
        for n in range(max(clicks, rests, replies)):
            if n < clicks:
                _click(kandev, driver, transport, log, by_click[n], samples, result)
            if n < replies:
                _reply(kandev, fake, driver, transport, log, by_reply[n], samples, result)
            if n < rests:
                _respond(kandev, rest, log, by_rest[n], samples, result)
        for bundle in bundles[clicks + rests + replies :]:
            _modal(kandev, fake, driver, transport, log, bundle, samples, result)
    finally:
        transport.close()
        rest.close()
        bot.stop()
        delete_tasks(kandev, [b.task_id for b in bundles])
    for name in samples.__dataclass_fields__:
        setattr(result, name, Summary.of_seconds(getattr(samples, name)))
    return result


def _agent_answered_at(kandev: KandevServer, task_id: str) -> float | None:
    """When the task's mock agent received the result of its question (time.time())."""
    deadline = time.monotonic() + AGENT_TIMEOUT_S
    while time.monotonic() < deadline:
        record = kandev.agent_result(task_id, timeout=max(deadline - time.monotonic(), 0.0))
        if record and record.get("tool"):
            return float(record["updated_at"])
        time.sleep(0.05)
    return None


def _click(kandev, driver, transport, log, bundle, samples, result) -> None:
    channel, ts = log.card(bundle.pending_id)
    ack = driver.click(channel, ts, text="Option 1.2")
    sent = transport.last_sent_at
    samples.ack_button.append(ack.elapsed)
    if ack.status != 200:
        result.problems.append(f"click on {bundle.pending_id}: HTTP {ack.status}")
        return
    _time_answer(
        kandev, log, bundle, sent, "click", samples.click_agent, samples.click_card, result
    )


def _time_answer(kandev, log, bundle, sent, what, to_agent, to_card, result) -> None:
    """From ``sent`` (an answer's request): → the agent has it, → the card was edited."""
    answered = _agent_answered_at(kandev, bundle.task_id)
    if answered is None:
        result.problems.append(f"{what} on {bundle.pending_id}: the agent got no answer")
    else:
        to_agent.append(answered - sent)
    edit = log.wait_edit(bundle.pending_id, sent, EDIT_TIMEOUT_S)
    if edit is None:
        result.problems.append(f"{what} on {bundle.pending_id}: the card was not edited")
    else:
        to_card.append(edit.at - sent)
    time.sleep(PAUSE_S)


def _reply(kandev, fake, driver, transport, log, bundle, samples, result) -> None:
    """Reply ``2`` in the card's thread, then click Send on the prompt: timed from Send."""
    channel, ts = log.card(bundle.pending_id)
    user = driver.user().id
    driver.reply_in_thread(channel, ts, "2")
    try:
        prompt = fake.wait_for_ephemeral(
            user, lambda e: e.thread_ts == ts and "as your answer to" in e.all_text, timeout=10.0
        )
    except TimeoutError:
        result.problems.append(f"reply on {bundle.pending_id}: no Send prompt")
        return
    ack = driver.click_ephemeral(prompt, text="Send")
    sent = transport.last_sent_at
    if ack.status != 200:
        result.problems.append(f"reply Send on {bundle.pending_id}: HTTP {ack.status}")
        return
    _time_answer(
        kandev, log, bundle, sent, "reply Send", samples.reply_agent, samples.reply_card, result
    )


def _respond(kandev, rest: httpx.Client, log, bundle, samples, result) -> None:
    body = {
        "answers": [{"question_id": "q1", "selected_options": ["q1_opt1"], "custom_text": ""}],
        "rejected": False,
        "reject_reason": "",
    }
    sent = time.time()
    started = time.perf_counter()
    response = rest.post(f"/clarification/{bundle.pending_id}/respond", json=body)
    samples.respond_http.append(time.perf_counter() - started)
    if response.status_code != 200:
        result.problems.append(f"respond {bundle.pending_id}: HTTP {response.status_code}")
        return
    answered = _agent_answered_at(kandev, bundle.task_id)
    if answered is not None:
        samples.respond_agent.append(answered - sent)
    edit = log.wait_edit(bundle.pending_id, sent, EDIT_TIMEOUT_S)
    if edit is None:
        result.problems.append(f"answered in Kandev {bundle.pending_id}: card not edited")
    else:
        samples.elsewhere_card.append(edit.at - sent)
    time.sleep(PAUSE_S)


def _modal(kandev, fake, driver, transport, log, bundle, samples, result) -> None:
    channel, ts = log.card(bundle.pending_id)
    before = len(fake.views_opened())
    shortcut = driver.message_shortcut(SHORTCUT_REJECT, channel, ts)  # opens "Reject…"
    samples.ack_shortcut.append(shortcut.elapsed)
    if shortcut.status != 200:
        result.problems.append(f"shortcut on {bundle.pending_id}: HTTP {shortcut.status}")
    try:  # the reject form is open before "Other answer…" replaces it
        fake.wait_for(
            lambda: any(v.callback_id == ids.CALLBACK_REJECT for v in fake.views_opened()[before:]),
            timeout=10.0,
            description="the reject form of the shortcut",
        )
    except TimeoutError:
        result.problems.append(f"shortcut on {bundle.pending_id}: no reject form")
    opened = len(fake.views_opened())
    ack = driver.click(channel, ts, action_id=ids.ACTION_OTHER)
    samples.ack_button.append(ack.elapsed)

    def this_modal() -> ViewRecord | None:
        for view in fake.views_opened()[opened:]:
            if (
                view.callback_id == ids.CALLBACK_OTHER
                and view.is_open
                and parse_modal_metadata(view.private_metadata).pending_id == bundle.pending_id
            ):
                return view
        return None

    try:
        view = fake.wait_for(this_modal, timeout=10.0, description="the Other answer modal")
    except TimeoutError:
        result.problems.append(f"modal for {bundle.pending_id} did not open")
        return
    values = {
        block["block_id"]: {ids.ACTION_TEXT: "Use the benchmark's answer"}
        for block in view.blocks
        if block.get("type") == "input" and block["element"].get("action_id") == ids.ACTION_TEXT
    }
    mark = fake.mark()
    ack = driver.submit_view(view, values)
    sent = transport.last_sent_at
    samples.ack_modal.append(ack.elapsed)
    if ack.status != 200 or (ack.json or {}).get("response_action") == "errors":
        result.problems.append(f"modal submission for {bundle.pending_id}: {ack.body!r}")
        return
    try:
        shown = fake.wait_for_call(
            "views.update", lambda c: c.params.get("view_id") == view.id, AGENT_TIMEOUT_S, mark
        )
        samples.modal_result.append(shown.at - sent)
    except TimeoutError:
        result.problems.append(f"modal for {bundle.pending_id}: its result was never shown")
    answered = _agent_answered_at(kandev, bundle.task_id)
    if answered is None:
        result.problems.append(f"modal for {bundle.pending_id}: the agent got no answer")
    else:
        samples.submit_agent.append(answered - sent)
    log.wait_edit(bundle.pending_id, sent, EDIT_TIMEOUT_S)
    time.sleep(PAUSE_S)


def _slash(driver: SlackDriver, channel: str, runs: int, samples, result) -> None:
    if runs <= 0:
        result.slash_note = "not run"
        return
    probe = driver.slash(SLASH_COMMAND, "", channel=channel)
    if probe.status != 200:
        result.slash_note = f"n/a (not implemented: HTTP {probe.status})"
        return
    for n in range(runs):
        ack = driver.slash(SLASH_COMMAND, "" if n % 2 == 0 else "bench", channel=channel)
        samples.ack_slash.append(ack.elapsed)
        time.sleep(PAUSE_S)


def _home(driver: SlackDriver, fake, runs: int, samples, result) -> None:
    """Open the App Home (the bot publishes it), then click its first "Answer…" ``runs``
    times (each opens the form; the ack is timed)."""
    if runs <= 0:
        result.home_note = "not run"
        return
    user = driver.user()
    driver.app_home_opened(user)
    try:
        home = fake.wait_for(
            lambda: (view := fake.home(user.id)) and "Answer…" in view.all_text and view,
            timeout=20.0,
            description="the App Home with a question",
        )
    except TimeoutError:
        result.home_note = "n/a (no App Home with a question)"
        return
    value = next(r.element.get("value") for r in iter_elements(home.blocks) if r.label == "Answer…")
    for _ in range(runs):
        ack = driver.click_in_view(home, value=value, as_shown=True)
        samples.ack_home.append(ack.elapsed)
        if ack.status != 200:
            result.problems.append(f"Home action: HTTP {ack.status}")
        time.sleep(PAUSE_S)
