"""The real-process half of the test kit: a real Kandev server on loopback (runtime install,
port blocks, seeding through a scripted mock agent, its MCP endpoint — the ``kandevkit``
package, shared with the preview, re-exported here) and the bot as a process (``BotProcess``)
or in the test's process (``InProcessBot``), a fault proxy in front of Kandev, PostgreSQL.

This package's namespace is its public surface: tests and the benchmark import from here
(``from tests.kit.harness import KandevServer, Seeder, question``), never from its modules.
``mock_agent`` is also the script Kandev runs as its agent."""

from kandev_slack.inproc import InProcessBot
from kandev_slack.kits.kandevkit import (
    BLOCK_SIZE,
    INSTANCE_OFFSET,
    INSTANCE_PORTS,
    KANDEV_VERSION,
    LIST_TOOL,
    RESOLVE_TOOL,
    STANDARD_OPTIONS,
    KandevHarnessError,
    KandevServer,
    McpSession,
    McpToolError,
    Permissions,
    PortBlock,
    PortReservation,
    QuestionSpec,
    SeededBundle,
    SeededPermission,
    Seeder,
    Workflow,
    descendants,
    ensure_runtime,
    free_port,
    mock_agent,
    option_id,
    permission_spec,
    question,
    reserve_block,
    sample_questions,
)
from tests.kit.harness.botproc import CHANNEL, CONSOLE_SCRIPT, BotProcess, bot_env
from tests.kit.harness.kandev_proxy import AnswerCall, Fault, KandevProxy, PathFault
from tests.kit.harness.postgres import PG_ADMIN, admin_connection

__all__ = [
    "admin_connection",
    "BLOCK_SIZE",
    "CHANNEL",
    "CONSOLE_SCRIPT",
    "descendants",
    "INSTANCE_OFFSET",
    "INSTANCE_PORTS",
    "KANDEV_VERSION",
    "AnswerCall",
    "BotProcess",
    "InProcessBot",
    "KandevHarnessError",
    "LIST_TOOL",
    "RESOLVE_TOOL",
    "Fault",
    "KandevProxy",
    "PathFault",
    "Permissions",
    "permission_spec",
    "SeededPermission",
    "STANDARD_OPTIONS",
    "KandevServer",
    "PG_ADMIN",
    "McpSession",
    "McpToolError",
    "PortBlock",
    "PortReservation",
    "QuestionSpec",
    "SeededBundle",
    "Seeder",
    "Workflow",
    "bot_env",
    "ensure_runtime",
    "free_port",
    "mock_agent",
    "option_id",
    "question",
    "reserve_block",
    "sample_questions",
]
