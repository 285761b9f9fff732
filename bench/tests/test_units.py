"""Unit tests of the benchmark's own parts (no timing assertions): statistics, tables and
targets, reading the fake Slack's calls, a wide port reservation. ``pytest bench``."""

from __future__ import annotations

import socket
import subprocess
import sys
import time

import pytest
from slack_sdk import WebClient

from bench.cardlog import CardLog
from bench.procstat import CpuMeter, CpuSpent, wait_quiet_machine
from bench.report import Results, render, summary_rows, table, targets
from bench.scenarios.backlog import Backlog
from bench.scenarios.crowd import Crowd, CrowdRun, Floor
from bench.scenarios.kandev_requests import KandevRequests
from bench.scenarios.queues import Queues
from bench.scenarios.reminders import Reminders
from bench.scenarios.replicas import ReplicaRun, slack_floor_s
from bench.scenarios.time_to_card import TimeToCard
from bench.stats import Summary, percentile, ratio
from kandev_slack.kits.fakeslack import FakeSlack
from tests.kit.harness import BLOCK_SIZE, INSTANCE_OFFSET, reserve_block


def test_percentile_interpolates_between_ranks() -> None:
    assert percentile([3.0, 1.0, 2.0], 50) == 2.0
    assert percentile([1.0, 2.0, 3.0, 4.0], 50) == 2.5
    assert percentile([1.0, 2.0, 3.0, 4.0, 5.0], 95) == pytest.approx(4.8)
    assert percentile([7.0], 99) == 7.0
    with pytest.raises(ValueError):
        percentile([], 50)


def test_summary_is_in_milliseconds_and_empty_is_none() -> None:
    s = Summary.of_seconds([0.010, 0.020, 0.030])
    assert s is not None
    assert (s.count, s.median, s.max) == (3, pytest.approx(20.0), pytest.approx(30.0))
    assert Summary.of_seconds([]) is None
    assert ratio(30.0, 10.0) == 3.0
    assert ratio(None, 10.0) is None
    assert ratio(1.0, 0.0) is None


def test_table_aligns_columns() -> None:
    text = table(["a", "long header"], [["xyz", "1"]])
    lines = text.splitlines()
    assert lines[0] == "| a   | long header |"
    assert lines[1] == "|-----|-------------|"
    assert lines[2] == "| xyz | 1           |"


def _backlog(duplicates: int, missing: int) -> Backlog:
    return Backlog(
        count=10,
        channels=2,
        listed=10,
        posted=10 - missing,
        duplicates=duplicates,
        missing=missing,
        rate_limited=0,
        first_s=1.0,
        all_s=6.0,
        slack_floor_s=2.0,
        prepare_s=3.0,
        rss_mb=60.0,
        peak_rss_mb=61.0,
    )


def test_targets_flag_a_duplicate_in_the_backlog() -> None:
    assert targets(Results(backlog=_backlog(0, 0)))[0][-1] == "yes"
    assert targets(Results(backlog=_backlog(1, 0)))[0][-1] == "**no**"
    assert targets(Results(backlog=_backlog(0, 1)))[0][-1] == "**no**"


def test_render_lists_failed_scenarios() -> None:
    res = Results(backlog=_backlog(0, 0), failures={"ttc": "TimeoutError: no card"})
    text = render(res, "## run")
    assert "### 5. Backlog" in text
    assert "scenario ttc failed: TimeoutError: no card" in text


