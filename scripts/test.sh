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
# Type-check (pyproject.toml [tool.mypy]: the pydantic plugin; strict for bot/core and bot/usecases).
.venv/bin/mypy bot
# The whole suite runs every property as deep as it asks (the default "unit" profile bounds them).
export HYPOTHESIS_PROFILE="${HYPOTHESIS_PROFILE:-full}"
exec .venv/bin/pytest "$@"
