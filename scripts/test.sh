#!/usr/bin/env bash
# Install everything the test suite needs and run it (lint, types, all tests).
# The real Kandev runtime is fetched from npm by the test fixtures on first use
# (cached in .cache/kandev-runtime). Extra arguments go to pytest.
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m venv .venv
.venv/bin/pip install --quiet --disable-pip-version-check -e '.[test]'
.venv/bin/ruff check .
.venv/bin/ruff format --check .
# Type-check (pyproject.toml [tool.mypy]). bot/usecases and bot/store still have errors (13
# when this was added) and are being fixed by their owners: until then only the folders that
# are clean are checked, the others followed for their types with their errors silenced.
# When they are clean, this becomes: .venv/bin/mypy bot
.venv/bin/mypy --follow-imports=silent bot/__init__.py bot/__main__.py bot/app.py bot/cli.py \
  bot/core bot/config bot/commands bot/ops bot/kandev bot/slack_api bot/slack bot/cards
# The whole suite runs every property as deep as it asks (the default "unit" profile bounds them).
export HYPOTHESIS_PROFILE="${HYPOTHESIS_PROFILE:-full}"
exec .venv/bin/pytest "$@"