def test_cardlog_indexes_posts_duplicates_429s_and_edits() -> None:
    fake = FakeSlack().start()
    try:
        web = WebClient(token=fake.workspace.bot_token, base_url=fake.api_url)
        log = CardLog(fake)

        def post(pending_id: str) -> str:
            meta = {"event_type": "kandev_card", "event_payload": {"pending_id": pending_id}}
            return web.chat_postMessage(channel="C0QUESTION", text="card", metadata=meta)["ts"]

        ts = post("p1")
        post("p1")  # a duplicate card
        post("p2")
        web.chat_update(channel="C0QUESTION", ts=ts, text="answered")
        fake.faults.rate_limit("chat.postMessage")
        with pytest.raises(Exception, match="ratelimited"):
            web.chat_postMessage(channel="C0QUESTION", text="card")
        assert log.wait_posted(["p1", "p2"], timeout=5)
        assert log.duplicates() == 1
        assert log.rate_limited == 1
        assert log.card("p1") == ("C0QUESTION", ts)
        edit = log.wait_edit("p1", since=0.0, timeout=5)
        assert edit is not None and edit.params["text"] == "answered"
        assert log.wait_edit("p2", since=0.0, timeout=0.2) is None
    finally:
        fake.stop()


def test_wide_reservation_spans_adjacent_blocks_and_releases() -> None:
    reservation = reserve_block(cells=2)
    try:
        block = reservation.block
        assert block.instance_first == block.base + INSTANCE_OFFSET
        assert block.instance_last == block.base + 2 * BLOCK_SIZE - 1
        with socket.socket() as s:  # the ports are really free
            s.bind(("127.0.0.1", block.instance_last))
    finally:
        reservation.release()


def test_the_conversation_table_sits_beside_kandevs_own_call() -> None:
    from bench.scenarios.conversation import ConversationBench, transcript

    steps = transcript(3)
    assert [("say" in s, "tool" in s) for s in steps] == [(True, False), (False, True)] * 3
    result = ConversationBench(
        count=3,
        kandev_messages=Summary.of_seconds([0.004, 0.005, 0.006]),
        click_filled=Summary.of_seconds([0.030, 0.040, 0.050]),
        ack=Summary.of_seconds([0.010, 0.011, 0.012]),
        problems=["one click was not filled"],
    )
    text = render(Results(conversation=result), "preamble")
    assert "### 7. Conversation view" in text
    kandev_row = next(line for line in text.splitlines() if "session messages" in line)
    click_row = next(line for line in text.splitlines() if "modal filled" in line)
    assert "| 3 |" in kandev_row and "| 3 |" in click_row
    assert "one click was not filled" in text


def _reminders(duplicates: int, reminded: int, limited: int, most: int = 3) -> Reminders:
    return Reminders(
        count=10,
        channels=2,
        fresh=2,
        cards_posted=12,
        card_duplicates=0,
        reminders_sent=25,
        cards_reminded=reminded,
        most_per_card=most,
        reminder_duplicates=duplicates,
        rate_limited=limited,
        fresh_queued_reminders=12,
        fresh_to_card=Summary.of_seconds([0.2, 0.4]),
        all_reminders_s=20.0,
    )


def test_targets_flag_a_duplicate_missing_reminder_or_429() -> None:
    assert targets(Results(reminders=_reminders(0, 10, 0)))[0][-1] == "yes"
    bad = (_reminders(1, 10, 0), _reminders(0, 9, 0), _reminders(0, 10, 1), _reminders(0, 10, 0, 4))
    for reminders in bad:
        assert targets(Results(reminders=reminders))[0][-1] == "**no**"
    assert "| 10 " in render(Results(reminders=_reminders(0, 10, 0)), "pre")


def test_every_kind_of_ack_is_a_target_and_the_sending_time_is_not() -> None:
    from bench.scenarios.answering import Answering

    quick, slow = Summary.of_seconds([0.004, 0.005]), Summary.of_seconds([0.040, 0.090])
    result = Answering(
        clicks=2,
        rests=0,
        modals=2,
        ack_button=quick,
        ack_modal=quick,
        ack_slash=quick,
        ack_shortcut=slow,
        modal_result=Summary.of_seconds([0.300, 0.400]),
        home_note="n/a (no App Home with a question)",
    )
    rows = {row[0]: row for row in targets(Results(answers=result))}
    assert rows["ack p99 ≤ 50 ms: modal submission, identical questions (groups)"][-1] == "yes"
    assert rows["ack p99 ≤ 50 ms: message shortcut"][-1] == "**no**"
    assert rows["ack p99 ≤ 50 ms: App Home action"][1] == "n/a (no App Home with a question)"
    assert not any("Sending" in name for name in rows)
    text = render(Results(answers=result), "preamble")
    sending = next(line for line in text.splitlines() if '"Sending…" replaced' in line)
    assert "| 2 |" in sending
    assert "message shortcut Reject agent question" in text and "App Home action" in text


