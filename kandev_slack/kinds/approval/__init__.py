"""Approvals: an agent's tool-permission request (``session/request_permission``), resolved by
choosing one of its options (``resolve_agent_permission_kandev``). Rendered by
kandev_slack/kinds/approval/cards/."""
