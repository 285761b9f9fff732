"""Check a Kandev server step by step: reachable → ready → token accepted (REST, then MCP).

The expected failure modes become fields of :class:`ProbeResult`, never exceptions.
Kandev's version is read from ``GET /health`` (``{"status":"ok","version":"v0.95.1",…}``),
which needs no token and answers even while the API is still starting.
"""

from __future__ import annotations

from typing import TypedDict

from kandev_slack.kandev.errors import KandevAuthError, KandevError, KandevUnavailable
from kandev_slack.kandev.http import KandevHttp
from kandev_slack.kandev.mcp.session import McpSession
from kandev_slack.kandev.models import ProbeResult

HEALTH_PATH = "/health"
API_PROBE_PATH = "/api/v1/workspaces"


class _Base(TypedDict):
    """What every result says: where it asked, and whether a token was sent."""

    base_url: str
    token_sent: bool


def probe(http: KandevHttp, mcp: McpSession, *, timeout: float = 5.0) -> ProbeResult:
    base = _Base(base_url=http.base_url, token_sent=http.token is not None)
    try:
        health = http.request("GET", HEALTH_PATH, timeout=timeout, retry=False).response
    except KandevUnavailable as exc:
        return ProbeResult(**base, reachable=False, detail=str(exc))
    version = _version(health)

    try:
        api = http.request("GET", API_PROBE_PATH, timeout=timeout, retry=False).response
    except KandevUnavailable as exc:
        return ProbeResult(
            **base, reachable=True, version=version, detail=f"Kandev is not ready: {exc}"
        )
    except KandevAuthError as exc:
        return ProbeResult(
            **base, reachable=True, ready=True, auth_ok=False, version=version, detail=str(exc)
        )
    if api.status_code != 200:
        return ProbeResult(
            **base,
            reachable=True,
            ready=True,
            version=version,
            detail=f"GET {API_PROBE_PATH} answered HTTP {api.status_code}: {api.text[:200]}",
        )

    try:
        mcp.initialize()
    except KandevAuthError as exc:
        return _mcp_failed(base, version, f"MCP refused the token: {exc}")
    except KandevError as exc:
        return _mcp_failed(base, version, f"MCP endpoint failed: {exc}")
    return ProbeResult(
        **base, reachable=True, ready=True, auth_ok=True, mcp_ok=True, version=version
    )


def _mcp_failed(base: _Base, version: str | None, detail: str) -> ProbeResult:
    return ProbeResult(
        **base,
        reachable=True,
        ready=True,
        auth_ok=True,
        mcp_ok=False,
        version=version,
        detail=detail,
    )


def _version(response) -> str | None:
    try:
        data = response.json()
    except ValueError:
        return None
    version = data.get("version") if isinstance(data, dict) else None
    return version if isinstance(version, str) and version else None