def _crowd(ack_ms: float, agent_ms: float, delivered: int, busy: int = 0) -> Crowd:
    run = CrowdRun(
        "http",
        acks_s=[0.005, ack_ms / 1000.0],
        to_agent_s=[0.05, agent_ms / 1000.0],
        to_card_s=[0.1, 0.3],
        delivered=delivered,
        cards_won=delivered,
        busy=busy,
        floor=Floor(
            [0.04, 0.1], [0.04, 0.1], cpu=CpuSpent(bot=0.02, bench=0.01, rest=0.3), metered=2
        ),
        cpu=CpuSpent(bot=0.05, bench=0.02, rest=0.4),
        metered=1,  # the second click's round stopped before its meter ran
    )
    return Crowd(crowd=2, window_s=1.0, runs=[run])


def test_crowd_targets_compare_with_the_floor_and_count_every_answer() -> None:
    met = targets(Results(crowd=_crowd(ack_ms=90, agent_ms=120, delivered=2)))
    assert [row[-1] for row in met] == ["yes", "yes", "yes"]
    slow_ack = targets(Results(crowd=_crowd(ack_ms=150, agent_ms=120, delivered=2)))
    assert [row[-1] for row in slow_ack] == ["**no**", "yes", "yes"]
    slow_agent = targets(Results(crowd=_crowd(ack_ms=90, agent_ms=140, delivered=2)))
    assert [row[-1] for row in slow_agent] == ["yes", "**no**", "yes"]
    lost = targets(Results(crowd=_crowd(ack_ms=90, agent_ms=120, delivered=1)))
    assert lost[-1][-1] == "**no**" and "1/2" in lost[-1][1]
    busy = targets(Results(crowd=_crowd(ack_ms=90, agent_ms=120, delivered=2, busy=1)))
    assert busy[-1][-1] == "**no**"
    text = render(Results(crowd=_crowd(ack_ms=90, agent_ms=120, delivered=2)), "pre")
    assert "### 9. Crowds" in text and "HTTP (waitress)" in text and "| 2/2 " in text
    # CPU per metered answer (the floor's 2, the crowd's 1): Kandev's and the rest's, the
    # bot's, the benchmark's own.
    floor_cpu = next(line for line in text.splitlines() if "| floor: bare clients" in line)
    assert [c.strip() for c in floor_cpu.split("|")[3:6]] == ["150", "10", "5.0"]
    bot_cpu = next(
        line for line in text.splitlines() if "| the bot " in line and "CPU per" not in line
    )
    assert [c.strip() for c in bot_cpu.split("|")[3:6]] == ["400", "50", "20"]


def test_the_crowd_may_add_10_percent_on_a_cpu_of_its_own_and_25_percent_shared() -> None:
    floor = [1.0] * 20  # Kandev's own p95: 1,000 ms on either arrangement
    crowd = Crowd(crowd=20, window_s=1.0)
    for cpus, agent_s in (("split", 1.09), ("split", 1.11), ("shared", 1.24), ("shared", 1.26)):
        run = CrowdRun("socket", cpus, [0.01] * 20, [agent_s] * 20, [1.5] * 20, 20, 20)
        run.floor = Floor(floor, floor)
        crowd.runs.append(run)
    rows = [r for r in summary_rows(Results(crowd=crowd)) if "crowd of 20" in r.target]
    rows = [r for r in rows if "click → agent" in r.target]
    assert [(r.measured, r.floor, r.met_cell) for r in rows] == [
        ("1090 ms (+9 %)", "1100 ms (Kandev's own 1000 × 1.10)", "yes"),
        ("1110 ms (+11 %)", "1100 ms (Kandev's own 1000 × 1.10)", "**no**"),
        ("1240 ms (+24 %)", "1250 ms (Kandev's own 1000 × 1.25)", "yes"),
        ("1260 ms (+26 %)", "1250 ms (Kandev's own 1000 × 1.25)", "**no**"),
    ]
    assert rows[0].target == (
        "crowd of 20 in 1 s, Socket Mode, bot on a CPU of its own: "
        "click → agent p95 ≤ Kandev's own p95 × 1.10"
    )


