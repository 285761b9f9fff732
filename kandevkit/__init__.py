"""A real Kandev on loopback, for the tests, the benchmark and the preview: the npm runtime's
install (``ensure_runtime``), port blocks, ``KandevServer`` (seeding through the scripted
``mock_agent``, its MCP endpoint), tool-permission requests, and the bot in this process
(``InProcessBot``, as ``kandev-slack run --http``).

This package's namespace is its public surface (``from kandevkit import KandevServer``); the
modules behind it may change. ``mock_agent`` is also the script Kandev runs as its agent. The
tests reach it through ``tests.kit.harness``, which re-exports it beside the tests-only parts."""

from kandevkit import mock_agent
from kandevkit.inproc import InProcessBot
from kandevkit.kandev_runtime import (
    KANDEV_VERSION,
    NPM_PACKAGE,
    RuntimeInstallError,
    ensure_runtime,
)
from kandevkit.kandev_server import KandevHarnessError, KandevServer, SeededBundle, Workflow
from kandevkit.mcp import McpSession, McpToolError
from kandevkit.mock_agent import STANDARD_OPTIONS, permission_spec
from kandevkit.permissions import LIST_TOOL, RESOLVE_TOOL, Permissions, SeededPermission
from kandevkit.ports import (
    BLOCK_SIZE,
    INSTANCE_OFFSET,
    INSTANCE_PORTS,
    PortBlock,
    PortReservation,
    PortsInUse,
    free_port,
    reserve_block,
)
from kandevkit.processes import descendants
from kandevkit.seeder import Seeder
from kandevkit.specs import QuestionSpec, option_id, question, sample_questions

__all__ = [
    "BLOCK_SIZE",
    "INSTANCE_OFFSET",
    "INSTANCE_PORTS",
    "KANDEV_VERSION",
    "NPM_PACKAGE",
    "InProcessBot",
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
