"""The scripted agents of ``kandev-slack preview --with-kandev``: the names and questions of
``scenario.toml`` asked through a real local Kandev (one question, several at once, context, a
critical one routed to its own channel) and an approval (a tool-permission request)."""

from __future__ import annotations

import logging
import threading
import tomllib
from collections.abc import Callable
from dataclasses import dataclass, field
from importlib import resources
from typing import Any

import httpx

from kandev_slack.kits.kandevkit import (
    KandevHarnessError,
    KandevServer,
    McpToolError,
    Permissions,
    permission_spec,
    question,
)

log = logging.getLogger("kandev_slack.preview.scenario")


@dataclass(frozen=True)
class Ask:
    """One scripted task: its title, the questions its agent asks, what it says first and
    what it does once answered."""

    title: str
    questions: list[dict[str, Any]]
    context: str = ""
    priority: str | None = None
    transcript: list[dict[str, Any]] = field(default_factory=list)
    #: What the agent runs and says once answered (the page shows it going on).
    then: list[dict[str, Any]] = field(default_factory=list)
    #: The task's description (the agent's script goes in a comment after it, out of sight).
    description: str = ""


@dataclass(frozen=True)
class Approval:
    task: str
    request: dict[str, Any]


def _script() -> dict[str, Any]:
    text = (
        resources.files("kandev_slack.preview")
        .joinpath("scenario.toml")
        .read_text(encoding="utf-8")
    )
    return tomllib.loads(text)


def asks() -> list[Ask]:
    """The scripted questions, in the order they are asked."""
    found = []
    for ask in _script()["ask"]:
        questions = [
            question(q["id"], q["title"], q["prompt"], *(tuple(o) for o in q["options"]))
            for q in ask["question"]
        ]
        found.append(
            Ask(
                ask["title"],
                questions,
                ask.get("context", ""),
                ask.get("priority"),
                list(ask.get("transcript", [])),
                list(ask.get("then", [])),
                ask.get("description", ""),
            )
        )
    return found


def approval() -> Approval:
    spec = _script()["approval"]
    request = permission_spec(spec["title"], spec["kind"], {"command": spec["command"]})
    return Approval(spec["task"], request)


@dataclass(frozen=True)
class Names:
    """What the local Kandev's workspace and its scripted agents are called."""

    workspace: str
    agent: str


def names() -> Names:
    found = _script()["names"]
    return Names(str(found["workspace"]), str(found["agent"]))


def name_all(kandev: KandevServer, wanted: Names | None = None) -> None:
    """Give the workspace and the scripted agents' profile their names (before any task is
    created: a task keeps the agent's name it was created with)."""
    wanted = wanted or names()
    try:
        renamed = kandev.http.patch(
            f"/workspaces/{kandev.workspace_id}", json={"name": wanted.workspace}
        )
        renamed.raise_for_status()
        kandev.mcp.call_tool(
            "update_agent_profile_kandev",
            {"profile_id": kandev.mock_profile_id(), "name": wanted.agent},
        )
    except (KandevHarnessError, McpToolError, httpx.HTTPError) as problem:
        log.warning("the scripted agents keep Kandev's names: %s", problem)


def ask_all(
    kandev: KandevServer,
    *,
    done: Callable[[str], None] = log.info,
    stopping: threading.Event | None = None,
) -> None:
    """Create each scripted task in turn (each returns once Kandev lists its question); the
    preview named the workspace and the agents first (``name_all``). Once ``stopping`` is set
    (the preview stops) nothing more is asked, nor is a failure to ask said."""
    stopping = stopping or threading.Event()
    for ask in asks():
        if stopping.is_set():
            return
        try:
            kandev.seed_bundle(
                ask.questions,
                ask.context,
                ask.title,
                priority=ask.priority,
                transcript=ask.transcript,
                then=ask.then,
                description=ask.description,
            )
            done(f"a scripted agent asks: {ask.title}")
        except KandevHarnessError as problem:
            if not stopping.is_set():
                log.warning("a scripted agent could not ask %r: %s", ask.title, problem)
    if stopping.is_set():
        return
    wanted = approval()
    try:
        Permissions(kandev).seed([wanted.request], wanted.task)
        done(f"a scripted agent asks for approval: {wanted.task}")
    except KandevHarnessError as problem:
        if not stopping.is_set():
            log.warning("the scripted approval could not be requested: %s", problem)
