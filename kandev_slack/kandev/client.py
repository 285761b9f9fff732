"""KandevClient: the one object the app uses to talk to Kandev (thread-safe, closable)."""

from __future__ import annotations

import logging
from collections.abc import Callable, Collection, Iterator
from datetime import UTC, datetime
from typing import Any, Literal, Unpack
from urllib.parse import quote

import httpx

from kandev_slack.core.clarification import Answer, Bundle, ListedBundle
from kandev_slack.kandev import conversation, respond
from kandev_slack.kandev.approvals.client import PermissionsClient
from kandev_slack.kandev.cache import TtlCache
from kandev_slack.kandev.errors import (
    KandevAuthError,
    KandevError,
    KandevNotFoundError,
    KandevProtocolError,
)
from kandev_slack.kandev.http import HttpOptions, KandevHttp
from kandev_slack.kandev.mcp.session import McpSession
from kandev_slack.kandev.models import (
    ActiveList,
    FinalState,
    KandevUser,
    Lost,
    NotActive,
    NotRecorded,
    Outcome,
    ProbeResult,
    Resolution,
    SessionMessage,
    SessionMessages,
    Task,
    UserNames,
    Workspace,
)
from kandev_slack.kandev.probe import probe
from kandev_slack.kandev.replies import (
    HiddenList,
    InboxHistory,
    MessagePage,
    RawPendingPage,
    WorkspaceList,
    created_at_of,
    json_200,
    rfc3339,
    validate,
    validated_200,
)

log = logging.getLogger(__name__)

Transport = Literal["rest", "mcp"]

LIST_PENDING_TOOL = "list_pending_questions_kandev"
ANSWER_TOOL = "answer_question_kandev"
CONVERSATION_TOOL = "get_task_conversation_kandev"
#: The Needs-you inbox history (only with KANDEV_FEATURES_NEEDS_YOU_INBOX=true).
HISTORY_PATH = "/api/v1/clarification-inbox/history"
INBOX_PATH = "/api/v1/clarification-inbox"
SIDECAR_PATH = "/api/v1/clarification-inbox/sidecar"
#: Kandev's accounts (an admin's list; members read ``…/directory``).
USERS_PATH = "/api/v1/users"
MAX_PAGE_SIZE = 200

#: A Needs-you inbox call's failure: ``refused`` (401: the token is dead), ``failed`` (else).
InboxFailure = Literal["refused", "failed"]
#: How a change of a person's Needs-you inbox went.
InboxChange = Literal["done", "refused", "failed"]


