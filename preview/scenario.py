"""The scripted agents of ``kandev-slack preview --with-kandev``: the questions of
``scenario.toml`` asked through a real local Kandev (one question, several at once, context, a
critical one routed to its own channel) and an approval (a tool-permission request)."""

from __future__ import annotations

import logging
import tomllib
from collections.abc import Callable
from dataclasses import dataclass, field
from importlib import resources
from typing import Any

from kandevkit import KandevHarnessError, KandevServer, Permissions, permission_spec, question

log = logging.getLogger("preview.scenario")


@dataclass(frozen=True)
class Ask:
    """One scripted task: its title, the questions its agent asks and what it says first."""

    title: str
    questions: list[dict[str, Any]]
    context: str = ""
    priority: str | None = None
    transcript: list[dict[str, Any]] = field(default_factory=list)


@dataclass(frozen=True)
class Approval:
    task: str
    request: dict[str, Any]


def _script() -> dict[str, Any]:
    text = resources.files("preview").joinpath("scenario.toml").read_text(encoding="utf-8")
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
            )
        )
    return found


def approval() -> Approval:
    spec = _script()["approval"]
    request = permission_spec(spec["title"], spec["kind"], {"command": spec["command"]})
    return Approval(spec["task"], request)


def ask_all(kandev: KandevServer, *, done: Callable[[str], None] = log.info) -> None:
    """Create each scripted task in turn (each returns once Kandev lists its question)."""
    for ask in asks():
        try:
            kandev.seed_bundle(
                ask.questions,
                ask.context,
                ask.title,
                priority=ask.priority,
                transcript=ask.transcript,
            )
            done(f"a scripted agent asks: {ask.title}")
        except KandevHarnessError as problem:
            log.warning("a scripted agent could not ask %r: %s", ask.title, problem)
    wanted = approval()
    try:
        Permissions(kandev).seed([wanted.request], wanted.task)
        done(f"a scripted agent asks for approval: {wanted.task}")
    except KandevHarnessError as problem:
        log.warning("the scripted approval could not be requested: %s", problem)
