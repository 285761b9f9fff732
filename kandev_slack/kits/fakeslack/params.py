"""Reading Web API requests the way Slack does: form, JSON or query string; token in header."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qsl

JsonDict = dict[str, Any]


class ApiError(Exception):
    """An `{"ok": false, "error": ...}` answer, optionally with extra fields and HTTP status."""

    def __init__(
        self,
        error: str,
        *,
        status: int = 200,
        headers: dict[str, str] | None = None,
        **extra: Any,
    ) -> None:
        super().__init__(error)
        self.error = error
        self.status = status
        self.headers = headers or {}
        self.extra = extra

    def body(self) -> JsonDict:
        return {"ok": False, "error": self.error, **self.extra}


@dataclass
class ApiRequest:
    method: str
    params: JsonDict
    token: str | None
    headers: dict[str, str] = field(default_factory=dict)

    def text(self, name: str, default: str = "") -> str:
        value = self.params.get(name, default)
        return value if isinstance(value, str) else str(value)

    def required(self, name: str, error: str = "invalid_arguments") -> str:
        value = self.params.get(name)
        if value is None or value == "":
            raise ApiError(error)
        return value if isinstance(value, str) else str(value)

    def flag(self, name: str, default: bool = False) -> bool:
        value = self.params.get(name)
        if value is None:
            return default
        if isinstance(value, bool):
            return value
        return str(value).lower() in ("1", "true", "yes")

    def number(self, name: str, default: int) -> int:
        value = self.params.get(name)
        if value in (None, ""):
            return default
        try:
            return int(value)
        except (TypeError, ValueError) as exc:
            raise ApiError("invalid_arguments") from exc

    def json_arg(self, name: str, error: str) -> Any:
        """A JSON-valued argument: form bodies carry it as a JSON string, JSON bodies inline."""
        value = self.params.get(name)
        if isinstance(value, str):
            if value == "":
                return None
            try:
                return json.loads(value)
            except json.JSONDecodeError as exc:
                raise ApiError(error) from exc
        return value

    def has(self, name: str) -> bool:
        return name in self.params


def parse_params(content_type: str, body: bytes, query: str) -> JsonDict:
    """Arguments from the query string and the body (form-encoded or JSON)."""
    params: JsonDict = dict(parse_qsl(query, keep_blank_values=True))
    if not body:
        return params
    kind = content_type.split(";")[0].strip().lower()
    if kind == "application/json":
        try:
            decoded = json.loads(body.decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise ApiError("invalid_json") from exc
        if not isinstance(decoded, dict):
            raise ApiError("json_not_object")
        params.update(decoded)
    elif kind in ("application/x-www-form-urlencoded", "text/plain", ""):
        try:
            params.update(parse_qsl(body.decode("utf-8"), keep_blank_values=True))
        except UnicodeDecodeError as exc:
            raise ApiError("invalid_form_data") from exc
    else:
        raise ApiError("invalid_post_type")
    return params


def bearer_token(headers: dict[str, str], params: JsonDict) -> str | None:
    auth = next((v for k, v in headers.items() if k.lower() == "authorization"), "")
    if auth.lower().startswith("bearer "):
        return auth[7:].strip() or None
    token = params.get("token")
    return token if isinstance(token, str) and token else None