def test_crowd_rounds_are_pooled_and_counted_against_every_click() -> None:
    crowd = _crowd(ack_ms=90, agent_ms=200, delivered=2)
    crowd.rounds = 2
    run = crowd.runs[0]
    run.acks_s += [0.006, 0.2]  # the second round's acks: its slowest fails the target
    rows = targets(Results(crowd=crowd))
    assert rows[0][-1] == "**no**" and run.ack is not None and run.ack.count == 4
    assert rows[-1][-1] == "**no**" and "2/4" in rows[-1][1]  # 2 of 4 clicks delivered
    text = render(Results(crowd=crowd), "pre")
    assert "2 rounds (a fresh bot each) per transport and CPU arrangement, pooled" in text


def test_each_transport_and_arrangement_is_compared_with_the_floor_of_its_own_rounds() -> None:
    crowd = _crowd(ack_ms=90, agent_ms=1000, delivered=2)  # 1 s: over its own floor
    split = CrowdRun("http", "split", [0.005, 0.09], [0.05, 1.0], [0.1, 0.3], 2, 2)
    split.floor = Floor([0.5, 1.0], [0.5, 1.0])  # Kandev on one CPU: slower
    crowd.runs.append(split)
    rows = targets(Results(crowd=crowd))
    assert [row[-1] for row in rows] == ["yes", "**no**", "yes", "yes", "yes", "yes"]
    assert "bot on a CPU of its own" in rows[3][0] and "all on 2 shared CPUs" in rows[0][0]
    text = render(Results(crowd=crowd), "pre")
    assert "Kandev alone, beside HTTP (waitress), bot on a CPU of its own" in text
    assert "Kandev alone, beside HTTP (waitress), all on 2 shared CPUs" in text


def _replica_run(duplicates: int = 0, rate_limited: int = 0, all_s: float | None = 105.0):
    return ReplicaRun(
        count=1000,
        channels=10,
        replicas=3,
        killed_after=500,
        posted=1000,
        duplicates=duplicates,
        missing=0,
        rate_limited=rate_limited,
        first_s=2.0,
        all_s=all_s,
        slack_floor_s=slack_floor_s(1000, 10),
        prepare_s=30.0,
    )


def test_the_replicas_floor_is_slacks_limit_with_bursts_of_three() -> None:
    assert slack_floor_s(1000, 10) == 97.0
    assert slack_floor_s(20, 10) == 0.0
    assert slack_floor_s(25, 2) == 10.0


def test_targets_flag_replicas_that_hit_a_429_duplicate_or_ran_slow() -> None:
    assert targets(Results(replicas=_replica_run()))[0][-1] == "yes"
    for bad in (_replica_run(duplicates=1), _replica_run(rate_limited=1), _replica_run(all_s=107)):
        assert targets(Results(replicas=bad))[0][-1] == "**no**"
    assert targets(Results(replicas=_replica_run(all_s=None)))[0][-1] == "**no**"
    text = render(Results(replicas=_replica_run()), "pre")
    assert "### 10. Replicas" in text and "1.08×" in text


def _ms(*values: float) -> Summary:
    summary = Summary.of_seconds([v / 1000 for v in values])
    assert summary is not None
    return summary