class KandevClient:
    """Reads pending bundles, answers them (REST or MCP), and looks up how they ended.

    Raises :class:`~kandev_slack.kandev.errors.KandevUnavailable` when Kandev cannot be reached
    after
    bounded retries and :class:`~kandev_slack.kandev.errors.KandevAuthError` on a 401.
    """

    def __init__(
        self,
        base_url: str,
        token: str | None = None,
        *,
        cache_ttl: float = 45.0,
        conversation_page_size: int = 100,
        conversation_max_pages: int = 50,
        tasks_page_size: int = 100,
        **http: Unpack[HttpOptions],
    ):
        self._http = KandevHttp(base_url, token, **http)
        self._mcp = McpSession(self._http)
        self._tasks: TtlCache[Task] = TtlCache(cache_ttl)
        self._workspaces: TtlCache[list[Workspace]] = TtlCache(cache_ttl)
        self._conversation_page_size = conversation_page_size
        self._conversation_max_pages = conversation_max_pages
        #: Agent tool-permission requests (list, resolve, read back), on the same transport.
        #: ``tasks_page_size``: tasks per page when a workspace's tasks are read (the sweep).
        self.permissions = PermissionsClient(self._http, self._mcp, tasks_page_size=tasks_page_size)

    @property
    def base_url(self) -> str:
        return self._http.base_url

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> KandevClient:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # ---- discovery -----------------------------------------------------------------

    def list_pending(
        self,
        workspace_id: str | None = None,
        created_since: datetime | None = None,
        page_size: int = MAX_PAGE_SIZE,
    ) -> list[Bundle]:
        """Every active bundle (oldest first), following ``next_cursor`` across all pages."""
        arguments: dict[str, Any] = {"limit": max(1, min(page_size, MAX_PAGE_SIZE))}
        if workspace_id:
            arguments["workspace_id"] = workspace_id
        if created_since is not None:
            arguments["created_since"] = rfc3339(created_since)
        return list(self._bundles(arguments))

    def list_listed(self, workspace_id: str | None = None) -> list[ListedBundle]:
        """Every active bundle, like :meth:`list_pending`, each validated but kept undecoded
        for a view of the whole list (:class:`ListedBundle`)."""
        arguments: dict[str, Any] = {"limit": MAX_PAGE_SIZE}
        if workspace_id:
            arguments["workspace_id"] = workspace_id
        return [ListedBundle.of(bundle) for bundle in self._bundles(arguments)]

    def _bundles(self, arguments: dict[str, Any]) -> Iterator[Bundle]:
        """The list tool's bundles, page after page, each validated (``arguments`` is used up).
        Bundle by bundle, not a page at once: validating a page of 200 is one call that holds
        the interpreter for ~12 ms, and a command's ack waiting on another thread would wait."""
        for data in self._pages(arguments):
            for raw in validate(RawPendingPage, data).bundles:
                yield validate(Bundle, raw)

    def list_active(
        self,
        on_new: Callable[[list[Bundle]], None],
        known: Collection[str] = (),
        page_size: int = MAX_PAGE_SIZE,
    ) -> ActiveList:
        """The whole active list, like :meth:`list_pending`, decoding in full only the
        bundles whose pending id is not in ``known`` (a poll with many bundles waiting decodes
        just the new ones). Any bundle without a pending id or a creation time is refused.

        ``on_new`` is handed each page's new bundles as soon as that page is read (a page with
        none is not handed over): a process that starts with 1,000 waiting posts the first
        page's while Kandev serves the rest, instead of after the whole list, and never holds
        every decoded bundle at once."""
        arguments: dict[str, Any] = {"limit": max(1, min(page_size, MAX_PAGE_SIZE))}
        ids: list[str] = []
        newest: datetime | None = None
        for data in self._pages(arguments):
            page: list[Bundle] = []
            for raw in validate(RawPendingPage, data).bundles:
                pending_id, created_at = raw.get("pending_id"), raw.get("created_at")
                if not isinstance(pending_id, str) or not pending_id:
                    raise KandevProtocolError(f"{LIST_PENDING_TOOL}: a bundle without pending_id")
                if pending_id in known:
                    created = created_at_of(created_at, LIST_PENDING_TOOL)
                else:
                    bundle = validate(Bundle, raw)
                    page.append(bundle)
                    created = bundle.created_at
                ids.append(pending_id)
                newest = created if newest is None or created > newest else newest
            if page:
                on_new(page)
        return ActiveList(ids=ids, newest=newest)

    def _pages(self, arguments: dict[str, Any]) -> Iterator[Any]:
        """The list tool's pages (JSON), following ``next_cursor`` (``arguments`` is used up)."""
        seen_cursors: set[str] = set()
        while True:
            data = self._mcp.call_tool_json(LIST_PENDING_TOOL, arguments)
            yield data
            cursor = data.get("next_cursor") if isinstance(data, dict) else None
            if not isinstance(cursor, str) or not cursor:
                return
            if cursor in seen_cursors:
                raise KandevProtocolError(f"{LIST_PENDING_TOOL} repeated cursor {cursor}")
            seen_cursors.add(cursor)
            arguments["cursor"] = cursor

    # ---- answering -----------------------------------------------------------------

    def answer(
        self,
        pending_id: str,
        answers: list[Answer],
        *,
        transport: Transport = "rest",
        resend: bool = False,
        first_sent: datetime | None = None,
    ) -> Outcome:
        """Answer every question of a bundle (one :class:`Answer` per question).

        ``resend``: this very answer may have reached Kandev before (a process died while
        sending it), so a ``Lost`` to exactly this content may be that earlier attempt: it is
        decided from Kandev's ``responded_at`` against ``first_sent``, when the submission was
        first sent (default: now), see :func:`respond.settle`.
        """
        submission = respond.Submission.answer(answers)
        return self._submit(pending_id, submission, transport, resend, first_sent)

    def reject(
        self,
        pending_id: str,
        reason: str = "",
        *,
        transport: Transport = "rest",
        resend: bool = False,
        first_sent: datetime | None = None,
    ) -> Outcome:
        """Reject a whole bundle (Kandev hands ``reason`` to the agent; it is not stored).

        ``resend``, ``first_sent``: as for :meth:`answer`.
        """
        submission = respond.Submission.reject(reason)
        return self._submit(pending_id, submission, transport, resend, first_sent)

    def _submit(
        self,
        pending_id: str,
        submission: respond.Submission,
        transport: Transport,
        resend: bool,
        first_sent: datetime | None,
    ) -> Outcome:
        """Every reply becomes an Outcome (see respond.py); no reply at all raises
        KandevUnavailable (it surely did not reach Kandev), KandevUnconfirmed (it may have) or
        KandevAuthError."""
        first_sent = first_sent or datetime.now(UTC)
        if transport == "rest":
            exchange = self._http.request(
                "POST",
                f"/api/v1/clarification/{quote(pending_id, safe='')}/respond",
                json=submission.rest_body(),
            )
            outcome = respond.outcome_of_reply(
                exchange.response.status_code,
                exchange.response.text,
                retry_after=exchange.retry_after,
            )
            maybe_duplicate = exchange.maybe_duplicate
        elif transport == "mcp":
            result = self._mcp.call_tool(ANSWER_TOOL, submission.tool_arguments(pending_id))
            outcome = respond.outcome_of_tool(result)
            maybe_duplicate = result.maybe_duplicate
        else:
            raise ValueError(f"unknown transport {transport!r} (use 'rest' or 'mcp')")
        return respond.settle(
            outcome, submission, maybe_duplicate=maybe_duplicate or resend, first_sent=first_sent
        )

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
        """What Kandev recorded for a bundle, read from its conversation (nothing is sent), as
        the outcome a submission of ``answers`` (None: a rejection with ``reason``) gets:
        still pending → NotRecorded; answered/rejected otherwise → Lost; answered/rejected like
        it → decided by when Kandev recorded it against ``first_sent`` (see
        :func:`respond.settle`: Won, Lost, or an uncertain Lost when that cannot be told);
        cancelled/expired → NotActive. None when the conversation does not tell.

        Only meaningful once Kandev is done with every attempt (it replied, or the attempts
        are long past): an answer still being processed reads as pending."""
        state = self.final_state(task_id, pending_id, session_id=session_id)
        submission = (
            respond.Submission.reject(reason)
            if answers is None
            else respond.Submission.answer(answers)
        )
        match state.status:
            case "pending":
                return NotRecorded("Kandev shows the question still waiting for an answer")
            case "answered" | "rejected":
                resolution = Resolution(
                    status=state.status, answers=state.answers, responded_at=state.responded_at
                )
                lost = Lost(resolution)
                return respond.settle(lost, submission, maybe_duplicate=True, first_sent=first_sent)
            case "cancelled" | "expired":
                return NotActive(f"the question was {state.status}")
        return None

    # ---- after the fact -------------------------------------------------------------

    def final_state(
        self, task_id: str, pending_id: str, *, session_id: str | None = None
    ) -> FinalState:
        """How a bundle ended, from its task's clarification messages (newest pages first).

        Without ``session_id`` Kandev reads the task's primary (else latest) session, which may
        be newer than the bundle's: pass the bundle's own. Only a definite not-found (an unknown
        task, a conversation read to its start without the bundle) gives status ``unknown``; a
        reply that cannot be read (a tool error, a malformed or invalid page) raises a
        :class:`~kandev_slack.kandev.errors.KandevError`: try again later, it is not an answer.
        """
        found = self._bundle_meta(task_id, pending_id, session_id, whole=True)
        return (
            conversation.final_state(found) if found is not None else FinalState(status="unknown")
        )

    def ended_reason(self, workspace_id: str, pending_id: str) -> str | None:
        """Why an unanswered bundle left the active list, from the Needs-you inbox history:
        ``superseded`` (a new turn started), ``session_ended``…, ``""`` when the history does
        not hold it (answered, rejected, cancelled by an operator, or not there yet), None when
        Kandev runs without the inbox (``KANDEV_FEATURES_NEEDS_YOU_INBOX`` off: the route is a
        404). A reply that cannot be read raises a
        :class:`~kandev_slack.kandev.errors.KandevError`."""
        response = self._http.request(
            "GET", HISTORY_PATH, params={"workspace_id": workspace_id}
        ).response
        if response.status_code == 404:
            return None
        history = validated_200(InboxHistory, response)
        return next(
            (
                row.reason
                for row in history.bundles
                if row.pending_id == pending_id and row.kind == "clarification"
            ),
            "",
        )

    def question_total(
        self, task_id: str, pending_id: str, *, session_id: str | None = None
    ) -> int:
        """How many questions the bundle has in all (0 when its messages are not found).

        Kandev writes a bundle's questions one by one, so for a few milliseconds the active list
        can show a bundle with only some of them; compare with this before posting it.
        """
        found = self._bundle_meta(task_id, pending_id, session_id) or []
        return max((md.question_total for md in found), default=0)

    def conversation_bundle(
        self, task_id: str, pending_id: str, *, session_id: str | None = None
    ) -> Bundle | None:
        """The bundle as its task's conversation shows it, with each question's status (None:
        not every question of it is written yet, or no such task): what a push hint names is
        read this way, one session's newest messages, whatever else waits — a read of the
        active list costs Kandev in proportion to every bundle waiting."""
        found = self._bundle_meta(task_id, pending_id, session_id) or []
        return conversation.as_bundle(found, task_id)

    def _bundle_meta(
        self, task_id: str, pending_id: str, session_id: str | None, *, whole: bool = False
    ) -> list[conversation.ClarificationMeta] | None:
        """The clarification metadata of one bundle's questions (None: unknown task).
        ``whole``: not finding the bundle in the pages read must mean it is not there (else
        KandevProtocolError: the conversation is longer than the pages the bot reads)."""
        arguments: dict[str, Any] = {
            "task_id": task_id,
            "message_types": [conversation.CLARIFICATION_TYPE],
            "sort": "desc",
            "limit": self._conversation_page_size,
        }
        if session_id:
            arguments["session_id"] = session_id
        found: list[conversation.ClarificationMeta] = []
        for _ in range(self._conversation_max_pages):
            try:
                data = self._mcp.call_tool_json(CONVERSATION_TOOL, arguments)
            except KandevNotFoundError:
                return None
            page = validate(conversation.ConversationPage, data)
            found.extend(conversation.bundle_messages(page.messages, pending_id))
            if conversation.is_complete(found) or not page.has_more or not page.cursor:
                return found
            arguments["before"] = page.cursor
        if found or not whole:
            return found
        # Not "not found": the pages the bot reads ended before the conversation did.
        raise KandevProtocolError(
            f"{CONVERSATION_TOOL}: {pending_id} not in the last "
            f"{self._conversation_max_pages} pages"
        )

    # ---- a session's messages ---------------------------------------------------------

    def session_messages(
        self, session_id: str, *, limit: int = 500, page_size: int = 100
    ) -> SessionMessages:
        """The last ``limit`` messages of a session, oldest first (newest pages are read first,
        following Kandev's cursor). An unknown or deleted session has no messages."""
        path = f"/api/v1/task-sessions/{quote(session_id, safe='')}/messages"
        params: dict[str, Any] = {"sort": "desc", "limit": max(1, min(page_size, limit))}
        newest_first: list[SessionMessage] = []
        seen: set[str] = set()
        while True:
            response = self._http.request("GET", path, params=params).response
            if response.status_code == 404:
                return SessionMessages()
            page = validated_200(MessagePage, response)
            newest_first.extend(page.messages)
            if not page.has_more or not page.cursor:
                complete = True
                break
            if len(newest_first) >= limit:
                complete = False
                break
            if page.cursor in seen:
                raise KandevProtocolError(f"session messages repeated cursor {page.cursor}")
            seen.add(page.cursor)
            params["before"] = page.cursor
        kept = newest_first[:limit]
        complete = complete and len(kept) == len(newest_first)
        return SessionMessages(messages=tuple(reversed(kept)), complete=complete)

    # ---- lookups (cached) ------------------------------------------------------------

    def task(self, task_id: str) -> Task:
        """The task (title, workspace id); cached for ``cache_ttl`` seconds."""
        return self._tasks.get_or_load(task_id, lambda: self._load_task(task_id))

    def workspaces(self) -> list[Workspace]:
        """Every workspace visible to the token; cached for ``cache_ttl`` seconds."""
        return list(self._workspaces.get_or_load("all", self._load_workspaces))

    def _load_task(self, task_id: str) -> Task:
        response = self._http.request("GET", f"/api/v1/tasks/{quote(task_id, safe='')}").response
        if response.status_code == 404:
            raise KandevNotFoundError("NOT_FOUND", f"task {task_id} not found")
        return validated_200(Task, response)

    # ---- the token's owner (people's own tokens) -------------------------------------

    def me(self) -> KandevUser | None:
        """Whose token this is (``GET /api/v1/auth/me``): None when Kandev does not take it
        (revoked, expired, its user disabled: Kandev answers 200 ``authenticated:false``, not
        401). Raises :class:`~kandev_slack.kandev.errors.KandevUnavailable` when Kandev cannot
        be reached."""
        data = self._me()
        if data is None or data.get("authenticated") is not True:
            return None
        return validate(KandevUser, data.get("user"))

    def member_account(self) -> KandevUser | None:
        """The token's own Kandev account when Kandev has accounts (auth on: ``mode``
        ``enabled``), whose workspaces are private to their members; None with auth off
        (every caller is Kandev's one default user, who sees everything), when Kandev does not
        take the token, or cannot be asked."""
        try:
            data = self._me()
        except KandevError as exc:
            log.warning("could not ask Kandev whose token this is: %s", exc.__class__.__name__)
            return None
        if data is None or data.get("mode") != "enabled" or data.get("authenticated") is not True:
            return None
        return validate(KandevUser, data.get("user"))

    def _me(self) -> dict[str, Any] | None:
        """``GET /api/v1/auth/me`` (None: 401, or not an object)."""
        response = self._http.request("GET", "/api/v1/auth/me", call="auth.me").response
        if response.status_code == 401:
            return None
        data = json_200(response)
        return data if isinstance(data, dict) else None

    def account(self) -> KandevUser | Literal["refused", "unreachable"]:
        """:meth:`me`, its failures as kinds: ``refused`` (Kandev does not take the token),
        ``unreachable`` (Kandev could not be asked)."""
        try:
            user = self.me()
        except KandevAuthError:
            return "refused"
        except KandevError as exc:
            log.warning("could not ask Kandev whose token this is: %s", exc.__class__.__name__)
            return "unreachable"
        return "refused" if user is None else user

    def access(self) -> dict[str, Workspace] | Literal["refused", "unreachable"]:
        """The workspaces this token sees, by id, with its role there, read from Kandev now
        (not :meth:`workspaces`' cached list: the caller keeps it for as long as it means to,
        and a member removed from a workspace must stop deciding there when that ends), its
        failures as kinds (see :meth:`account`)."""
        try:
            return {w.id: w for w in self._load_workspaces()}
        except KandevAuthError:
            return "refused"
        except KandevError as exc:
            log.warning("could not read a token's Kandev workspaces: %s", exc.__class__.__name__)
            return "unreachable"

    def user_names(self) -> dict[str, str]:
        """Every Kandev account this token may name, by id: its display name ("" when it has
        none). An admin's token lists every user (``GET /api/v1/users``); anyone else's is
        refused there (403) and reads the directory members see (``GET
        /api/v1/users/directory``: ids and display names). Raises a
        :class:`~kandev_slack.kandev.errors.KandevError` when neither answers a list."""
        response = self._http.request("GET", USERS_PATH, call="users").response
        if response.status_code == 403:
            response = self._http.request("GET", f"{USERS_PATH}/directory", call="users").response
        users = validated_200(UserNames, response).users
        return {user.id: user.display_name for user in users}

    def names(self) -> dict[str, str] | Literal["refused", "unreachable"]:
        """:meth:`user_names`, its failures as kinds (see :meth:`account`)."""
        try:
            return self.user_names()
        except KandevAuthError:
            return "refused"
        except KandevError as exc:
            log.warning("could not read Kandev's user names: %s", exc.__class__.__name__)
            return "unreachable"

    def assignee(self, task_id: str) -> str | None:
        """The task's human assignee (a Kandev user id, "" when unset), read with :meth:`task`
        (cached); None when Kandev cannot say."""
        try:
            return self.task(task_id).assignee_user_id
        except KandevError as exc:
            log.warning("task %s not readable for its assignee: %s", task_id, exc)
            return None

    def inbox_hide(self, pending_id: str, *, snooze: str | None) -> None:
        """Hide a bundle in this token's owner's Needs-you inbox: snoozed for ``snooze``
        ("1h", "4h", "24h"), else dismissed (``PUT …/clarification-inbox/sidecar/{id}``)."""
        body = {"state": "snoozed", "snooze_duration": snooze} if snooze else {"state": "dismissed"}
        response = self._http.request(
            "PUT", f"{SIDECAR_PATH}/{quote(pending_id, safe='')}", json=body, call="inbox.sidecar"
        ).response
        _no_content(response)

    def inbox_show(self, pending_id: str) -> None:
        """Undo :meth:`inbox_hide` (idempotent)."""
        response = self._http.request(
            "DELETE", f"{SIDECAR_PATH}/{quote(pending_id, safe='')}", call="inbox.sidecar"
        ).response
        _no_content(response)

    def inbox_hidden(self, workspace_id: str) -> frozenset[str]:
        """The bundles this token's owner snoozed or dismissed in the workspace's Needs-you
        inbox (``GET /api/v1/clarification-inbox/hidden``)."""
        response = self._http.request(
            "GET", f"{INBOX_PATH}/hidden", params={"workspace_id": workspace_id}, call="inbox"
        ).response
        return frozenset(validated_200(HiddenList, response).ids())

    def hide_in_inbox(self, pending_id: str, *, snooze: str | None) -> InboxChange:
        """:meth:`inbox_hide`, its failures as kinds: ``refused`` (Kandev does not take the
        token: 401), ``failed`` (anything else: unreachable, the inbox off, a bundle this
        token cannot see)."""
        return self._inbox_change(lambda: self.inbox_hide(pending_id, snooze=snooze))

    def show_in_inbox(self, pending_id: str) -> InboxChange:
        """:meth:`inbox_show`, its failures as kinds (see :meth:`hide_in_inbox`)."""
        return self._inbox_change(lambda: self.inbox_show(pending_id))

    def hidden_in_inbox(self, workspace_id: str) -> frozenset[str] | InboxFailure:
        """:meth:`inbox_hidden`, its failures as kinds (see :meth:`hide_in_inbox`)."""
        try:
            return self.inbox_hidden(workspace_id)
        except KandevAuthError:
            return "refused"
        except KandevError as exc:
            log.warning("could not read a Needs-you inbox's hidden items: %s", _failure(exc))
            return "failed"

    def _inbox_change(self, change: Callable[[], None]) -> InboxChange:
        try:
            change()
        except KandevAuthError:
            return "refused"
        except KandevError as exc:
            log.warning("could not change a Needs-you inbox: %s", _failure(exc))
            return "failed"
        return "done"

    def _load_workspaces(self) -> list[Workspace]:
        response = self._http.request("GET", "/api/v1/workspaces").response
        return validated_200(WorkspaceList, response).workspaces

    # ---- health ----------------------------------------------------------------------

    def probe(self, *, timeout: float = 5.0) -> ProbeResult:
        """Reachable? ready? token accepted (REST and MCP)? version? — see ``probe.py``."""
        return probe(self._http, McpSession(self._http), timeout=timeout)


def _no_content(response: httpx.Response) -> None:
    """A sidecar change is done on 204; anything else is not Kandev's contract."""
    if response.status_code not in (200, 204):
        raise KandevProtocolError(
            f"{response.request.method} {response.request.url.path} answered HTTP "
            f"{response.status_code}: {response.text[:200]}"
        )


def _failure(exc: Exception) -> str:
    """An inbox failure for the log: its kind and Kandev's words, never a token."""
    return f"{exc.__class__.__name__}: {str(exc)[:200]}"
