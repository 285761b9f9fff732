"""Several people on one auth-on Kandev (``KandevServer(auth=True)``), made through Kandev's own
API, and what each of them does there with their own personal access token (PAT).

The harness's admin (the setup wizard's user, whose PAT is ``KandevServer.token``: the bot's
token in the tests) creates each person with a password (``POST /api/v1/users``); the person
logs in (``POST /api/v1/auth/login``: a cookie) and mints their PAT with it
(``POST /api/v1/auth/tokens``). Kandev has no impersonation, so everything a person does here
goes out with their own PAT: workspace membership and privacy, the per-person needs-you inbox
(snooze, dismiss), answers, permission decisions over the web UI's ``/ws`` (audited with their
user id), the task's human assignee. ``Cast`` is the fixed cast the tests share.

Seeding as a person is ``Seeder(server).by(person)`` (or ``seed_bundle(token=person.token)``):
a task created, listed, read and deleted with their token, e.g. in their own workspace.

Kandev refusals raise ``KandevRefused`` (``status``: the HTTP status, ``code``: a ``/ws``
error's code); bad arguments raise ``ValueError`` before anything is sent."""

from __future__ import annotations

import re
import secrets
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote

import httpx

from .kandev_server import AUTH_PASSWORD, KandevHarnessError, KandevRefused, KandevServer
from .permissions import Permissions, SeededPermission

MEMBER = "member"
ADMIN = "admin"
COLLABORATOR = "collaborator"
VIEWER = "viewer"
ORG_ROLES = (MEMBER, ADMIN)
WORKSPACE_ROLES = (COLLABORATOR, VIEWER)
SNOOZE_DURATIONS = ("1h", "4h", "24h")
#: ``kandev_pat_<8 hex display prefix>_<43 base64url>``.
PAT = re.compile(r"^kandev_pat_(?P<prefix>[0-9a-f]{8})_[A-Za-z0-9_-]{43}$")
EMAIL = re.compile(r"^[^@\s]+@[^@\s]+\.[^@\s]+$")


@dataclass(frozen=True)
class Person:
    """A Kandev user and the PAT they act with (``password`` logs them in)."""

    user_id: str
    email: str
    display_name: str
    password: str = field(repr=False)
    token: str = field(repr=False)