def test_time_to_card_targets_are_floor_plus_50_ms_and_interval_plus_100_ms() -> None:
    ttc = TimeToCard(
        count=3,
        spacing_s=0.6,
        floor=_ms(10, 20, 30),
        push=_ms(40, 60, 90),  # p95 87 > 29 + 50: no
        poll=_ms(2000, 4000, 5090),  # p95 ≈ 5 081 ≤ 5 100: yes
        missing={"floor": 0, "push": 0, "poll": 0},
    )
    rows = {row[0]: row for row in targets(Results(ttc=ttc))}
    push = rows["time to card p95 ≤ floor p95 + 50 ms (push)"]
    poll = rows["time to card p95 ≤ poll interval + 100 ms (polling only)"]
    assert push[-1] == "**no**" and poll[-1] == "yes"


def test_the_big_queue_table_and_its_targets() -> None:
    queues = Queues(
        waiting=1000,
        fresh=3,
        spacing_s=0.6,
        window_s=15.0,
        poll_interval_s=5.0,
        listed=1000,
        list_floor=_ms(100, 120, 140),
        cpu_ms_per_cycle_push=40.0,
        cpu_ms_per_cycle_poll=45.0,
        floor=_ms(10, 20, 30),
        push=_ms(30, 40, 50),
        poll=_ms(1000, 3000, 5050),
        missing={"floor": 0, "push": 0, "poll": 0},
        ack_slash=_ms(20, 30, 60),
        slash_in_bot={"0.005": 0, "0.025": 18, "0.05": 20, "0.1": 20, "+Inf": 20},
    )
    text = render(Results(queues=queues), "## run")
    assert "### 11. Big queues: 1,000 bundles waiting at once" in text
    assert "18 within 25 ms, 20 within 50 ms, 20 within 100 ms" in text
    assert "| 40 / 45" in text
    rows = {row[0]: row[-1] for row in targets(Results(queues=queues))}
    assert rows["time to card p95 ≤ floor p95 + 50 ms (push) with 1,000 waiting"] == "yes"
    assert rows["ack p99 ≤ 50 ms: slash command with 1,000 waiting"] == "**no**"
    assert rows["1,000 waiting: nothing posted twice"] == "yes"
    queues.duplicates = 1
    rows = {row[0]: row[-1] for row in targets(Results(queues=queues))}
    assert rows["1,000 waiting: nothing posted twice"] == "**no**"


def test_kandev_requests_per_bundle_answered_sit_beside_the_floor() -> None:
    requests = KandevRequests(
        waiting=1000,
        answered=5,
        edited=5,
        idle_per_cycle=(5.0, 0.0, 0.2),
        per_answer=(0.0, 1.0, 0.0),
    )
    queues = Queues(
        waiting=1000, fresh=0, spacing_s=0.6, window_s=15.0, poll_interval_s=5.0, listed=1000
    )
    queues.requests = requests
    text = render(Results(queues=queues), "## run")
    assert "Kandev requests per bundle answered in Kandev, with 1,000 waiting" in text
    assert "per bundle answered in Kandev (5/5 cards edited) | 1.00" in text
    assert "floor: the regular poll (5 list page(s) per interval) | 5" in text


def test_a_burst_is_sent_from_a_process_of_its_own_with_each_answer_in_order() -> None:
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    from bench import burst

    seen: list[tuple[str, str]] = []

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 (http.server's naming)
            seen.append(("GET", self.path))
            self._reply(200, b"{}")

        def do_POST(self) -> None:  # noqa: N802
            body = self.rfile.read(int(self.headers["Content-Length"])).decode()
            seen.append(("POST", f"{self.path} {body} {self.headers['X-Test']}"))
            self._reply(200 if self.path != "/refuse" else 409, f'{{"echo": "{body}"}}'.encode())

        def _reply(self, status: int, body: bytes) -> None:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}"
    try:
        sent = burst.send(
            [
                burst.Request(f"{url}/a", "one", {"X-Test": "1"}, warm_url=f"{url}/warm"),
                burst.Request(f"{url}/refuse", "two", {"X-Test": "2"}),
            ],
            window=0.2,
        )
    finally:
        server.shutdown()
    assert [(s.status, s.body, s.error) for s in sent] == [
        (200, {"echo": "one"}, ""),
        (409, {"echo": "two"}, ""),
    ]
    assert all(s.elapsed is not None and s.sent_at > 0 for s in sent)
    assert seen[0] == ("GET", "/warm")  # warmed up before the burst, untimed
    assert sorted(seen[1:]) == [("POST", "/a one 1"), ("POST", "/refuse two 2")]


