"""A real Kandev on loopback, for the tests, the benchmark and the preview: the npm runtime's
install (``ensure_runtime``), port blocks, ``KandevServer`` (seeding through the scripted
``mock_agent``, its MCP endpoint), tool-permission requests, and with auth on several people
(``People``, ``Person``, the tests' ``Cast``) acting with their own tokens. It imports nothing
of the product, so it plays Kandev as Kandev is, not as the bot believes it to be.

This package's namespace is its public surface (``from kandev_slack.kits.kandevkit import
KandevServer``); the modules behind it may change. ``mock_agent`` is also the script Kandev runs as
its agent. The
tests reach it through ``tests.kit.harness``, which re-exports it beside the tests-only parts."""

from kandev_slack.kits.kandevkit import mock_agent
from kandev_slack.kits.kandevkit.kandev_runtime import (
    KANDEV_VERSION,
    NPM_PACKAGE,
    RuntimeInstallError,
    ensure_runtime,
)
from kandev_slack.kits.kandevkit.kandev_server import (
    KandevHarnessError,
    KandevRefused,
    KandevServer,
    SeededBundle,
    Workflow,
    retried_while_persistence_unavailable,
)
from kandev_slack.kits.kandevkit.mcp import McpSession, McpToolError
from kandev_slack.kits.kandevkit.mock_agent import STANDARD_OPTIONS, permission_spec
from kandev_slack.kits.kandevkit.people import Cast, People, Person
from kandev_slack.kits.kandevkit.permissions import (
    LIST_TOOL,
    RESOLVE_TOOL,
    Permissions,
    SeededPermission,
)
from kandev_slack.kits.kandevkit.ports import (
    BLOCK_SIZE,
    INSTANCE_OFFSET,
    INSTANCE_PORTS,
    PortBlock,
    PortReservation,
    PortsInUse,
    free_port,
    reserve_block,
)
from kandev_slack.kits.kandevkit.processes import descendants
from kandev_slack.kits.kandevkit.seeder import Actor, Seeder
from kandev_slack.kits.kandevkit.specs import QuestionSpec, option_id, question, sample_questions

__all__ = [
    "retried_while_persistence_unavailable",
    "Actor",
    "Cast",
    "KandevRefused",
    "People",
    "Person",
    "BLOCK_SIZE",
    "INSTANCE_OFFSET",
    "INSTANCE_PORTS",
    "KANDEV_VERSION",
    "NPM_PACKAGE",
    "KandevHarnessError",
    "LIST_TOOL",
    "KandevServer",
    "McpSession",
    "McpToolError",
    "Permissions",
    "PortBlock",
    "PortReservation",
    "PortsInUse",
    "QuestionSpec",
    "RESOLVE_TOOL",
    "RuntimeInstallError",
    "STANDARD_OPTIONS",
    "SeededBundle",
    "SeededPermission",
    "Seeder",
    "Workflow",
    "descendants",
    "ensure_runtime",
    "free_port",
    "mock_agent",
    "option_id",
    "permission_spec",
    "question",
    "reserve_block",
    "sample_questions",
]