class People:
    """The people of one auth-on ``KandevServer`` (started) and what they do there."""

    def __init__(self, server: KandevServer) -> None:
        if not server.auth:
            raise KandevHarnessError("People need a Kandev with auth on (KandevServer(auth=True))")
        if not server.token:
            raise KandevHarnessError("People need a started Kandev (its harness PAT is minted)")
        self.server = server
        self._owners: dict[str, str] = {}  # workspace id -> its owner's token
        self._lock = threading.Lock()
        self._harness: Person | None = None

    # --- accounts ---------------------------------------------------------------------------
    @property
    def harness(self) -> Person:
        """The harness's admin (the setup wizard's user) as a ``Person``: the bot's account."""
        if self._harness is None:
            token = self.server.token
            assert token is not None
            user = self.me(token).get("user") or {}
            self._harness = Person(
                user_id=str(user["id"]),
                email=str(user["email"]),
                display_name=str(user.get("display_name") or ""),
                password=AUTH_PASSWORD,
                token=token,
            )
        return self._harness

    def create(self, email: str, display_name: str, role: str = MEMBER) -> Person:
        """A new user (``role``: ``member`` or ``admin``) with a password the kit chooses,
        logged in once to mint their PAT."""
        if not EMAIL.match(email):
            raise ValueError(f"not an email address: {email!r}")
        if not display_name.strip():
            raise ValueError("a person needs a display name")
        if role not in ORG_ROLES:
            raise ValueError(f"role must be one of {ORG_ROLES}, not {role!r}")
        password = f"pw-{secrets.token_urlsafe(16)}"
        created = self.server.http.post(
            "/users",
            json={
                "email": email,
                "password": password,
                "display_name": display_name,
                "role": role,
            },
        )
        _check(created, f"create user {email}")
        user = created.json()["user"]
        token = self.login_and_mint(email, password)
        return Person(str(user["id"]), str(user["email"]), display_name, password, token)

    def fresh(self, display_name: str, role: str = MEMBER) -> Person:
        """A new user with a unique email (for tests that revoke, disable or otherwise spend
        a person, never the shared cast's)."""
        slug = re.sub(r"[^a-z0-9]+", "-", display_name.lower()).strip("-") or "person"
        return self.create(f"{slug}-{secrets.token_hex(4)}@example.com", display_name, role)

    def login_and_mint(self, email: str, password: str, *, ttl_hours: int = 0) -> str:
        """Log in as a browser does (a session cookie) and mint a PAT with that cookie."""
        with httpx.Client(
            base_url=f"{self.server.base_url}/api/v1", timeout=30.0, trust_env=False
        ) as browser:
            login = browser.post("/auth/login", json={"email": email, "password": password})
            _check(login, f"log in as {email}")
            minted = browser.post(
                "/auth/tokens", json={"name": f"kandevkit-{email}", "ttl_hours": ttl_hours}
            )
            _check(minted, f"mint a token for {email}")
            return str(minted.json()["token"])

    def mint(self, person: Person, ttl_hours: int = 0) -> str:
        """Another PAT of ``person``'s, minted with their PAT (``ttl_hours`` 0: never expires)."""
        if ttl_hours < 0:
            raise ValueError("ttl_hours must be 0 (never expires) or more")
        minted = self.http(person).post(
            "/auth/tokens",
            json={"name": f"kandevkit-{secrets.token_hex(4)}", "ttl_hours": ttl_hours},
        )
        _check(minted, f"mint a token for {person.email}")
        return str(minted.json()["token"])

    def tokens(self, person: Person) -> list[dict[str, Any]]:
        """``person``'s token records (``id``, ``prefix``, ``expires_at``…), listed as them."""
        listed = self.http(person).get("/auth/tokens")
        _check(listed, f"list {person.email}'s tokens")
        return list(listed.json()["tokens"])

    def revoke(self, person: Person, token: str) -> None:
        """Revoke one of ``person``'s PATs as they would (listed and deleted with
        ``person.token``), then check Kandev refuses it (401). Revoking ``person.token``
        itself leaves that ``Person`` unable to act."""
        match = PAT.match(token)
        if match is None:
            raise ValueError("not a Kandev personal access token")
        records = [r for r in self.tokens(person) if r.get("prefix") == match["prefix"]]
        if not records:
            raise KandevHarnessError(f"that token is not one of {person.email}'s live tokens")
        deleted = self.http(person).delete(f"/auth/tokens/{quote(str(records[0]['id']))}")
        _check(deleted, f"revoke a token of {person.email}")
        self._expect_refused(token, f"{person.email}'s revoked token")

    def disable(self, person: Person) -> None:
        """Disable ``person`` as the admin (every PAT of theirs dies for good), then check
        their PAT is refused (401)."""
        self._set_status(person, "disabled")
        self._expect_refused(person.token, f"disabled {person.email}'s token")

    def enable(self, person: Person) -> None:
        """Enable ``person`` again (their old PATs stay dead: log in and mint anew)."""
        self._set_status(person, "active")

    def me(self, token: str) -> dict[str, Any]:
        """``GET /api/v1/auth/me`` with ``token``: 200 ``authenticated`` true or false."""
        response = self.server.http_as(token).get("/auth/me")
        _check(response, "auth/me")
        return dict(response.json())

    def users(self) -> list[dict[str, Any]]:
        """Every user, as the admin lists them (``id``, ``email``, ``display_name``, ``role``,
        ``status``)."""
        response = self.server.http.get("/users")
        _check(response, "list users")
        return list(response.json()["users"])

    def http(self, person: Person) -> httpx.Client:
        """A REST client for ``/api/v1`` carrying ``person``'s PAT (for raw calls)."""
        return self.server.http_as(person.token)

    def _set_status(self, person: Person, status: str) -> None:
        response = self.server.http.patch(
            f"/users/{quote(person.user_id)}", json={"status": status}
        )
        _check(response, f"set {person.email} {status}")

    def _expect_refused(self, token: str, what: str) -> None:
        probe = self.server.http_as(token).get("/workspaces")
        if probe.status_code != 401:
            raise KandevHarnessError(f"{what} still works: HTTP {probe.status_code}")

    # --- workspaces ---------------------------------------------------------------------------
    def workspace(self, owner: Person, name: str) -> str:
        """A new workspace created with ``owner``'s PAT (private to them), prepared for seeding
        as the default one is (its harness workflow; the mock agent's profile is global)."""
        if not name.strip():
            raise ValueError("a workspace needs a name")
        workspace_id = self.server.create_workspace(name, token=owner.token)
        with self._lock:
            self._owners[workspace_id] = owner.token
        self.server.workflow(workspace_id, token=owner.token)
        return workspace_id

    def add_member(
        self, workspace_id: str, person: Person, role: str, *, by: Person | None = None
    ) -> dict[str, Any]:
        """Make ``person`` a ``collaborator`` or ``viewer`` of the workspace, by its owner
        (``by``; default: the owner ``workspace()`` made it for, else the harness)."""
        if role not in WORKSPACE_ROLES:
            raise ValueError(f"role must be one of {WORKSPACE_ROLES}, not {role!r}")
        token = by.token if by is not None else self._owners.get(workspace_id, self.server.token)
        response = self.server.http_as(token).put(
            f"/workspaces/{quote(workspace_id)}/members/{quote(person.user_id)}",
            json={"role": role},
        )
        _check(response, f"add {person.email} to workspace {workspace_id} as {role}")
        return dict(response.json())

    def remove_member(self, workspace_id: str, person: Person, *, by: Person | None = None) -> None:
        """Take ``person`` out of the workspace, by its owner (``by``, as for
        :meth:`add_member`), then check they no longer see it."""
        token = by.token if by is not None else self._owners.get(workspace_id, self.server.token)
        response = self.server.http_as(token).delete(
            f"/workspaces/{quote(workspace_id)}/members/{quote(person.user_id)}"
        )
        _check(response, f"remove {person.email} from workspace {workspace_id}")
        if self.role(person, workspace_id) is not None:
            raise KandevHarnessError(f"{person.email} still sees workspace {workspace_id}")

    def workspaces(self, person: Person) -> list[dict[str, Any]]:
        """The workspaces ``person`` sees, with their ``viewer_role`` and ``scopes``."""
        return self.server.workspaces(token=person.token)

    def role(self, person: Person, workspace_id: str) -> str | None:
        """``person``'s role in the workspace (``owner``/``collaborator``/``viewer``), ``None``
        when they cannot see it."""
        entry = self._entry(person, workspace_id)
        return str(entry["viewer_role"]) if entry is not None else None

    def scopes(self, person: Person, workspace_id: str) -> list[str]:
        """``person``'s scopes in the workspace (``[]`` when they cannot see it)."""
        entry = self._entry(person, workspace_id)
        return list(entry.get("scopes") or []) if entry is not None else []

    def _entry(self, person: Person, workspace_id: str) -> dict[str, Any] | None:
        return next((w for w in self.workspaces(person) if w["id"] == workspace_id), None)

    # --- tasks ------------------------------------------------------------------------------
    def assign(
        self, task_id: str, person: Person | None, *, by: Person | None = None
    ) -> dict[str, Any]:
        """Set the task's human assignee (``None``: unassign) with ``by``'s PAT (default: the
        token the task was seeded with); the updated task."""
        token = by.token if by is not None else self.server.token_for(task_id)
        response = self.server.http_as(token).patch(
            f"/tasks/{quote(task_id)}",
            json={"assignee_user_id": person.user_id if person is not None else ""},
        )
        _check(response, f"assign task {task_id}")
        return dict(response.json())

    # --- the needs-you inbox, per person ----------------------------------------------------
    def snooze(self, person: Person, pending_id: str, duration: str = "4h") -> None:
        """Snooze the bundle in ``person``'s own inbox for ``1h``, ``4h`` or ``24h``."""
        if duration not in SNOOZE_DURATIONS:
            raise ValueError(f"snooze duration must be one of {SNOOZE_DURATIONS}")
        self._sidecar(person, pending_id, {"state": "snoozed", "snooze_duration": duration})

    def dismiss(self, person: Person, pending_id: str) -> None:
        """Dismiss the bundle from ``person``'s own inbox."""
        self._sidecar(person, pending_id, {"state": "dismissed"})

    def unsnooze(self, person: Person, pending_id: str) -> None:
        """Undo ``person``'s snooze or dismissal (``DELETE`` the sidecar; idempotent)."""
        response = self.http(person).delete(f"/clarification-inbox/sidecar/{quote(pending_id)}")
        _check(response, f"clear {person.email}'s sidecar of {pending_id}")

    def inbox(self, person: Person, workspace_id: str) -> dict[str, Any]:
        """``person``'s inbox of the workspace: ``bundles``, ``count``, ``hidden_count``,
        ``next_snooze_expiry``."""
        return self._inbox(person, "/clarification-inbox", workspace_id)

    def hidden(self, person: Person, workspace_id: str) -> dict[str, Any]:
        """What ``person`` snoozed or dismissed in the workspace: ``bundles``, ``count``."""
        return self._inbox(person, "/clarification-inbox/hidden", workspace_id)

    def _sidecar(self, person: Person, pending_id: str, body: dict[str, str]) -> None:
        response = self.http(person).put(
            f"/clarification-inbox/sidecar/{quote(pending_id)}", json=body
        )
        _check(response, f"{body['state']} {pending_id} for {person.email}")

    def _inbox(self, person: Person, path: str, workspace_id: str) -> dict[str, Any]:
        response = self.http(person).get(path, params={"workspace_id": workspace_id})
        _check(response, f"{person.email}'s {path}")
        return dict(response.json())

    # --- acting in Kandev's web UI as a person ---------------------------------------------
    def answer_as(
        self, person: Person, pending_id: str, answers: Mapping[str, str | Sequence[str]]
    ) -> httpx.Response:
        """Answer a bundle as ``person`` over REST (``KandevServer.answer``'s ``answers``):
        Kandev's response as it is (200 ``claimed``, 404 for a workspace they cannot see)."""
        return self.server.answer(pending_id, answers, token=person.token)

    def reject_as(self, person: Person, pending_id: str, reason: str = "") -> httpx.Response:
        """Reject a bundle as ``person`` over REST: Kandev's response as it is."""
        return self.server.reject(pending_id, reason, token=person.token)

    def allow_as(
        self, person: Person, permission: SeededPermission, option_id: str = "allow_once"
    ) -> dict[str, Any]:
        """Choose ``option_id`` (any offered option, a reject one too) for a tool-permission
        request as ``person`` in Kandev's web UI: ``permission.respond`` over
        ``/ws?token=<their PAT>``, so Kandev records them as ``actor_user_id``. The response's
        payload, or ``KandevRefused`` with the error's ``code`` (``NOT_FOUND``…)."""
        return Permissions(self.server, person.token).respond(permission, option_id)

    def resolution(
        self, permission: SeededPermission, *, reader: Person | None = None
    ) -> dict[str, Any] | None:
        """The request's final ``permission_resolution`` (``actor_user_id``…), read by
        ``reader`` (default: whoever seeded it), ``None`` while it is not final."""
        token = reader.token if reader is not None else None
        return Permissions(self.server, token).resolution(permission)