IDLE_LISTS = (
    "idle interval with 200 waiting, hints on: Kandev requests ≤ one task-list read per page"
)
IDLE_CPU = "idle interval with 200 waiting, hints on: bot CPU ≤ 50 ms"


def test_the_approval_rows_sit_beside_their_floors_and_the_sweep_beside_a_bare_client() -> None:
    from bench.scenarios.approvals import ApprovalBench, SweepCost, _kind

    assert _kind("GET workspaces/:id/tasks") == "task lists"
    assert _kind("mcp list_pending_agent_permissions_kandev") == "request lists"
    assert _kind("GET task-sessions/:id") == "session reads"
    assert _kind("mcp list_pending_questions_kandev") == "question lists"
    assert _kind("mcp resolve_agent_permission_kandev") == "other"
    busy = SweepCost(
        waiting=100,
        tasks=100,
        requests={
            "task lists": 10,
            "request lists": 100,
            "session reads": 100,
            "question lists": 1,
        },
        cpu_ms=120.0,
        floor_requests=110,
        floor_ms=400.0,
    )
    wasteful = SweepCost(0, 100, {"task lists": 10, "request lists": 20}, 30.0, 10, 50.0)
    idle = SweepCost(
        200, 200, {"task lists": 3, "question lists": 1}, 41.0, 3, 20.0, "idle", 3, 12.0
    )
    costly = SweepCost(200, 200, {"task lists": 3, "session reads": 1}, 60.0, 3, 20.0, "idle", 3)
    result = ApprovalBench(
        count=4,
        floor_card=Summary.of_seconds([0.040, 0.050]),
        bot_card=Summary.of_seconds([0.060, 0.120]),  # p95 117 ms > 50 + 50
        click_agent=Summary.of_seconds([0.020, 0.025]),
        resolve_agent=Summary.of_seconds([0.010, 0.012]),
        ack=Summary.of_seconds([0.010]),
        sweeps=[busy, wasteful, idle, costly],
        problems=["one agent got no option"],
    )
    assert busy.sweep == 210  # the question poll's list is not the sweep's
    text = render(Results(approvals=result), "preamble")
    assert "### 12. Approvals" in text and "one agent got no option" in text
    sweep_row = next(line for line in text.splitlines() if "100 waiting, 100 tasks" in line)
    cells = [c.strip() for c in sweep_row.strip("|").split("|")]
    assert (cells[1], cells[3], cells[5]) == ("210.0", "110", "120")
    met = {row[0]: row[2] for row in targets(Results(approvals=result))}
    assert met["request → approval card p95 ≤ floor p95 + 50 ms"] == "**no**"
    assert met["approval click → agent p95 ≤ floor p95 + 20 ms"] == "yes"
    assert met["sweep with 100 waiting: Kandev requests ≤ floor + 1 per waiting approval"] == "yes"
    assert met["sweep with 0 waiting: Kandev requests ≤ floor + 1 per waiting approval"] == "**no**"
    # the idle interval (hints on): the task lists only, one read a page, and little CPU
    idle_rows = [
        (name, value, ok)
        for name, value, ok in targets(Results(approvals=result))
        if name.startswith("idle interval with 200 waiting")
    ]
    assert idle_rows == [
        (IDLE_LISTS, "3.0 task lists ≤ 3, 0.0 other", "yes"),
        (IDLE_CPU, "41 ms (the sweep's own: 12 ms)", "yes"),
        (IDLE_LISTS, "3.0 task lists ≤ 3, 1.0 other", "**no**"),
        (IDLE_CPU, "60 ms (the sweep's own: 0 ms)", "**no**"),
    ]
    assert "200 waiting, 200 tasks: idle interval, hints on" in text


