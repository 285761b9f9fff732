"""The real-process half of the test kit: a real Kandev server on loopback (runtime install,
port blocks, seeding through a scripted mock agent, its MCP endpoint) and the bot as a process
(``BotProcess``) or in the test's process (``InProcessBot``).

This package's namespace is its public surface: tests and the benchmark import from here
(``from tests.kit.harness import KandevServer, Seeder, question``), never from its modules.
``mock_agent`` is also the script Kandev runs as its agent."""

from tests.kit.harness import mock_agent
from tests.kit.harness.botproc import CHANNEL, CONSOLE_SCRIPT, BotProcess, bot_env, free_port
from tests.kit.harness.inproc import InProcessBot
from tests.kit.harness.kandev_proxy import AnswerCall, Fault, KandevProxy, PathFault
from tests.kit.harness.kandev_runtime import KANDEV_VERSION, ensure_runtime
from tests.kit.harness.kandev_server import KandevHarnessError, KandevServer, SeededBundle, Workflow
from tests.kit.harness.mcp import McpSession, McpToolError
from tests.kit.harness.mock_agent import STANDARD_OPTIONS, permission_spec
from tests.kit.harness.permissions import Permissions, SeededPermission
from tests.kit.harness.ports import (
    BLOCK_SIZE,
    INSTANCE_OFFSET,
    INSTANCE_PORTS,
    PortBlock,
    PortReservation,
    reserve_block,
)
from tests.kit.harness.postgres import PG_ADMIN, admin_connection
from tests.kit.harness.processes import descendants
from tests.kit.harness.seeder import Seeder
from tests.kit.harness.specs import QuestionSpec, option_id, question, sample_questions

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
