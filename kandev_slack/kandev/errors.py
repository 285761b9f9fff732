"""The small exception hierarchy of the Kandev client."""

from __future__ import annotations

from kandev_slack.ops import metrics


class KandevError(Exception):
    """Base class of every error the Kandev client raises. Each is made only to be raised, so
    making one counts it in the metrics, by kind."""

    kind = "tool"

    def __init__(self, *args: object) -> None:
        super().__init__(*args)
        metrics.kandev_error(self.kind)


class KandevUnavailable(KandevError):
    """Kandev could not be reached, or answered 5xx / 503 "starting", after bounded retries."""

    kind = "unreachable"


class KandevUnconfirmed(KandevUnavailable):
    """No usable reply after bounded retries, and at least one attempt may have reached Kandev
    (a read timeout, a connection dropped after the request was sent, a 502/504 from a gateway):
    what Kandev did with it is not known. Re-sending the same answer is safe and settles it."""

    kind = "unconfirmed"


class KandevAuthError(KandevError):
    """401: KANDEV_TOKEN missing or invalid."""

    kind = "auth"

    def __init__(self, message: str = "KANDEV_TOKEN missing or invalid (Kandev answered 401)"):
        super().__init__(message)


class KandevProtocolError(KandevError):
    """Kandev answered something that does not match the contract (bad JSON, unknown shape)."""

    kind = "protocol"


class KandevToolError(KandevError):
    """An MCP tool call returned ``isError: true`` (``backend error [CODE]: message``)."""

    def __init__(self, code: str, message: str):
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message


class KandevValidationError(KandevToolError):
    """``VALIDATION_ERROR`` (or a schema violation) from a tool."""

    kind = "validation"


class KandevNotFoundError(KandevToolError):
    """``NOT_FOUND`` from a tool."""

    kind = "not_found"


class KandevConflictError(KandevToolError):
    """``CONFLICT`` from a tool."""

    kind = "conflict"


class KandevAgentStarting(KandevToolError):
    """``INTERNAL_ERROR`` from a permission call while the task's agent starts (seen for about a
    second after the task was created): transient, try again shortly."""

    kind = "tool"
