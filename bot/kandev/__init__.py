"""The Kandev client: ``KandevClient`` (REST + MCP), ``KandevHints`` (WebSocket push hints)."""

from bot.kandev.client import KandevClient, Transport
from bot.kandev.errors import (
    KandevAuthError,
    KandevConflictError,
    KandevError,
    KandevNotFoundError,
    KandevProtocolError,
    KandevToolError,
    KandevUnavailable,
    KandevUnconfirmed,
    KandevValidationError,
)
from bot.kandev.hints import KandevHints
from bot.kandev.models import (
    FinalState,
    Invalid,
    Lost,
    NotActive,
    NotFound,
    NotRecorded,
    Outcome,
    ProbeResult,
    Resolution,
    Task,
    Unconfirmed,
    Won,
    Workspace,
)

__all__ = [
    "FinalState",
    "Invalid",
    "KandevAuthError",
    "KandevClient",
    "KandevConflictError",
    "KandevError",
    "KandevHints",
    "KandevNotFoundError",
    "KandevProtocolError",
    "KandevToolError",
    "KandevUnavailable",
    "KandevUnconfirmed",
    "KandevValidationError",
    "Lost",
    "NotActive",
    "NotFound",
    "NotRecorded",
    "Outcome",
    "ProbeResult",
    "Resolution",
    "Task",
    "Transport",
    "Unconfirmed",
    "Won",
    "Workspace",
]
