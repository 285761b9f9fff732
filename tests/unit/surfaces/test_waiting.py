"""The waiting item of a view: a bundle listed undecoded stands for the bundle it decodes to."""

from __future__ import annotations

from datetime import UTC

from hypothesis import given

from kandev_slack.core.clarification import Bundle, ListedBundle
from kandev_slack.surfaces.waiting import Waiting
from tests.kit.factories import make_task
from tests.unit.cards.strategies import bundles
from tests.unit.cards.test_limits_property import SETTINGS


@SETTINGS
@given(bundles())
def test_a_listed_bundle_decodes_to_the_bundle_it_was_listed_from(bundle: Bundle) -> None:
    listed = ListedBundle.of(bundle)
    assert listed.decode() == bundle
    assert (listed.pending_id, listed.task_id, listed.created_at) == (
        bundle.pending_id,
        bundle.task_id,
        bundle.created_at,
    )


@SETTINGS
@given(bundles())
def test_an_item_listed_undecoded_is_the_item_of_its_bundle(bundle: Bundle) -> None:
    task = make_task(bundle.task_id)
    undecoded, decoded = Waiting(ListedBundle.of(bundle), task), Waiting(bundle, task)
    assert undecoded.pending_id == decoded.pending_id == bundle.pending_id
    assert undecoded.task.task_id == decoded.task.task_id == bundle.task_id
    assert undecoded.key == decoded.key
    assert undecoded.created_at.tzinfo is UTC
    assert undecoded.bundle == decoded.bundle == bundle
    assert undecoded.bundle is undecoded.bundle  # decoded once
