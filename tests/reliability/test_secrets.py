"""Guarantee 8: secrets never show. A full run at LOG_LEVEL=DEBUG against an auth-enabled
Kandev (post, answer, a Slack invalid_auth, a Kandev 401 from a wrong KANDEV_TOKEN) and
`kandev-slack check` (right and wrong tokens): no token, signing secret or PAT appears in any log
line, check output, /healthz body or message a person sees; the SQLite file is mode 0600."""

from __future__ import annotations

import os
import stat
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.helpers import db_question, wait_card, wait_final, wait_outcome
from tests.fakeslack import ALICE, FakeSlack
from tests.harness import CHANNEL, CONSOLE_SCRIPT, BotProcess, KandevServer, Seeder, bot_env

WRONG_PAT = "kandev_pat_" + "0badc0de" * 6
WRONG_BOT_TOKEN = "xoxb-0000000001-wrong-bot-token-5eCr3t"


@pytest.fixture
def auth_seed(kandev_auth: KandevServer) -> Iterator[Seeder]:
    kandev_auth.start()
    seeder = Seeder(kandev_auth)
    yield seeder
    seeder.cleanup()


def _secrets(fake: FakeSlack, kandev_auth: KandevServer) -> dict[str, str]:
    ws = fake.workspace
    assert kandev_auth.token
    return {
        "SLACK_BOT_TOKEN": ws.bot_token,
        "SLACK_APP_TOKEN": ws.app_token,
        "SLACK_SIGNING_SECRET": ws.signing_secret,
        "KANDEV_TOKEN": kandev_auth.token,
        "wrong KANDEV_TOKEN": WRONG_PAT,
        "wrong SLACK_BOT_TOKEN": WRONG_BOT_TOKEN,
    }


def _leaks(text: str, secrets: dict[str, str]) -> list[str]:
    """The names of the secrets (or their distinctive tails) found in ``text``."""
    found = []
    for name, secret in secrets.items():
        tail = secret[-16:]  # a secret cut or wrapped in a log line still gives itself away
        if secret in text or tail in text:
            found.append(name)
    return found


def _check(env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(CONSOLE_SCRIPT), "check", "--http"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )


@pytest.mark.fault("secrets in logs, errors and check output", guarantee=8)
def test_no_secret_in_logs_errors_or_check_output_and_a_private_database(
    fake_slack, kandev, kandev_auth, auth_seed, slack_driver, tmp_path: Path, reliability
):
    secrets = _secrets(fake_slack, kandev_auth)
    db = tmp_path / "bot.db"
    env = bot_env(
        fake_slack,
        kandev_auth,
        f"sqlite:///{db}",
        LOG_LEVEL="DEBUG",
        KANDEV_POLL_INTERVAL="1.5",
        SLACK_APP_TOKEN=fake_slack.workspace.app_token,  # configured, even if HTTP mode
    )
    assert env["KANDEV_TOKEN"] == kandev_auth.token
    outputs: dict[str, str] = {}
    bots: list[BotProcess] = []
    try:
        # 1. A full flow: a post refused once with invalid_auth, the card, a click, the edit.
        bot = BotProcess(env, mode="http", log_path=tmp_path / "bot.log")
        bots.append(bot)
        fake_slack.faults.error("chat.postMessage", "invalid_auth", times=1)
        bot.start()
        bundle = auth_seed([db_question()], title="Secret-free flow")
        card = wait_card(fake_slack, bundle.pending_id, timeout=15)
        driver = slack_driver(bot.events_url)
        assert driver.click(CHANNEL, card.ts, text="MongoDB", user=ALICE).status == 200
        final = wait_final(kandev_auth, bundle.task_id, bundle.pending_id, "answered")
        assert final["status"] == "answered"
        wait_outcome(fake_slack, card.ts, "✅ Answered by")
        # A click on a card the bot does not know, and a forged request: error paths log too.
        driver.click(CHANNEL, card.ts, text="Open in Kandev", user=ALICE)
        outputs["healthz"] = str(bot.health()[1])
        bot.stop()
        mode = stat.S_IMODE(db.stat().st_mode)

        # 2. Kandev says 401: the bot started with a wrong PAT refuses to run, saying why.
        wrong = BotProcess(
            {**env, "KANDEV_TOKEN": WRONG_PAT, "PORT": str(bot.port + 1)},
            mode="http",
            log_path=tmp_path / "bot-wrong-pat.log",
        )
        bots.append(wrong)
        with pytest.raises(RuntimeError):
            wrong.start(timeout=30)
        assert "401" in wrong.logs() or "KANDEV_TOKEN" in wrong.logs(), wrong.logs()[-2000:]

        # 3. `kandev-slack check`: all good, a wrong PAT, a wrong bot token.
        for name, overrides in {
            "check": {},
            "check wrong PAT": {"KANDEV_TOKEN": WRONG_PAT},
            "check wrong bot token": {"SLACK_BOT_TOKEN": WRONG_BOT_TOKEN},
        }.items():
            result = _check({**env, **overrides})
            outputs[name] = result.stdout + result.stderr
        assert "FAIL" not in outputs["check"], outputs["check"]
        assert "KANDEV_TOKEN" in outputs["check wrong PAT"], outputs["check wrong PAT"]
        assert "FAIL" in outputs["check wrong bot token"], outputs["check wrong bot token"]
    finally:
        for b in bots:
            b.stop()

    outputs["bot log"] = bot.logs()
    outputs["bot log (wrong PAT)"] = wrong.logs()
    outputs["what people saw"] = "\n".join(
        [e.all_text for e in fake_slack.ephemerals()]
        + [m.all_text for m in fake_slack.messages(CHANNEL)]
        + [str(p.body) for p in fake_slack.response_posts()]
    )
    assert "DEBUG" in outputs["bot log"], "the run was not at DEBUG level"
    leaks = {where: _leaks(text, secrets) for where, text in outputs.items()}
    leaks = {where: names for where, names in leaks.items() if names}
    assert leaks == {}, leaks
    assert mode == 0o600, oct(mode)
    for companion in (Path(f"{db}-wal"), Path(f"{db}-shm")):
        if companion.exists():
            assert stat.S_IMODE(companion.stat().st_mode) & 0o077 == 0, companion
    reliability.record(
        "secrets in logs, errors and check output",
        guarantee=8,
        survived=True,
        detail=f"{len(outputs)} outputs searched for {len(secrets)} secrets",
    )
    assert os.path.getsize(db) > 0
