"""In-memory fakes of the edges the use-cases talk to: the clock, Kandev's client and Slack's
gateway. They are fakes of external systems, never of our own services."""

from __future__ import annotations

import copy
import threading
import time
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, Literal

from kandev_slack.core.clarification import Answer, Bundle, ListedBundle
from kandev_slack.kandev.approvals.wire import (
    PermissionCandidate,
    PermissionRecord,
    PermissionRequest,
    PermissionResolution,
    SessionCancellation,
    TaskState,
)
from kandev_slack.kandev.errors import (
    KandevAgentStarting,
    KandevAuthError,
    KandevError,
    KandevNotFoundError,
    KandevUnavailable,
)
from kandev_slack.kandev.models import (
    ActiveList,
    FinalState,
    Invalid,
    KandevUser,
    Lost,
    NotActive,
    NotFound,
    NotRecorded,
    Outcome,
    Resolution,
    SessionMessage,
    SessionMessages,
    Task,
    Won,
    Workspace,
)
from kandev_slack.kandev.respond import Submission, settle
from kandev_slack.slack_api.gateway import Message, SlackError


class FakeClock:
    """A settable UTC clock (``clock.advance(10)``), called like ``datetime.now(UTC)``."""

    def __init__(self, start: datetime) -> None:
        self.now = start

    def __call__(self) -> datetime:
        return self.now

    def advance(self, seconds: float) -> datetime:
        self.now += timedelta(seconds=seconds)
        return self.now


