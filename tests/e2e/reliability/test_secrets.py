"""Guarantee 8: secrets never show. A full run at LOG_LEVEL=DEBUG against an auth-enabled
Kandev (post, answer, a Slack invalid_auth, a Kandev 401 from a wrong KANDEV_TOKEN) and
`kandev-slack check` (right and wrong tokens): no token, signing secret or PAT appears in any log
line, check output, /healthz body or message a person sees; the SQLite file is mode 0600."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from kandev_slack.kits.fakeslack import ALICE, FakeSlack
from tests.e2e.helpers import db_question, wait_card, wait_final, wait_outcome
from tests.kit.harness import (
    CHANNEL,
    CONSOLE_SCRIPT,
    BotProcess,
    KandevServer,
    Seeder,
    bot_env,
    free_port,
)
from tests.unit.listing.e2e import run_list

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


URL_PASSWORD = "UrlPa55w0rd"
LINK_PASSWORD = "L1nkPa55w0rd"
DB_PASSWORD = "DbPa55w0rd"


def _with_userinfo(url: str, userinfo: str) -> str:
    scheme, _, rest = url.partition("://")
    return f"{scheme}://{userinfo}@{rest}"


@pytest.mark.fault("credentials in KANDEV_URL, KANDEV_PUBLIC_URL and DATABASE_URL", guarantee=10)
def test_credentials_in_urls_never_show(
    bot_factory, fake_slack, kandev, seed, slack_driver, pg_url, reliability
):
    """Userinfo in every URL setting: a full flow, the list, then Kandev unreachable at a URL
    with credentials. No link, message, Slack call, /healthz body or log line shows them."""
    common = {
        "KANDEV_PUBLIC_URL": f"https://ana:{LINK_PASSWORD}@kandev.example.test",
        "LOG_LEVEL": "DEBUG",
        "KANDEV_POLL_INTERVAL": "1.5",
    }
    db_url = pg_url.replace("postgres@", f"postgres:{DB_PASSWORD}@")  # trust auth: accepted
    kandev_url = _with_userinfo(kandev.base_url, f"kandev-ops:{URL_PASSWORD}")
    bot = bot_factory(db_url=db_url, KANDEV_URL=kandev_url, **common)
    bundle = seed([db_question()], title="Credential-free links")
    card = wait_card(fake_slack, bundle.pending_id, timeout=15)
    driver = slack_driver(bot.events_url)
    assert driver.click(CHANNEL, card.ts, text="MongoDB", user=ALICE).status == 200
    assert wait_final(kandev, bundle.task_id, bundle.pending_id, "answered")["status"]
    wait_outcome(fake_slack, card.ts, "✅ Answered by")
    listing = run_list(driver, timeout=30)
    healthz = [str(bot.health()[1])]
    bot.stop()

    dead = f"127.0.0.1:{free_port()}"
    down = bot_factory(
        db_url=db_url, KANDEV_URL=f"http://kandev-ops:{URL_PASSWORD}@{dead}", **common
    )
    unreachable = run_list(slack_driver(down.events_url), timeout=30)
    assert f"Kandev cannot be reached at http://{dead}" in unreachable.all_text
    code, body = down.health()
    deadline = time.monotonic() + 60
    while not any("unreachable" in r for r in body["reasons"]) and time.monotonic() < deadline:
        time.sleep(0.2)
        code, body = down.health()
    assert code == 503
    healthz.append(str(body))
    down.stop()

    links = [
        b
        for m in fake_slack.messages(CHANNEL)
        for b in json.dumps(m.blocks).split('"')
        if b.startswith("https://") or "kandev.example.test" in b
    ]
    assert any("kandev.example.test/t/" in link for link in links), links
    outputs = {
        "bot log": bot.logs(),
        "bot log (Kandev unreachable)": down.logs(),
        "healthz": "\n".join(healthz),
        "what people saw": "\n".join(
            [listing.all_text, unreachable.all_text]
            + [e.all_text for e in fake_slack.ephemerals()]
            + [m.all_text + json.dumps(m.blocks) for m in fake_slack.messages(CHANNEL)]
        ),
        "every Slack call": json.dumps([c.params for c in fake_slack.calls()], default=str),
    }
    assert "DEBUG" in outputs["bot log"], "the run was not at DEBUG level"
    secrets = {
        "KANDEV_URL password": URL_PASSWORD,
        "KANDEV_PUBLIC_URL password": LINK_PASSWORD,
        "DATABASE_URL password": DB_PASSWORD,
        "KANDEV_URL user": "kandev-ops:",
        "KANDEV_PUBLIC_URL user": "ana:",
        "DATABASE_URL user": "postgres:",
    }
    leaks = {where: _leaks(text, secrets) for where, text in outputs.items()}
    leaks = {where: names for where, names in leaks.items() if names}
    assert leaks == {}, leaks
    reliability.record(
        "credentials in KANDEV_URL, KANDEV_PUBLIC_URL and DATABASE_URL",
        guarantee=10,
        survived=True,
        detail=f"{len(outputs)} outputs searched",
    )
