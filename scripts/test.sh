#!/usr/bin/env bash
# Set up everything and run the whole test suite on a private PostgreSQL and Redis.
# Extra arguments go to pytest (e.g. scripts/test.sh tests/leaderboard -x).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/system-packages.sh
bash scripts/setup.sh --dev
export PATH="$PWD/.venv/bin:$PATH"
export DJANGO_SETTINGS_MODULE=config.settings.test
export HINDSIGHT_CHROMIUM="${HINDSIGHT_CHROMIUM:-$(command -v chromium)}"

if [ $# -eq 0 ]; then
  echo "== ruff"; ruff check . && ruff format --check .
  echo "== mypy"; mypy
fi
exec bash scripts/with-services.sh bash scripts/_run_tests.sh "$@"