class FakeMonotonic:
    """Stands in for the ``time`` module of a use-case that measures waits with
    ``time.monotonic()`` (``monkeypatch.setattr(kandev_slack.usecases.intake.sync, "time",
    FakeMonotonic())``):
    time moves only by ``advance`` (and by ``sleep``)."""

    def __init__(self, start: float = 1_000.0) -> None:
        self.now = start

    def monotonic(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.advance(seconds)

    def advance(self, seconds: float) -> float:
        self.now += seconds
        return self.now


# ---- Kandev ---------------------------------------------------------------------------------


def _now() -> datetime:
    return datetime.now(UTC)


@dataclass
class _Failure:
    error: Exception
    times: int | None  # None: until recover()


class FakePermissions:
    """Kandev's permission calls as the client shows them: live requests per task, records,
    cancellation revisions, flagged tasks per workspace."""

    def __init__(self) -> None:
        self.live: dict[str, list[PermissionRequest]] = {}
        self.records: dict[str, PermissionRecord] = {}
        self.revisions: dict[str, int] = {}
        #: Sessions whose turn is over (cancelled, or given up on by the agent).
        self.turns_ended: set[str] = set()
        self.flagged: dict[str, list[str]] = {}
        #: Tasks each workspace's task list shows besides the flagged ones.
        self.rows: dict[str, list[str]] = {}
        #: What each task's row says (its ``TaskState.mark``); ``touch`` changes it.
        self.marks: dict[str, int] = {}
        self.starting: set[str] = set()
        #: Calls that raise, by their name in ``calls`` ("candidates ws-1", "list t-1"…).
        self.failures: dict[str, Exception] = {}
        #: When given, ``candidates`` waits until it is set (a slow workspace read: a sweep).
        self.candidates_gate: threading.Event | None = None
        #: When given, ``record`` waits until it is set (a slow read of how a request ended).
        self.record_gate: threading.Event | None = None
        #: Run (and dropped) one by one after a list call: Kandev changing between two reads.
        self.after_list: list[Callable[[], None]] = []
        self.calls: list[str] = []

    def request(self, task_id: str, n: int = 1) -> PermissionRequest:
        made = PermissionRequest.model_validate(
            {
                "task_id": task_id,
                "session_id": f"s-{task_id}",
                "request_id": f"r-{task_id}-{n}",
                "pending_id": f"p-{task_id}-{n}",
                "created_at": _PERMISSION_AT,
                "action": {"type": "command", "command": "make test", "cwd": "/repo"},
                "options": [
                    {"option_id": "allow_once", "name": "Allow once", "kind": "allow_once"},
                    {"option_id": "reject_once", "name": "Reject", "kind": "reject_once"},
                ],
            }
        )
        self.live.setdefault(task_id, []).append(made)
        self.revisions.setdefault(made.session_id, 0)
        return made

    def list_pending(self, task_id: str, session_id: str | None = None) -> list[PermissionRequest]:
        self._call(f"list {task_id}" + (f" {session_id}" if session_id else ""))
        if task_id in self.starting:
            raise KandevAgentStarting("INTERNAL_ERROR", "Agent permission operation failed")
        listed = [
            r for r in self.live.get(task_id, []) if not session_id or r.session_id == session_id
        ]
        if self.after_list:
            self.after_list.pop(0)()
        return listed

    def task_states(self, workspace_id: str) -> list[TaskState]:
        if self.candidates_gate is not None:
            self.candidates_gate.wait(30)
        self._call(f"tasks {workspace_id}")
        flagged = self.flagged.get(workspace_id, [])
        shown = dict.fromkeys([*flagged, *self.rows.get(workspace_id, [])])
        return [
            TaskState(t, f"s-{t}", t in flagged, f"{t in flagged}|{self.marks.get(t, 0)}")
            for t in shown
        ]

    def candidates(self, workspace_id: str) -> list[PermissionCandidate]:
        return [
            PermissionCandidate(task_id=s.task_id, session_id=s.session_id)
            for s in self.task_states(workspace_id)
            if s.flagged
        ]

    def touch(self, task_id: str) -> None:
        """The task's row changes (its ``updated_at`` moves: a cancel, an agent giving up…)."""
        self.marks[task_id] = self.marks.get(task_id, 0) + 1

    def cancellation(self, session_id: str) -> SessionCancellation | None:
        if session_id not in self.revisions:
            return None
        return SessionCancellation.model_validate(
            {"cancellation_revision": self.revisions[session_id]}
        )

    def turn_ended(self, session_id: str, asked_at: datetime) -> bool | None:
        if session_id not in self.revisions:
            return None
        return session_id in self.turns_ended

    def record(self, task_id: str, session_id: str, request_id: str) -> PermissionRecord | None:
        if self.record_gate is not None:
            self.record_gate.wait(30)
        return self.records.get(request_id)

    def _call(self, name: str) -> None:
        self.calls.append(name)
        failure = self.failures.get(name) or self.failures.get(" ".join(name.split()[:2]))
        if failure is not None:
            raise failure

    def resolve_elsewhere(
        self, request: PermissionRequest, option_id: str, kind: str, *, actor: str = ""
    ) -> None:
        """Someone chose ``option_id`` in Kandev's web UI (``actor``: their Kandev account, as
        Kandev records a person's token; "": auth off, Kandev's placeholder)."""
        self.live[request.task_id].remove(request)
        who = (
            {"actor_kind": "personal_access_token", "actor_user_id": actor}
            if actor
            else {"actor_kind": "synthetic", "actor_user_id": "default-user"}
        )
        resolution = PermissionResolution(
            option_id=option_id, option_kind=kind, source="web", **who
        )
        self.records[request.request_id] = PermissionRecord(
            request_id=request.request_id, status="approved", resolution=resolution
        )


_PERMISSION_AT = datetime(2026, 12, 2, 10, 0, tzinfo=UTC)


class FakeKandev:
    """An in-memory Kandev as ``KandevClient`` shows it: the same methods, the same typed
    models and outcomes, and Kandev's first-claim-wins rule for answers and rejections.

    Arrange with ``add`` (an active bundle, its task and workspace), ``resolve_in_kandev``
    (someone answered in Kandev's web UI) and ``end`` (the agent stopped waiting);
    ``fail(method, error)`` makes calls raise (default ``KandevUnavailable``).
    ``calls`` records every call as ``(method, arguments)``.

    Several people on one Kandev (kandev_slack/usecases/identity.py): ``person(token, user,
    workspaces)`` is the same Kandev as a person's own token shows it (the same bundles and
    resolutions; its ``user`` and its own ``workspace_list``: a bundle of a workspace it does
    not see is "not found" to it), and ``client_for`` is the composition root's factory of a
    token's client (``made`` lists the tokens it was asked for; an unknown token is one Kandev
    does not take). ``revoke(token)``: Kandev refuses it from then on (every call 401,
    ``account()`` and ``access()`` say ``refused``).
    """

    def __init__(self, base_url: str = "https://kandev.example.test") -> None:
        self.base_url = base_url
        self.active: dict[str, Bundle] = {}  # by pending id, oldest first
        self.tasks: dict[str, Task] = {}
        self.workspace_list: list[Workspace] = []
        self.finals: dict[str, FinalState] = {}
        self.resolutions: dict[str, Resolution] = {}
        self.totals: dict[str, int] = {}  # question_total when it differs from the bundle's
        self.sessions: dict[str, list[SessionMessage]] = {}  # session id -> messages, oldest first
        self.refusals: dict[str, str] = {}  # pending id -> the 400 its next submission gets
        self.ambiguous: set[str] = set()  # pending ids whose next submission may be a duplicate
        self.calls: list[tuple[str, dict[str, Any]]] = []
        #: Agent tool-permission requests (``KandevClient.permissions``).
        self.permissions = FakePermissions()
        #: The Needs-you inbox (``KANDEV_FEATURES_NEEDS_YOU_INBOX``): its history's reasons by
        #: pending id; None when the feature is off (``ended_reason`` answers None).
        self.inbox_history: dict[str, str] | None = None
        #: Whose token this is (``member_account``): None as with auth off (Kandev has no
        #: accounts; ``account`` then answers ``bot_user``, as Kandev's placeholder user).
        self.user: KandevUser | None = None
        #: This token's owner's Needs-you inbox: what is hidden there, pending id -> "1h",
        #: "4h", "24h" (snoozed) or "dismissed" (``hidden_in_inbox`` lists a workspace's).
        self.inbox: dict[str, str] = {}
        #: Kandev's accounts' display names by id (``names``), and whose the bot's token is.
        self.users: dict[str, str] = {}
        self.bot_user = KandevUser(id="bot-user", display_name="The bot")
        self._failures: dict[str, _Failure] = {}
        #: Every bundle ever added, by pending id (its task, once it left the active list).
        self.bundles: dict[str, Bundle] = {}
        # ---- whose token (shared by the clients ``person`` makes, but for the last three)
        self.people: dict[str, FakeKandev] = {}
        self.revoked: set[str] = set()
        self.made: list[str] = []
        self.token = ""  # the bot's; a person's (``person``) sees only its ``workspace_list``
        #: Whose token this is (``account``).
        self.user: KandevUser | None = None

    # ---- arranging ---------------------------------------------------------------------

    def add(
        self,
        bundle: Bundle,
        *,
        title: str = "Pick a datastore",
        workspace_id: str = "ws-1",
        workspace_name: str = "Platform",
        priority: str = "",
        assignee: str = "",
    ) -> Bundle:
        """An active bundle, with its task (assigned to the Kandev user ``assignee``, if any)
        and workspace."""
        self.active[bundle.pending_id] = bundle
        self.bundles[bundle.pending_id] = bundle
        fields = {"priority": priority} if priority else {}
        self.tasks[bundle.task_id] = Task(
            id=bundle.task_id,
            title=title,
            workspace_id=workspace_id,
            assignee_user_id=assignee,
            **fields,
        )
        if all(w.id != workspace_id for w in self.workspace_list):
            self.workspace_list.append(Workspace(id=workspace_id, name=workspace_name))
        return bundle

    def resolve_in_kandev(self, pending_id: str, answers: Sequence[Answer]) -> Resolution:
        """Someone answered the bundle outside Slack (Kandev's web UI)."""
        return self._claim(pending_id, Resolution(status="answered", answers=list(answers)))

    def reject_in_kandev(self, pending_id: str, *, ago_s: float | None = 0.0) -> Resolution:
        """Someone rejected the bundle outside Slack, ``ago_s`` seconds ago (Kandev's
        ``responded_at``; None: Kandev's replies do not say when)."""
        resolution = self._claim(pending_id, Resolution(status="rejected"), at=_now())
        at = None if ago_s is None else _now() - timedelta(seconds=ago_s)
        self.resolutions[pending_id] = resolution.model_copy(update={"responded_at": at})
        return self.resolutions[pending_id]

    def maybe_delivered(self, pending_id: str) -> None:
        """The next submission for ``pending_id`` is settled as after a 502 or a read timeout
        that the client retried: its first attempt may have reached Kandev."""
        self.ambiguous.add(pending_id)

    def end(self, pending_id: str, status: str = "cancelled") -> None:
        """The bundle left the active list unanswered (cancelled, expired)."""
        self.active.pop(pending_id)
        self.finals[pending_id] = FinalState(status=status)  # type: ignore[arg-type]

    def vanish(self, pending_id: str) -> None:
        """The bundle drops out of the active list while its messages still say "pending"
        (a list taken mid-change)."""
        self.active.pop(pending_id)
        self.finals[pending_id] = FinalState(status="pending")

    def supersede(self, pending_id: str) -> None:
        """A new turn superseded the bundle: it leaves the active list, its messages keep
        "pending" and, with the inbox on, the history says ``superseded``."""
        self.vanish(pending_id)
        if self.inbox_history is not None:
            self.inbox_history[pending_id] = "superseded"

    def refuse_next(self, pending_id: str, message: str = "invalid answers") -> None:
        """Kandev answers the next submission for ``pending_id`` with a 400 (``Invalid``),
        checked before any claim."""
        self.refusals[pending_id] = message

    def fail(
        self, method: str = "*", error: Exception | None = None, *, times: int | None = None
    ) -> None:
        """Calls of ``method`` ("*": every method) raise ``error`` (``times`` times, or until
        ``recover``)."""
        self._failures[method] = _Failure(error or KandevUnavailable("Kandev is down"), times)

    def recover(self) -> None:
        self._failures.clear()

    def called(self, method: str) -> list[dict[str, Any]]:
        return [arguments for name, arguments in self.calls if name == method]

    # ---- several people, each with their own token ---------------------------------------

    def person(
        self,
        token: str,
        user: KandevUser | None,
        workspaces: Sequence[Workspace] = (),
    ) -> FakeKandev:
        """This Kandev as ``token`` shows it: ``user``'s (None: a token Kandev does not take),
        seeing ``workspaces`` (with their role's ``scopes``). Registered for ``client_for``."""
        seen = copy.copy(self)  # the same bundles, tasks, resolutions, people, revoked tokens
        seen.calls = []
        seen._failures = {}
        seen.token, seen.user = token, user
        seen.workspace_list = list(workspaces)
        if user is None:
            self.revoked.add(token)
        self.people[token] = seen
        return seen

    def client_for(self, token: str) -> FakeKandev:
        """The client of ``token`` (``Identities``' factory): the registered person's, else one
        of a token Kandev does not take."""
        self.made.append(token)
        found = self.people.get(token)
        return found if found is not None else self.person(token, None)

    def revoke(self, token: str) -> None:
        """Kandev refuses ``token`` from now on (revoked, or its user disabled)."""
        self.revoked.add(token)

    def recorded(
        self,
        task_id: str,
        pending_id: str,
        *,
        answers: list[Answer] | None = None,
        reason: str = "",
        session_id: str | None = None,
        first_sent: datetime | None = None,
    ) -> Outcome | None:
        """What Kandev recorded for a bundle, sending nothing (``KandevClient.recorded``)."""
        self._enter("recorded", task_id=task_id, pending_id=pending_id)
        if pending_id in self.active:
            return NotRecorded("Kandev shows the question still waiting for an answer")
        sent = Submission.answer(answers) if answers is not None else Submission.reject(reason)
        if pending_id in self.resolutions:
            lost = Lost(self.resolutions[pending_id])
            return settle(lost, sent, maybe_duplicate=True, first_sent=first_sent or _now())
        final = self.finals.get(pending_id)
        if final is not None and final.status in ("cancelled", "expired"):
            return NotActive(f"the question was {final.status}")
        return None

    # ---- KandevClient's interface -------------------------------------------------------

    def list_pending(
        self,
        workspace_id: str | None = None,
        created_since: datetime | None = None,
        page_size: int = 100,
    ) -> list[Bundle]:
        self._enter("list_pending", workspace_id=workspace_id, created_since=created_since)
        return [
            b
            for b in self.active.values()
            if (workspace_id is None or self._workspace_of(b.task_id) == workspace_id)
            and (created_since is None or b.created_at >= created_since)
        ]

    def list_listed(self, workspace_id: str | None = None) -> list[ListedBundle]:
        self._enter("list_listed", workspace_id=workspace_id)
        return [
            ListedBundle.of(b)
            for b in self.active.values()
            if workspace_id is None or self._workspace_of(b.task_id) == workspace_id
        ]

    def list_active(
        self,
        on_new: Callable[[list[Bundle]], None],
        known: Collection[str] = (),
        page_size: int = 100,
    ) -> ActiveList:
        """Pages of ``page_size``, as Kandev's: each page after the first is a call of its own
        (``list_active page``, which ``fail`` can make fail), and ``on_new`` is handed each
        page's new bundles as it is read."""
        self._enter("list_active", known=set(known))
        bundles = list(self.active.values())
        for start in range(0, len(bundles), max(1, page_size)):
            if start:
                self._enter("list_active page", start=start)
            page = [b for b in bundles[start : start + page_size] if b.pending_id not in known]
            if page:
                on_new(page)
        return ActiveList(
            ids=[b.pending_id for b in bundles],
            newest=max((b.created_at for b in bundles), default=None),
        )

    def answer(
        self,
        pending_id: str,
        answers: list[Answer],
        *,
        transport: str = "rest",
        resend: bool = False,
        first_sent: datetime | None = None,
    ) -> Outcome:
        self._enter("answer", pending_id=pending_id, answers=answers, transport=transport)
        sent = Submission.answer(answers)
        outcome = self._respond(pending_id, Resolution(status="answered", answers=answers))
        resend = self._ambiguous(pending_id) or resend
        return settle(outcome, sent, maybe_duplicate=resend, first_sent=first_sent or _now())

    def reject(
        self,
        pending_id: str,
        reason: str = "",
        *,
        transport: str = "rest",
        resend: bool = False,
        first_sent: datetime | None = None,
    ) -> Outcome:
        self._enter("reject", pending_id=pending_id, reason=reason, transport=transport)
        sent = Submission.reject(reason)
        outcome = self._respond(pending_id, Resolution(status="rejected", reject_reason=reason))
        resend = self._ambiguous(pending_id) or resend
        return settle(outcome, sent, maybe_duplicate=resend, first_sent=first_sent or _now())

    def final_state(
        self, task_id: str, pending_id: str, *, session_id: str | None = None
    ) -> FinalState:
        self._enter("final_state", task_id=task_id, pending_id=pending_id, session_id=session_id)
        if pending_id in self.active:
            return FinalState(status="pending")
        return self.finals.get(pending_id, FinalState(status="unknown"))

    def ended_reason(self, workspace_id: str, pending_id: str) -> str | None:
        self._enter("ended_reason", workspace_id=workspace_id, pending_id=pending_id)
        if self.inbox_history is None:
            return None
        return self.inbox_history.get(pending_id, "")

    def session_messages(
        self, session_id: str, *, limit: int = 500, page_size: int = 100
    ) -> SessionMessages:
        self._enter("session_messages", session_id=session_id, limit=limit)
        found = self.sessions.get(session_id, [])
        return SessionMessages(messages=tuple(found[-limit:]), complete=len(found) <= limit)

    def question_total(
        self, task_id: str, pending_id: str, *, session_id: str | None = None
    ) -> int:
        self._enter("question_total", task_id=task_id, pending_id=pending_id)
        bundle = self.active.get(pending_id)
        default = len(bundle.questions) if bundle is not None else 0
        return self.totals.get(pending_id, default)

    def conversation_bundle(
        self, task_id: str, pending_id: str, *, session_id: str | None = None
    ) -> Bundle | None:
        """The bundle as its conversation shows it: every question written (``totals`` may
        say more are coming: None), each with its status (a decided bundle's, once decided)."""
        self._enter("conversation_bundle", task_id=task_id, pending_id=pending_id)
        bundle = self.bundles.get(pending_id)
        if task_id not in self.tasks or bundle is None or bundle.task_id != task_id:
            return None
        if self.totals.get(pending_id, len(bundle.questions)) > len(bundle.questions):
            return None
        final = self.finals.get(pending_id)
        if pending_id in self.active or final is None or final.status == "pending":
            return bundle
        questions = [q.model_copy(update={"status": final.status}) for q in bundle.questions]
        return bundle.model_copy(update={"questions": questions})

    def task(self, task_id: str) -> Task:
        self._enter("task", task_id=task_id)
        if task_id not in self.tasks:
            raise KandevNotFoundError("NOT_FOUND", f"task {task_id} not found")
        return self.tasks[task_id]

    def workspaces(self) -> list[Workspace]:
        self._enter("workspaces")
        return list(self.workspace_list)

    def assign(self, task_id: str, kandev_user_id: str) -> None:
        """Someone set the task's assignee in Kandev ("": unassigned)."""
        task = self.tasks[task_id]
        self.tasks[task_id] = task.model_copy(update={"assignee_user_id": kandev_user_id})

    def names(self) -> dict[str, str] | str:
        try:
            self._enter("names")
        except KandevAuthError:
            return "refused"
        except KandevError:
            return "unreachable"
        return dict(self.users)

    # The token's owner (a person's own client; ``fail("access", KandevAuthError(...))``…):
    # failures as the client's kinds.

    def account(self) -> KandevUser | Literal["refused", "unreachable"]:
        try:
            self._enter("account")
        except KandevAuthError:
            return "refused"
        except KandevError:
            return "unreachable"
        return self.user if self.user is not None else self.bot_user

    def member_account(self) -> KandevUser | None:
        """``user`` (set it for a Kandev with auth on)."""
        found = self.account()
        return None if isinstance(found, str) or self.user is None else found

    def access(self) -> dict[str, Workspace] | Literal["refused", "unreachable"]:
        try:
            self._enter("access")
        except KandevAuthError:
            return "refused"
        except KandevError:
            return "unreachable"
        return {w.id: w for w in self.workspace_list}

    def hidden_in_inbox(self, workspace_id: str) -> frozenset[str] | Literal["refused", "failed"]:
        try:
            self._enter("hidden_in_inbox", workspace_id=workspace_id)
        except KandevAuthError:
            return "refused"
        except KandevError:
            return "failed"
        return frozenset(p for p in self.inbox if self._in_workspace(p, workspace_id))

    def hide_in_inbox(
        self, pending_id: str, *, snooze: str | None
    ) -> Literal["done", "refused", "failed"]:
        return self._inbox_change("hide_in_inbox", pending_id, snooze or "dismissed")

    def show_in_inbox(self, pending_id: str) -> Literal["done", "refused", "failed"]:
        return self._inbox_change("show_in_inbox", pending_id, None)

    def _inbox_change(
        self, method: str, pending_id: str, state: str | None
    ) -> Literal["done", "refused", "failed"]:
        try:
            self._enter(method, pending_id=pending_id, state=state)
        except KandevAuthError:
            return "refused"
        except KandevError:
            return "failed"
        if state is None:
            self.inbox.pop(pending_id, None)
        else:
            self.inbox[pending_id] = state
        return "done"

    def _in_workspace(self, pending_id: str, workspace_id: str) -> bool:
        """A bundle this fake lists is in its task's workspace; one it does not (a person's
        own client, arranged by hand) counts in every workspace."""
        bundle = self.active.get(pending_id)
        return bundle is None or self._workspace_of(bundle.task_id) == workspace_id

    def assignee(self, task_id: str) -> str | None:
        try:
            return self.task(task_id).assignee_user_id
        except KandevError:
            return None

    def close(self) -> None:
        self.calls.append(("close", {}))  # closing never asks Kandev anything

    # ---- internals ---------------------------------------------------------------------

    def _enter(self, method: str, **arguments: Any) -> None:
        self.calls.append((method, arguments))
        if self.token and self.token in self.revoked:
            raise KandevAuthError("authentication required")
        for key in (method, "*"):
            failure = self._failures.get(key)
            if failure is None:
                continue
            if failure.times is not None:
                failure.times -= 1
                if failure.times <= 0:
                    del self._failures[key]
            raise failure.error

    def _workspace_of(self, task_id: str) -> str | None:
        task = self.tasks.get(task_id)
        return task.workspace_id if task is not None else None

    def _respond(self, pending_id: str, resolution: Resolution) -> Outcome:
        bundle = self.bundles.get(pending_id)
        seen = {w.id for w in self.workspace_list}
        if self.token and (bundle is None or self._workspace_of(bundle.task_id) not in seen):
            return NotFound("clarification request not found")  # not this token's to see
        if pending_id in self.refusals:
            return Invalid(self.refusals.pop(pending_id))
        if pending_id in self.resolutions:
            return Lost(self.resolutions[pending_id])
        if pending_id in self.finals and self.finals[pending_id].status != "pending":
            return NotActive(f"clarification {pending_id} is no longer active")
        if pending_id not in self.active:
            return NotFound(f"clarification {pending_id} not found")
        return Won(self._claim(pending_id, resolution))

    def _ambiguous(self, pending_id: str) -> bool:
        if pending_id in self.ambiguous:
            self.ambiguous.discard(pending_id)
            return True
        return False

    def _claim(
        self, pending_id: str, resolution: Resolution, *, at: datetime | None = None
    ) -> Resolution:
        """Kandev records the winner, with the time (``responded_at``) it did."""
        resolution = resolution.model_copy(update={"responded_at": at or _now()})
        self.active.pop(pending_id)
        self.resolutions[pending_id] = resolution
        self.finals[pending_id] = FinalState(status=resolution.status, answers=resolution.answers)
        return resolution


# ---- Slack ----------------------------------------------------------------------------------


#: The app's own team, as the fake gateway's auth.test would name it.
OWN_TEAM = "T0FAKETEAM"


@dataclass(frozen=True)
class GatewayCall:
    """One call through the gateway, named like the Slack method it stands for."""

    method: str
    params: dict[str, Any]


class FakeSlackGateway:
    """An in-memory ``SlackGateway``: records every call in ``calls``, keeps the cards it
    posted (``cards``: (channel, ts) -> (message, pending id)), returns increasing ts values
    and view ids. ``fail(method, error)`` makes the next call(s) of a Slack method
    ("chat.postMessage", "chat.update", "chat.postEphemeral", "response_url", "views.open",
    "views.publish", …) raise the gateway's ``SlackError``; ``slow(method, seconds)`` makes
    every call of it take that long."""

    def __init__(self) -> None:
        self.calls: list[GatewayCall] = []
        self.cards: dict[tuple[str, str], tuple[Message, str]] = {}
        #: Thread replies: (channel, ts) -> (thread_ts, key, text).
        self.replies: dict[tuple[str, str], tuple[str, str, str]] = {}
        #: A card posted in a thread: its thread (channel, ts) -> thread_ts.
        self.threaded: dict[tuple[str, str], str] = {}
        self.groups: dict[str, frozenset[str]] = {}
        #: Private channels and their members (any other channel is public).
        self.private_channels: dict[str, frozenset[str]] = {}
        #: People's names (users.info); anyone else has none.
        self.names: dict[str, str] = {}
        #: Members of public channels (a channel listed in neither has every user as member).
        self.public_members: dict[str, frozenset[str]] = {}
        #: People of another organisation (Slack Connect): user id -> their team id.
        self.other_organisations: dict[str, str] = {}
        #: People's time zones (users.info → tz); anyone else has none.
        self.zones: dict[str, str] = {}
        #: Messages that are not cards (digests): (channel, ts) -> message.
        self.messages: dict[tuple[str, str], Message] = {}
        self._failures: dict[str, list[SlackError]] = {}
        self._delays: dict[str, float] = {}
        self._serial = 0

    # ---- arranging and reading ------------------------------------------------------------

    def fail(
        self,
        method: str,
        error: str = "internal_error",
        *,
        retry_after: float | None = None,
        times: int = 1,
    ) -> None:
        failures = self._failures.setdefault(method, [])
        failures.extend(SlackError(method, error, retry_after=retry_after) for _ in range(times))

    def slow(self, method: str, seconds: float) -> None:
        self._delays[method] = seconds

    def called(self, method: str) -> list[dict[str, Any]]:
        return [call.params for call in self.calls if call.method == method]

    def card_of(self, pending_id: str) -> tuple[str, str, Message] | None:
        """(channel, ts, current message) of the card posted for ``pending_id``."""
        for (channel, ts), (message, pid) in self.cards.items():
            if pid == pending_id:
                return channel, ts, message
        return None

    # ---- SlackGateway's interface ----------------------------------------------------------

    def post_card(
        self, channel: str, message: Message, pending_id: str, thread_ts: str | None = None
    ) -> str:
        self._enter(
            "chat.postMessage",
            channel=channel,
            message=message,
            pending_id=pending_id,
            thread_ts=thread_ts,
        )
        ts = f"1700000000.{self._next():06d}"
        self.cards[(channel, ts)] = (message, pending_id)
        if thread_ts:
            self.threaded[(channel, ts)] = thread_ts
        return ts

    def post_notice(self, channel: str, message: Message) -> str:
        self._enter("chat.postMessage", channel=channel, message=message)
        ts = f"1700000000.{self._next():06d}"
        self.messages[(channel, ts)] = message
        return ts

    def update_notice(self, channel: str, ts: str, message: Message) -> None:
        self._enter("chat.update", channel=channel, ts=ts, message=message)
        self.messages[(channel, ts)] = message

    def update_card(self, channel: str, ts: str, message: Message, pending_id: str) -> None:
        self._enter("chat.update", channel=channel, ts=ts, message=message, pending_id=pending_id)
        if (channel, ts) not in self.cards:
            raise SlackError("chat.update", "message_not_found")
        self.cards[(channel, ts)] = (message, pending_id)

    def delete_message(self, channel: str, ts: str) -> None:
        self._enter("chat.delete", channel=channel, ts=ts)
        if self.cards.pop((channel, ts), None) is None:
            raise SlackError("chat.delete", "message_not_found")

    def find_card(
        self, channel: str, pending_id: str, oldest: float, *, thread_ts: str | None = None
    ) -> str | None:
        method = "conversations.replies" if thread_ts else "conversations.history"
        self._enter(method, channel=channel, pending_id=pending_id)
        return next(
            (
                ts
                for (ch, ts), (_message, pid) in self.cards.items()
                if ch == channel
                and pid == pending_id
                and float(ts) >= oldest
                and self.threaded.get((ch, ts)) == thread_ts
            ),
            None,
        )

    def cards_in(self, channel: str, oldest: float) -> dict[str, str]:
        self._enter("conversations.history", channel=channel)
        return {
            pid: ts
            for (ch, ts), (_message, pid) in sorted(self.cards.items())  # the newest wins
            if ch == channel and float(ts) >= oldest
        }

    def post_reply(self, channel: str, thread_ts: str, text: str, pending_id: str, key: str) -> str:
        self._enter(
            "chat.postMessage:reply",
            channel=channel,
            thread_ts=thread_ts,
            text=text,
            pending_id=pending_id,
            key=key,
        )
        ts = f"1700000000.{self._next():06d}"
        self.replies[(channel, ts)] = (thread_ts, key, text)
        return ts

    def find_reply(self, channel: str, thread_ts: str, key: str) -> str | None:
        self._enter("conversations.replies", channel=channel, ts=thread_ts, key=key)
        return next(
            (
                ts
                for (ch, ts), (thread, k, _text) in self.replies.items()
                if ch == channel and thread == thread_ts and k == key
            ),
            None,
        )

    def open_dm(self, user_id: str) -> str:
        self._enter("conversations.open", users=user_id)
        return "D" + user_id[1:]

    def post_ephemeral(
        self,
        channel: str,
        user: str,
        text: str,
        blocks: list | None = None,
        *,
        thread_ts: str | None = None,
    ) -> None:
        params: dict[str, Any] = {"channel": channel, "user": user, "text": text, "blocks": blocks}
        if thread_ts:
            params["thread_ts"] = thread_ts
        self._enter("chat.postEphemeral", **params)

    def respond(
        self,
        response_url: str,
        text: str,
        blocks: list | None = None,
        *,
        replace_original: bool = False,
        delete_original: bool = False,
    ) -> None:
        params: dict[str, Any] = {"delete_original": True} if delete_original else {}
        self._enter(
            "response_url",
            response_url=response_url,
            text=text,
            blocks=blocks,
            replace_original=replace_original,
            **params,
        )

    def permalink(self, channel: str, ts: str, *, strict: bool = False) -> str | None:
        """As the gateway does: None (not an error) when Slack cannot say; ``strict``: raised
        when Slack may say later (a rate limit, a transient error)."""
        try:
            self._enter("chat.getPermalink", channel=channel, message_ts=ts)
        except SlackError as exc:
            if strict and exc.transient:
                raise
            return None
        return f"https://fake.slack.com/archives/{channel}/p{ts.replace('.', '')}"

    def open_view(self, trigger_id: str, view: dict) -> str:
        self._enter("views.open", trigger_id=trigger_id, view=view)
        return f"V{self._next():08d}"

    def push_view(self, trigger_id: str, view: dict) -> str:
        self._enter("views.push", trigger_id=trigger_id, view=view)
        return f"V{self._next():08d}"

    def update_view(self, view_id: str, view: dict) -> None:
        self._enter("views.update", view_id=view_id, view=view)

    def publish_home(self, user_id: str, view: dict) -> None:
        self._enter("views.publish", user_id=user_id, view=view)

    def group_members(self, group_id: str) -> frozenset[str]:
        self._enter("usergroups.users.list", usergroup=group_id)
        return self.groups.get(group_id, frozenset())

    def user_name(self, user_id: str) -> str | None:
        self._enter("users.info", user=user_id)
        return self.names.get(user_id)

    def user_tz(self, user_id: str) -> str | None:
        self._enter("users.info", user=user_id)
        return self.zones.get(user_id)

    def channel_is_private(self, channel: str) -> bool:
        self._enter("conversations.info", channel=channel)
        return channel in self.private_channels

    def channel_members(self, channel: str) -> frozenset[str]:
        self._enter("conversations.members", channel=channel)
        return self.private_channels.get(channel, frozenset())

    def is_channel_member(self, channel: str, user_id: str) -> bool:
        self._enter("conversations.members", channel=channel)
        listed = self.private_channels.get(channel, self.public_members.get(channel))
        return listed is None or user_id in listed

    def of_own_organisation(self, user_id: str) -> bool:
        self._enter("users.info", user=user_id)
        return user_id not in self.other_organisations

    def own_organisation(self) -> tuple[str, str | None]:
        return OWN_TEAM, None

    # ---- internals ---------------------------------------------------------------------

    def _enter(self, method: str, **params: Any) -> None:
        self.calls.append(GatewayCall(method, params))
        if method in self._delays:
            time.sleep(self._delays[method])
        failures = self._failures.get(method)
        if failures:
            raise failures.pop(0)

    def _next(self) -> int:
        self._serial += 1
        return self._serial