def test_approvals_not_measured_are_targets_not_met() -> None:
    from bench.scenarios.approvals import ApprovalBench

    met = {row[0]: row[1:] for row in targets(Results(approvals=ApprovalBench(count=0)))}
    assert met["request → approval card p95 ≤ floor p95 + 50 ms"] == ["not measured", "**no**"]


def test_a_thread_reply_s_send_is_reported_beside_the_button_click() -> None:
    from bench.scenarios.answering import Answering

    result = Answering(
        clicks=2,
        rests=0,
        modals=0,
        replies=2,
        click_agent=Summary.of_seconds([0.020, 0.030]),
        reply_agent=Summary.of_seconds([0.025, 0.035]),
        reply_card=Summary.of_seconds([0.100, 0.200]),
    )
    lines = render(Results(answers=result), "preamble").splitlines()
    click = next(n for n, line in enumerate(lines) if "signed Slack click → agent" in line)
    reply = next(n for n, line in enumerate(lines) if "thread reply's Send → agent" in line)
    assert 0 < reply - click <= 2  # the rows sit together
    assert "| 2 |" in lines[reply] and "35" in lines[reply]
    assert any("thread reply's Send → card edited" in line for line in lines)


def test_the_digest_scenario_builds_one_digest_per_round_and_renders(tmp_path) -> None:
    from types import SimpleNamespace

    from bench.report import render_digest
    from bench.scenarios import digest

    result = digest.run(SimpleNamespace(work_dir=tmp_path), waiting=300, rounds=2)  # type: ignore[arg-type]
    assert result.messages_per_digest == 1.0
    assert result.blocks <= 50 and result.items_shown == 20
    assert result.build is not None and result.listing_floor is not None
    text = render_digest(result)
    assert "digest of 300 waiting items" in text and "floor" in text


def test_a_click_with_their_own_token_sits_beside_the_bots_and_its_target_is_5_ms() -> None:
    from bench.scenarios.identity import IdentityBench

    close = IdentityBench(
        clicks=2,
        linked_agent=Summary.of_seconds([0.030, 0.034]),
        bot_agent=Summary.of_seconds([0.029, 0.031]),
        linked_card=Summary.of_seconds([0.100, 0.120]),
        bot_card=Summary.of_seconds([0.100, 0.110]),
        credited=True,
    )
    lines = render(Results(identity=close), "preamble").splitlines()
    theirs = next(n for n, line in enumerate(lines) if "their own token → agent" in line)
    assert "floor: click, the bot's token → agent" in lines[theirs + 1]
    assert any("p50 their token − p50 the bot's token: 2.0 ms" in line for line in lines)
    met = {row[0]: row[1:] for row in targets(Results(identity=close))}
    assert met["click with their own token → agent p50 within 5 ms of the bot's token's"] == [
        "32 vs 30 (+2.0 ms)",
        "yes",
    ]
    assert met["their approval credited to their Kandev account"] == ["yes", "yes"]

    slow = IdentityBench(
        clicks=2,
        linked_agent=Summary.of_seconds([0.040, 0.042]),
        bot_agent=Summary.of_seconds([0.030, 0.030]),
        credited=False,
    )
    met = {row[0]: row[1:] for row in targets(Results(identity=slow))}
    assert met["click with their own token → agent p50 within 5 ms of the bot's token's"][1] == (
        "**no**"
    )
    assert met["their approval credited to their Kandev account"] == ["no", "**no**"]
    unmeasured = {row[0]: row[1:] for row in targets(Results(identity=IdentityBench(clicks=0)))}
    assert unmeasured[
        "click with their own token → agent p50 within 5 ms of the bot's token's"
    ] == [
        "not measured",
        "–",
    ]


