"""Calm DMs (pure): when more than :data:`ALONE` new DM cards for one person would arrive
within :data:`WINDOW_S`, the rest are gathered under one DM.

The rule, per person, when a new DM card is decided:

- a *gathering* DM of theirs is open (a card joined it less than ``WINDOW_S`` ago): the card
  joins it (posted in its thread) and the gathering stays open ``WINDOW_S`` more;
- else, if :data:`ALONE` or more DM cards came on their own in the last ``WINDOW_S``: the card
  opens a new gathering DM ("7 agents need you — 2 critical", counting the whole burst: the
  ones that came on their own and the ones in its thread), and goes in its thread;
- else it comes on its own, as before.

So the first three of a burst arrive as usual, the fourth opens the gathering DM and it and
every later one go into its thread; the header's count is edited as each one joins.
"""

from __future__ import annotations

from typing import Literal

#: How many DM cards of a burst come on their own.
ALONE = 3
#: The burst's window, seconds.
WINDOW_S = 60.0

Choice = Literal["alone", "join", "open"]


def calm_choice(gathering_open: bool, recent_alone: int, alone: int = ALONE) -> Choice:
    """Where a new DM card goes: on its own, into the open gathering, or into a new one."""
    if gathering_open:
        return "join"
    if recent_alone >= alone:
        return "open"
    return "alone"
