"""How a Slack Web API call fails, as the use cases see it: :class:`SlackError` (Slack's error
code, Retry-After, whether it is worth retrying or needs a person) and :class:`UnexpectedReply`."""

from __future__ import annotations

from kandev_slack.ops import metrics


class SlackError(Exception):
    """A Slack Web API call failed (each is made only to be raised: it is counted in the
    metrics by method and error code)."""

    def __init__(self, method: str, error: str, *, retry_after: float | None = None):
        super().__init__(f"{method}: {error}")
        self.method = method
        self.error = error
        self.retry_after = retry_after
        metrics.slack_api_error(method, error)

    @property
    def rate_limited(self) -> bool:
        return self.retry_after is not None

    @property
    def transient(self) -> bool:
        """Worth retrying later (rate limit, server or network trouble)."""
        return self.rate_limited or self.error in _TRANSIENT

    @property
    def needs_operator(self) -> str | None:
        """What a person must fix before this can succeed (a revoked token, the bot not in the
        channel…), or None. Writes failing so are kept and retried, not dropped."""
        return _NEEDS_OPERATOR.get(self.error)


class UnexpectedReply(Exception):
    """Slack answered ok, but without what the call must return (e.g. a post without its
    ``ts``): the call may have been carried out, so it is never simply repeated."""

    def __init__(self, method: str, missing: str):
        super().__init__(f"{method}: ok reply without {missing!r}")
        self.method = method


_TRANSIENT = {
    "ratelimited",
    "internal_error",
    "fatal_error",
    "service_unavailable",
    "request_timeout",
    "connection_error",
    "http_5xx",
}

_TOKEN_HINT = "check SLACK_BOT_TOKEN (revoked, expired or from another workspace?)"
_CHANNEL_HINT = "invite the app to the channel, or fix the channel in the routing"
_SCOPE_HINT = "add the missing scope in the Slack app's OAuth & Permissions and reinstall it"
_NEEDS_OPERATOR = {
    "invalid_auth": _TOKEN_HINT,
    "not_authed": _TOKEN_HINT,
    "token_revoked": _TOKEN_HINT,
    "token_expired": _TOKEN_HINT,
    "account_inactive": _TOKEN_HINT,
    "not_in_channel": _CHANNEL_HINT,
    "channel_not_found": _CHANNEL_HINT,
    "is_archived": _CHANNEL_HINT,
    "restricted_action": _CHANNEL_HINT,
    "missing_scope": _SCOPE_HINT,
    "no_permission": _SCOPE_HINT,
}
