"""Before serving, the bot moves what it built out of the collector's sight
(kandev_slack/ops/runtime.py)."""

from __future__ import annotations

import gc

from kandev_slack.ops.runtime import settle_heap


def test_what_was_built_before_serving_is_frozen_and_no_longer_walked() -> None:
    gc.unfreeze()
    try:
        walked_before = len(gc.get_objects())
        settle_heap()
        assert gc.get_freeze_count() >= walked_before // 2  # the heap built so far: frozen
        assert len(gc.get_objects()) < walked_before // 10  # what a full collection walks
    finally:
        gc.unfreeze()
