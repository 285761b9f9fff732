"""Identical questions waiting at once (issue 22, point 5), as a card shows them (pure data).

Several agents often ask the same one question at the same time (same workspace, same title and
prompt, normalised: the past answers' *question key*). Each waiting card of such a group names
the others ("Also asked by 2 other agents: …"), and whoever answers one may send the same
choice to all of them (kandev_slack/usecases/groups.py and answering/groups.py decide;
kandev_slack/cards/parts/groups.py renders).
"""

from __future__ import annotations

from typing import NamedTuple

from pydantic import BaseModel, ConfigDict

#: A card names at most this many others of its group (then "more than"): the renderer's
#: room, and the bound of the edits a change of membership needs.
MAX_LINKS = 5


class FirstCard(BaseModel):
    """The card a new identical item is posted in the thread of (issue 33): which, and its
    message (None: not posted yet, then waited for)."""

    model_config = ConfigDict(frozen=True)

    pending_id: str
    ts: str | None = None


class AlsoAsked(BaseModel):
    """Another waiting card asking the same question: linked to its task in Kandev."""

    model_config = ConfigDict(frozen=True)

    pending_id: str
    task_id: str
    title: str = ""


class GroupPlace(NamedTuple):
    """Where a waiting, posted card of a grouped item is: its items' shared key (the kind's
    ``identity_key``), its channel, and the card it is posted in the thread of (None: its own
    channel card). What the listing and the App Home group rows by."""

    key: str
    channel: str
    thread_of: str | None = None
