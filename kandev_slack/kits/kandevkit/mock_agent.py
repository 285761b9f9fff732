"""A scripted ACP agent for Kandev's ``KANDEV_MOCK_AGENT=only`` mode (stdlib only).

Kandev launches it as the ``mock-agent`` executable and speaks ACP to it: newline-delimited
JSON-RPC 2.0 over stdin/stdout. On ``session/prompt`` the agent looks for a spec line in the
prompt text (the task description)::

    KANDEV-MOCK-SPEC <marker> <base64 of {"questions": [...], "context": "..."}>

and, if found, calls the ``ask_user_question_kandev`` MCP tool on the session's MCP server with
those questions. That call blocks until the bundle is resolved. A spec may instead (or first)
hold ``"permissions"``: tool-permission requests (see ``permission_spec``), each reported as a
``tool_call`` update and sent to Kandev as ``session/request_permission``; the agent blocks
until Kandev answers it, or gives up after the request's ``timeout`` seconds (a withdrawn
request: the tool call fails and the turn ends, and Kandev keeps listing it). What the agent
learns is kept,
rewritten atomically, in ``<results_dir>/<marker>.json``::

    {"marker", "task_id", "tool": {"is_error", "text", "parsed", "raw"} | null,
     "permissions": [{"tool_call_id", "outcome": ACP outcome | null, "withdrawn",
                      "asked_at", "answered_at"}],
     "asked": {tool_call_id: when it was sent}, "prompts": [later prompt texts],
     "errors": [failures], "updated_at"}

(times are ``time.time()``, for the benchmark.)

``prompts`` holds prompts without a spec that arrive in the same ACP session, e.g. the answer
Kandev sends as a new prompt after it relaunched the agent, or its "declined" note after a cancel.
A turn ends with ``end_turn``; a ``session/cancel`` ends the open turn at once with
``cancelled`` (Kandev's shutdown waits for that). When the question ended unanswered, the reply
waits up to a second for stdin to close, because that usually means Kandev is tearing the session
down and a reply in the middle of it stalls agentctl for 5 s. Everything is logged to a file;
stdout carries only protocol messages.

Run as ``python mock_agent.py --results-dir DIR --log FILE``.
"""

from __future__ import annotations

import argparse
import base64
import binascii
import itertools
import json
import os
import re
import sys
import tempfile
import threading
import time
import urllib.request
import uuid
from pathlib import Path
from typing import Any

SPEC_PATTERN = re.compile(r"KANDEV-MOCK-SPEC (?P<marker>[A-Za-z0-9_-]+) (?P<spec>[A-Za-z0-9+/=]+)")
TASK_ID_PATTERN = re.compile(r"Kandev Task ID: (?P<task_id>[0-9a-fA-F-]{36})")
MCP_PROTOCOL_VERSION = "2025-06-18"
TOOL_TIMEOUT_SECONDS = 24 * 3600.0
UNANSWERED_REPLY_DELAY = 1.0
#: The ids of the agent's own requests to Kandev (``session/request_permission``) start here.
FIRST_REQUEST_ID = 900001

INITIALIZE_RESULT: dict[str, Any] = {
    "protocolVersion": 1,
    "agentCapabilities": {
        "loadSession": True,
        "mcpCapabilities": {"http": True, "sse": True},
        "promptCapabilities": {"image": False, "audio": False, "embeddedContext": True},
    },
    "authMethods": [],
}
MODES: dict[str, Any] = {
    "currentModeId": "default",
    "availableModes": [{"id": "default", "name": "Default", "description": "Scripted test agent"}],
}


def config_options(model: str) -> list[dict[str, Any]]:
    return [
        {
            "type": "select",
            "id": "model",
            "name": "Model",
            "category": "model",
            "currentValue": model,
            "options": [
                {"value": "mock-fast", "name": "Mock Fast"},
                {"value": "mock-slow", "name": "Mock Slow"},
            ],
        },
        {
            "type": "select",
            "id": "mode",
            "name": "Mode",
            "category": "mode",
            "currentValue": "default",
            "options": [{"value": "default", "name": "Default"}],
        },
    ]


