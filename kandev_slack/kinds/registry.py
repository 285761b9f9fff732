"""The one registry of item kinds: :class:`ItemKind` → its :class:`KindSpec`. Adding a kind
adds its package beside question/ and approval/ and ONE line to :data:`SPECS`.

:func:`spec_of` is how code outside kandev_slack/kinds/ tells kinds apart; a kind it does not
know (a newer release's, a typo, a key of no known kind) raises :class:`UnknownKindError`,
never reads as a question."""

from __future__ import annotations

from collections.abc import Mapping

from kandev_slack.core.pending import ItemKind
from kandev_slack.kinds.approval.spec import ApprovalSpec
from kandev_slack.kinds.question.spec import QuestionSpec
from kandev_slack.kinds.spec import KindSpec

SPECS: Mapping[ItemKind, KindSpec] = {
    ItemKind.QUESTION: QuestionSpec(),
    ItemKind.APPROVAL: ApprovalSpec(),
}


class UnknownKindError(LookupError):
    """No kind this release knows is (or owns) ``what``."""

    def __init__(self, what: object) -> None:
        super().__init__(f"no item kind known to this release for {what!r}")
        self.what = what


_BY_VALUE: Mapping[str, KindSpec] = {kind.value: spec for kind, spec in SPECS.items()}


def spec_of(what: object) -> KindSpec:
    """The spec of a kind, an item, a card (anything with a ``kind``) or a stored kind
    ("question"). Raises :class:`UnknownKindError` for anything else (a card key: use
    :func:`spec_of_key`)."""
    kind = getattr(what, "kind", what)
    if isinstance(kind, str) and kind in _BY_VALUE:
        return _BY_VALUE[kind]
    raise UnknownKindError(kind)


#: The stored kinds the reconciler checks against Kandev's list of bundles.
QUESTION_LISTED: tuple[str, ...] = tuple(k.value for k, s in SPECS.items() if s.listed_as_question)


def spec_of_key(key: str | None) -> KindSpec:
    """The spec of the kind whose item a card key names (exactly one must own it)."""
    owners = [spec for spec in SPECS.values() if key and spec.owns_key(key)]
    if len(owners) != 1:
        raise UnknownKindError(key)
    return owners[0]


def kind_of_key(key: str | None) -> ItemKind:
    """The kind a card key names (raises :class:`UnknownKindError` for none)."""
    return spec_of_key(key).kind


def item_kind_of_payload(pending_id: object) -> ItemKind:
    """The kind of the card an outbox payload's ``pending_id`` names. Named legacy rule: a
    write with no card key (none today; older releases wrote some) is counted with the
    questions, as the column's default 'question' and migration 0015 always did."""
    if not isinstance(pending_id, str) or not pending_id:
        return ItemKind.QUESTION  # the legacy rule above, not a fallback for unknown keys
    return kind_of_key(pending_id)


def label_of_key(key: str | None) -> str:
    """The metrics label of the kind a card key names, "unknown" for a key of no known kind
    (a refused click may name anything): a label never raises, nor says "question" for it."""
    try:
        return kind_of_key(key).value
    except UnknownKindError:
        return "unknown"