def test_the_quiet_machine_wait_gives_up_at_its_timeout_and_says_how_busy() -> None:
    started = time.monotonic()
    never = wait_quiet_machine(below=0.0, over_s=0.05, timeout=0.2)  # never quiet enough
    waited = time.monotonic() - started
    assert 0.0 <= never <= 1.0 and waited >= 0.2
    started = time.monotonic()
    always = wait_quiet_machine(below=1.01, over_s=0.05, timeout=10.0)  # quiet at once
    assert 0.0 <= always <= 1.0 and time.monotonic() - started < 5.0


_BURN = (
    "import sys, time\n"
    "for line in sys.stdin:\n"
    "    until = time.process_time() + float(line)\n"
    "    while time.process_time() < until: pass\n"
    "    print('burnt', flush=True)\n"
)


def _burner() -> subprocess.Popen[str]:
    """A process that spends as much CPU as each line it reads says, then says so."""
    return subprocess.Popen(
        [sys.executable, "-c", _BURN], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )


def _burn(proc: subprocess.Popen[str], seconds: float) -> None:
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write(f"{seconds}\n")
    proc.stdin.flush()
    assert proc.stdout.readline().strip() == "burnt"


def test_the_cpu_meter_splits_the_machine_between_the_bot_the_benchmark_and_the_rest() -> None:
    bot, sender, kandev, once = _burner(), _burner(), _burner(), _burner()
    procs = [bot, sender, kandev, once]
    try:
        for proc in procs:
            _burn(proc, 0.0)  # started and warm before the phase
        meter = CpuMeter(bot.pid, [sender.pid])
        meter.start()
        _burn(bot, 0.3)
        _burn(sender, 0.2)  # a sender alive through the phase
        _burn(once, 0.2)  # a sender that ends within it: this process's child, waited for
        assert once.stdin is not None
        once.stdin.close()
        once.wait(timeout=30)
        _burn(kandev, 0.3)  # neither's: the rest of the machine
        spent = meter.stop()
    finally:
        for proc in procs:
            proc.kill()
            proc.wait(timeout=30)
    # Each burner's CPU is its own (process_time), whatever the machine's speed or load; the
    # kernel counts it in ticks of 10 ms.
    assert 0.25 <= spent.bot <= 0.45
    assert 0.35 <= spent.bench <= 0.7
    assert spent.rest >= 0.25
    assert CpuSpent(1.0, 2.0, 3.0) + CpuSpent(0.5, 0.5, 0.5) == CpuSpent(1.5, 2.5, 3.5)


def test_kandev_is_restarted_once_before_the_thousand_waiting_after_other_scenarios() -> None:
    from bench.run import SCENARIOS, fresh_kandev_before

    whole = list(SCENARIOS)
    assert [whole[n] for n in range(len(whole)) if fresh_kandev_before(whole, n)] == ["notice"]
    alone = ["notice", "footprint", "queues"]  # a run of only those starts with a fresh Kandev
    assert not any(fresh_kandev_before(alone, n) for n in range(len(alone)))
    some = ["crowd", "footprint", "queues"]
    assert [some[n] for n in range(len(some)) if fresh_kandev_before(some, n)] == ["footprint"]


def test_the_whole_heap_s_collections_during_the_slash_commands_are_told() -> None:
    from bench.report import render_gc_pauses

    assert render_gc_pauses({"+Inf": 0}).startswith("No collection of the whole heap")
    told = render_gc_pauses({"0.01": 1, "0.025": 2, "0.05": 3, "0.1": 3, "+Inf": 3})
    assert told.endswith(": 3; 1 within 10 ms, 2 within 25 ms, 3 within 50 ms, 3 within 100 ms.")
