"""An approval resolved with a token Kandev no longer takes (a person's own, revoked after
their workspaces were read: issue 32): a 401 is a refused token wherever it comes, so their link
is marked broken and they are asked to reconnect — never "Kandev unreachable"."""

from __future__ import annotations

from datetime import UTC, datetime

import httpx
import pytest
import respx

from kandev_slack.kandev.approvals.wire import PermissionList
from kandev_slack.kandev.errors import KandevAuthError
from tests.unit.kandev.approvals.test_client import (
    BASE,
    LISTED,
    SESSION,
    make_client,
    resolve_calls,
)


@respx.mock
def test_a_refused_token_while_reading_the_turn_is_a_refused_token_not_kandev_down() -> None:
    respx.get(f"{BASE}/api/v1/task-sessions/{SESSION}").mock(
        return_value=httpx.Response(401, json={"error": "authentication required"})
    )
    c, fake = make_client({"resolve_agent_permission_kandev": lambda a: {"status": "resolved"}})
    approval = PermissionList.model_validate({"permissions": [LISTED]}).permissions[0].approval()

    with pytest.raises(KandevAuthError):
        c.permissions.approve(approval, "allow_once", first_sent=datetime.now(UTC))
    assert resolve_calls(fake) == 0
