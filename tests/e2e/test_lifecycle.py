"""Starting and stopping the bot as an operator would."""

from __future__ import annotations


def test_healthz_reports_ok_and_sigterm_stops_cleanly(bot_factory):
    bot = bot_factory()
    status, body = bot.health()
    assert status == 200, body
    assert body["status"] == "ok"
    code = bot.stop()
    logs = bot.logs()
    assert code == 0, logs[-3000:]
    assert "Traceback" not in logs, logs[-3000:]