@dataclass(frozen=True)
class Cast:
    """The people the identity tests share, on one Kandev with auth and the needs-you inbox:

    - ``bot``: the harness's admin, whose PAT is the bot's token; owns the default workspace;
    - ``ana``: collaborator on the default workspace, ``dan_ws`` and ``eve_ws``;
    - ``ben``: viewer on the default workspace;
    - ``cat``: member of no workspace;
    - ``dan``: owns ``dan_ws``, where the bot is not a member;
    - ``eve``: owns ``eve_ws``, where the bot is a viewer.

    Shared by every test of a session: spend only ``people.fresh(...)`` people (revoke their
    main token, disable them), never these."""

    server: KandevServer
    people: People
    bot: Person
    ana: Person
    ben: Person
    cat: Person
    dan: Person
    eve: Person
    default_ws: str
    dan_ws: str
    eve_ws: str

    @classmethod
    def build(cls, server: KandevServer) -> Cast:
        """Create the cast on ``server`` (started, auth on) through Kandev's API."""
        people = People(server)
        bot = people.harness
        ana = people.create("ana@example.com", "Ana")
        ben = people.create("ben@example.com", "Ben")
        cat = people.create("cat@example.com", "Cat")
        dan = people.create("dan@example.com", "Dan")
        eve = people.create("eve@example.com", "Eve")
        default_ws = server.workspace_id
        people.add_member(default_ws, ana, COLLABORATOR)
        people.add_member(default_ws, ben, VIEWER)
        dan_ws = people.workspace(dan, "Dan's workspace")
        people.add_member(dan_ws, ana, COLLABORATOR)
        eve_ws = people.workspace(eve, "Eve's workspace")
        people.add_member(eve_ws, bot, VIEWER)
        people.add_member(eve_ws, ana, COLLABORATOR)
        return cls(server, people, bot, ana, ben, cat, dan, eve, default_ws, dan_ws, eve_ws)

    @property
    def everyone(self) -> tuple[Person, ...]:
        """The five people (not the bot)."""
        return (self.ana, self.ben, self.cat, self.dan, self.eve)

    def person(self, user_id: str) -> Person:
        """The cast member (the bot too) with that Kandev user id."""
        for person in (self.bot, *self.everyone):
            if person.user_id == user_id:
                return person
        raise KeyError(f"no one in the cast has user id {user_id!r}")


def _check(response: httpx.Response, what: str) -> None:
    if response.is_error:
        raise KandevRefused(what, status=response.status_code, text=response.text)
