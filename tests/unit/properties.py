"""How many examples a property test of tests/unit tries.

The Hypothesis profile is chosen in tests/conftest.py: ``unit`` (the default, the inner loop)
caps every property at the profile's ``max_examples``; ``full`` (``HYPOTHESIS_PROFILE=full`` or
``--hypothesis-profile=full``) gives each test the number it asks for, for a deeper run (CI)."""

from __future__ import annotations

from hypothesis import settings

UNIT_PROFILE = "unit"


def examples(asked: int) -> int:
    """``asked`` examples, or fewer when the active profile is the bounded ``unit`` one."""
    if settings.get_current_profile_name() == UNIT_PROFILE:
        return min(asked, settings().max_examples)  # settings(): the active profile's
    return asked