def encode_spec(
    questions: list[dict[str, Any]],
    context: str = "",
    transcript: list[dict[str, Any]] | None = None,
    permissions: list[dict[str, Any]] | None = None,
    then: list[dict[str, Any]] | None = None,
) -> str:
    """The base64 payload that ``parse_spec`` reads back (used by the harness); ``then``: what
    the agent says and runs once answered, as ``transcript`` (else "Thanks, continuing.")."""
    spec: dict[str, Any] = {"questions": questions, "context": context}
    if transcript:
        spec["transcript"] = transcript
    if then:
        spec["then"] = then
    if permissions:
        spec["permissions"] = permissions
    raw = json.dumps(spec, separators=(",", ":"))
    return base64.b64encode(raw.encode()).decode()


def spec_line(
    marker: str,
    questions: list[dict[str, Any]],
    context: str = "",
    transcript: list[dict[str, Any]] | None = None,
    permissions: list[dict[str, Any]] | None = None,
    then: list[dict[str, Any]] | None = None,
) -> str:
    payload = encode_spec(questions, context, transcript, permissions, then)
    return f"KANDEV-MOCK-SPEC {marker} {payload}"


#: The four ACP option kinds, as Kandev's web UI offers them (option id = kind).
STANDARD_OPTIONS: tuple[tuple[str, str, str], ...] = (
    ("allow_once", "Allow once", "allow_once"),
    ("allow_always", "Always allow", "allow_always"),
    ("reject_once", "Reject", "reject_once"),
    ("reject_always", "Always reject", "reject_always"),
)


def permission_spec(
    title: str,
    kind: str = "execute",
    raw_input: dict[str, Any] | None = None,
    options: list[tuple[str, str, str]] | None = None,
    *,
    timeout: float | None = None,
    end_turn: bool = True,
) -> dict[str, Any]:
    """One scripted ``session/request_permission``: the tool call's ``title``, ACP ``kind``
    (execute, edit, read, fetch…) and ``raw_input``; ``options`` as ``(option_id, name, kind)``
    (default: the four standard ones); ``timeout``: give up after that many seconds (a
    withdrawn request); ``end_turn``: end the turn after the last request is answered (False:
    keep it open until Kandev cancels it)."""
    chosen = list(options) if options is not None else list(STANDARD_OPTIONS)
    spec: dict[str, Any] = {
        "title": title,
        "kind": kind,
        "raw_input": dict(raw_input or {}),
        "options": [{"optionId": o, "name": n, "kind": k} for o, n, k in chosen],
        "end_turn": end_turn,
    }
    if timeout is not None:
        spec["timeout"] = timeout
    return spec


def parse_spec(text: str) -> tuple[str, dict[str, Any]] | None:
    match = SPEC_PATTERN.search(text)
    if match is None:
        return None
    try:
        spec = json.loads(base64.b64decode(match["spec"]))
    except (binascii.Error, ValueError):
        return None
    return match["marker"], spec


