"""Back-off waits computed by tenacity's wait strategies, for retries that are scheduled
(a later cycle, an outbox row given back) rather than made in a loop around one call."""

from __future__ import annotations

from typing import cast

from tenacity import BaseRetrying, RetryCallState, wait_exponential
from tenacity.wait import wait_base


def doubling(first_s: float, longest_s: float) -> wait_base:
    """``first_s``, then twice the previous wait, never more than ``longest_s``."""
    return wait_exponential(multiplier=first_s, exp_base=2, min=0, max=longest_s)


def wait_for(strategy: wait_base, attempt: int) -> float:
    """The wait ``strategy`` gives before the try after ``attempt`` failed ones (1 = the first)."""
    state = RetryCallState(cast(BaseRetrying, None), None, (), {})
    state.attempt_number = max(attempt, 1)
    return float(strategy(state))
