"""The Slack Web API edge: every call the bot makes to Slack goes through here.

The gateway turns slack-sdk's ``SlackApiError`` into a small exception hierarchy the use-cases
understand (errors.py: rate limited with Retry-After / failed with Slack's error code) and keeps
request shapes in one place; web_client.py makes the client it calls through.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import Future
from dataclasses import dataclass
from typing import Any

from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError, SlackRequestError
from slack_sdk.webhook import WebhookClient

from kandev_slack.slack_api.errors import SlackError, UnexpectedReply

log = logging.getLogger(__name__)

#: ``event_type`` of the message metadata that names the bundle a card belongs to.
CARD_EVENT_TYPE = "kandev_question"
#: ``event_type`` of a thread reply about a bundle (a reminder, an escalation notice).
REPLY_EVENT_TYPE = "kandev_question_reply"


#: How long who-is-in-what (user groups, channel members, channel privacy) is remembered.
DIRECTORY_TTL_S = 60.0
#: A channel's members read longer ago than this are read again when they do not include
#: the person asking (a click proves no membership: it is asked on every click).
MEMBER_MISS_TTL_S = 5.0
#: A channel with more members than this many pages of 1,000 is refused (fail closed).
MAX_MEMBER_PAGES = 20
#: At most this many directory entries are remembered (the oldest go first): a crowd of
#: people, groups and channels cannot grow the cache without bound.
DIRECTORY_MAX_ENTRIES = 5_000
#: How long a response_url may take to answer (Slack's answers in well under a second): one
#: that never answers gives way soon to the ephemeral fallback, not after 10 s.
RESPONSE_URL_TIMEOUT_S = 2  # whole seconds: slack_sdk types it an int


def card_metadata(pending_id: str) -> dict[str, Any]:
    """The message metadata that marks a message as the card of ``pending_id``."""
    return {"event_type": CARD_EVENT_TYPE, "event_payload": {"pending_id": pending_id}}


@dataclass(frozen=True)
class Message:
    """A message as it is to be posted or updated."""

    text: str
    blocks: list[dict[str, Any]]


@dataclass(frozen=True)
class _Person:
    """A person as users.info describes them (None: Slack did not say)."""

    name: str | None
    team: str | None
    enterprise: str | None
    tz: str | None = None  # their time zone (IANA), as their Slack profile says


class SlackGateway:
    """Typed wrappers over the Web API methods the bot uses."""

    def __init__(self, client: WebClient):
        self.client = client
        #: Group members, channel privacy and channel members, with the time they were read.
        self._directory: dict[tuple[str, str], tuple[float, Any]] = {}
        #: The one load under way per key (see _cached).
        self._loading: dict[tuple[str, str], Future[Any]] = {}
        self._lock = threading.Lock()
        #: The app's own team and enterprise (auth.test), once read.
        self._own_org: tuple[str, str | None] | None = None

    # ---- messages ------------------------------------------------------------------------

    def post_card(
        self, channel: str, message: Message, pending_id: str, thread_ts: str | None = None
    ) -> str:
        """Post a card (in the thread ``thread_ts``, if given); returns its ts. The message
        metadata names the bundle (crash recovery)."""
        extra = {"thread_ts": thread_ts} if thread_ts else {}
        resp = self._call(
            "chat.postMessage",
            channel=channel,
            text=message.text,
            blocks=message.blocks,
            metadata=card_metadata(pending_id),
            unfurl_links=False,
            unfurl_media=False,
            **extra,
        )
        return _posted_ts(resp)

    def post_notice(self, channel: str, message: Message) -> str:
        """Post a message that is no card (a quiet-hours summary, a gathering DM); its ts."""
        resp = self._call(
            "chat.postMessage",
            channel=channel,
            text=message.text,
            blocks=message.blocks,
            unfurl_links=False,
            unfurl_media=False,
        )
        return _posted_ts(resp)

    def update_notice(self, channel: str, ts: str, message: Message) -> None:
        """Edit a message that is no card (a gathering DM's count)."""
        self._call("chat.update", channel=channel, ts=ts, text=message.text, blocks=message.blocks)

    def update_card(self, channel: str, ts: str, message: Message, pending_id: str) -> None:
        """Edit a card; its metadata is sent again so the message keeps naming its bundle."""
        self._call(
            "chat.update",
            channel=channel,
            ts=ts,
            text=message.text,
            blocks=message.blocks,
            metadata=card_metadata(pending_id),
        )

    def delete_message(self, channel: str, ts: str) -> None:
        """Delete one of the bot's own messages (a duplicate posted by a replica that lost its
        lease while its call was in flight)."""
        self._call("chat.delete", channel=channel, ts=ts)

    def find_card(
        self, channel: str, pending_id: str, oldest: float, *, thread_ts: str | None = None
    ) -> str | None:
        """The ts of a card for ``pending_id`` already in ``channel`` — in the thread of
        ``thread_ts`` when given — (posted before a crash)."""
        match = (CARD_EVENT_TYPE, "pending_id", pending_id)
        if thread_ts:
            return _find(
                lambda cursor: self._call(
                    "conversations.replies", channel=channel, ts=thread_ts, **_page(cursor)
                ),
                match,
            )
        return _find(self._history(channel, oldest), match)

    def cards_in(self, channel: str, oldest: float) -> dict[str, str]:
        """Every card in ``channel`` since ``oldest``: pending id → ts (the newest, should
        there be two), for many bundles at once (one history scan, not one per bundle)."""
        found: dict[str, str] = {}
        for msg, payload in _tagged(self._history(channel, oldest), CARD_EVENT_TYPE):
            if isinstance(payload.get("pending_id"), str):
                found.setdefault(payload["pending_id"], str(msg["ts"]))
        return found

    def _history(self, channel: str, oldest: float) -> Callable[[str | None], Any]:
        """One page of ``channel``'s history since ``oldest``, from a cursor."""
        return lambda cursor: self._call(
            "conversations.history", channel=channel, oldest=f"{oldest:.6f}", **_page(cursor)
        )

    def post_reply(self, channel: str, thread_ts: str, text: str, pending_id: str, key: str) -> str:
        """Reply in a card's thread (``text`` may mention people: replies notify, cards do
        not); the metadata names the bundle and the reply's key. Returns its ts."""
        resp = self._call(
            "chat.postMessage",
            channel=channel,
            thread_ts=thread_ts,
            text=text,
            metadata={
                "event_type": REPLY_EVENT_TYPE,
                "event_payload": {"pending_id": pending_id, "key": key},
            },
            unfurl_links=False,
            unfurl_media=False,
        )
        return _posted_ts(resp)

    def find_reply(self, channel: str, thread_ts: str, key: str) -> str | None:
        """The ts of the reply ``key`` already in the thread (posted before a crash)."""
        return _find(
            lambda cursor: self._call(
                "conversations.replies", channel=channel, ts=thread_ts, **_page(cursor)
            ),
            (REPLY_EVENT_TYPE, "key", key),
        )

    def open_dm(self, user_id: str) -> str:
        """The id of the bot's direct-message conversation with ``user_id`` (``im:write``)."""
        resp = self._call("conversations.open", users=user_id)
        channel = (resp.get("channel") or {}).get("id")
        if not isinstance(channel, str) or not channel:
            raise UnexpectedReply("conversations.open", "channel.id")
        return channel

    def post_ephemeral(
        self,
        channel: str,
        user: str,
        text: str,
        blocks: list | None = None,
        *,
        thread_ts: str | None = None,
    ) -> None:
        kwargs: dict[str, Any] = {"channel": channel, "user": user, "text": text}
        if blocks:
            kwargs["blocks"] = blocks
        if thread_ts:
            kwargs["thread_ts"] = thread_ts
        self._call("chat.postEphemeral", **kwargs)

    def respond(
        self,
        response_url: str,
        text: str,
        blocks: list | None = None,
        *,
        replace_original: bool = False,
        delete_original: bool = False,
    ) -> None:
        """Answer through an interaction's response_url (ephemeral unless replacing);
        ``delete_original``: remove the message the interaction came from instead."""
        hook = WebhookClient(response_url, timeout=RESPONSE_URL_TIMEOUT_S)
        kwargs: dict[str, Any] = {"text": text, "response_type": "ephemeral"}
        if blocks:
            kwargs["blocks"] = blocks
        if replace_original:
            kwargs["replace_original"] = True
        if delete_original:
            kwargs = {"delete_original": True}
        try:
            resp = hook.send(**kwargs)
        except (OSError, SlackRequestError) as exc:
            raise SlackError("response_url", "connection_error") from exc
        if resp.status_code >= 400:
            raise SlackError("response_url", f"http_{resp.status_code}: {resp.body}")

    def permalink(self, channel: str, ts: str, *, strict: bool = False) -> str | None:
        """A message's link; None when Slack does not give one. ``strict``: when Slack may give
        it later (a rate limit, a server or network error) the SlackError is raised instead, so
        that a message sent once (a quiet-hours summary, a digest) waits for its links rather
        than going without them."""
        try:
            return str(self._call("chat.getPermalink", channel=channel, message_ts=ts)["permalink"])
        except SlackError as exc:
            if strict and exc.transient:
                raise
            log.warning("no permalink for %s/%s: %s", channel, ts, exc.error)
            return None

    # ---- views ---------------------------------------------------------------------------

    def open_view(self, trigger_id: str, view: dict) -> str:
        return str(self._call("views.open", trigger_id=trigger_id, view=view)["view"]["id"])

    def update_view(self, view_id: str, view: dict) -> None:
        """Replace an open modal (the Conversation view once Kandev answered)."""
        self._call("views.update", view_id=view_id, view=view)

    def push_view(self, trigger_id: str, view: dict) -> str:
        """Open a modal on top of the open one (a form from the Conversation view)."""
        return str(self._call("views.push", trigger_id=trigger_id, view=view)["view"]["id"])

    def publish_home(self, user_id: str, view: dict) -> None:
        self._call("views.publish", user_id=user_id, view=view)

    # ---- users ---------------------------------------------------------------------------

    def group_members(self, group_id: str) -> frozenset[str]:
        """Members of a user group (cached for ``DIRECTORY_TTL_S``)."""

        def load() -> frozenset[str]:
            resp = self._call("usergroups.users.list", usergroup=group_id)
            return frozenset(resp.get("users") or [])

        return self._cached(("group", group_id), load)

    def user_name(self, user_id: str) -> str | None:
        """A person's name as Slack shows it (display name, else real name, else handle;
        ``users:read``), cached for ``DIRECTORY_TTL_S``; None when Slack gives none."""
        return self._person(user_id).name

    def user_tz(self, user_id: str) -> str | None:
        """A person's time zone as their Slack profile says (``users.info`` → ``user.tz``),
        cached like their name; None when Slack gives none."""
        return self._person(user_id).tz

    def _person(self, user_id: str) -> _Person:
        """What the bot reads of a person (one users.info, cached for ``DIRECTORY_TTL_S``):
        their name and their organisation."""

        def load() -> _Person:
            user = self._call("users.info", user=user_id).get("user") or {}
            profile = user.get("profile") or {}
            names = (
                profile.get("display_name"),
                profile.get("real_name"),
                user.get("real_name"),
                user.get("name"),
            )
            name = next((n.strip() for n in names if isinstance(n, str) and n.strip()), None)
            team = user.get("team_id")
            grid = (user.get("enterprise_user") or {}).get("enterprise_id")
            tz = user.get("tz")
            return _Person(
                name=name,
                team=team if isinstance(team, str) and team else None,
                enterprise=grid if isinstance(grid, str) and grid else None,
                tz=tz if isinstance(tz, str) and tz else None,
            )

        person: _Person = self._cached(("user", user_id), load)
        return person

    def channel_is_private(self, channel: str) -> bool:
        """Whether a conversation is private (cached for ``DIRECTORY_TTL_S``)."""

        def load() -> bool:
            info = self._call("conversations.info", channel=channel).get("channel") or {}
            return bool(info.get("is_private") or info.get("is_group") or info.get("is_im"))

        return self._cached(("private", channel), load)

    def channel_members(self, channel: str, max_age: float = DIRECTORY_TTL_S) -> frozenset[str]:
        """Members of a conversation, every page (cached for ``max_age``)."""

        def load() -> frozenset[str]:
            members: set[str] = set()
            cursor = None
            for _ in range(MAX_MEMBER_PAGES):
                resp = self._call(
                    "conversations.members", channel=channel, cursor=cursor, limit=1000
                )
                members.update(resp.get("members") or [])
                cursor = (resp.get("response_metadata") or {}).get("next_cursor")
                if not cursor:
                    return frozenset(members)
            raise SlackError("conversations.members", "too_many_members")

        return self._cached(("members", channel), load, max_age)

    def is_channel_member(self, channel: str, user_id: str) -> bool:
        """Whether ``user_id`` is a member of ``channel`` (conversations.members, every page,
        cached for ``DIRECTORY_TTL_S``; a "no" from a list older than ``MEMBER_MISS_TTL_S`` is
        read again: someone just added is not refused for a minute). Raises SlackError when it
        cannot be read."""
        if user_id in self.channel_members(channel):
            return True
        return user_id in self.channel_members(channel, MEMBER_MISS_TTL_S)

    def own_organisation(self) -> tuple[str, str | None]:
        """The app's own team id and (Enterprise Grid) enterprise id, from auth.test (read once
        per process: an app's installation does not move)."""

        def load() -> tuple[str, str | None]:
            resp = self._call("auth.test")
            team = resp.get("team_id")
            if not isinstance(team, str) or not team:
                raise UnexpectedReply("auth.test", "team_id")
            enterprise = resp.get("enterprise_id")
            return team, enterprise if isinstance(enterprise, str) and enterprise else None

        with self._lock:
            known = self._own_org
        if known is None:
            known = self._cached(("auth", ""), load)
            with self._lock:
                self._own_org = known
        return known

    def of_own_organisation(self, user_id: str) -> bool:
        """Whether ``user_id`` belongs to the app's own organisation: their team (users.info
        ``user.team_id``) is the app's, or, on Enterprise Grid, their enterprise
        (``enterprise_user.enterprise_id``) is the app's. A Slack Connect member of a shared
        channel (another organisation) is not. Cached for ``DIRECTORY_TTL_S``; raises
        SlackError when it cannot be read."""
        team, enterprise = self.own_organisation()
        person = self._person(user_id)
        if person.team is None:
            raise UnexpectedReply("users.info", "user.team_id")
        return person.team == team or (enterprise is not None and person.enterprise == enterprise)

    def _cached(self, key: tuple[str, str], load, max_age: float = DIRECTORY_TTL_S):
        """The value read less than ``max_age`` ago, else ``load()``'s. One load per key at
        a time: a crowd that finds the entry missing or stale (fifty people clicking cards of
        a route limited to a user group) waits for one call, where one call each would exceed
        Slack's rate (usergroups.users.list is Tier 2, ~20 a minute) and be refused."""
        now = time.monotonic()
        with self._lock:
            hit = self._directory.get(key)
            if hit and now - hit[0] < max_age:
                return hit[1]
            loading = self._loading.get(key)
            mine = loading is None
            if loading is None:
                loading = self._loading[key] = Future()
        if not mine:
            return loading.result()  # the same value, or the same error, as the one call
        try:
            value = load()
        except BaseException as exc:
            with self._lock:
                del self._loading[key]
            loading.set_exception(exc)
            raise
        with self._lock:
            self._directory.pop(key, None)  # re-inserted last: the oldest are the first out
            self._directory[key] = (now, value)
            while len(self._directory) > DIRECTORY_MAX_ENTRIES:
                del self._directory[next(iter(self._directory))]
            del self._loading[key]
        loading.set_result(value)
        return value

    # ---- plumbing ------------------------------------------------------------------------

    def _call(self, method: str, **params: Any) -> Any:
        params = {k: v for k, v in params.items() if v is not None}
        try:
            # slack-sdk's typed methods pick the encoding Slack expects (JSON or form) per method.
            return getattr(self.client, method.replace(".", "_"))(**params)
        except SlackApiError as exc:
            resp = exc.response
            error = str(resp.get("error") or f"http_{resp.status_code}")
            retry_after = None
            if resp.status_code == 429:
                raw = resp.headers.get("Retry-After") or resp.headers.get("retry-after") or "1"
                retry_after = float(raw[0] if isinstance(raw, list) else raw)
                error = "ratelimited"
            elif resp.status_code >= 500:
                error = "http_5xx"
            raise SlackError(method, error, retry_after=retry_after) from exc
        except (OSError, SlackRequestError) as exc:
            raise SlackError(method, "connection_error") from exc


def _posted_ts(resp: Any) -> str:
    """The ts of a message chat.postMessage says it posted (an ok reply without one is not a
    post the bot can record)."""
    ts = resp.get("ts")
    if not isinstance(ts, str) or not ts:
        raise UnexpectedReply("chat.postMessage", "ts")
    return ts


def _page(cursor: str | None) -> dict[str, Any]:
    """One page of a history search: 200 messages with their metadata, from ``cursor``."""
    return {"limit": 200, "include_all_metadata": True, "cursor": cursor}


def _find(page: Callable[[str | None], Any], match: tuple[str, str, str]) -> str | None:
    """The ts of the first message of at most 20 ``page``s whose metadata is of event type
    ``match[0]`` with ``match[1]`` equal to ``match[2]``."""
    event_type, field, value = match
    for msg, payload in _tagged(page, event_type):
        if payload.get(field) == value:
            return str(msg["ts"])
    return None


def _tagged(
    page: Callable[[str | None], Any], event_type: str
) -> Iterator[tuple[dict[str, Any], dict[str, Any]]]:
    """The messages of at most 20 ``page``s whose metadata is of ``event_type``, with its
    payload."""
    cursor = None
    for _ in range(20):
        resp = page(cursor)
        for msg in resp.get("messages") or []:
            meta = msg.get("metadata") or {}
            if meta.get("event_type") == event_type:
                yield msg, meta.get("event_payload") or {}
        cursor = (resp.get("response_metadata") or {}).get("next_cursor")
        if not cursor:
            return