def write_json_atomic(path: Path, payload: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    with os.fdopen(fd, "w") as out:
        json.dump(payload, out)
    os.replace(tmp, path)


class McpClient:
    """Just enough streamable-HTTP MCP to call one tool."""

    def __init__(self, url: str, headers: dict[str, str]) -> None:
        self.url = url
        self.headers = headers
        self.session_id: str | None = None
        self._next_id = 0

    def call_tool(self, name: str, arguments: dict[str, Any], timeout: float) -> dict[str, Any]:
        self._request(
            "initialize",
            {
                "protocolVersion": MCP_PROTOCOL_VERSION,
                "capabilities": {},
                "clientInfo": {"name": "kandev-slack-mock-agent", "version": "1"},
            },
            timeout=30.0,
        )
        self._notify("notifications/initialized")
        return self._request("tools/call", {"name": name, "arguments": arguments}, timeout=timeout)

    def _post(self, message: dict[str, Any], timeout: float) -> tuple[str, str, dict[str, str]]:
        headers = {
            "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream",
            **self.headers,
        }
        if self.session_id:
            headers["Mcp-Session-Id"] = self.session_id
        request = urllib.request.Request(
            self.url, data=json.dumps(message).encode(), headers=headers, method="POST"
        )
        with urllib.request.urlopen(request, timeout=timeout) as response:
            body = response.read().decode()
            return response.headers.get("Content-Type", ""), body, dict(response.headers)

    def _notify(self, method: str) -> None:
        self._post({"jsonrpc": "2.0", "method": method}, timeout=30.0)

    def _request(self, method: str, params: dict[str, Any], timeout: float) -> dict[str, Any]:
        self._next_id += 1
        request_id = self._next_id
        content_type, body, headers = self._post(
            {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}, timeout
        )
        session_id = headers.get("Mcp-Session-Id") or headers.get("mcp-session-id")
        if session_id:
            self.session_id = session_id
        for message in parse_messages(content_type, body):
            if message.get("id") == request_id:
                if "error" in message:
                    raise RuntimeError(f"MCP {method} error: {message['error']}")
                return message.get("result", {})
        raise RuntimeError(f"MCP {method}: no reply with id {request_id} in {body[:500]!r}")


def parse_messages(content_type: str, body: str) -> list[dict[str, Any]]:
    """JSON-RPC messages of a reply that is either plain JSON or a server-sent-event stream."""
    if "text/event-stream" not in content_type:
        return [json.loads(body)] if body.strip() else []
    messages = []
    for block in body.replace("\r\n", "\n").split("\n\n"):
        data = "\n".join(
            line[5:].removeprefix(" ") for line in block.split("\n") if line.startswith("data:")
        )
        if data:
            messages.append(json.loads(data))
    return messages


class Agent:
    def __init__(self, results_dir: Path, log_path: Path) -> None:
        self.results_dir = results_dir
        self.log_file = log_path.open("a", buffering=1)
        self.out_lock = threading.Lock()
        self.sessions: dict[str, dict[str, Any]] = {}
        # Prompt requests still awaiting their reply, by ACP session id.
        self.open_prompts: dict[str, Any] = {}
        self.prompt_lock = threading.Lock()
        self.stdin_closed = threading.Event()
        self.record_lock = threading.Lock()
        # The agent's own requests to Kandev still awaiting their response, by JSON-RPC id.
        self.outstanding: dict[int, tuple[threading.Event, list[dict[str, Any]]]] = {}
        self.outstanding_lock = threading.Lock()
        self.request_ids = itertools.count(FIRST_REQUEST_ID)

    # --- plumbing -------------------------------------------------------------------------
    def log(self, text: str) -> None:
        now = time.time()
        stamp = time.strftime("%H:%M:%S", time.localtime(now)) + f".{int(now % 1 * 1000):03d}"
        self.log_file.write(f"{stamp} [{os.getpid()}] {text}\n")

    def send(self, message: dict[str, Any]) -> None:
        line = json.dumps(message, separators=(",", ":"))
        with self.out_lock:
            sys.stdout.write(line + "\n")
            sys.stdout.flush()
        self.log(f">> {line[:2000]}")

    def reply(self, request_id: Any, result: dict[str, Any]) -> None:
        self.send({"jsonrpc": "2.0", "id": request_id, "result": result})

    def error(self, request_id: Any, code: int, message: str) -> None:
        self.send({"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message}})

    def run(self) -> None:
        self.log(f"started argv={sys.argv!r}")
        for line in sys.stdin:
            line = line.strip()
            if not line:
                continue
            self.log(f"<< {line[:2000]}")
            try:
                message = json.loads(line)
            except ValueError:
                self.log("unparseable line ignored")
                continue
            if "method" in message:
                self.dispatch(message)
            elif "id" in message:
                self.deliver(message)
        self.stdin_closed.set()
        self.log("stdin closed; exiting")

    def ask(self, method: str, params: dict[str, Any], timeout: float | None) -> Any:
        """Send a request to Kandev and wait for its response: the response message, or
        None when ``timeout`` passed (or stdin closed) first."""
        request_id = next(self.request_ids)
        arrived = threading.Event()
        slot: list[dict[str, Any]] = []
        with self.outstanding_lock:
            self.outstanding[request_id] = (arrived, slot)
        self.send({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})
        deadline = None if timeout is None else time.monotonic() + timeout
        while not arrived.wait(0.2):
            late = deadline is not None and time.monotonic() > deadline
            if late or self.stdin_closed.is_set():
                break
        with self.outstanding_lock:
            self.outstanding.pop(request_id, None)
        return slot[0] if slot else None

    def deliver(self, message: dict[str, Any]) -> None:
        """A response to one of the agent's own requests (unknown ids: logged, dropped)."""
        with self.outstanding_lock:
            waiting = self.outstanding.get(message["id"])
        if waiting is None:
            self.log(f"response to no outstanding request: {message['id']!r}")
            return
        waiting[1].append(message)
        waiting[0].set()

    # --- protocol -------------------------------------------------------------------------
    def dispatch(self, message: dict[str, Any]) -> None:
        method = message["method"]
        params = message.get("params") or {}
        request_id = message.get("id")
        if method == "session/cancel":
            # As ACP asks: end the running turn at once with stopReason "cancelled". The
            # blocked tool call is left to finish on its own; its result is still recorded.
            self.finish_prompt(params.get("sessionId", ""), "cancelled")
            return
        if request_id is None:
            return
        if method == "initialize":
            self.reply(request_id, INITIALIZE_RESULT)
        elif method in ("authenticate", "logout", "session/set_mode", "session/close"):
            self.reply(request_id, {})
        elif method == "session/new":
            session_id = f"mock-{uuid.uuid4()}"
            self.remember(session_id, params)
            self.reply(
                request_id,
                {
                    "sessionId": session_id,
                    "modes": MODES,
                    "configOptions": config_options("mock-fast"),
                },
            )
        elif method in ("session/load", "session/resume"):
            self.remember(params.get("sessionId", ""), params)
            self.reply(request_id, {"modes": MODES, "configOptions": config_options("mock-fast")})
        elif method == "session/set_config_option":
            session = self.sessions.setdefault(params.get("sessionId", ""), {})
            if params.get("configId") == "model":
                session["model"] = params.get("value", "mock-fast")
            self.reply(
                request_id, {"configOptions": config_options(session.get("model", "mock-fast"))}
            )
        elif method == "session/list":
            self.reply(request_id, {"sessions": []})
        elif method == "session/prompt":
            threading.Thread(target=self.prompt, args=(request_id, params), daemon=True).start()
        else:
            self.error(request_id, -32601, f"method not found: {method}")

    def remember(self, session_id: str, params: dict[str, Any]) -> None:
        session = self.sessions.setdefault(session_id, {})
        session["mcp"] = _http_mcp_server(params.get("mcpServers") or [])

    def chunk(self, session_id: str, text: str) -> None:
        self.send(
            {
                "jsonrpc": "2.0",
                "method": "session/update",
                "params": {
                    "sessionId": session_id,
                    "update": {
                        "sessionUpdate": "agent_message_chunk",
                        "content": {"type": "text", "text": text},
                    },
                },
            }
        )

    def update(self, session_id: str, update: dict[str, Any]) -> None:
        self.send(
            {
                "jsonrpc": "2.0",
                "method": "session/update",
                "params": {"sessionId": session_id, "update": update},
            }
        )

    def until_recorded(
        self, session_id: str, task_id: str, transcript: list[dict[str, Any]], limit: float = 30.0
    ) -> None:
        """Kandev records updates asynchronously (slower under load than ``play``'s pause):
        wait until the task's conversation shows the transcript's last step before asking, so
        the question comes after everything played."""
        mcp = self.sessions.get(session_id, {}).get("mcp")
        if not transcript or not task_id or mcp is None:
            return
        last = transcript[-1]
        needle = str(last.get("tool") or last.get("say") or "")[:60]
        client = McpClient(mcp["url"], mcp["headers"])
        arguments = {"task_id": task_id, "limit": 10, "sort": "desc"}
        deadline = time.monotonic() + limit
        while time.monotonic() < deadline:
            try:
                found = client.call_tool("get_task_conversation_kandev", arguments, 10)
            except Exception as exc:  # the ask below still happens; the log says why
                self.log(f"could not read the conversation back: {exc}")
                return
            if needle in json.dumps(found, ensure_ascii=False):
                time.sleep(0.3)  # the step's completion is written just after it
                return
            time.sleep(0.2)
        self.log(f"the transcript's last step was not recorded within {limit:.0f}s")

    def play(self, session_id: str, transcript: list[dict[str, Any]]) -> None:
        """Fill the session before asking: ``{"say": text}`` becomes an agent message,
        ``{"tool": title, "command": …, "exit": n}`` a tool call and its completion. Kandev
        records updates asynchronously, so wait before the question is asked after them."""
        if not transcript:
            return
        updates = 0
        for number, step in enumerate(transcript):
            if "say" in step:
                self.chunk(session_id, str(step["say"]))
                updates += 1
            elif "tool" in step:
                call_id = f"call-{number}"
                raw_input = {"command": step.get("command", "")}
                self.update(
                    session_id,
                    {
                        "sessionUpdate": "tool_call",
                        "toolCallId": call_id,
                        "title": step["tool"],
                        "kind": step.get("kind", "execute"),
                        "status": "in_progress",
                        "rawInput": raw_input,
                    },
                )
                exit_code = int(step.get("exit", 0))
                self.update(
                    session_id,
                    {
                        "sessionUpdate": "tool_call_update",
                        "toolCallId": call_id,
                        "status": "completed" if exit_code == 0 else "failed",
                        "rawOutput": {"exit_code": exit_code, "output": step.get("output", "")},
                    },
                )
                updates += 2
        time.sleep(0.5 + 0.01 * updates)

    def prompt(self, request_id: Any, params: dict[str, Any]) -> None:
        session_id = params.get("sessionId", "")
        with self.prompt_lock:
            self.open_prompts[session_id] = request_id
        text = _prompt_text(params.get("prompt") or [])
        answered = True
        try:
            answered = self.handle_prompt(session_id, text)
        except Exception as exc:  # the turn must end whatever happened
            self.log(f"prompt failed: {exc!r}")
            answered = False
            error = repr(exc)
            marker = self._marker_of(session_id)
            if marker is not None:
                self._update(marker, lambda record: record["errors"].append(error))
        # A question that ended unanswered usually means Kandev is tearing the session down
        # (task deleted, server stopping). Replying in the middle of that teardown makes
        # agentctl wait 5 s for its reader goroutines, so give the teardown a moment to close
        # stdin first; the process then exits without a reply.
        # An operator cancel (announced by the harness, see ``cancel_flag``) is not a teardown:
        # Kandev waits for this turn to end before it resumes the agent, so end it at once.
        marker = self._marker_of(session_id)
        cancelled = marker is not None and cancel_flag(self.results_dir, marker).exists()
        if not answered and not cancelled and self.stdin_closed.wait(UNANSWERED_REPLY_DELAY):
            return
        self.finish_prompt(session_id, "end_turn", request_id)

    def finish_prompt(self, session_id: str, reason: str, request_id: Any = None) -> None:
        """Reply to the session's open prompt once (a cancel may have answered it already)."""
        with self.prompt_lock:
            open_id = self.open_prompts.get(session_id)
            if open_id is None or (request_id is not None and open_id != request_id):
                return
            del self.open_prompts[session_id]
        self.reply(open_id, {"stopReason": reason})

    def handle_prompt(self, session_id: str, text: str) -> bool:
        """Run one turn; False when the question ended without an answer."""
        parsed = parse_spec(text)
        if parsed is None:
            marker = self._marker_of(session_id)
            self.log(f"prompt without spec (session {session_id}, marker {marker})")
            if marker is not None:
                self._update(marker, lambda record: record["prompts"].append(text))
            self.chunk(session_id, "Nothing to ask.")
            return True
        marker, spec = parsed
        task_match = TASK_ID_PATTERN.search(text)
        task_id = task_match["task_id"] if task_match else ""
        write_json_atomic(self.results_dir / "sessions" / f"{session_id}.json", {"marker": marker})
        self._update(marker, lambda record: record.update(task_id=task_id))
        self.play(session_id, spec.get("transcript") or [])
        self.until_recorded(session_id, task_id, spec.get("transcript") or [])
        if spec.get("permissions"):
            return self.request_permissions(session_id, marker, spec["permissions"])
        if not spec.get("then"):  # else it would be recorded after the question, as if said
            self.chunk(session_id, "I need to ask the user something.")  # once answered
        mcp = self.sessions.get(session_id, {}).get("mcp")
        if mcp is None:
            raise RuntimeError(f"no http MCP server known for session {session_id}")
        arguments = {"questions": spec.get("questions", []), "context": spec.get("context", "")}
        self.log(f"calling ask_user_question_kandev for marker {marker} at {mcp['url']}")
        client = McpClient(mcp["url"], mcp["headers"])
        result = client.call_tool("ask_user_question_kandev", arguments, TOOL_TIMEOUT_SECONDS)
        self.log(f"tool returned for marker {marker}: {json.dumps(result)[:2000]}")
        self._update(marker, lambda record: record.update(tool=_tool_outcome(result)))
        if result.get("isError"):
            return False
        if spec.get("then"):  # a tool call first: Kandev would merge two texts into one
            self.play(session_id, spec["then"])
        else:
            self.chunk(session_id, "Thanks, continuing.")
        return True

    def request_permissions(
        self, session_id: str, marker: str, requests: list[dict[str, Any]]
    ) -> bool:
        """Ask for each permission in turn; False when one was given up on (withdrawn)."""
        for number, request in enumerate(requests, start=1):
            call_id = f"mock-perm-{marker[:8]}-{number}"
            asked_at = time.time()  # the benchmark times a card from here
            self._update(marker, lambda record, c=call_id, at=asked_at: _asked(record, c, at))
            outcome = self.request_permission(session_id, call_id, request)
            withdrawn = outcome is None
            entry = {
                "tool_call_id": call_id,
                "outcome": outcome,
                "withdrawn": withdrawn,
                "asked_at": asked_at,
                "answered_at": time.time(),
            }
            self._update(marker, lambda record, e=entry: record["permissions"].append(e))
            selected = (outcome or {}).get("outcome") == "selected"
            self.update(
                session_id,
                {
                    "sessionUpdate": "tool_call_update",
                    "toolCallId": call_id,
                    "status": "completed" if selected else "failed",
                },
            )
            if withdrawn:
                return True  # the agent gave up: it ends its turn without waiting any more
        if not requests[-1].get("end_turn", True):
            while not self.stdin_closed.wait(0.2):
                with self.prompt_lock:
                    if session_id not in self.open_prompts:
                        break
        return True

    def request_permission(
        self, session_id: str, call_id: str, request: dict[str, Any]
    ) -> dict[str, Any] | None:
        """One ``session/request_permission``: Kandev's ``outcome`` (``{"outcome":
        "selected", "optionId"}`` or ``{"outcome": "cancelled"}``), None when given up."""
        tool_call = {
            "toolCallId": call_id,
            "title": request.get("title", "Run a command"),
            "kind": request.get("kind", "execute"),
            "status": "pending",
            "rawInput": request.get("raw_input") or {},
        }
        self.update(session_id, {"sessionUpdate": "tool_call", **tool_call})
        params = {"sessionId": session_id, "toolCall": tool_call, "options": request["options"]}
        timeout = request.get("timeout")
        response = self.ask("session/request_permission", params, timeout)
        if response is None:
            self.log(f"permission {call_id} given up")
            return None
        outcome = (response.get("result") or {}).get("outcome")
        self.log(f"permission {call_id} -> {outcome!r}")
        return outcome if isinstance(outcome, dict) else {"error": response.get("error")}

    def _marker_of(self, session_id: str) -> str | None:
        path = self.results_dir / "sessions" / f"{session_id}.json"
        try:
            return json.loads(path.read_text())["marker"]
        except (OSError, ValueError, KeyError):
            return None

    def _update(self, marker: str, change: Any) -> None:
        """Apply ``change`` to the marker's result record and rewrite it atomically."""
        path = self.results_dir / f"{marker}.json"
        with self.record_lock:
            try:
                record = json.loads(path.read_text())
            except (OSError, ValueError):
                record = {
                    "marker": marker,
                    "task_id": "",
                    "tool": None,
                    "permissions": [],
                    "prompts": [],
                    "errors": [],
                }
            change(record)
            record["updated_at"] = time.time()
            write_json_atomic(path, record)


def _asked(record: dict[str, Any], call_id: str, at: float) -> None:
    """Note in the record when the request ``call_id`` was sent (time.time())."""
    record.setdefault("asked", {})[call_id] = at


def cancel_flag(results_dir: Path, marker: str) -> Path:
    """The file the harness creates before it cancels the bundle of ``marker``."""
    return results_dir / "cancelled" / marker


def _tool_outcome(result: dict[str, Any]) -> dict[str, Any]:
    content = result.get("content") or []
    text = content[0].get("text", "") if content else ""
    try:
        parsed: Any = json.loads(text)
    except ValueError:
        parsed = None
    return {"is_error": bool(result.get("isError")), "text": text, "parsed": parsed, "raw": result}


def _http_mcp_server(servers: list[dict[str, Any]]) -> dict[str, Any] | None:
    for server in servers:
        if server.get("type", "http") == "http" and server.get("url"):
            headers = {h["name"]: h["value"] for h in server.get("headers") or []}
            return {"url": server["url"], "headers": headers}
    return None


def _prompt_text(blocks: list[dict[str, Any]]) -> str:
    parts = []
    for block in blocks:
        if block.get("type") == "text":
            parts.append(block.get("text", ""))
        elif block.get("type") == "resource":
            parts.append(str((block.get("resource") or {}).get("text", "")))
    return "\n".join(parts)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--results-dir", required=True, type=Path)
    parser.add_argument("--log", required=True, type=Path)
    args, _unknown = parser.parse_known_args(argv)
    args.results_dir.mkdir(parents=True, exist_ok=True)
    Agent(args.results_dir, args.log).run()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
