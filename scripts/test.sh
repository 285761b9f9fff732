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
# Type-check (pyproject.toml [tool.mypy]: the pydantic plugin; strict for kandev_slack/core and kandev_slack/usecases).
.venv/bin/mypy kandev_slack
# The whole suite runs every property as deep as it asks (the default "unit" profile bounds them).
export HYPOTHESIS_PROFILE="${HYPOTHESIS_PROFILE:-full}"
# Three workers on the machine's two cores (PYTEST_WORKERS to change): most e2e tests wait on
# processes, leases and polls, so two workers left the CPUs ~40 % idle (25.5 min); three take
# ~18 min at ~60 %. A test file stays on one worker (its module fixtures are made once); each
# worker has its own Kandev.
exec .venv/bin/pytest -n "${PYTEST_WORKERS:-3}" --dist loadfile "$@"
